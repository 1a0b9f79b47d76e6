//! Relays: an in-memory tier that hands generators sub-ranges of what it
//! holds, as a sans-IO state machine ([`Relay`]), and the namespace
//! object's side of the rule that admin acts reach relays before they are
//! acknowledged ([`RelayGate`]). Feature `alloc`.
//!
//! A relay is a generator of the namespace object: a core [`Lease`] with
//! its own incarnation per start, made from 16 random bytes its driver
//! supplies. It is also an authority to the generators routed to it: it
//! answers their range requests with sub-ranges cut from what it holds
//! ([`Lease::take_whole`]), exactly `count` long and contiguous, as the
//! object would. Nothing on its grant path is stored: a relay that restarts
//! abandons what it holds, as a restarted generator does.
//!
//! Why that is safe: every sub-range lies inside a range the namespace
//! object durably granted to this relay's incarnation (the Lease installs
//! only grants that answer its own requests); a new relay instance never
//! inherits a cursor and never shares an incarnation, so the object never
//! replays one instance's grant to another; a restore of the object cannot
//! roll a relay back, since it keeps nothing to restore; and within one
//! instance, the Lease's cursor hands each ID out once.
//!
//! Admin acts: a relay serves from a root grant only for
//! [`RelayTerms::serve_ms`] after it first sent the request behind it
//! ([`Lease::set_range_lifetime`]), and a revocation
//! ([`Relay::handle_revoke`]) closes its lease at once and starts a new
//! incarnation. The object acknowledges a freeze, a floor or relays turned
//! off only once [`RelayGate`] says no relay can still serve a range
//! granted before it. See `docs/relays.md`.
//!
//! The driver (a Durable Object) moves bytes and timers only:
//!
//! - a generator's request: [`Relay::handle_request`] with a handle of the
//!   driver's choosing; its answer comes out of [`Relay::poll_answer`],
//!   now or later (a request waits for a root grant up to `park_ms`);
//! - the root: [`Relay::poll_root`] gives the Lease's [`Action`]s (send an
//!   attempt, cancel one); each attempt's outcome goes back through
//!   [`Relay::handle_root_reply`] with its [`crate::Ticket`];
//! - reports: [`Relay::poll_report`] gives batches of sub-grants to send;
//!   one that could not be delivered goes back with
//!   [`Relay::report_failed`];
//! - a revocation from the root: [`Relay::handle_revoke`], answered with
//!   the incarnation it closed;
//! - time: call [`Relay::tick`] (or any poll) at [`Relay::next_deadline`].

use core::fmt;

use alloc::collections::VecDeque;

use crate::authority::{Owner, Refusal};
use crate::lease::{ConfigError, Handled, IssueError, Lease, LeaseConfig, Phase};
use crate::names::{Incarnation, Namespace};
use crate::protocol::{Capacity, Grant, GrantReply, GrantRequest, MAX_COUNT};
use crate::reply::Reply;
use crate::time::Instant;
use crate::{Action, Ticket};

mod gate;
mod memory;
mod report;
mod terms;

pub use gate::{ActStatus, AdminAct, RelayGate, RelayRefusal};
pub use report::{ReportBatch, SubGrant};
pub use terms::{
    RelayTerms, TermsError, CLOCK_DRIFT_PPM, MAX_RELAY_LEASE_MS, MIN_RELAY_LEASE_MS, RELAY_LEASE_MS,
};

use memory::Memory;
use report::Outbox;

/// How a relay runs. Build it with [`RelayConfig::new`] and adjust.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelayConfig {
    /// How the relay asks the namespace object for its own ranges (its
    /// `namespace` is the relay's).
    pub upstream: LeaseConfig,
    /// The lease: how long a root grant may be served from.
    pub terms: RelayTerms,
    /// How long a generator's request waits for a root grant before it is
    /// answered `unavailable`.
    pub park_ms: u64,
    /// The most sub-grants remembered for replays.
    pub replay_entries: usize,
    /// How long a sub-grant is remembered for replays.
    pub replay_ms: u64,
    /// The most generator requests waiting at once; more are answered
    /// `unavailable` at once.
    pub max_parked: usize,
    /// Sub-grants per report batch.
    pub report_batch: usize,
    /// A batch goes out at the latest this long after its oldest
    /// sub-grant.
    pub report_interval_ms: u64,
}

