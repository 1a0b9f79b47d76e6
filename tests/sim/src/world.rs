//! `World`: generators, one authority and a faulty network on a simulated
//! millisecond clock, all driven from one seed.
//!
//! Both sides run production's code: the authority decides with
//! `rangeid_core::decide` and encodes every answer with the Worker's
//! encoder (`rangeid_core::wire::HttpAnswer`); each generator is a core
//! `Lease` driven the way the JS driver drives it: it carries out the
//! engine's `Action`s, reads every answer with `Reply::from_http` and hands
//! it back with its attempt's `Ticket`. Some generators issue as the JS
//! driver does, from a block the engine lends them; some as the Rust
//! client does, from two blocks (one issuing, a standby behind it, each a
//! core `CursorSlot`) that its driver refills with `lend_keeping`, sealing
//! both and handing their tails to the engine for a batch or a close.
//!
//! The network drops requests, drops replies after the commit, duplicates,
//! reorders and delays replies (some past the request timeout, while the
//! retry is in flight), and mangles their bytes: a proxy's HTML error page,
//! a truncated 200, fields and error codes this client does not know.
//! Cancelled attempts sometimes report their abort and sometimes answer
//! late anyway. Generators restart (new incarnation, old range abandoned)
//! or pause while a replacement runs, then resume with their old range. The
//! authority restarts, losing what was not committed, is briefly
//! overloaded, and an operator freezes it and raises its floor. For a
//! while, a proxy in front of it refuses every request with a 403 page of
//! its own, and the authority refuses one generator's token even fresh (a
//! token source that renews late): the generators are blocked, back off,
//! and must recover by themselves.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};

use rangeid_core::authority::{NamespaceConfig, NamespaceState, NamespaceStatus, Owner, Refusal};
use rangeid_core::fence::Phase;
use rangeid_core::lease::{IssueError, Lease, LeaseConfig, TRUST_MS};
use rangeid_core::ledger::Limits;
use rangeid_core::protocol::{Capacity, GrantReply, GrantRequest};
use rangeid_core::reply::ReplyCode;
use rangeid_core::time::Instant;
use rangeid_core::wire::{ErrorReply, HttpAnswer};
use rangeid_core::{Action, ErrorCode, Grant, Namespace, Range, Reply, Ticket};
use rangeid_core::{Incarnation, RequestId};

use rangeid_core::relay::{ActStatus, AdminAct, Answer as RelayAnswer, RelayGate, RelayTerms};

use crate::authority::{Answer, Authority, Bug, Heard};
use crate::checker::{Checker, Violation};
use crate::relays::{
    relay_config, relay_owner, Clock, Instance, Node, RelayBug, SIM_RELAY_LEASE_MS,
};
use crate::rng::Rng;
use crate::shelf::{DriverBug, Shelf, BLOCK};

/// Fault rates, in chances per million per opportunity.
#[derive(Clone, Copy, Debug)]
pub struct Faults {
    /// A request lost on its way.
    pub drop_request: u64,
    /// A reply lost after the authority committed.
    pub drop_reply: u64,
    /// A reply delivered twice.
    pub duplicate_reply: u64,
    /// Per generator per millisecond: a crash and restart.
    pub restart: u64,
    /// Per generator per millisecond: a pause, with a replacement started.
    pub pause: u64,
    /// Per millisecond: an authority crash and restart.
    pub authority_restart: u64,
    /// Per request: an `unavailable` answer instead of a decision.
    pub overload: u64,
    /// Per millisecond: an operator freezes the namespace for a while.
    pub freeze: u64,
    /// Per millisecond: an operator raises the floor a little.
    pub floor: u64,
    /// Per reply: delivered after the request timeout, while its retry is
    /// in flight.
    pub slow_reply: u64,
    /// Per reply: replaced by a proxy's `502` HTML page.
    pub proxy_error: u64,
    /// Per `200` reply: cut short.
    pub truncate: u64,
    /// Per reply: a field this client does not know is added.
    pub unknown_field: u64,
    /// Per `503` reply: its code becomes one this client does not know.
    pub unknown_code: u64,
    /// Per cancelled attempt: its abort is reported as a failure.
    pub report_cancel: u64,
    /// Per millisecond: the namespace object's storage is restored to an
    /// older copy (point-in-time recovery), and it restarts.
    pub authority_restore: u64,
    /// Per start and per fence raise: the witness cannot be reached.
    pub witness_down: u64,
    /// Per fence raise: the witness writes the mark but its answer is lost.
    pub witness_reply_lost: u64,
    /// Per millisecond: the witness's storage is restored to an older copy
    /// (point-in-time recovery of the witness alone).
    pub witness_restore: u64,
    /// Per reply to a cancelled attempt: delivered anyway (a transport that
    /// ignores the abort).
    pub late_after_cancel: u64,
    /// Per millisecond: a proxy in front of the authority refuses every
    /// request with its own 403 page for a while (`Scenario::bad_moment_ms`).
    pub proxy_block: u64,
    /// Per generator per millisecond: the authority refuses its token, even
    /// fresh, for a while (`401 unauthenticated`).
    pub token_refused: u64,
    /// Per relay per millisecond: its instance crashes and a new one
    /// starts (what it held is abandoned).
    pub relay_restart: u64,
    /// Per relay per millisecond: its instance is evicted (the same, as the
    /// platform does to an idle or redeployed object).
    pub relay_evict: u64,
    /// Per relay per millisecond: a second instance starts while the first
    /// still runs for a while; calls reach either, a revocation only the
    /// new one.
    pub relay_split: u64,
    /// Per revocation: the relay cannot be reached, or its acknowledgement
    /// is lost.
    pub revoke_lost: u64,
    /// Per millisecond, while relays run: an admin turns them off for a
    /// while (generators are routed to the object meanwhile).
    pub relays_off: u64,
}

impl Default for Faults {
    fn default() -> Faults {
        Faults {
            drop_request: 50_000,
            drop_reply: 50_000,
            duplicate_reply: 80_000,
            restart: 300,
            pause: 300,
            authority_restart: 800,
            overload: 20_000,
            freeze: 150,
            floor: 150,
            slow_reply: 20_000,
            proxy_error: 10_000,
            truncate: 10_000,
            unknown_field: 50_000,
            unknown_code: 300_000,
            report_cancel: 500_000,
            late_after_cancel: 300_000,
            authority_restore: 400,
            witness_down: 30_000,
            witness_reply_lost: 30_000,
            witness_restore: 400,
            proxy_block: 100,
            token_refused: 100,
            relay_restart: 300,
            relay_evict: 200,
            relay_split: 300,
            revoke_lost: 250_000,
            relays_off: 100,
        }
    }
}

impl Faults {
    /// No faults at all.
    pub fn none() -> Faults {
        Faults {
            drop_request: 0,
            drop_reply: 0,
            duplicate_reply: 0,
            restart: 0,
            pause: 0,
            authority_restart: 0,
            overload: 0,
            freeze: 0,
            floor: 0,
            slow_reply: 0,
            proxy_error: 0,
            truncate: 0,
            unknown_field: 0,
            unknown_code: 0,
            report_cancel: 0,
            late_after_cancel: 0,
            authority_restore: 0,
            witness_down: 0,
            witness_reply_lost: 0,
            witness_restore: 0,
            proxy_block: 0,
            token_refused: 0,
            relay_restart: 0,
            relay_evict: 0,
            relay_split: 0,
            revoke_lost: 0,
            relays_off: 0,
        }
    }
}

/// One simulation run's setup, all derived from the seed unless changed.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// The seed everything is drawn from.
    pub seed: u64,
    /// Stop once this many IDs were issued (or the namespace ran out).
    pub target_ids: u64,
    /// Generators at the start.
    pub generators: usize,
    /// The namespace's first ID and inclusive max.
    pub first: u64,
    /// See `first`.
    pub max: u64,
    /// The namespace's `maxCount`: 400 (the generators' own largest
    /// request), or in one seed of ten 4 to 19, around and below the generators'
    /// smallest request, which they learn from the authority's refusal.
    pub ns_max_count: u64,
    /// Fault rates.
    pub faults: Faults,
    /// A deliberate bug, for checking the checker.
    pub bug: Bug,
    /// Restarted generators reuse their old incarnation (a deliberate bug).
    pub reuse_incarnation: bool,
    /// The network's usual one-way delay of a reply, in ms: `lo..hi`.
    pub reply_delay_ms: (u64, u64),
    /// How long a blocking proxy or a refused token lasts, in ms: `lo..hi`.
    pub bad_moment_ms: (u64, u64),
    /// The namespace's limits on what each caller adds: the defaults, or in
    /// one seed of ten a grant rate the generators meet (10 a second each),
    /// or in another, with the insider, a row budget of 60 per sub that its
    /// flood meets and the generators do not.
    pub limits: Limits,
    /// An insider with a generator token of its own at the authority: it
    /// floods `count: 1` grants, and posts generators' next request ids
    /// (their incarnations and request ids are visible to readers).
    pub insider: bool,
    /// Relays of the namespace (0: none): in half the seeds 1 to 3, and
    /// three generators in four are routed to one of them.
    pub relays: usize,
    /// A deliberate relay bug, for checking the checker.
    pub relay_bug: RelayBug,
    /// The relays' smallest range (40): larger ones outlive their lease.
    pub relay_min_range: u64,
    /// A deliberate bug in the driver of generators that issue as the
    /// Rust client does, for checking the checker.
    pub driver_bug: DriverBug,
}

impl Scenario {
    /// The scenario for `seed`: 2 to 6 generators; a namespace that is
    /// roomy, runs out part-way, or sits at 2^53 or at the top of `u64`.
    pub fn from_seed(seed: u64, target_ids: u64) -> Scenario {
        let mut rng = Rng::new(seed);
        let generators = rng.between(2, 7) as usize;
        let (first, max) = match seed % 4 {
            0 => (1, NamespaceConfig::DEFAULT_MAX),
            1 => {
                let first = rng.between(1, 1 << 40);
                (first, first + target_ids * rng.between(5, 9) / 10)
            }
            2 => {
                let first = (1u64 << 53) - target_ids / 2;
                (first, u64::MAX)
            }
            _ => (u64::MAX - target_ids * rng.between(8, 13) / 10, u64::MAX),
        };
        // From the seed's bits, not the stream: every other draw stays as
        // it was for a given seed.
        let ns_max_count = if (seed / 4) % 10 == 3 {
            4 + (seed >> 12) % 16
        } else {
            400
        };
        let insider = (seed / 4) % 10 == 5;
        let limits = match (seed / 4) % 10 {
            7 => Limits::new(Some(10), None, None),
            5 => Limits::new(None, Some(100_000), Some(60)),
            _ => Ok(Limits::DEFAULT),
        }
        .unwrap_or_else(|e| panic!("scenario limits: {e}"));
        Scenario {
            seed,
            target_ids,
            generators,
            first,
            max,
            ns_max_count,
            faults: Faults::default(),
            bug: Bug::None,
            reuse_incarnation: false,
            reply_delay_ms: (1, 12),
            bad_moment_ms: (10, 201),
            limits,
            insider,
            relays: if (seed / 40) % 2 == 1 {
                1 + ((seed >> 8) % 3) as usize
            } else {
                0
            },
            relay_bug: RelayBug::None,
            relay_min_range: 40,
            driver_bug: DriverBug::None,
        }
    }
}

