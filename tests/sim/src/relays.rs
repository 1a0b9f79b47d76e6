//! Relays in the simulation: core's `Relay` state machines, each instance
//! on a clock of its own (an offset and a rate within
//! `relay::CLOCK_DRIFT_PPM`), with the faults a Durable Object meets:
//! restarts, evictions, and split instances (a second live instance of one
//! relay for a while, which a revocation does not reach). Planted bugs
//! prove the checker catches a relay that keeps its cursor across a
//! restart, one that reuses an incarnation, and one that ignores
//! revocations and lease expiry.

use rangeid_core::authority::Owner;
use rangeid_core::lease::LeaseConfig;
use rangeid_core::protocol::GrantRequest;
use rangeid_core::relay::{Relay, RelayConfig, RelayTerms, MAX_RELAY_LEASE_MS};
use rangeid_core::time::Instant;
use rangeid_core::{Action, Namespace, Reply, Ticket};

/// A deliberate relay bug, to prove the checker catches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelayBug {
    /// Correct behaviour.
    None,
    /// A restarted relay resumes from a copy of its state (its cursor,
    /// what it held, its incarnation) saved a while before the crash.
    KeepsCursor,
    /// A restarted relay takes the same random bytes, so the same
    /// incarnation, and asks again from `r1`.
    ReusesIncarnation,
    /// A relay serves its root grants past their lease, and acknowledges
    /// a revocation without closing anything.
    IgnoresLease,
}

/// The simulated relay lease: 300 ms of true time.
pub const SIM_RELAY_LEASE_MS: u64 = 300;

/// The relays' configuration in the simulation: small ranges, fast
/// retries, the simulated lease (or, for the bug, the longest).
/// `min_range` is the relays' smallest range.
pub fn relay_config(namespace: Namespace, bug: RelayBug, min_range: u64) -> RelayConfig {
    let mut c = RelayConfig::new(namespace);
    let lease = if bug == RelayBug::IgnoresLease {
        MAX_RELAY_LEASE_MS
    } else {
        SIM_RELAY_LEASE_MS
    };
    c.terms = RelayTerms::new(lease).unwrap_or_else(|e| panic!("sim relay lease: {e}"));
    let mut up = LeaseConfig::new(namespace);
    up.min_range_size = min_range;
    up.max_range_size = min_range.max(2_000);
    up.target_lifetime_ms = 60;
    up.prefetch_lead_ms = 20;
    up.max_outstanding = 2;
    up.request_timeout_ms = 25;
    up.retry_initial_ms = 2;
    up.retry_max_ms = 40;
    c.upstream = up;
    c.park_ms = 30;
    c.replay_entries = 256;
    c.replay_ms = 2_000;
    c.report_batch = 20;
    c.report_interval_ms = 30;
    c
}

/// Every input a relay instance was given, so that a copy of its state at
/// an earlier moment can be rebuilt (core's relay is deterministic): what
/// the `KeepsCursor` bug restores after a crash.
#[derive(Clone)]
enum Call {
    Request(u64, Owner, GrantRequest, Instant),
    RootReply(Ticket, Reply, Instant),
    PollRoot(Instant),
    PollAnswer,
    PollReport(Instant),
    Tick(Instant),
    Revoke([u8; 16], Instant),
}

/// One running instance of a relay.
pub struct Instance {
    /// The state machine.
    pub relay: Relay,
    /// Numbers instances across the run; replies carry it.
    pub id: u64,
    /// The bytes its first incarnation came from.
    pub random: [u8; 16],
    start: Instant,
    config: RelayConfig,
    // Kept only when the bug needs it.
    log: Option<Vec<Call>>,
    /// How much of the log a save holds (the bug's lagging copy).
    pub saved: usize,
}

impl Instance {
    /// A new instance from `random`, started at `now` on its clock.
    pub fn new(
        config: RelayConfig,
        id: u64,
        random: [u8; 16],
        now: Instant,
        logged: bool,
    ) -> Instance {
        Instance {
            relay: Relay::new(config, random, now).unwrap_or_else(|e| panic!("relay: {e}")),
            id,
            random,
            start: now,
            config,
            log: logged.then(Vec::new),
            saved: 0,
        }
    }