/// Sub-grants a relay remembers for replays by default: 16,384 (about
/// 600 bytes each with their key kept twice, so about 10 MB at most).
pub const REPLAY_ENTRIES: usize = 16_384;

impl RelayConfig {
    /// Defaults: ranges from 10,000 IDs up to the namespace's `maxCount`,
    /// sized to last a quarter of the lease; the default lease; requests
    /// wait up to 2 s; the last [`REPLAY_ENTRIES`] sub-grants of the last
    /// 10 minutes replay; reports of up to 500 sub-grants at least every
    /// 2 s.
    pub fn new(namespace: Namespace) -> RelayConfig {
        let terms = RelayTerms::DEFAULT;
        let mut upstream = LeaseConfig::new(namespace);
        upstream.min_range_size = 10_000;
        upstream.max_range_size = MAX_COUNT;
        upstream.target_lifetime_ms = terms.serve_ms() / 4;
        upstream.prefetch_lead_ms = terms.serve_ms() / 10;
        RelayConfig {
            upstream,
            terms,
            park_ms: 2_000,
            replay_entries: REPLAY_ENTRIES,
            replay_ms: crate::lease::MAX_REQUEST_AGE_MS,
            max_parked: 4_096,
            report_batch: 500,
            report_interval_ms: 2_000,
        }
    }

    /// The defaults of [`RelayConfig::new`] for a lease of `terms` (the
    /// namespace object's, `RANGEID_RELAY_LEASE_MS` on the authority):
    /// ranges sized to last a quarter of what the relay may serve, asked
    /// for a tenth of it ahead.
    pub fn with_terms(namespace: Namespace, terms: RelayTerms) -> RelayConfig {
        let mut c = RelayConfig::new(namespace);
        c.terms = terms;
        c.upstream.target_lifetime_ms = terms.serve_ms() / 4;
        c.upstream.prefetch_lead_ms = terms.serve_ms() / 10;
        c
    }
}

/// Why a relay cannot be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RelayConfigError {
    /// The upstream Lease's configuration is refused.
    Upstream(ConfigError),
    /// `park_ms` is 0 or above a minute.
    ParkMs,
}

impl fmt::Display for RelayConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RelayConfigError::Upstream(e) => write!(f, "relay upstream: {e}"),
            RelayConfigError::ParkMs => f.write_str("park_ms must be between 1 and 60000"),
        }
    }
}

impl core::error::Error for RelayConfigError {}

/// What a relay answers a generator's request with. A driver encodes it
/// as the namespace object would (`wire::HttpAnswer::grant`, `::refusal`,
/// or `::error` with `unavailable`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // Short-lived; boxing would need a heap.
#[non_exhaustive]
pub enum Answer {
    /// A sub-range, new or replayed (`replayed`), with the namespace's
    /// `maxCount` as the relay learned it and what remains (what the
    /// namespace object last said, plus what the relay holds).
    Grant(GrantReply),
    /// Refused as the object would: a bad count (with `maxCount`),
    /// another namespace, a request id reused with another count
    /// (`Conflict`), `Exhausted` (the object has no more and the relay
    /// can still grant at most `remaining` in one request), or `Frozen`.
    Refused(Refusal),
    /// The relay has no range for it now (it ran dry and waits for the
    /// object, or cannot reach it, or was turned off): ask again later.
    Unavailable,
}