/// What a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// IDs issued (each checked).
    pub ids: u64,
    /// Grants committed.
    pub grants: u64,
    /// Simulated milliseconds.
    pub millis: u64,
    /// Requests sent, first attempts and retries.
    pub requests: u64,
    /// Retries under the same request id.
    pub retries: u64,
    /// The most attempts one request needed before it settled (0-based:
    /// 1 means it was sent twice).
    pub max_attempt: u32,
    /// Attempts cancelled by their engine.
    pub cancelled: u64,
    /// Failures of superseded attempts that the engines ignored.
    pub stale_ignored: u64,
    /// Replies whose bytes the network mangled (HTML, truncated, unknown
    /// fields or codes).
    pub mangled: u64,
    /// Grants installed that the authority marked as replays.
    pub replays_installed: u64,
    /// Grants ignored as duplicates.
    pub duplicates_ignored: u64,
    /// Grants refused (another incarnation's, for example).
    pub grants_refused: u64,
    /// Requests and replies the network dropped.
    pub dropped: u64,
    /// Replies it delivered twice.
    pub duplicated: u64,
    /// Generator restarts.
    pub restarts: u64,
    /// Generator pauses (each with a replacement started).
    pub pauses: u64,
    /// Authority restarts.
    pub authority_restarts: u64,
    /// Restores of the authority's storage to an older copy.
    pub restores: u64,
    /// Raises of the witness's mark.
    pub fence_raises: u64,
    /// Starts that found the witness ahead of the recorded mark.
    pub fence_forwards: u64,
    /// Restores of the witness's storage to an older copy.
    pub witness_restores: u64,
    /// Times the authority found its witness below its fence and raised it
    /// back.
    pub witness_behinds: u64,
    /// Restores of one object held back because the authority had not
    /// heard from its witness since the other was restored (the documented
    /// assumption: the two objects are restored at least one check-in
    /// apart).
    pub restores_deferred: u64,
    /// Witness answers lost after the witness wrote its mark.
    pub witness_replies_lost: u64,
    /// IDs skipped by starts (the rest of a chunk, or a rolled-back span).
    pub fence_skipped: u128,
    /// Requests answered 503 because the witness could not be reached.
    pub witness_refusals: u64,
    /// IDs abandoned by restarts and closes.
    pub abandoned: u64,
    /// Generators the authority refused for good.
    pub failed_generators: u64,
    /// Exact batches served whole (`take_exact`), and those that had to
    /// wait for a range first.
    pub exact_batches: u64,
    /// See `exact_batches`.
    pub exact_batches_waited: u64,
    /// Requests a blocking proxy answered with its own 403 page.
    pub proxy_refusals: u64,
    /// Requests whose token the authority refused (a late renewal).
    pub token_refusals: u64,
    /// Times a generator became blocked (a foreign 4xx, or its token
    /// refused even fresh), and times a block ended.
    pub blocks: u64,
    /// See `blocks`.
    pub unblocks: u64,
    /// Generators still blocked at the end of the run although the last
    /// fault that blocks had ended more than [`RECOVERY_MS`] before.
    pub stuck_blocked: u64,
    /// Whether the namespace ran out.
    pub exhausted: bool,
    /// Generators' next requests the insider posted first.
    pub preclaims: u64,
    /// Grants the insider took (and issued).
    pub insider_grants: u64,
    /// Answers `429` (a grant rate or a row budget met).
    pub throttled: u64,
    /// Grants the committed ledger holds at the end...
    pub ledger_grants: u64,
    /// ...in this many rows (spans).
    pub ledger_rows: u64,
    /// Sub-ranges relays handed out (new), and retries they answered with
    /// the remembered one.
    pub sub_grants: u64,
    /// See `sub_grants`.
    pub sub_replays: u64,
    /// Relay crashes, evictions and split instances.
    pub relay_restarts: u64,
    /// See `relay_restarts`.
    pub relay_evictions: u64,
    /// See `relay_restarts`.
    pub relay_splits: u64,
    /// Revocations a relay obeyed, and those lost (unreachable, or the
    /// acknowledgement lost).
    pub revocations: u64,
    /// See `revocations`.
    pub revocations_lost: u64,
    /// Freezes, floors and relays turned off, acknowledged while relays
    /// ran, and the longest one waited (simulated ms).
    pub acts_acked: u64,
    /// Times relays were turned off.
    pub relays_turned_off: u64,
    /// Relay requests the object refused (relays off, or revoked).
    pub relay_refusals: u64,
    /// See `acts_acked`.
    pub act_wait_max: u64,
    /// IDs relays abandoned (expired, revoked, restarted).
    pub relay_abandoned: u64,
    /// Relay answers `namespace_exhausted`, `namespace_frozen` and
    /// `unavailable`.
    pub relay_exhausted: u64,
    /// See `relay_exhausted`.
    pub relay_frozen: u64,
    /// See `relay_exhausted`.
    pub relay_unavailable: u64,
    /// Report batches relays sent, and the sub-grants in them.
    pub report_batches: u64,
    /// See `report_batches`.
    pub reported: u64,
    /// IDs issued by generators that issue as the Rust client does (from
    /// its two blocks, and in batches), each checked like any other.
    pub shelf_ids: u64,
    /// Times one of them found its issuing block used up and went on from
    /// the standby block without waiting.
    pub standby_swaps: u64,
    /// Blocks their drivers were lent (`lend_keeping`) while the other
    /// block still held IDs.
    pub kept_lends: u64,
    /// IDs of their sealed blocks' tails handed to a batch's caller.
    pub tail_ids: u64,
    /// Their callers who waited for the driver (an ID or a batch) and got
    /// what they waited for.
    pub shelf_waits: u64,
}

enum Event {
    Request {
        slot: usize,
        engine: u64,
        ticket: Ticket,
        request: GrantRequest,
    },
    Commit {
        epoch: u64,
    },
    Reply {
        slot: usize,
        engine: u64,
        ticket: Ticket,
        /// The authority's epoch when the reply waits on the output gate.
        epoch: Option<u64>,
        /// The grant whose commit (to the slot's owner) the reply waits for.
        gate: Option<Grant>,
        answer: Wire,
    },
    Thaw,
    /// A generator's request reaches relay `relay`.
    RelayRequest {
        relay: usize,
        slot: usize,
        engine: u64,
        ticket: Ticket,
        request: GrantRequest,
    },
    /// An admin turns relays back on.
    RelaysOn,
    /// A relay's acknowledgement of a revocation reaches the authority
    /// (void if it restarted since).
    RevokeAck {
        incarnation: Incarnation,
        epoch: u64,
    },
    /// The witness answers a raise (or cannot be reached).
    FenceRaise {
        epoch: u64,
        target: u128,
        ok: bool,
        /// The authority's fence when it sent the raise, and how many
        /// restores of the witness it had heard of then.
        sent_at_fence: u128,
        mended_at_send: u64,
        /// When the witness already applied the raise (it may reach the
        /// witness long before its answer comes back, and a check-in may
        /// read the raised mark in between): its answer, and how many
        /// restores of the witness had happened then.
        applied: Option<(rangeid_core::fence::Witnessed, u64)>,
    },
}

/// A request waiting for the witness to raise its mark.
#[derive(Clone, Copy)]
struct Parked {
    slot: usize,
    engine: u64,
    ticket: Ticket,
    request: GrantRequest,
}

/// What reaches a generator for one attempt.
#[derive(Clone)]
enum Wire {
    /// An HTTP answer, as bytes.
    Http(HttpAnswer),
    /// The attempt failed without an answer (its abort, reported).
    NoAnswer,
}

/// What the world knows of one incarnation, to hold it to its reservation
/// bound while in slow start.
#[derive(Clone, Default)]
struct Book {
    born: u64,
    issued: u64,
    // The largest batch that came back short.
    largest_batch: u64,
    // The largest exact batch waited for (the engine gathers it whole).
    largest_exact: u64,
    // The range committed for each request id: a restore that forgot a
    // grant commits another for the same id (the first is only a gap), and
    // the engine reserved one.
    committed: HashMap<rangeid_core::RequestId, u64>,
}

/// How long after the last blocking fault ended every generator must have
/// recovered: past the longest blocked backoff (16 x `retry_max_ms`), its
/// jitter, and a lost probe or two.
pub const RECOVERY_MS: u64 = 1_000;

/// How long a caller waits for an exact batch before it gives up (the JS
/// driver's `deadlineMs`, on the simulation's clock).
const BATCH_DEADLINE_MS: u64 = 300;

/// What a blocking proxy answers instead of the authority.
const PROXY_PAGE: &[u8] = b"<html>\r\n<head><title>403 Forbidden</title></head>\r\n<body>Request blocked by the proxy.</body></html>";

/// Retry-After is in seconds; the simulation's clock runs this many ms to
/// one such second, so a Retry-After matters without stalling the run.
const SIM_SECOND_MS: u64 = 5;

struct Generator {
    lease: Lease,
    // The bytes its incarnation came from (the reuse bug starts over with them).
    random: [u8; 16],
    engine: u64,
    per_ms: u64,
    // A sparse generator takes IDs on one tick in 20 only: a process that
    // serves little, whose reservations slow start must keep small.
    sparse: bool,
    // A lender issues from a local block the engine lends it (as the JS
    // driver does), and answers batches from the block and `take_more`.
    lender: bool,
    // Or it issues as the Rust client does, from its shelf of two blocks.
    shelved: bool,
    shelf: Shelf,
    // The caller waiting (`waiting`) wants one ID (`next_id_async`), not
    // a batch.
    wait_one: bool,
    block_next: u64,
    block_left: u64,
    // An exact batch a caller waits for (0: none), as the JS driver's
    // `nextIds(n)`; the engine is told it as demand.
    waiting: u64,
    // When the caller started waiting; it gives up after `BATCH_DEADLINE_MS`.
    waiting_since: u64,
    paused_until: u64,
    // Attempts in flight, and those cancelled.
    live: BTreeSet<Ticket>,
    cancelled: BTreeSet<Ticket>,
    // Per request: its latest attempt, when it went out, and whether a
    // failure of it was delivered (what justifies the next attempt).
    latest: HashMap<u64, (u32, u64, bool)>,
    // Replies that arrived while paused, handed over on resume.
    inbox: Vec<(Ticket, Wire)>,
    // The last request it sent (readers see incarnations and request ids).
    last_sent: Option<GrantRequest>,
    // The relay it is routed to, if any.
    via: Option<usize>,
}

/// The insider's own incarnation and the number of its next flood request.
struct Insider {
    incarnation: Incarnation,
    next: u64,
}

/// The engine number the insider's issues are recorded under.
const INSIDER_ENGINE: u64 = u64::MAX;

/// The insider's token `sub`.
fn insider_owner() -> Owner {
    Owner::new("insider")
}

/// The simulated world. Build with [`World::new`], run with [`World::run`].
pub struct World {
    scenario: Scenario,
    rng: Rng,
    now: u64,
    queue: BinaryHeap<Reverse<(u64, u64, usize)>>,
    events: Vec<Option<Event>>,
    sequence: u64,
    authority: Authority,
    down_until: u64,
    // Requests waiting for a fence raise, and whether one is in flight.
    parked: Vec<Parked>,
    raising: bool,
    // The witness applied the raise in flight and its answer is on its way.
    answer_in_flight: bool,
    // Restores of the witness so far, and how many of them the authority
    // has heard an answer from since (an answer the witness gave after
    // them, with the witness holding the fence again); and the object was
    // restored and has not heard from its witness since.
    witness_restored: u64,
    witness_mended: u64,
    object_unseen: bool,
    gens: Vec<Generator>,
    engines: u64,
    checker: Checker,
    books: HashMap<rangeid_core::Incarnation, Book>,
    report: Report,
    namespace: Namespace,
    trace: Option<Vec<String>>,
    // Until when the proxy refuses every request, and each slot's token is
    // refused; when the last such fault ends.
    proxy_blocked_until: u64,
    token_refused_until: [u64; MAX_GENERATORS],
    blocking_faults_end: u64,
    insider: Insider,
    relays: Vec<Node>,
    instances: u64,
    // Generator requests at relays: handle -> (slot, engine, ticket).
    handles: HashMap<u64, (usize, u64, Ticket)>,
    next_handle: u64,
    // The namespace object's relay gate (made anew at each start), its
    // clock, the acts waiting to be acknowledged, and those acknowledged
    // (committed, acknowledged: simulated ms).
    gate: RelayGate,
    root_clock: Clock,
    acts: Vec<PendingAct>,
    acked: Vec<(u64, u64)>,
    relays_on: bool,
}