    /// The instance rebuilt from `self`'s first `upto` inputs: the state
    /// it had then, cursor and incarnation included.
    pub fn restored(&self, id: u64, upto: usize) -> Instance {
        let mut copy = Instance::new(self.config, id, self.random, self.start, true);
        let log = self.log.as_deref().unwrap_or(&[]);
        for call in &log[..upto.min(log.len())] {
            copy.apply(call.clone());
        }
        copy
    }

    fn apply(&mut self, call: Call) {
        match call.clone() {
            Call::Request(h, o, r, now) => self.relay.handle_request(h, o, r, now),
            Call::RootReply(t, r, now) => {
                self.relay.handle_root_reply(t, &r, now);
            }
            Call::PollRoot(now) => {
                self.relay.poll_root(now);
            }
            Call::PollAnswer => {
                self.relay.poll_answer();
            }
            Call::PollReport(now) => {
                self.relay.poll_report(now);
            }
            Call::Tick(now) => self.relay.tick(now),
            Call::Revoke(random, now) => {
                self.relay.handle_revoke(random, now);
            }
        }
        if let Some(log) = self.log.as_mut() {
            log.push(call);
        }
    }

    fn record(&mut self, call: Call) {
        if let Some(log) = self.log.as_mut() {
            log.push(call);
        }
    }

    /// The log's length now (a save point).
    pub fn log_len(&self) -> usize {
        self.log.as_ref().map_or(0, Vec::len)
    }

    /// See [`Relay::handle_request`].
    pub fn request(&mut self, handle: u64, owner: Owner, request: GrantRequest, now: Instant) {
        self.record(Call::Request(handle, owner, request, now));
        self.relay.handle_request(handle, owner, request, now);
    }

    /// See [`Relay::handle_root_reply`].
    pub fn root_reply(&mut self, ticket: Ticket, reply: &Reply, now: Instant) {
        self.record(Call::RootReply(ticket, *reply, now));
        self.relay.handle_root_reply(ticket, reply, now);
    }

    /// See [`Relay::poll_root`].
    pub fn poll_root(&mut self, now: Instant) -> Option<Action> {
        self.record(Call::PollRoot(now));
        self.relay.poll_root(now)
    }

    /// See [`Relay::poll_answer`].
    pub fn poll_answer(&mut self) -> Option<(u64, rangeid_core::relay::Answer)> {
        self.record(Call::PollAnswer);
        self.relay.poll_answer()
    }

    /// See [`Relay::poll_report`].
    pub fn poll_report(&mut self, now: Instant) -> Option<rangeid_core::relay::ReportBatch> {
        self.record(Call::PollReport(now));
        self.relay.poll_report(now)
    }

    /// See [`Relay::tick`].
    pub fn tick(&mut self, now: Instant) {
        self.record(Call::Tick(now));
        self.relay.tick(now);
    }

    /// See [`Relay::handle_revoke`].
    pub fn revoke(&mut self, random: [u8; 16], now: Instant) -> rangeid_core::Incarnation {
        self.record(Call::Revoke(random, now));
        self.relay.handle_revoke(random, now)
    }
}

/// A clock of one machine: `offset + true_ms * (1 + drift)`, with the
/// drift within the bound core allows.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// Where it starts.
    pub offset: u64,
    /// Its rate's error, in parts per million (negative: slow).
    pub drift_ppm: i64,
}

impl Clock {
    /// Its reading at true time `ms`.
    pub fn at(&self, ms: u64) -> Instant {
        let scaled = i128::from(ms) * (1_000_000 + i128::from(self.drift_ppm)) / 1_000_000;
        Instant::from_ms(self.offset + scaled.max(0) as u64)
    }
}

/// One relay (one Durable Object id): its current instance, and during a
/// split a stale second one that still runs.
pub struct Node {
    /// The instance a call to the relay's id reaches.
    pub current: Instance,
    /// A second live instance, until `stale_until`.
    pub stale: Option<Instance>,
    /// When the stale instance stops.
    pub stale_until: u64,
    /// The machine's clock (instances of one node share it; a stale one
    /// runs elsewhere, but within the same bound).
    pub clock: Clock,
}

impl Node {
    /// The instance with number `id`, if it still runs.
    pub fn instance(&mut self, id: u64) -> Option<&mut Instance> {
        if self.current.id == id {
            return Some(&mut self.current);
        }
        self.stale.as_mut().filter(|s| s.id == id)
    }
}

/// The token `sub` of relay `r`.
pub fn relay_owner(r: usize) -> Owner {
    Owner::new(&format!("relay-{r}"))
}