/// Counters a relay's operator would want; they only grow, but `held`,
/// `parked` and `remembered`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Sub-grants handed out (new, not replays).
    pub sub_grants: u64,
    /// IDs in them.
    pub sub_granted_ids: u64,
    /// Retried requests answered with their remembered sub-range.
    pub replays: u64,
    /// Requests refused for another count under a remembered id.
    pub conflicts: u64,
    /// Requests that had to wait for a root grant.
    pub parked_total: u64,
    /// Answers `unavailable`.
    pub unavailable: u64,
    /// Answers `namespace_exhausted`.
    pub exhausted: u64,
    /// Answers `namespace_frozen`.
    pub frozen: u64,
    /// Revocations obeyed.
    pub revocations: u64,
    /// Times the relay was started anew after the object stopped it
    /// ([`Relay::revive`]).
    pub revivals: u64,
    /// IDs abandoned: expired, revoked, or arrived too late.
    pub abandoned: u64,
    /// IDs held now, ready to hand out.
    pub held: u64,
    /// Requests waiting now.
    pub parked: u64,
    /// Sub-grants remembered now.
    pub remembered: u64,
    /// Sub-grants forgotten early for the memory bound.
    pub forgotten: u64,
    /// Report batches handed to the driver, and sub-grants dropped from a
    /// full report backlog.
    pub reports_sent: u64,
    /// See `reports_sent`.
    pub reports_dropped: u64,
}

/// A request waiting for a root grant.
#[derive(Clone, Copy, Debug)]
struct Parked {
    handle: u64,
    owner: Owner,
    request: GrantRequest,
    until: u64,
}

/// A relay: see the module documentation. Not `Clone`: two copies would
/// hand out the same IDs.
#[derive(Debug)]
pub struct Relay {
    config: RelayConfig,
    lease: Lease,
    memory: Memory,
    parked: VecDeque<Parked>,
    answers: VecDeque<(u64, Answer)>,
    outbox: Outbox,
    max_count: Option<u64>,
    root_remaining: Option<u64>,
    stats: RelayStats,
    // Abandoned by incarnations already closed.
    abandoned_before: u64,
    // When a generator last asked (ms): a relay idle for a lease takes no
    // more ranges until one asks again.
    asked_at: u64,
    // The refusal and abandonment counts the last report batch carried:
    // a change is reported even when no sub-grant waits.
    reported_view: [u64; 4],
}

impl Relay {
    /// A relay whose first incarnation is made from `random` (16 bytes
    /// from a good random source, never derived from a name or a clock).
    pub fn new(
        config: RelayConfig,
        random: [u8; 16],
        now: Instant,
    ) -> Result<Relay, RelayConfigError> {
        if config.park_ms == 0 || config.park_ms > 60_000 {
            return Err(RelayConfigError::ParkMs);
        }
        let lease = Self::upstream(&config, random, now)?;
        Ok(Relay {
            memory: Memory::new(config.replay_entries, config.replay_ms),
            outbox: Outbox::new(config.report_batch, config.report_interval_ms),
            config,
            lease,
            parked: VecDeque::new(),
            answers: VecDeque::new(),
            max_count: None,
            root_remaining: None,
            stats: RelayStats::default(),
            abandoned_before: 0,
            asked_at: now.as_ms(),
            reported_view: [0; 4],
        })
    }

    fn upstream(
        config: &RelayConfig,
        random: [u8; 16],
        now: Instant,
    ) -> Result<Lease, RelayConfigError> {
        let mut lease =
            Lease::new(config.upstream, random, now).map_err(RelayConfigError::Upstream)?;
        lease.set_range_lifetime(config.terms.serve_ms());
        Ok(lease)
    }

    /// The incarnation the relay asks the object under now.
    pub fn incarnation(&self) -> &Incarnation {
        self.lease.incarnation()
    }

    /// Its configuration.
    pub fn config(&self) -> &RelayConfig {
        &self.config
    }

    /// The upstream Lease (its stats, phase, rate).
    pub fn upstream_lease(&self) -> &Lease {
        &self.lease
    }