/// A freeze or floor that committed while relays run, waiting to be
/// acknowledged.
struct PendingAct {
    act: AdminAct,
    committed: u64,
    // A freeze thaws this long after its acknowledgement.
    thaw_after: Option<u64>,
    // Relays turned off are turned on again this long after it.
    on_after: Option<u64>,
    // When revocations were last sent for it.
    revoked_at: Option<u64>,
}

/// Slots from here on name relays (slot `RELAY_SLOTS + r` is relay `r`,
/// its engine the instance's number) on the authority's side of the
/// network.
const RELAY_SLOTS: usize = 1_000;

fn relay_of(slot: usize) -> Option<usize> {
    slot.checked_sub(RELAY_SLOTS)
}

fn sim_terms() -> RelayTerms {
    RelayTerms::new(SIM_RELAY_LEASE_MS).unwrap_or_else(|e| panic!("sim lease: {e}"))
}

const MAX_GENERATORS: usize = 10;
/// How often the authority checks in with its witness, in simulated ms (the
/// object's periodic alarm).
const CHECK_MS: u64 = 50;
const TIME_LIMIT_MS: u64 = 60_000;

fn lease_config(namespace: Namespace) -> LeaseConfig {
    let mut c = LeaseConfig::new(namespace);
    c.min_range_size = 8;
    c.max_range_size = 400;
    c.target_lifetime_ms = 40;
    c.prefetch_lead_ms = 10;
    c.max_outstanding = 2;
    c.request_timeout_ms = 25;
    c.retry_initial_ms = 2;
    c.retry_max_ms = 40;
    c
}

impl World {
    /// A world for `scenario`.
    pub fn new(scenario: Scenario) -> World {
        let namespace = Namespace::new("sim").unwrap_or_else(|_| unreachable!());
        let config = NamespaceConfig::new(
            Some(scenario.first),
            Some(scenario.max),
            Some(scenario.ns_max_count),
        )
        .unwrap_or_else(|e| panic!("scenario namespace: {e}"));
        let mut world = World {
            scenario,
            rng: Rng::new(scenario.seed.rotate_left(17) ^ 0xA5A5),
            now: 0,
            queue: BinaryHeap::new(),
            events: Vec::new(),
            sequence: 0,
            authority: Authority::new(
                NamespaceState::create(namespace, config),
                scenario.limits,
                scenario.bug,
            ),
            down_until: 0,
            parked: Vec::new(),
            raising: false,
            answer_in_flight: false,
            witness_restored: 0,
            witness_mended: 0,
            object_unseen: false,
            gens: Vec::new(),
            engines: 0,
            checker: Checker::new(),
            books: HashMap::new(),
            report: Report::default(),
            namespace,
            trace: None,
            proxy_blocked_until: 0,
            token_refused_until: [0; MAX_GENERATORS],
            blocking_faults_end: 0,
            insider: Insider {
                incarnation: Incarnation::new("insider-1").unwrap_or_else(|_| unreachable!()),
                next: 0,
            },
            relays: Vec::new(),
            instances: 0,
            handles: HashMap::new(),
            next_handle: 0,
            gate: RelayGate::new(sim_terms(), Instant::ZERO),
            root_clock: Clock {
                offset: 0,
                drift_ppm: 0,
            },
            acts: Vec::new(),
            acked: Vec::new(),
            relays_on: true,
        };
        if scenario.relays > 0 {
            let bound = rangeid_core::relay::CLOCK_DRIFT_PPM as i64;
            world.root_clock = Clock {
                offset: world.rng.between(0, 1 << 40),
                drift_ppm: world.rng.between(0, 2 * bound as u64 + 1) as i64 - bound,
            };
            world.gate = RelayGate::new(sim_terms(), world.root_clock.at(0));
            for _ in 0..scenario.relays {
                let clock = Clock {
                    offset: world.rng.between(0, 1 << 40),
                    drift_ppm: world.rng.between(0, 2 * bound as u64 + 1) as i64 - bound,
                };
                let random = world.rng.bytes16();
                let current = world.new_instance(random, clock.at(0));
                world.relays.push(Node {
                    current,
                    stale: None,
                    stale_until: 0,
                    clock,
                });
            }
        }
        for _ in 0..scenario.generators {
            let g = world.spawn(None);
            world.gens.push(g);
        }
        world
    }

    /// Runs like [`World::run`], also returning a line of text for each
    /// notable event (grants, losses, retries, crashes, pauses).
    pub fn run_traced(mut self) -> (Result<Report, Violation>, Vec<String>) {
        self.trace = Some(Vec::new());
        let outcome = self.run_loop();
        (outcome, self.trace.take().unwrap_or_default())
    }

    fn note(&mut self, line: impl FnOnce() -> String) {
        if let Some(t) = self.trace.as_mut() {
            t.push(format!("{:>6} ms  {}", self.now, line()));
        }
    }

    /// Runs until the target is issued, the namespace runs out or the time
    /// limit passes; the first violation ends the run.
    pub fn run(mut self) -> Result<Report, Violation> {
        self.run_loop()
    }

    fn run_loop(&mut self) -> Result<Report, Violation> {
        while self.checker.issued() < self.scenario.target_ids && self.now < TIME_LIMIT_MS {
            self.deliver_due()?;
            self.chaos()?;
            if self.scenario.insider {
                self.insider_acts();
            }
            if !self.relays.is_empty() {
                self.relays_step()?;
            }
            for slot in 0..self.gens.len() {
                self.step_generator(slot)?;
            }
            if self.all_exhausted() {
                self.report.exhausted = true;
                break;
            }
            self.now += 1;
        }
        for g in &mut self.gens {
            if g.lease.blocked().is_some()
                && self.now >= self.blocking_faults_end + RECOVERY_MS
                && self.now >= g.paused_until + RECOVERY_MS
            {
                self.report.stuck_blocked += 1;
            }
            // Closed as its driver closes it: the Rust client seals its
            // blocks and reports their tails unreturned.
            let held = g.held();
            check_count(&self.scenario, &self.books, g, held)?;
            self.report.abandoned += g.lease.close_with_unused(held);
            self.report.standby_swaps += g.shelf.swaps;
            let s = g.lease.stats(0);
            self.report.blocks += s.blocks;
            self.report.unblocks += s.unblocks;
            self.report.replays_installed += s.replays_installed;
            self.report.duplicates_ignored += s.duplicates_ignored;
            self.report.grants_refused += s.grants_refused;
            self.report.stale_ignored += s.stale_ignored;
        }
        self.checker.finish()?;
        (self.report.ledger_grants, self.report.ledger_rows) = self.authority.ledger_grants();
        self.report.ids = self.checker.issued();
        self.report.grants = self.checker.grants() as u64;
        self.report.millis = self.now;
        Ok(self.report)
    }

    fn spawn(&mut self, reuse: Option<[u8; 16]>) -> Generator {
        self.engines += 1;
        let random = reuse.unwrap_or_else(|| self.rng.bytes16());
        let lease = Lease::new(
            lease_config(self.namespace),
            random,
            Instant::from_ms(self.now),
        )
        .unwrap_or_else(|e| panic!("lease config: {e}"));
        // Four in ten issue as the JS driver does, three as the Rust
        // client, the rest straight from the engine.
        let kind = self.rng.between(0, 10);
        let (lender, shelved) = (kind < 4, (4..7).contains(&kind));
        self.books.insert(
            *lease.incarnation(),
            Book {
                born: self.now,
                ..Book::default()
            },
        );
        Generator {
            lease,
            random,
            engine: self.engines,
            per_ms: self.rng.between(1, 40),
            sparse: self.rng.chance(250_000),
            lender,
            shelved,
            shelf: Shelf::default(),
            wait_one: false,
            block_next: 0,
            block_left: 0,
            waiting: 0,
            waiting_since: 0,
            paused_until: 0,
            live: BTreeSet::new(),
            cancelled: BTreeSet::new(),
            latest: HashMap::new(),
            inbox: Vec::new(),
            last_sent: None,
            via: (self.scenario.relays > 0 && self.rng.chance(750_000))
                .then(|| self.rng.between(0, self.scenario.relays as u64) as usize),
        }
    }

    fn all_exhausted(&self) -> bool {
        self.authority.committed_state().remaining() == 0
            && self.gens.iter().all(|g| g.lease.available() == 0)
    }

    fn schedule(&mut self, delay: u64, event: Event) {
        self.sequence += 1;
        self.events.push(Some(event));
        let index = self.events.len() - 1;
        self.queue
            .push(Reverse((self.now + delay, self.sequence, index)));
    }

    fn deliver_due(&mut self) -> Result<(), Violation> {
        while let Some(&Reverse((at, _, index))) = self.queue.peek() {
            if at > self.now {
                break;
            }
            self.queue.pop();
            let Some(event) = self.events[index].take() else {
                continue;
            };
            match event {
                Event::Request {
                    slot,
                    engine,
                    ticket,
                    request,
                } => self.authority_receives(slot, engine, ticket, request)?,
                Event::Commit { epoch } => {
                    if epoch == self.authority.epoch() {
                        if let Some((grant, owner)) = self.authority.commit_one() {
                            let holder = (owner, grant.incarnation);
                            self.checker.committed(grant.range, holder)?;
                            self.checker.commit_time(grant.range.start(), self.now);
                            if owner == insider_owner() {
                                // The insider uses whatever it got.
                                self.checker
                                    .issued_batch(INSIDER_ENGINE, &holder, grant.range)?;
                            } else {
                                self.check_reservation(&grant)?;
                            }
                            let (rows, most) = self.authority.ledger_rows();
                            let limits = self.authority.limits();
                            if rows > limits.ledger_rows() || most > limits.sub_ledger_rows() {
                                return Err(Violation::OverBudget { rows, most });
                            }
                            self.note(|| {
                                format!(
                                    "authority commits {} for {}/{}/{}",
                                    grant.range,
                                    owner,
                                    short(&grant.incarnation),
                                    grant.request_id
                                )
                            });
                        }
                    }
                }
                Event::Reply {
                    slot,
                    engine,
                    ticket,
                    epoch,
                    gate,
                    answer,
                } => match (epoch, gate) {
                    // The output gate: a grant's reply leaves once it is
                    // durable, and never if the authority lost it.
                    (Some(e), _) if e != self.authority.epoch() => {}
                    (Some(_), Some(g)) if !self.authority.is_committed(&g, &owner_of(slot)) => {
                        self.schedule(
                            1,
                            Event::Reply {
                                slot,
                                engine,
                                ticket,
                                epoch,
                                gate,
                                answer,
                            },
                        );
                    }
                    _ => match relay_of(slot) {
                        Some(r) => self.relay_receives(r, engine, ticket, answer)?,
                        None => self.generator_receives(slot, engine, ticket, answer)?,
                    },
                },
                Event::RelayRequest {
                    relay,
                    slot,
                    engine,
                    ticket,
                    request,
                } => self.relay_request(relay, slot, engine, ticket, request)?,
                Event::RelaysOn => {
                    self.relays_on = true;
                    // The driver starts a new instance for a relay the
                    // object had stopped for good.
                    for r in 0..self.relays.len() {
                        if self.relays[r].current.relay.stopped() {
                            let fresh = self.restarted_instance(r);
                            self.relays[r].current = fresh;
                        }
                    }
                }
                Event::RevokeAck { incarnation, epoch } => {
                    if epoch == self.authority.epoch() {
                        let at = self.root_clock.at(self.now);
                        self.gate.revoked(incarnation, at);
                    }
                }
                Event::Thaw => {
                    self.authority
                        .admin(|s| Some(s.with_status(NamespaceStatus::Active)));
                }
                Event::FenceRaise {
                    epoch,
                    target,
                    ok,
                    sent_at_fence,
                    mended_at_send,
                    applied,
                } => {
                    self.answer_in_flight = false;
                    if epoch != self.authority.epoch() {
                        continue; // the restart lost the raise and its waiters
                    }
                    self.raising = false;
                    let parked = std::mem::take(&mut self.parked);
                    let lost = ok && self.rng.chance(self.scenario.faults.witness_reply_lost);
                    let mut mended = true;
                    if ok {
                        let (answer, restored) = applied.unwrap_or_else(|| {
                            (self.authority.witness_raises(target), self.witness_restored)
                        });
                        self.report.fence_raises += 1;
                        self.note(|| format!("witness raises its mark to {}", answer.mark));
                        if lost {
                            self.report.witness_replies_lost += 1;
                            self.note(|| "the witness's answer is lost after its write".to_owned());
                        } else {
                            let heard = self.hear(
                                answer,
                                Phase::Running,
                                (sent_at_fence, mended_at_send),
                                restored,
                            )?;
                            if let Some(mark) = heard.raise_back {
                                // Restored while the raise was on its way:
                                // raised back before anything relies on it.
                                mended = self.raise_back(mark, answer.mark)?;
                            }
                        }
                    }
                    if ok && !lost && mended && self.authority.started() {
                        for p in parked {
                            self.authority_receives(p.slot, p.engine, p.ticket, p.request)?;
                        }
                    } else {
                        self.note(|| "witness unreachable: waiting requests get 503".to_owned());
                        for p in parked {
                            self.witness_unreachable(p.slot, p.engine, p.ticket);
                        }
                    }
                }
            }
        }
        if self.events.len() > 4096 && self.queue.is_empty() {
            self.events.clear();
        }
        Ok(())
    }

    fn authority_receives(
        &mut self,
        slot: usize,
        engine: u64,
        ticket: Ticket,
        request: GrantRequest,
    ) -> Result<(), Violation> {
        if self.now < self.down_until {
            return Ok(());
        }
        let f = self.scenario.faults;
        if slot < MAX_GENERATORS && self.now < self.token_refused_until[slot] {
            // Its token source renews late: even a fresh token is refused.
            self.report.token_refusals += 1;
            let expired = ErrorReply::new(ErrorCode::Unauthenticated, "token expired");
            self.send_reply(
                slot,
                engine,
                ticket,
                (None, None),
                HttpAnswer::error(&expired),
                0,
            );
            return Ok(());
        }
        if self.rng.chance(f.overload) {
            let busy = ErrorReply::new(ErrorCode::Unavailable, "the authority is overloaded");
            let answer = HttpAnswer::error(&busy);
            self.send_reply(slot, engine, ticket, (None, None), answer, 0);
            return Ok(());
        }
        if !self.authority.started() {
            // The first request after a restart: hear from the witness first.
            self.check_in(Phase::Starting)?;
            if !self.authority.started() {
                self.witness_unreachable(slot, engine, ticket);
                return Ok(());
            }
        }
        let owner = owner_of(slot);
        if relay_of(slot).is_some() {
            if let Err(refused) = self.gate.admit(self.relays_on, &request.incarnation) {
                self.report.relay_refusals += 1;
                let answer =
                    HttpAnswer::error(&ErrorReply::new(refused.code(), refused.to_string()));
                self.send_reply(slot, engine, ticket, (None, None), answer, 0);
                return Ok(());
            }
        }
        match self.authority.handle(&request, &owner, self.now) {
            Answer::Grant(grant, replayed) => {
                if relay_of(slot).is_some() {
                    // In the same step as the decision, as the object does.
                    let at = self.root_clock.at(self.now);
                    self.gate.granted(grant.incarnation, at);
                }
                let reply = GrantReply {
                    grant,
                    replayed,
                    capacity: Capacity::default(),
                };
                let answer = HttpAnswer::grant(&reply);
                let commit_delay = self.rng.between(1, 6);
                if !replayed {
                    let epoch = self.authority.epoch();
                    self.schedule(commit_delay, Event::Commit { epoch });
                }
                if self.authority.replies_early() {
                    self.send_reply(slot, engine, ticket, (None, None), answer, 0);
                } else {
                    let gate = (Some(self.authority.epoch()), Some(grant));
                    self.send_reply(slot, engine, ticket, gate, answer, commit_delay);
                }
            }
            Answer::Refused(refusal) => {
                let answer = HttpAnswer::refusal(&refusal);
                self.send_reply(slot, engine, ticket, (None, None), answer, 0);
            }
            Answer::NeedsFence(at_least) => {
                // One raise at a time; the request waits for it.
                self.parked.push(Parked {
                    slot,
                    engine,
                    ticket,
                    request,
                });
                if !self.raising {
                    self.raising = true;
                    let target = self
                        .authority
                        .fence_target(at_least, request.count, self.now);
                    // Recorded before the request leaves (the output gate).
                    self.authority.ask_witness(target);
                    let ok = !self.rng.chance(f.witness_down);
                    // Half the raises reach the witness at once, long before
                    // their answer comes back.
                    let applied = (ok && self.rng.chance(500_000))
                        .then(|| (self.authority.witness_raises(target), self.witness_restored));
                    self.answer_in_flight = applied.is_some();
                    let event = Event::FenceRaise {
                        epoch: self.authority.epoch(),
                        target,
                        ok,
                        sent_at_fence: self.authority.committed_state().fence(),
                        mended_at_send: self.witness_mended,
                        applied,
                    };
                    let delay = self.rng.between(1, 6);
                    self.schedule(delay, event);
                }
            }
            Answer::NotStarted => unreachable!("started above"),
            Answer::Unavailable => {
                let answer = HttpAnswer::error(&ErrorReply::new(
                    ErrorCode::Unavailable,
                    "the authority cannot carry out this decision",
                ));
                self.send_reply(slot, engine, ticket, (None, None), answer, 0);
            }
        }
        Ok(())
    }

    /// The authority applies an answer of its witness, given after the
    /// witness's `restored`-th restore, to a request sent at fence
    /// `sent_at_fence` when the authority had mended `mended_at_send`
    /// restores. A rollback, or a witness behind, it reports must be real:
    /// a witness behind needs a restore the authority had not mended when
    /// it sent the request.
    fn hear(
        &mut self,
        answer: rangeid_core::fence::Witnessed,
        phase: Phase,
        (sent_at_fence, mended_at_send): (u128, u64),
        restored: u64,
    ) -> Result<Heard, Violation> {
        let heard = self.authority.heard(answer, phase, sent_at_fence);
        self.report.fence_skipped += heard.skipped;
        if heard.forward {
            self.report.fence_forwards += 1;
            if !self.object_unseen {
                return Err(Violation::FalseRollback { mark: answer.mark });
            }
        }
        if heard.behind && restored <= mended_at_send {
            return Err(Violation::FalseWitnessBehind { mark: answer.mark });
        }
        if heard.behind && heard.raise_back.is_none() {
            self.report.witness_behinds += 1;
        }
        // The witness counts as seen once it holds the fence again: a
        // witness found behind but not yet raised back is still a restore
        // the object has not mended.
        if heard.raise_back.is_none() {
            self.witness_mended = self.witness_mended.max(restored);
        }
        self.object_unseen = false;
        Ok(heard)
    }

    /// A start or a periodic check-in: the authority reads its witness,
    /// applies the answer and raises a witness below its fence back before
    /// any grant. A witness it cannot reach leaves it unstarted (`Starting`)
    /// or as it was (`Running`); a raise back that fails leaves it
    /// unstarted.
    fn check_in(&mut self, phase: Phase) -> Result<(), Violation> {
        let f = self.scenario.faults;
        if self.rng.chance(f.witness_down) {
            return Ok(());
        }
        let got = self.authority.witness_read();
        let fence = self.authority.committed_state().fence();
        let sent = (fence, self.witness_mended);
        let heard = self.hear(got, phase, sent, self.witness_restored)?;
        self.note(|| {
            format!(
                "authority hears from its witness at {}: skips {} IDs (rollback: {}, witness behind: {})",
                got.mark, heard.skipped, heard.forward, heard.raise_back.is_some()
            )
        });
        if let Some(mark) = heard.raise_back {
            self.authority.set_started(false);
            if !self.raise_back(mark, got.mark)? {
                return Ok(());
            }
        }
        self.authority.set_started(true);
        Ok(())
    }

    /// Raises a witness found below the fence back to `mark` (it said it
    /// held `was`); false when the witness could not be reached.
    fn raise_back(&mut self, mark: u128, was: u128) -> Result<bool, Violation> {
        self.authority.ask_witness(mark);
        if self.rng.chance(self.scenario.faults.witness_down) {
            return Ok(false);
        }
        let fence = self.authority.committed_state().fence();
        let mut answer = self.authority.witness_raises(mark);
        answer.was = answer.was.or(Some(was));
        self.note(|| format!("authority raises its witness back to {mark}"));
        let restored = self.witness_restored;
        Ok(self
            .hear(
                answer,
                Phase::Running,
                (fence, self.witness_mended),
                restored,
            )?
            .raise_back
            .is_none())
    }

    /// The answer when the witness cannot be reached: `503`, never a grant.
    fn witness_unreachable(&mut self, slot: usize, engine: u64, ticket: Ticket) {
        self.report.witness_refusals += 1;
        let busy = ErrorReply::new(
            ErrorCode::Unavailable,
            "the fence's witness cannot be reached",
        );
        self.send_reply(
            slot,
            engine,
            ticket,
            (None, None),
            HttpAnswer::error(&busy),
            0,
        );
    }

    /// Holds an incarnation in slow start to its reservation bound: what
    /// is committed to it stays within `max(2 * min, 4 * issued)`, plus a
    /// batch per request in flight when its batches came back short.
    fn check_reservation(&mut self, grant: &Grant) -> Result<(), Violation> {
        let config = lease_config(self.namespace);
        let Some(book) = self.books.get_mut(&grant.incarnation) else {
            return Ok(());
        };
        book.committed.insert(grant.request_id, grant.range.count());
        if self.now.saturating_sub(book.born) >= TRUST_MS || self.scenario.reuse_incarnation {
            return Ok(());
        }
        let batches = book.largest_batch.min(config.max_range_size) * config.max_outstanding as u64
            + book.largest_exact;
        let bound = (2 * config.min_range_size).max(4 * book.issued) + batches;
        let committed: u64 = book.committed.values().sum();
        if committed > bound {
            return Err(Violation::OverReserved {
                incarnation: grant.incarnation.to_string(),
                reserved: committed,
                issued: book.issued,
                bound,
            });
        }
        Ok(())
    }