    /// The counters.
    pub fn stats(&self) -> RelayStats {
        let mut s = self.stats;
        s.abandoned = self.abandoned_before + self.lease.stats(0).abandoned;
        s.held = self.lease.available();
        s.parked = self.parked.len() as u64;
        s.remembered = self.memory.len() as u64;
        s.forgotten = self.memory.evicted;
        s.reports_sent = self.outbox.sent;
        s.reports_dropped = self.outbox.dropped;
        s
    }

    /// A generator's range request, from the token `sub` `owner`, known to
    /// the driver as `handle`. Its answer comes out of
    /// [`Relay::poll_answer`] with that handle: at once, or once a root
    /// grant arrives, or `unavailable` after `park_ms`.
    ///
    /// A retry (the same owner, incarnation and request id) gets the same
    /// sub-range while it is remembered (see [`RelayConfig::replay_ms`] and
    /// [`RelayConfig::replay_entries`]); after that, or after a restart,
    /// a new one, which the generator's install-once turns into a gap.
    pub fn handle_request(
        &mut self,
        handle: u64,
        owner: Owner,
        request: GrantRequest,
        now: Instant,
    ) {
        self.memory.age(now.as_ms());
        self.asked_at = self.asked_at.max(now.as_ms());
        if let Some(answer) = self.decide(&owner, &request, now) {
            self.answer(handle, answer);
            return;
        }
        if self.parked.len() >= self.config.max_parked {
            self.answer(handle, Answer::Unavailable);
            return;
        }
        self.stats.parked_total += 1;
        self.parked.push_back(Parked {
            handle,
            owner,
            request,
            until: now.as_ms().saturating_add(self.config.park_ms),
        });
        self.update_demand();
    }

    /// The answer to a request now, or `None` when it must wait for a
    /// root grant.
    fn decide(&mut self, owner: &Owner, request: &GrantRequest, now: Instant) -> Option<Answer> {
        let max_count = self.max_count.unwrap_or(MAX_COUNT);
        if request.count == 0 || request.count > max_count {
            return Some(Answer::Refused(Refusal::BadCount { max_count }));
        }
        if let Some(range) = self
            .memory
            .get(&(*owner, request.incarnation, request.request_id))
        {
            if range.count() == request.count && request.namespace == self.config.upstream.namespace
            {
                self.stats.replays += 1;
                return Some(Answer::Grant(self.reply(request, range, true)));
            }
            self.stats.conflicts += 1;
            return Some(Answer::Refused(Refusal::Conflict));
        }
        if request.namespace != self.config.upstream.namespace {
            return Some(Answer::Refused(Refusal::WrongNamespace));
        }
        match self.lease.take_whole(request.count, now) {
            Ok(range) => {
                let key = (*owner, request.incarnation, request.request_id);
                self.memory.insert(key, range, now.as_ms());
                self.stats.sub_grants += 1;
                self.stats.sub_granted_ids =
                    self.stats.sub_granted_ids.saturating_add(range.count());
                let reply = self.reply(request, range, false);
                self.outbox.push(
                    SubGrant {
                        owner: *owner,
                        grant: reply.grant,
                        relay: *self.lease.incarnation(),
                    },
                    now.as_ms(),
                );
                Some(Answer::Grant(reply))
            }
            Err(IssueError::Exhausted) => Some(Answer::Refused(Refusal::Exhausted {
                remaining: self.grantable(),
            })),
            Err(IssueError::Frozen) => Some(Answer::Refused(Refusal::Frozen)),
            Err(IssueError::Unavailable) => None,
            // Blocked, refused for good (relays turned off), closed: the
            // generator asks again, and its driver may route elsewhere.
            Err(_) => Some(Answer::Unavailable),
        }
    }

    /// The most one request can be granted now: the longest range held,
    /// within `maxCount`.
    fn grantable(&self) -> u64 {
        self.lease
            .largest_whole()
            .min(self.max_count.unwrap_or(MAX_COUNT))
    }