    /// Puts an answer on the network, which may lose, delay, duplicate or
    /// mangle it.
    fn send_reply(
        &mut self,
        slot: usize,
        engine: u64,
        ticket: Ticket,
        (epoch, gate): (Option<u64>, Option<Grant>),
        answer: HttpAnswer,
        after: u64,
    ) {
        let f = self.scenario.faults;
        if self.rng.chance(f.drop_reply) {
            self.report.dropped += 1;
            self.note(|| format!("network drops the reply to generator {slot}"));
            return;
        }
        let answer = self.mangle(answer);
        let (lo, hi) = self.scenario.reply_delay_ms;
        let mut delay = after + self.rng.between(lo, hi);
        if self.rng.chance(f.slow_reply) {
            // Outlives the request timeout: the retry goes out meanwhile.
            delay += self.rng.between(25, 80);
        }
        let event = |answer| Event::Reply {
            slot,
            engine,
            ticket,
            epoch,
            gate,
            answer,
        };
        self.schedule(delay, event(Wire::Http(answer.clone())));
        if self.rng.chance(f.duplicate_reply) {
            self.report.duplicated += 1;
            self.note(|| format!("network will deliver the reply to generator {slot} twice"));
            let again = after + self.rng.between(1, 40);
            self.schedule(again, event(Wire::Http(answer)));
        }
    }

    /// What a faulty network and proxies do to an answer's bytes.
    fn mangle(&mut self, mut answer: HttpAnswer) -> HttpAnswer {
        let f = self.scenario.faults;
        let before = self.report.mangled;
        if self.rng.chance(f.proxy_error) {
            answer = HttpAnswer {
                status: 502,
                retry_after_secs: None,
                body: b"<html><body><h1>502 Bad Gateway</h1></body></html>".to_vec(),
            };
            self.report.mangled += 1;
        }
        if answer.status == 200 && self.rng.chance(f.truncate) {
            let keep = self.rng.between(0, answer.body.len() as u64) as usize;
            answer.body.truncate(keep);
            self.report.mangled += 1;
        }
        if answer.body.first() == Some(&b'{') && self.rng.chance(f.unknown_field) {
            let field = br#"{"fromTheFuture":{"list":[1,"two",null,{"x":1.5e3}]},"#;
            answer.body.splice(0..1, field.iter().copied());
            self.report.mangled += 1;
        }
        if answer.status == 503 && self.rng.chance(f.unknown_code) {
            let text = String::from_utf8_lossy(&answer.body)
                .replace("\"unavailable\"", "\"brand_new_busy\"");
            answer.body = text.into_bytes();
            self.report.mangled += 1;
        }
        if self.report.mangled != before {
            self.note(|| {
                format!(
                    "network mangles a reply: {}",
                    String::from_utf8_lossy(&answer.body)
                )
            });
        }
        answer
    }

    fn generator_receives(
        &mut self,
        slot: usize,
        engine: u64,
        ticket: Ticket,
        wire: Wire,
    ) -> Result<(), Violation> {
        let now = self.now;
        let g = &mut self.gens[slot];
        if g.engine != engine {
            // The engine that sent it is gone (restarted). A grant reaching
            // the new one is refused as another incarnation's; failures are
            // dropped with their engine.
            let reply = from_wire(&wire);
            if matches!(reply, Reply::Grant(_)) {
                g.lease.handle_reply(ticket, &reply, Instant::from_ms(now));
            }
            return Ok(());
        }
        if now < g.paused_until {
            g.inbox.push((ticket, wire));
            return Ok(());
        }
        if g.cancelled.contains(&ticket) {
            // A transport that honours the abort drops the answer; one
            // that ignores it delivers it late.
            let late = matches!(wire, Wire::Http(_))
                && self.rng.chance(self.scenario.faults.late_after_cancel);
            if !late {
                return Ok(());
            }
        } else {
            g.live.remove(&ticket);
        }
        let reply = from_wire(&wire);
        if let Reply::Refused(r) = &reply {
            if r.status == 429 {
                self.report.throttled += 1;
            }
            // Refused for a full ledger while below its own budget: the
            // whole ledger was full, which no flood of one sub may cause.
            let own = self.authority.rows_of(&owner_of(slot));
            if r.code == ReplyCode::Known(ErrorCode::LedgerFull)
                && own < self.scenario.limits.sub_ledger_rows()
            {
                return Err(Violation::Starved { slot });
            }
        }
        let g = &mut self.gens[slot];
        if !matches!(reply, Reply::Grant(_)) {
            if let Some(latest) = g.latest.get_mut(&ticket.request()) {
                if latest.0 == ticket.attempt() {
                    latest.2 = true;
                }
            }
        }
        let handled = g.lease.handle_reply(ticket, &reply, Instant::from_ms(now));
        // The Rust client's driver is woken by every answer it hands over.
        g.shelf.woken = true;
        let inc = short(g.lease.incarnation());
        self.note(|| {
            format!(
                "generator {slot} ({inc}) gets {} for {ticket:?}: {handled:?}",
                describe(&reply)
            )
        });
        Ok(())
    }

    /// Carries out every action the engine in `slot` wants now.
    fn drive(&mut self, slot: usize) -> Result<(), Violation> {
        let now = self.now;
        let timeout = lease_config(self.namespace).request_timeout_ms;
        while let Some(action) = self.gens[slot].lease.poll(Instant::from_ms(now)) {
            match action {
                Action::Cancel(upto) => self.cancel(slot, upto),
                Action::Send(out) => {
                    let t = out.ticket;
                    let g = &mut self.gens[slot];
                    if t.attempt() > 0 {
                        let (attempt, sent, failed) =
                            g.latest.get(&t.request()).copied().unwrap_or((0, 0, false));
                        if attempt + 1 != t.attempt() || !(failed || now >= sent + timeout) {
                            return Err(Violation::PrematureRetry {
                                request: t.request(),
                                attempt: t.attempt(),
                                after_ms: now - sent,
                            });
                        }
                    }
                    g.latest.insert(t.request(), (t.attempt(), now, false));
                    g.last_sent = Some(out.request);
                    self.report.requests += 1;
                    self.report.max_attempt = self.report.max_attempt.max(out.ticket.attempt());
                    if out.ticket.attempt() > 0 {
                        self.report.retries += 1;
                        self.note(|| format!("generator {slot} retries {:?}", out.ticket));
                    }
                    self.gens[slot].live.insert(out.ticket);
                    if self.rng.chance(self.scenario.faults.drop_request) {
                        self.report.dropped += 1;
                        self.note(|| {
                            format!("network drops {:?} from generator {slot}", out.ticket)
                        });
                        continue;
                    }
                    let delay = self.rng.between(1, 8);
                    let engine = self.gens[slot].engine;
                    if now < self.proxy_blocked_until {
                        // The proxy answers itself; the authority never sees it.
                        self.report.proxy_refusals += 1;
                        let page = HttpAnswer {
                            status: 403,
                            retry_after_secs: None,
                            body: PROXY_PAGE.to_vec(),
                        };
                        self.send_reply(slot, engine, out.ticket, (None, None), page, delay);
                        continue;
                    }
                    let via = self.gens[slot].via.filter(|_| self.relays_on);
                    let event = match via {
                        Some(relay) => Event::RelayRequest {
                            relay,
                            slot,
                            engine,
                            ticket: out.ticket,
                            request: out.request,
                        },
                        None => Event::Request {
                            slot,
                            engine,
                            ticket: out.ticket,
                            request: out.request,
                        },
                    };
                    self.schedule(delay, event);
                }
                // An action this driver does not know (core's `Action` may
                // grow): the run stops with a typed violation rather than
                // go on without doing what the engine asked.
                other => {
                    return Err(Violation::UnknownAction {
                        slot,
                        action: format!("{other:?}"),
                    })
                }
            }
        }
        Ok(())
    }

    /// The driver's side of a cancellation: stop waiting for those
    /// attempts, and sometimes report their abort as a failure (which the
    /// engine must ignore).
    fn cancel(&mut self, slot: usize, upto: Ticket) {
        let g = &mut self.gens[slot];
        let gone: Vec<Ticket> = g
            .live
            .iter()
            .filter(|t| t.request() == upto.request() && t.attempt() <= upto.attempt())
            .copied()
            .collect();
        let engine = g.engine;
        for t in gone {
            let g = &mut self.gens[slot];
            g.live.remove(&t);
            g.cancelled.insert(t);
            self.report.cancelled += 1;
            if self.rng.chance(self.scenario.faults.report_cancel) {
                let delay = self.rng.between(0, 3);
                self.schedule(
                    delay,
                    Event::Reply {
                        slot,
                        engine,
                        ticket: t,
                        epoch: None,
                        gate: None,
                        answer: Wire::NoAnswer,
                    },
                );
            }
        }
    }

    fn step_generator(&mut self, slot: usize) -> Result<(), Violation> {
        let now = self.now;
        if now < self.gens[slot].paused_until {
            return Ok(());
        }
        let inbox = std::mem::take(&mut self.gens[slot].inbox);
        let engine = self.gens[slot].engine;
        for (ticket, wire) in inbox {
            self.generator_receives(slot, engine, ticket, wire)?;
        }
        let batchy = self.rng.chance(300_000);
        let mut want = self.rng.between(0, self.gens[slot].per_ms * 2 + 1);
        if self.gens[slot].sparse && !self.rng.chance(50_000) {
            want = 0;
        }
        if batchy && self.rng.chance(20_000) {
            // A hoarder: takes whole ranges at once, as the JS driver does
            // for its local block, so installed ranges pile up behind.
            want += 2_000;
        }
        if self.gens[slot].shelved {
            return self.step_shelved(slot, want, batchy);
        }
        let g = &mut self.gens[slot];
        let book = self.books.entry(*g.lease.incarnation()).or_default();
        let holder = (owner_of(slot), *g.lease.incarnation());
        if g.waiting > 0 && now >= g.waiting_since + BATCH_DEADLINE_MS {
            // The caller's deadline: it gives up, and nothing was taken.
            g.waiting = 0;
        }
        if g.lender && (batchy || g.waiting > 0) {
            // An exact batch, as the JS driver's `nextIds(n)`: all of it or
            // nothing, the lent block first; a caller waits for it (the
            // engine is told as demand) until it comes or cannot.
            let n = match g.waiting {
                0 => want.clamp(1, g.lease.batch_limit()),
                waiting => waiting,
            };
            match g.lease.take_exact(n, g.block_left) {
                Ok(batch) => {
                    if batch.count() != n {
                        return Err(Violation::NotExact {
                            incarnation: g.lease.incarnation().to_string(),
                            asked: n,
                            got: batch.count(),
                        });
                    }
                    if batch.from_lent > 0 {
                        let from_block = Range::with_count(g.block_next, batch.from_lent)
                            .unwrap_or_else(|_| unreachable!());
                        g.block_next = g.block_next.wrapping_add(batch.from_lent);
                        g.block_left -= batch.from_lent;
                        self.checker.issued_batch(g.engine, &holder, from_block)?;
                    }
                    for piece in batch.pieces() {
                        self.checker.issued_batch(g.engine, &holder, piece)?;
                    }
                    book.issued += n;
                    self.report.exact_batches += 1;
                    if g.waiting > 0 {
                        self.report.exact_batches_waited += 1;
                    }
                    g.waiting = 0;
                }
                Err(IssueError::Failed(code)) => {
                    g.waiting = 0;
                    // Refused for good (a request conflict, say): this
                    // generator is finished until a restart replaces it.
                    // Only a generator that reuses its incarnation (a bug
                    // of its own) may be; anything else stopped it.
                    if !self.scenario.reuse_incarnation {
                        return Err(Violation::Stopped {
                            slot,
                            code: code.as_str().to_owned(),
                        });
                    }
                    if g.per_ms != 0 {
                        g.per_ms = 0;
                        self.report.failed_generators += 1;
                    }
                }
                // Told at once, as a caller is: the namespace cannot supply
                // it, or (after a smaller maxCount was learned) it is too
                // large to gather.
                Err(
                    IssueError::TooFew { .. }
                    | IssueError::BatchTooLarge { .. }
                    | IssueError::Exhausted,
                ) => g.waiting = 0,
                // Waiting (or, while blocked, calling again later).
                Err(IssueError::Unavailable | IssueError::Frozen | IssueError::Blocked(_)) => {
                    if g.waiting == 0 {
                        g.waiting_since = now;
                    }
                    g.waiting = n;
                    book.largest_exact = book.largest_exact.max(n);
                }
                Err(other) => panic!(
                    "seed {}: unexpected batch error {other}",
                    self.scenario.seed
                ),
            }
            g.lease.set_demand(g.waiting, g.block_left);
        } else {
            let mut left = want;
            let lend_size = self.rng.between(1, 65);
            while left > 0 {
                // A batch that comes back short (or not at all) lets the
                // engine size its next range to hold it: the bound allows
                // for that.
                let asked = left;
                let got = match (g.lender, batchy) {
                    (false, true) => g.lease.take(left),
                    (false, false) => g
                        .lease
                        .next_id()
                        .map(|id| Range::with_count(id, 1).unwrap_or_else(|_| unreachable!())),
                    (true, _) => Self::from_block(g, lend_size),
                };
                match got {
                    Ok(batch) => {
                        left -= batch.count();
                        self.checker.issued_batch(g.engine, &holder, batch)?;
                        book.issued += batch.count();
                        if batchy && batch.count() < asked {
                            book.largest_batch = book.largest_batch.max(asked);
                        }
                    }
                    Err(
                        IssueError::Unavailable
                        | IssueError::Frozen
                        | IssueError::Blocked(_)
                        | IssueError::Exhausted,
                    ) => {
                        if batchy {
                            book.largest_batch = book.largest_batch.max(asked);
                        }
                        break;
                    }
                    Err(IssueError::Failed(_)) => {
                        // Refused for good (a request conflict, say): this
                        // generator is finished until a restart replaces it.
                        if g.per_ms != 0 {
                            g.per_ms = 0;
                            self.report.failed_generators += 1;
                        }
                        break;
                    }
                    Err(other) => panic!(
                        "seed {}: unexpected issue error {other}",
                        self.scenario.seed
                    ),
                }
            }
        }
        let due = g
            .lease
            .next_deadline()
            .is_some_and(|d| d <= Instant::from_ms(now));
        if g.lease.should_poll() || due || g.waiting > 0 {
            self.drive(slot)?;
        }
        Ok(())
    }