    fn reply(
        &self,
        request: &GrantRequest,
        range: crate::range::Range,
        replayed: bool,
    ) -> GrantReply {
        let held = self.lease.available();
        GrantReply {
            grant: Grant {
                namespace: request.namespace,
                incarnation: request.incarnation,
                request_id: request.request_id,
                range,
            },
            replayed,
            capacity: Capacity {
                max_count: self.max_count,
                remaining: self.root_remaining.map(|r| r.saturating_add(held)),
            },
        }
    }

    fn answer(&mut self, handle: u64, answer: Answer) {
        match answer {
            Answer::Unavailable => self.stats.unavailable += 1,
            Answer::Refused(Refusal::Exhausted { .. }) => self.stats.exhausted += 1,
            Answer::Refused(Refusal::Frozen) => self.stats.frozen += 1,
            _ => {}
        }
        self.answers.push_back((handle, answer));
    }

    /// Serves waiting requests that can be served now and answers those
    /// whose wait ran out; drops expired ranges.
    pub fn tick(&mut self, now: Instant) {
        self.lease.expire_ranges(now);
        self.memory.age(now.as_ms());
        let mut still = VecDeque::new();
        while let Some(p) = self.parked.pop_front() {
            match self.decide(&p.owner, &p.request, now) {
                Some(answer) => self.answer(p.handle, answer),
                None if p.until <= now.as_ms() => self.answer(p.handle, Answer::Unavailable),
                None => still.push_back(p),
            }
        }
        self.parked = still;
        self.update_demand();
    }

    /// Tells the Lease what waiting requests need: more than it holds, so
    /// it asks even when what it holds is in pieces too small.
    fn update_demand(&mut self) {
        let waiting = self
            .parked
            .iter()
            .fold(0u64, |sum, p| sum.saturating_add(p.request.count));
        let demand = if waiting == 0 {
            0
        } else {
            self.lease.available().saturating_add(waiting)
        };
        self.lease.set_demand(demand, 0);
    }

    /// The next answer to a generator: its handle and what to answer.
    pub fn poll_answer(&mut self) -> Option<(u64, Answer)> {
        self.answers.pop_front()
    }

    /// The next thing to do towards the namespace object now (send an
    /// attempt, or cancel attempts no longer waited for), as the Lease
    /// decides. Call until `None`, after every input and at
    /// [`Relay::next_deadline`].
    pub fn poll_root(&mut self, now: Instant) -> Option<Action> {
        self.tick(now);
        if self.idle(now) {
            return None;
        }
        self.lease.poll(now)
    }

    /// Whether the relay is idle at `now`: no generator asked for a whole
    /// lease, none waits, and no attempt is on its way. An idle relay takes
    /// no new range from the namespace object (what it holds runs out and
    /// is abandoned): a relay nobody calls would otherwise take a range
    /// every lease, for nothing. The next request asks again, and waits
    /// for that root grant.
    pub fn idle(&self, now: Instant) -> bool {
        self.parked.is_empty()
            && self.lease.outstanding() == 0
            && now.as_ms().saturating_sub(self.asked_at) >= self.config.terms.serve_ms()
    }

    /// The outcome of an attempt to the namespace object. A grant installs
    /// (if it answers this incarnation's request and its lease has not run
    /// out) and serves waiting requests.
    pub fn handle_root_reply(&mut self, ticket: Ticket, reply: &Reply, now: Instant) -> Handled {
        match reply {
            Reply::Grant(g) if g.grant.incarnation == *self.lease.incarnation() => {
                self.max_count = g.capacity.max_count.or(self.max_count);
                self.root_remaining = g.capacity.remaining.or(self.root_remaining);
            }
            Reply::Refused(r) => {
                if let Some(m) = r.max_count {
                    self.max_count = Some(m);
                }
                if let Some(rem) = r.remaining {
                    self.root_remaining = Some(rem);
                }
            }
            _ => {}
        }
        let handled = self.lease.handle_reply(ticket, reply, now);
        self.tick(now);
        handled
    }