    /// A lender's single ID, as the JS driver issues it: from its block,
    /// lending a new block of `lend_size` when it is empty.
    fn from_block(g: &mut Generator, lend_size: u64) -> Result<Range, IssueError> {
        if g.block_left == 0 {
            let r = g.lease.lend(lend_size)?;
            g.block_next = r.start();
            g.block_left = r.count();
        }
        let start = g.block_next;
        g.block_next = g.block_next.wrapping_add(1);
        g.block_left -= 1;
        Ok(Range::with_count(start, 1).unwrap_or_else(|_| unreachable!()))
    }

    /// One millisecond of a generator that issues as the Rust client
    /// does. Its callers take IDs from the shelf (lock-free in the
    /// client), and exact batches from the issuing block or, sealing both
    /// blocks, through the engine (`next_ids`); a caller who finds no ID
    /// wakes the driver, and sometimes waits for it (`next_id_async`), as
    /// does one whose batch must wait. The driver runs a pass when woken,
    /// or at the engine's or the waiting caller's deadline.
    fn step_shelved(&mut self, slot: usize, want: u64, batchy: bool) -> Result<(), Violation> {
        let now = self.now;
        // One caller waits at a time; callers of single IDs (other threads)
        // go on meanwhile.
        if batchy && self.gens[slot].waiting == 0 {
            let n = want.clamp(1, self.gens[slot].lease.batch_limit());
            self.shelf_next_ids(slot, n)?;
        } else if !batchy {
            self.shelf_next_id(slot, want)?;
        }
        let g = &self.gens[slot];
        let due = g
            .lease
            .next_deadline()
            .is_some_and(|d| d <= Instant::from_ms(now))
            || (g.waiting > 0 && now >= g.waiting_since + BATCH_DEADLINE_MS);
        if g.shelf.woken || due {
            self.shelf_pass(slot)?;
        }
        Ok(())
    }

    /// `want` calls of `next_id`, from the shelf; the first that finds none
    /// ends them.
    fn shelf_next_id(&mut self, slot: usize, want: u64) -> Result<(), Violation> {
        // Runs of consecutive IDs from one block are checked as one batch
        // (the next block may continue them from another range).
        let mut run: Option<(u64, u64)> = None;
        let mut missed = false;
        for _ in 0..want {
            let swaps = self.gens[slot].shelf.swaps;
            let Some(id) = self.gens[slot].shelf.next_id() else {
                missed = true;
                break;
            };
            let same_block = self.gens[slot].shelf.swaps == swaps;
            run = match run {
                Some((start, n)) if same_block && start.checked_add(n) == Some(id) => {
                    Some((start, n + 1))
                }
                Some((start, n)) => {
                    self.give(slot, start, n)?;
                    Some((id, 1))
                }
                None => Some((id, 1)),
            };
        }
        if let Some((start, n)) = run {
            self.give(slot, start, n)?;
        }
        if missed {
            self.shelf_miss(slot)?;
        }
        Ok(())
    }

    /// A caller found both blocks used up: it wakes the driver, and half
    /// the time waits for an ID (`next_id_async`), unless waiting cannot
    /// help now (as the client's `wait` decides).
    fn shelf_miss(&mut self, slot: usize) -> Result<(), Violation> {
        let now = self.now;
        let waits = self.rng.chance(500_000);
        let g = &mut self.gens[slot];
        g.shelf.woken = true;
        let why = g.lease.issue_error();
        if let IssueError::Failed(code) = why {
            return self.shelf_failed(slot, code);
        }
        if !waits || g.waiting > 0 || (!why.waits() && g.shelf.unused() == 0) {
            return Ok(());
        }
        g.waiting = 1;
        g.wait_one = true;
        g.waiting_since = now;
        Ok(())
    }

    /// A caller's `next_ids(n)`: the batch now, else a wait when the
    /// engine says to.
    fn shelf_next_ids(&mut self, slot: usize, n: u64) -> Result<(), Violation> {
        match self.shelf_take_batch(slot, n)? {
            // The shelf may need a refill now.
            Ok(()) => self.gens[slot].shelf.woken = true,
            Err(e) if e.waits() => {
                let now = self.now;
                let g = &mut self.gens[slot];
                g.waiting = n;
                g.wait_one = false;
                g.waiting_since = now;
                g.shelf.woken = true;
                let book = self.books.entry(*g.lease.incarnation()).or_default();
                book.largest_exact = book.largest_exact.max(n);
            }
            Err(IssueError::Failed(code)) => self.shelf_failed(slot, code)?,
            // Told at once: too few left, too large, exhausted, blocked.
            Err(_) => {}
        }
        Ok(())
    }

    /// The client's `take_batch`: exactly `n` from the issuing block when
    /// it holds them; else, once the engine says the batch can be had
    /// (`check_exact`), seals both blocks, asks the engine for exactly `n`
    /// counting their tails as held, gives the caller what the batch takes
    /// of the tails (issuing block first) and the engine's pieces, and
    /// puts back what is left of the tails. The engine's error when it
    /// cannot, the tails put back whole.
    fn shelf_take_batch(
        &mut self,
        slot: usize,
        n: u64,
    ) -> Result<Result<(), IssueError>, Violation> {
        let bug = self.scenario.driver_bug;
        let g = &mut self.gens[slot];
        if let Some(r) = g.shelf.take(n) {
            self.give(slot, r.start(), r.count())?;
            self.report.exact_batches += 1;
            return Ok(Ok(()));
        }
        if let Err(e) = g.lease.check_exact(n, g.shelf.unused()) {
            return Ok(Err(e));
        }
        let tails = g.shelf.seal();
        let held: u64 = tails.iter().flatten().map(Range::count).sum();
        let batch = match g.lease.take_exact(n, held) {
            Ok(batch) => batch,
            Err(e) => {
                g.shelf.put_back(tails);
                return Ok(Err(e));
            }
        };
        if batch.count() != n {
            return Err(Violation::NotExact {
                incarnation: g.lease.incarnation().to_string(),
                asked: n,
                got: batch.count(),
            });
        }
        let mut from_held = batch.from_lent;
        let mut rest = [None; 2];
        let mut given = Vec::with_capacity(4);
        for (k, tail) in tails.iter().enumerate() {
            let Some(t) = tail else { continue };
            let take = from_held.min(t.count());
            if take > 0 {
                given.push((t.start(), take));
            }
            from_held -= take;
            if take < t.count() {
                rest[k] = Range::with_count(t.start() + take, t.count() - take).ok();
            }
        }
        given.extend(batch.pieces().map(|p| (p.start(), p.count())));
        g.shelf.put_back(match bug {
            DriverBug::ReusesTail => tails,
            _ => rest,
        });
        for (start, count) in given {
            self.give(slot, start, count)?;
        }
        self.report.tail_ids += batch.from_lent;
        self.report.exact_batches += 1;
        Ok(Ok(()))
    }

    /// The driver's pass (the client's `service`): refill the shelf, serve
    /// the waiting caller, tell the engine what it waits for, carry out the
    /// engine's actions, refill again.
    fn shelf_pass(&mut self, slot: usize) -> Result<(), Violation> {
        let g = &mut self.gens[slot];
        g.shelf.woken = false;
        g.shelf.refill_wanted = false;
        self.shelf_refill(slot);
        self.shelf_serve(slot)?;
        let g = &mut self.gens[slot];
        let held = g.shelf.unused();
        g.lease.set_demand(g.waiting, held);
        self.drive(slot)?;
        // Poll may have made the shelf's next block lendable.
        self.shelf_refill(slot);
        Ok(())
    }

    /// The driver refills used-up blocks with blocks the engine lends,
    /// keeping what the other block holds lent (`lend_keeping`).
    fn shelf_refill(&mut self, slot: usize) {
        let bug = self.scenario.driver_bug;
        let g = &mut self.gens[slot];
        let lease = &mut g.lease;
        let kept = g.shelf.refill(|held| {
            match bug {
                DriverBug::LendsWithoutKeeping => lease.lend(BLOCK),
                _ => lease.lend_keeping(BLOCK, held),
            }
            .ok()
        });
        self.report.kept_lends += kept;
    }

    /// The driver serves the waiting caller, if it can; tells it at once
    /// when waiting cannot help, and at its deadline.
    fn shelf_serve(&mut self, slot: usize) -> Result<(), Violation> {
        let now = self.now;
        let g = &mut self.gens[slot];
        if g.waiting == 0 {
            return Ok(());
        }
        if g.wait_one {
            // The shelf may be used up while the engine holds more.
            let id = match g.shelf.next_id() {
                Some(id) => Some(id),
                None => {
                    self.shelf_refill(slot);
                    self.gens[slot].shelf.next_id()
                }
            };
            if let Some(id) = id {
                self.gens[slot].waiting = 0;
                self.report.shelf_waits += 1;
                self.give(slot, id, 1)?;
                self.shelf_refill(slot);
                return Ok(());
            }
        } else {
            let n = g.waiting;
            match self.shelf_take_batch(slot, n)? {
                Ok(()) => {
                    self.gens[slot].waiting = 0;
                    self.report.shelf_waits += 1;
                    self.report.exact_batches_waited += 1;
                    self.shelf_refill(slot);
                    return Ok(());
                }
                Err(e) if e.waits() => {}
                Err(e) => {
                    self.gens[slot].waiting = 0;
                    if let IssueError::Failed(code) = e {
                        return self.shelf_failed(slot, code);
                    }
                    return Ok(());
                }
            }
        }
        let g = &mut self.gens[slot];
        let why = g.lease.issue_error();
        if let IssueError::Failed(code) = why {
            g.waiting = 0;
            return self.shelf_failed(slot, code);
        }
        if !why.waits() || now >= g.waiting_since + BATCH_DEADLINE_MS {
            g.waiting = 0;
        }
        Ok(())
    }

    /// Refused for good: only a generator that reuses its incarnation (a
    /// bug of its own) may be; then it is finished until a restart.
    fn shelf_failed(&mut self, slot: usize, code: ReplyCode) -> Result<(), Violation> {
        if !self.scenario.reuse_incarnation {
            return Err(Violation::Stopped {
                slot,
                code: code.as_str().to_owned(),
            });
        }
        let g = &mut self.gens[slot];
        if g.per_ms != 0 {
            g.per_ms = 0;
            self.report.failed_generators += 1;
        }
        Ok(())
    }

    /// A shelved generator's caller is given `count` IDs from `start`:
    /// checked, and counted for its incarnation.
    fn give(&mut self, slot: usize, start: u64, count: u64) -> Result<(), Violation> {
        let r = Range::with_count(start, count).unwrap_or_else(|_| unreachable!());
        let g = &self.gens[slot];
        let holder = (owner_of(slot), *g.lease.incarnation());
        self.checker.issued_batch(g.engine, &holder, r)?;
        self.books.entry(holder.1).or_default().issued += count;
        self.report.shelf_ids += count;
        Ok(())
    }

    /// The insider, a caller at the authority with its own generator
    /// token: now and then it takes a `count: 1` grant under its own
    /// incarnation and the next request number (a flood that spans absorb
    /// until other grants come between), and now and then posts a
    /// generator's next request (its incarnation and the number after its
    /// last, with the same count) first. Whatever it is granted it issues.
    fn insider_acts(&mut self) {
        if self.now < self.down_until || !self.authority.started() {
            return;
        }
        let owner = insider_owner();
        if self.rng.chance(700_000) {
            let request = GrantRequest {
                namespace: self.namespace,
                incarnation: self.insider.incarnation,
                request_id: RequestId::numbered(self.insider.next),
                count: 1,
            };
            if self.insider_requests(&request, &owner) {
                self.insider.next += 1;
            }
        }
        if self.rng.chance(30_000) {
            let slot = self.rng.between(0, self.gens.len() as u64) as usize;
            let next = self.gens[slot].last_sent.and_then(|r| {
                let n = r.request_id.number()?.checked_add(1)?;
                Some(GrantRequest {
                    request_id: RequestId::numbered(n),
                    ..r
                })
            });
            if let Some(request) = next {
                self.report.preclaims += 1;
                self.note(|| {
                    format!(
                        "insider posts generator {slot}'s next request {}",
                        request.request_id
                    )
                });
                self.insider_requests(&request, &owner);
            }
        }
    }

    /// One insider request, decided at once (it is at the authority):
    /// whether it was granted (new or replayed). A grant is committed like
    /// any other; one that needs the fence raised is dropped (the
    /// generators' grants raise it).
    fn insider_requests(&mut self, request: &GrantRequest, owner: &Owner) -> bool {
        match self.authority.handle(request, owner, self.now) {
            Answer::Grant(_, replayed) => {
                if !replayed {
                    self.report.insider_grants += 1;
                    let epoch = self.authority.epoch();
                    let delay = self.rng.between(1, 6);
                    self.schedule(delay, Event::Commit { epoch });
                }
                true
            }
            Answer::Refused(Refusal::RateLimited { .. } | Refusal::LedgerFull { .. }) => {
                self.report.throttled += 1;
                false
            }
            Answer::Refused(_)
            | Answer::NeedsFence(_)
            | Answer::NotStarted
            | Answer::Unavailable => false,
        }
    }

    /// A new relay instance from `random`, started at `now` on its clock.
    fn new_instance(&mut self, random: [u8; 16], now: Instant) -> Instance {
        self.instances += 1;
        let bug = self.scenario.relay_bug;
        let config = relay_config(self.namespace, bug, self.scenario.relay_min_range);
        Instance::new(
            config,
            self.instances,
            random,
            now,
            bug == RelayBug::KeepsCursor,
        )
    }

    /// The instance that replaces relay `r`'s after a crash or eviction:
    /// a fresh start, unless a bug makes it reuse what it must not.
    fn restarted_instance(&mut self, r: usize) -> Instance {
        let now = self.relays[r].clock.at(self.now);
        match self.scenario.relay_bug {
            RelayBug::KeepsCursor => {
                self.instances += 1;
                let old = &self.relays[r].current;
                old.restored(self.instances, old.saved)
            }
            RelayBug::ReusesIncarnation => {
                let random = self.relays[r].current.random;
                self.new_instance(random, now)
            }
            _ => {
                let random = self.rng.bytes16();
                self.new_instance(random, now)
            }
        }
    }

    /// The namespace object started again: its relay gate is made anew at
    /// its clock's reading, and acts waiting to be acknowledged are lost
    /// (the operator's call failed); a freeze among them is thawed later.
    fn root_restarted(&mut self) {
        if self.relays.is_empty() {
            return;
        }
        self.gate = RelayGate::new(sim_terms(), self.root_clock.at(self.now));
        for act in std::mem::take(&mut self.acts) {
            if let Some(thaw) = act.thaw_after {
                self.schedule(thaw, Event::Thaw);
            }
            if let Some(on) = act.on_after {
                self.schedule(on, Event::RelaysOn);
            }
        }
    }

    /// An admin act committed now: it waits for the relay gate.
    fn begin_act(&mut self, thaw_after: Option<u64>, on_after: Option<u64>) {
        let act = self.gate.begin(self.root_clock.at(self.now));
        self.acts.push(PendingAct {
            act,
            committed: self.now,
            thaw_after,
            on_after,
            revoked_at: None,
        });
    }

    /// One millisecond of the relays: faults, acts, revocations, and each
    /// instance driven at its deadline.
    fn relays_step(&mut self) -> Result<(), Violation> {
        let f = self.scenario.faults;
        let now = self.now;
        for r in 0..self.relays.len() {
            if self.relays[r].stale.is_some() && now >= self.relays[r].stale_until {
                if let Some(stale) = self.relays[r].stale.take() {
                    self.report.relay_abandoned += stale.relay.stats().held;
                }
            }
            if now % 20 == 0 {
                let node = &mut self.relays[r];
                node.current.saved = node.current.log_len();
            }
            let (restart, evict) = (
                self.rng.chance(f.relay_restart),
                self.rng.chance(f.relay_evict),
            );
            if restart || evict {
                if restart {
                    self.report.relay_restarts += 1;
                } else {
                    self.report.relay_evictions += 1;
                }
                let fresh = self.restarted_instance(r);
                let old = std::mem::replace(&mut self.relays[r].current, fresh);
                self.report.relay_abandoned += old.relay.stats().held;
                self.note(|| {
                    format!(
                        "relay {r} restarts: {} abandons {} IDs",
                        short(old.relay.incarnation()),
                        old.relay.stats().held
                    )
                });
            } else if self.relays[r].stale.is_none() && self.rng.chance(f.relay_split) {
                self.report.relay_splits += 1;
                let fresh = self.restarted_instance(r);
                let old = std::mem::replace(&mut self.relays[r].current, fresh);
                self.relays[r].stale = Some(old);
                self.relays[r].stale_until = now + self.rng.between(20, 300);
                self.note(|| {
                    format!("relay {r} splits: a second instance starts, the first runs on")
                });
            }
        }
        if self.relays_on && self.authority.started() && self.rng.chance(f.relays_off) {
            // Committed at once (a setting), acknowledged through the gate.
            self.relays_on = false;
            self.report.relays_turned_off += 1;
            let on = self.rng.between(20, 200);
            self.note(|| {
                format!("an admin turns relays off for {on} ms after the acknowledgement")
            });
            self.begin_act(None, Some(on));
        }
        self.acts_step();
        for r in 0..self.relays.len() {
            let ids: Vec<u64> = std::iter::once(self.relays[r].current.id)
                .chain(self.relays[r].stale.as_ref().map(|s| s.id))
                .collect();
            for id in ids {
                let at = self.relays[r].clock.at(now);
                let due = self.relays[r]
                    .instance(id)
                    .and_then(|i| i.relay.next_deadline())
                    .is_some_and(|d| d <= at);
                if due {
                    self.pump(r, id)?;
                }
            }
        }
        Ok(())
    }