    /// A revocation from the namespace object: closes the lease (what it
    /// holds is abandoned, and grants still on their way will not install)
    /// and starts a new incarnation from `random`. Returns the incarnation
    /// closed, which the driver acknowledges to the object. Waiting
    /// requests stay, to be served under the new incarnation.
    pub fn handle_revoke(&mut self, random: [u8; 16], now: Instant) -> Incarnation {
        let closed = *self.lease.incarnation();
        self.lease.close();
        self.renew(random, now);
        self.stats.revocations += 1;
        closed
    }

    /// Replaces the lease, closed or stopped, by its successor under a new
    /// incarnation from `random`, counting what it had as abandoned. Request
    /// numbers go on ([`Lease::successor`]): a late answer to the old
    /// incarnation's `r1` (a 403 `revoked`, say) must not settle the new
    /// one's `r1`.
    fn renew(&mut self, random: [u8; 16], now: Instant) {
        self.abandoned_before = self
            .abandoned_before
            .saturating_add(self.lease.stats(0).abandoned);
        self.lease = self.lease.successor(random, now);
        self.tick(now);
    }

    /// A revocation that names the incarnations the namespace object wants
    /// closed: obeyed ([`Relay::handle_revoke`]) only when the relay's
    /// current incarnation is one of them, and then the incarnation closed
    /// is returned. Otherwise nothing changes and `None` is returned: the
    /// object's incarnation is not this instance's (an earlier instance,
    /// or one the relay already closed), so only its lease running out
    /// can end it, and closing this instance's fresh one would only throw
    /// its range away.
    pub fn handle_revoke_of(
        &mut self,
        wanted: &[Incarnation],
        random: [u8; 16],
        now: Instant,
    ) -> Option<Incarnation> {
        if !wanted.contains(self.lease.incarnation()) {
            return None;
        }
        Some(self.handle_revoke(random, now))
    }

    /// Starts a relay the object stopped for good ([`Relay::stopped`]: it
    /// refused it, as when relays were turned off) anew, with a new
    /// incarnation from `random`, and returns `true`; does nothing and
    /// returns `false` when it is not stopped. A driver calls it when a
    /// generator's request reaches the relay again (its router believes
    /// relays are on): the new incarnation asks the object, which decides.
    /// Waiting requests stay, to be served under the new incarnation.
    pub fn revive(&mut self, random: [u8; 16], now: Instant) -> bool {
        if !self.stopped() {
            return false;
        }
        self.renew(random, now);
        self.stats.revivals += 1;
        true
    }

    /// The next report batch, when one is due at `now`: sub-grants, or
    /// none when only the relay's refusal or abandonment counts changed
    /// (sent within the report interval, so that the namespace object
    /// counts what its relays refused and lost).
    pub fn poll_report(&mut self, now: Instant) -> Option<ReportBatch> {
        let s = self.stats();
        let view = [s.abandoned, s.frozen, s.exhausted, s.conflicts];
        if view != self.reported_view {
            self.reported_view = view;
            self.outbox.note(now.as_ms());
        }
        self.outbox.poll(now.as_ms())
    }

    /// A report batch that could not be delivered: it is sent again
    /// (within a bounded backlog).
    pub fn report_failed(&mut self, batch: ReportBatch, now: Instant) {
        self.outbox.put_back(batch, now.as_ms());
    }

    /// Sub-grants waiting to be reported.
    pub fn unreported(&self) -> usize {
        self.outbox.len()
    }

    /// When the driver must call [`Relay::tick`] or a poll next at the
    /// latest.
    pub fn next_deadline(&self) -> Option<Instant> {
        let parked = self.parked.iter().map(|p| Instant::from_ms(p.until)).min();
        let report = self.outbox.due().map(Instant::from_ms);
        [
            self.lease.next_deadline(),
            self.lease.next_expiry(),
            parked,
            report,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Whether the relay's upstream is stopped for good (refused by the
    /// object, for example because relays were turned off): a driver may
    /// then route generators to the object.
    pub fn stopped(&self) -> bool {
        matches!(self.lease.phase(), Phase::Failed(_))
    }
}

#[cfg(test)]
mod tests;