    /// Acts waiting for the gate: acknowledged when it says so; meanwhile
    /// relays the object can reach are revoked (the current instance of
    /// each relay only: a stale one is out of reach), now and then.
    fn acts_step(&mut self) {
        let now = self.now;
        let at = self.root_clock.at(now);
        let mut i = 0;
        while i < self.acts.len() {
            let status = self.gate.check(&mut self.acts[i].act, at);
            match status {
                ActStatus::Acknowledge => {
                    let act = self.acts.remove(i);
                    self.acked.push((act.committed, now));
                    self.report.acts_acked += 1;
                    self.report.act_wait_max = self.report.act_wait_max.max(now - act.committed);
                    self.note(|| {
                        format!("the act committed at {} ms is acknowledged", act.committed)
                    });
                    if let Some(thaw) = act.thaw_after {
                        self.schedule(thaw, Event::Thaw);
                    }
                    if let Some(on) = act.on_after {
                        self.schedule(on, Event::RelaysOn);
                    }
                    continue;
                }
                ActStatus::Wait { waiting_for, .. } => {
                    let due = self.acts[i].revoked_at.map_or(true, |t| now >= t + 50);
                    if waiting_for > 0 && due && self.authority.started() {
                        self.acts[i].revoked_at = Some(now);
                        self.revoke_all();
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The object revokes each relay it can reach: the instance a call to
    /// its id reaches closes its lease and answers with the incarnation it
    /// closed.
    fn revoke_all(&mut self) {
        let epoch = self.authority.epoch();
        for r in 0..self.relays.len() {
            if self.rng.chance(self.scenario.faults.revoke_lost) {
                self.report.revocations_lost += 1;
                continue;
            }
            let at = self.relays[r].clock.at(self.now);
            let random = self.rng.bytes16();
            let node = &mut self.relays[r];
            let closed = if self.scenario.relay_bug == RelayBug::IgnoresLease {
                // Says yes, closes nothing.
                *node.current.relay.incarnation()
            } else {
                node.current.revoke(random, at)
            };
            self.report.revocations += 1;
            let delay = self.rng.between(1, 8);
            self.schedule(
                delay,
                Event::RevokeAck {
                    incarnation: closed,
                    epoch,
                },
            );
            let id = self.relays[r].current.id;
            let _ = self.pump(r, id);
        }
    }

    /// A generator's request reaches relay `r`: the instance a call
    /// reaches (during a split, either) takes it.
    fn relay_request(
        &mut self,
        r: usize,
        slot: usize,
        engine: u64,
        ticket: Ticket,
        request: GrantRequest,
    ) -> Result<(), Violation> {
        let to_stale = self.relays[r].stale.is_some() && self.rng.chance(500_000);
        let node = &mut self.relays[r];
        let inst = match node.stale.as_mut() {
            Some(stale) if to_stale => stale,
            _ => &mut node.current,
        };
        let id = inst.id;
        self.next_handle += 1;
        let handle = self.next_handle;
        self.handles.insert(handle, (slot, engine, ticket));
        let at = node.clock.at(self.now);
        inst.request(handle, owner_of(slot), request, at);
        self.pump(r, id)
    }

    /// The namespace object's answer reaches relay `r`'s instance `id`, if
    /// it still runs.
    fn relay_receives(
        &mut self,
        r: usize,
        id: u64,
        ticket: Ticket,
        wire: Wire,
    ) -> Result<(), Violation> {
        let at = self.relays[r].clock.at(self.now);
        let Some(inst) = self.relays[r].instance(id) else {
            return Ok(());
        };
        inst.root_reply(ticket, &from_wire(&wire), at);
        self.pump(r, id)
    }

    /// Carries out everything relay `r`'s instance `id` wants now: its
    /// requests to the object (over the faulty network), its answers to
    /// generators (checked first), its reports.
    fn pump(&mut self, r: usize, id: u64) -> Result<(), Violation> {
        let now = self.now;
        let at = self.relays[r].clock.at(now);
        let mut sends = Vec::new();
        let mut answers = Vec::new();
        let (incarnation, report) = {
            let Some(inst) = self.relays[r].instance(id) else {
                return Ok(());
            };
            while let Some(action) = inst.poll_root(at) {
                if let Action::Send(out) = action {
                    sends.push(out);
                }
            }
            while let Some(a) = inst.poll_answer() {
                answers.push(a);
            }
            (*inst.relay.incarnation(), inst.poll_report(at))
        };
        for out in sends {
            self.report.requests += 1;
            if self.rng.chance(self.scenario.faults.drop_request) {
                self.report.dropped += 1;
                continue;
            }
            let delay = self.rng.between(1, 8);
            self.schedule(
                delay,
                Event::Request {
                    slot: RELAY_SLOTS + r,
                    engine: id,
                    ticket: out.ticket,
                    request: out.request,
                },
            );
        }
        for (handle, answer) in answers {
            let Some((slot, engine, ticket)) = self.handles.remove(&handle) else {
                continue;
            };
            let http = match answer {
                RelayAnswer::Grant(reply) => {
                    let to = (owner_of(slot), reply.grant.incarnation);
                    // The relay incarnation whose grant it cut this from:
                    // its current one (a revocation starts a new one).
                    let relay = (relay_owner(r), incarnation);
                    if reply.replayed {
                        self.checker.sub_replayed(reply.grant.range, &to)?;
                        self.report.sub_replays += 1;
                    } else {
                        let granted_at =
                            self.checker.sub_granted(reply.grant.range, &to, &relay)?;
                        self.report.sub_grants += 1;
                        for &(act_at, acked_at) in &self.acked {
                            if granted_at < act_at && acked_at <= now {
                                return Err(Violation::StaleAfterAct {
                                    range: reply.grant.range,
                                    granted_at,
                                    act_at,
                                    acked_at,
                                });
                            }
                        }
                    }
                    self.note(|| {
                        format!("relay {r} hands {} to generator {slot}", reply.grant.range)
                    });
                    HttpAnswer::grant(&reply)
                }
                RelayAnswer::Refused(refusal) => {
                    match refusal {
                        Refusal::Exhausted { .. } => self.report.relay_exhausted += 1,
                        Refusal::Frozen => self.report.relay_frozen += 1,
                        _ => {}
                    }
                    HttpAnswer::refusal(&refusal)
                }
                _ => {
                    self.report.relay_unavailable += 1;
                    HttpAnswer::error(&ErrorReply::new(
                        ErrorCode::Unavailable,
                        "the relay has no range ready",
                    ))
                }
            };
            self.send_reply(slot, engine, ticket, (None, None), http, 0);
        }
        if let Some(batch) = report {
            self.report.report_batches += 1;
            self.report.reported += batch.grants.len() as u64;
        }
        Ok(())
    }

    fn chaos(&mut self) -> Result<(), Violation> {
        let f = self.scenario.faults;
        let now = self.now;
        for slot in 0..self.gens.len() {
            if self.rng.chance(f.restart) {
                // Crash and restart: the old range is abandoned, never recovered.
                self.report.restarts += 1;
                let reuse = self
                    .scenario
                    .reuse_incarnation
                    .then_some(self.gens[slot].random);
                let fresh = self.spawn(reuse);
                let mut old = std::mem::replace(&mut self.gens[slot], fresh);
                let held = old.held();
                check_count(&self.scenario, &self.books, &old, held)?;
                self.report.abandoned += old.lease.available() + held;
                self.report.standby_swaps += old.shelf.swaps;
                let (was, now_inc, left) = (
                    short(old.lease.incarnation()),
                    short(self.gens[slot].lease.incarnation()),
                    old.lease.available(),
                );
                self.note(|| format!("generator {slot} crashes: {was} abandons {left} IDs, restarts as {now_inc}"));
            } else if self.rng.chance(f.pause) && now >= self.gens[slot].paused_until {
                self.report.pauses += 1;
                self.gens[slot].paused_until = now + self.rng.between(20, 400);
                let until = self.gens[slot].paused_until;
                self.note(|| {
                    format!("generator {slot} pauses until {until} ms, keeping its range")
                });
                if self.gens.len() < MAX_GENERATORS {
                    let replacement = self.spawn(None);
                    let inc = short(replacement.lease.incarnation());
                    self.gens.push(replacement);
                    let n = self.gens.len() - 1;
                    self.note(|| format!("replacement generator {n} starts as {inc}"));
                }
            }
        }
        if now % 10 == 0 {
            self.authority.snapshot();
        }
        let witness_restore = self.rng.chance(f.witness_restore);
        if witness_restore && (self.object_unseen || self.answer_in_flight) {
            // The same rule the other way round (see below); and an answer
            // the witness already sent arrives before a restore of it (an
            // operator's act, much slower than a reply), else the object
            // would take a mark the restore took back for its fence, after
            // the check-in that was to separate the two restores.
            self.report.restores_deferred += 1;
        } else if witness_restore {
            self.report.witness_restores += 1;
            let back = self.rng.between(1, 33) as usize;
            self.authority.restore_witness(back);
            self.witness_restored += 1;
            self.note(|| {
                format!("the witness's storage is restored to its copy {back} snapshots back")
            });
        }
        if now % CHECK_MS == 0 && self.authority.started() && now >= self.down_until {
            self.check_in(Phase::Running)?;
        }
        let restore = self.rng.chance(f.authority_restore);
        if restore && self.witness_mended < self.witness_restored {
            // Restored at least a check-in apart, as the docs require: two
            // objects restored with no check between are a whole-namespace
            // rollback, which needs an operator's floor.
            self.report.restores_deferred += 1;
        } else if restore {
            self.report.restores += 1;
            self.object_unseen = true;
            let back = self.rng.between(1, 33) as usize;
            self.authority.restore(back);
            self.root_restarted();
            // A grant the restore took back is no longer reserved: the
            // engine never had it, and may never ask for that id again.
            for (slot, g) in self.gens.iter().enumerate() {
                if let Some(book) = self.books.get_mut(g.lease.incarnation()) {
                    let (owner, inc) = (owner_of(slot), *g.lease.incarnation());
                    let authority = &self.authority;
                    book.committed
                        .retain(|id, _| authority.holds(&owner, inc, *id));
                }
            }
            self.parked.clear();
            self.raising = false;
            self.down_until = now + self.rng.between(0, 30);
            let down = self.down_until;
            self.note(|| format!("authority storage restored to the copy {back} snapshots back, restarts at {down} ms"));
        } else if self.rng.chance(f.authority_restart) {
            self.report.authority_restarts += 1;
            self.parked.clear();
            self.raising = false;
            self.authority.restart();
            self.root_restarted();
            self.down_until = now + self.rng.between(0, 30);
            let down = self.down_until;
            self.note(|| format!("authority crashes, loses uncommitted writes, back at {down} ms"));
        }
        if self.rng.chance(f.freeze)
            && self
                .authority
                .admin(|s| Some(s.with_status(NamespaceStatus::Frozen)))
        {
            let thaw = self.rng.between(5, 60);
            self.note(|| format!("operator freezes the namespace for {thaw} ms"));
            if self.relays.is_empty() {
                self.schedule(thaw, Event::Thaw);
            } else {
                // Acknowledged once no relay can serve a grant from before
                // it; the operator thaws after that.
                self.begin_act(Some(thaw), None);
            }
        }
        if now >= self.proxy_blocked_until && self.rng.chance(f.proxy_block) {
            let (lo, hi) = self.scenario.bad_moment_ms;
            self.proxy_blocked_until = now + self.rng.between(lo, hi);
            self.blocking_faults_end = self.blocking_faults_end.max(self.proxy_blocked_until);
            let until = self.proxy_blocked_until;
            self.note(|| {
                format!("a proxy refuses every request with its own 403 until {until} ms")
            });
        }
        for slot in 0..self.gens.len() {
            if now >= self.token_refused_until[slot] && self.rng.chance(f.token_refused) {
                let (lo, hi) = self.scenario.bad_moment_ms;
                self.token_refused_until[slot] = now + self.rng.between(lo, hi);
                let until = self.token_refused_until[slot];
                self.blocking_faults_end = self.blocking_faults_end.max(until);
                self.note(|| {
                    format!("generator {slot}'s token is refused, even fresh, until {until} ms")
                });
            }
        }
        if self.rng.chance(f.floor) {
            let bump = self.rng.between(1, 200);
            let raised = self.authority.admin(|s| {
                let floor = u64::try_from(s.next()).ok()?.checked_add(bump)?;
                s.raise_floor(floor).ok()
            });
            if raised && !self.relays.is_empty() {
                self.begin_act(None, None);
            }
        }
        Ok(())
    }
}

impl Generator {
    /// What its driver holds of blocks the engine lent it, unreturned:
    /// the JS driver's block, or the tails of the Rust client's two,
    /// sealed (it issues no more).
    fn held(&mut self) -> u64 {
        if self.shelved {
            self.shelf.seal().iter().flatten().map(Range::count).sum()
        } else {
            self.block_left
        }
    }
}

/// Holds the engine's count of IDs returned to callers (its `Stats`, with
/// `held` IDs of lent blocks unreturned) to what its callers were given,
/// for every incarnation but one reused (a bug of its own, whose count
/// two engines share).
fn check_count(
    scenario: &Scenario,
    books: &HashMap<Incarnation, Book>,
    g: &Generator,
    held: u64,
) -> Result<(), Violation> {
    if scenario.reuse_incarnation {
        return Ok(());
    }
    let counted = g.lease.stats(held).issued;
    let given = books.get(g.lease.incarnation()).map_or(0, |b| b.issued);
    if counted != given {
        return Err(Violation::Miscounted {
            incarnation: g.lease.incarnation().to_string(),
            counted,
            given,
        });
    }
    Ok(())
}

/// The engine's view of what reached it: production's classifier.
fn from_wire(wire: &Wire) -> Reply {
    match wire {
        Wire::Http(a) => Reply::from_http(
            a.status,
            &a.body,
            a.retry_after_secs.map(|s| u64::from(s) * SIM_SECOND_MS),
        ),
        Wire::NoAnswer => Reply::no_answer(),
    }
}

/// The token `sub` of whatever runs in `slot` (a restart keeps its token).
fn owner_of(slot: usize) -> Owner {
    match relay_of(slot) {
        Some(r) => relay_owner(r),
        None => Owner::new(&format!("generator-{slot}")),
    }
}

fn describe(reply: &Reply) -> String {
    match reply {
        Reply::Grant(g) => format!("{} (replayed: {})", g.grant.range, g.replayed),
        Reply::Refused(r) => format!("{} {}", r.status, r.code),
        Reply::Foreign(f) => format!("{} not from the authority: {}", f.status, f.excerpt),
        Reply::Transient(t) => format!("{:?} {:?}", t.kind, t.status),
        other => format!("{other:?}"),
    }
}

fn short(incarnation: &rangeid_core::Incarnation) -> String {
    incarnation.as_str().chars().take(8).collect()
}
