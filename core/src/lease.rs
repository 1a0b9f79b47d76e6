//! `Lease`: one generator's state for one namespace, as a sans-IO engine.
//!
//! The engine issues IDs from ranges the authority committed to its
//! incarnation and says when to ask for more. Its driver sends what
//! [`Lease::poll_request`] returns, feeds replies back through
//! [`Lease::handle_grant`] and [`Lease::handle_error`], and wakes it at
//! [`Lease::next_deadline`]. The engine never reads a clock: every input
//! that depends on time carries `now`, a monotonic instant in milliseconds.
//!
//! Guaranteed, whatever the network does: an ID is issued at most once; it
//! comes from a range granted to this incarnation for a request this engine
//! made; a range is installed at most once, so a replayed or duplicated
//! grant never resets a cursor; the engine never steps past a range's end
//! and never wraps. Not guaranteed: any order between ranges, or that every
//! ID of a range is issued (`close` reports the tail it abandons).

use core::fmt;

use crate::authority::{Grant, GrantRequest};
use crate::code::ErrorCode;
use crate::names::{Incarnation, Namespace, RequestId};
use crate::range::Range;

/// The most range requests one engine keeps outstanding at once.
pub const MAX_OUTSTANDING: usize = 4;

/// Installed ranges waiting behind the current one, at most. A new request
/// is made only while waiting ranges plus requests in flight stay below
/// this, so every grant that arrives has a place.
const WAITING: usize = 2 * MAX_OUTSTANDING;

/// How many recent installs are remembered to check duplicate grants.
const RECENT_INSTALLS: usize = 16;

/// The shortest interval over which the consumption rate is sampled.
const RATE_SAMPLE_MS: u64 = 50;

/// How the engine sizes and paces its requests.
///
/// Build it with [`LeaseConfig::new`] and adjust fields; [`Lease::new`]
/// checks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseConfig {
    /// The namespace to issue from.
    pub namespace: Namespace,
    /// The smallest range to ask for.
    pub min_count: u64,
    /// The largest range to ask for (keep it within the namespace's
    /// `maxCount`).
    pub max_count: u64,
    /// The first request's size, before any rate is known.
    pub initial_count: u64,
    /// A range should last about this long at the measured rate.
    pub target_lifetime_ms: u64,
    /// Ask for the next range while this much time's worth of IDs is left.
    pub prefetch_lead_ms: u64,
    /// At most this many requests in flight (1 to [`MAX_OUTSTANDING`]).
    pub max_outstanding: usize,
    /// Send a request again, under the same request id, when no reply came
    /// within this long.
    pub request_timeout_ms: u64,
    /// The first retry backoff after a failure; it doubles per attempt.
    pub retry_initial_ms: u64,
    /// The longest retry backoff.
    pub retry_max_ms: u64,
}

impl LeaseConfig {
    /// Defaults: ranges of 1,000 to 1,000,000 IDs sized to last 10 s,
    /// refilled 2 s ahead, two requests in flight, 2 s request timeout,
    /// retries backing off from 50 ms to 2 s.
    pub fn new(namespace: Namespace) -> LeaseConfig {
        LeaseConfig {
            namespace,
            min_count: 1_000,
            max_count: 1_000_000,
            initial_count: 1_000,
            target_lifetime_ms: 10_000,
            prefetch_lead_ms: 2_000,
            max_outstanding: 2,
            request_timeout_ms: 2_000,
            retry_initial_ms: 50,
            retry_max_ms: 2_000,
        }
    }

    fn check(&self) -> Result<(), LeaseConfigError> {
        use LeaseConfigError as E;
        if self.min_count == 0 {
            return Err(E::ZeroMinCount);
        }
        if self.min_count > self.max_count {
            return Err(E::MinAboveMax);
        }
        if self.initial_count < self.min_count || self.initial_count > self.max_count {
            return Err(E::InitialOutOfBounds);
        }
        if self.max_outstanding == 0 || self.max_outstanding > MAX_OUTSTANDING {
            return Err(E::Outstanding);
        }
        if self.request_timeout_ms == 0 || self.retry_initial_ms == 0 {
            return Err(E::ZeroTime);
        }
        if self.retry_initial_ms > self.retry_max_ms {
            return Err(E::RetryBounds);
        }
        Ok(())
    }
}

/// Why a [`LeaseConfig`] is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseConfigError {
    /// `min_count` is 0.
    ZeroMinCount,
    /// `min_count` is greater than `max_count`.
    MinAboveMax,
    /// `initial_count` is outside `min_count..=max_count`.
    InitialOutOfBounds,
    /// `max_outstanding` is outside `1..=MAX_OUTSTANDING`.
    Outstanding,
    /// A timeout or backoff is 0.
    ZeroTime,
    /// `retry_initial_ms` is greater than `retry_max_ms`.
    RetryBounds,
}

impl fmt::Display for LeaseConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use LeaseConfigError as E;
        f.write_str(match self {
            E::ZeroMinCount => "the minimum range size must be at least 1",
            E::MinAboveMax => "the minimum range size is above the maximum",
            E::InitialOutOfBounds => "the initial range size is outside the minimum and maximum",
            E::Outstanding => "max outstanding requests must be between 1 and 4",
            E::ZeroTime => "timeouts and backoffs must be at least 1 ms",
            E::RetryBounds => "the first retry backoff is above the longest",
        })
    }
}

/// Why no ID was issued. Nothing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IssueError {
    /// No range is ready yet; one is on its way or will be asked for.
    Unavailable,
    /// No range is ready and the authority refuses new ones while the
    /// namespace is frozen; the engine keeps asking.
    Frozen,
    /// The namespace has no IDs left for this engine; final.
    Exhausted,
    /// The authority refused this engine for good (bad credentials, no such
    /// namespace, a request conflict); final.
    Failed(ErrorCode),
    /// The engine was closed; final.
    Closed,
    /// A batch of 0 IDs was asked for.
    EmptyBatch,
}

impl fmt::Display for IssueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IssueError::Unavailable => f.write_str("no ID is ready yet"),
            IssueError::Frozen => f.write_str("the namespace is frozen"),
            IssueError::Exhausted => f.write_str("the namespace is exhausted"),
            IssueError::Failed(code) => write!(f, "the authority refused this generator: {code}"),
            IssueError::Closed => f.write_str("the generator is closed"),
            IssueError::EmptyBatch => f.write_str("a batch must ask for at least 1 ID"),
        }
    }
}

/// A failed range request, as the driver reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No answer: the connection failed, timed out or the reply was
    /// unreadable. The request may or may not have been committed.
    Transport,
    /// The authority answered with an error.
    Refused {
        /// Its code.
        code: ErrorCode,
        /// For `namespace_exhausted`: how many IDs remain.
        remaining: Option<u64>,
        /// For `unavailable`: when to try again, in milliseconds.
        retry_after_ms: Option<u64>,
    },
}

/// What became of a grant handed to [`Lease::handle_grant`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantOutcome {
    /// Installed: its IDs will be issued.
    Installed,
    /// A repeat of a grant already installed (or already settled); ignored.
    Duplicate,
    /// Not installed: it does not answer a request of this engine.
    Refused(GrantRefusal),
}

/// Why a grant was not installed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantRefusal {
    /// For another namespace.
    WrongNamespace,
    /// For another incarnation (for example, a previous run's).
    WrongIncarnation,
    /// For a request id this engine never made.
    Unsolicited,
    /// Its count differs from the request's.
    WrongCount,
    /// It repeats a request id with a different range than was installed.
    Mismatch,
}

/// Counters a user would want; they only grow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// IDs issued.
    pub issued: u64,
    /// Ranges installed.
    pub ranges_installed: u64,
    /// Installed grants that the authority marked as replays.
    pub replays_installed: u64,
    /// Grants ignored as repeats of one already installed.
    pub duplicates_ignored: u64,
    /// Grants refused as not ours or inconsistent.
    pub grants_refused: u64,
    /// New range requests made.
    pub requests: u64,
    /// Repeats of a request under the same request id.
    pub retries: u64,
    /// Calls that found no ID ready.
    pub starved: u64,
    /// IDs abandoned by `close`.
    pub abandoned: u64,
    /// Time from a request's first send to its grant, last one, in ms.
    pub last_grant_ms: u64,
    /// The longest such time seen, in ms.
    pub max_grant_ms: u64,
}

/// A request the driver must send now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// What to send.
    pub request: GrantRequest,
    /// 0 for the first send, then 1, 2, ... for retries of the same id.
    pub attempt: u32,
}

/// Where the engine is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Issuing and asking for ranges.
    Running,
    /// The authority has no more IDs; issuing what is left.
    Exhausted,
    /// The authority refused this engine for good; issuing what is left.
    Failed(ErrorCode),
    /// Closed; issues nothing.
    Closed,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    number: u64,
    count: u64,
    first_sent: Option<u64>,
    attempt: u32,
    due: u64,
}

/// One generator's lease engine. See the module documentation.
///
/// Deliberately not `Clone`: two copies of one live cursor would issue the
/// same IDs.
#[derive(Debug)]
pub struct Lease {
    config: LeaseConfig,
    incarnation: Incarnation,
    requests_made: u64,
    // The current range: the next ID and how many are left in it.
    cursor: u64,
    left: u64,
    // Installed ranges not yet started, oldest first.
    ready: [Option<Range>; WAITING],
    pending: [Option<Pending>; MAX_OUTSTANDING],
    recent: [Option<(u64, Range)>; RECENT_INSTALLS],
    recent_at: usize,
    phase: Phase,
    frozen: bool,
    // What the authority last said remains, after an exhaustion refusal.
    known_remaining: Option<u64>,
    // The consumption rate in IDs per second, and the sample it came from.
    rate: u64,
    sampled_at: u64,
    sampled_issued: u64,
    // Poll when `left` falls to this mark; see `should_poll`.
    refill_mark: u64,
    last_range: u64,
    rng: u64,
    stats: Stats,
}

impl Lease {
    /// A new engine with a fresh incarnation made from 16 random bytes.
    ///
    /// The bytes must come from a good random source: two engines with the
    /// same bytes share an incarnation and may be handed the same ranges.
    pub fn new(config: LeaseConfig, random: [u8; 16], now: u64) -> Result<Lease, LeaseConfigError> {
        config.check()?;
        let mut seed = 0u64;
        for chunk in random.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            seed ^= u64::from_le_bytes(word);
        }
        Ok(Lease {
            config,
            incarnation: Incarnation::from_random(random),
            requests_made: 0,
            cursor: 0,
            left: 0,
            ready: [None; WAITING],
            pending: [None; MAX_OUTSTANDING],
            recent: [None; RECENT_INSTALLS],
            recent_at: 0,
            phase: Phase::Running,
            frozen: false,
            known_remaining: None,
            rate: 0,
            sampled_at: now,
            sampled_issued: 0,
            refill_mark: 0,
            last_range: 0,
            rng: seed | 1,
            stats: Stats::default(),
        })
    }

    /// This engine's incarnation.
    pub fn incarnation(&self) -> &Incarnation {
        &self.incarnation
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &LeaseConfig {
        &self.config
    }

    /// Where the engine is in its life.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The measured consumption rate, in IDs per second.
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// IDs installed and not yet issued.
    pub fn available(&self) -> u64 {
        self.ready
            .iter()
            .flatten()
            .fold(self.left, |sum, r| sum.saturating_add(r.count()))
    }

    /// How many requests are outstanding.
    pub fn outstanding(&self) -> usize {
        self.pending.iter().flatten().count()
    }

    /// The next unused ID.
    ///
    /// Moves to the next installed range only when the current one is used
    /// up; never passes a range's end.
    #[inline]
    pub fn next_id(&mut self) -> Result<u64, IssueError> {
        if self.left != 0 {
            let id = self.cursor;
            // Wraps only past u64::MAX, when `left` becomes 0 with it.
            self.cursor = self.cursor.wrapping_add(1);
            self.left -= 1;
            self.stats.issued += 1;
            return Ok(id);
        }
        self.take_slow(1).map(|r| r.start())
    }

    /// Up to `n` contiguous unused IDs, all from one range.
    ///
    /// Returns fewer than `n` when the current range has fewer left; it
    /// never joins two ranges. When the current range is used up it moves
    /// to the next installed one first.
    pub fn take(&mut self, n: u64) -> Result<Range, IssueError> {
        if n == 0 {
            return Err(IssueError::EmptyBatch);
        }
        if self.left != 0 {
            return Ok(self.take_current(n));
        }
        self.take_slow(n)
    }

    fn take_current(&mut self, n: u64) -> Range {
        let grab = n.min(self.left);
        let start = self.cursor;
        self.cursor = self.cursor.wrapping_add(grab);
        self.left -= grab;
        self.stats.issued += grab;
        match Range::with_count(start, grab) {
            Ok(r) => r,
            Err(_) => unreachable!("the current range holds `grab` IDs from the cursor"),
        }
    }

    #[cold]
    fn take_slow(&mut self, n: u64) -> Result<Range, IssueError> {
        if self.phase == Phase::Closed {
            return Err(IssueError::Closed);
        }
        if n == 0 {
            return Err(IssueError::EmptyBatch);
        }
        if let Some(range) = self.pop_ready() {
            self.cursor = range.start();
            self.left = range.count();
            self.update_refill_mark();
            return Ok(self.take_current(n));
        }
        self.stats.starved += 1;
        Err(match self.phase {
            Phase::Running if self.frozen => IssueError::Frozen,
            Phase::Running => IssueError::Unavailable,
            Phase::Exhausted => IssueError::Exhausted,
            Phase::Failed(code) => IssueError::Failed(code),
            Phase::Closed => IssueError::Closed,
        })
    }

    fn pop_ready(&mut self) -> Option<Range> {
        let first = self.ready[0].take()?;
        self.ready.rotate_left(1);
        Some(first)
    }

    /// Whether the driver should call [`Lease::poll_request`] now because
    /// the IDs on hand fell to the refill mark. Cheap enough to ask after
    /// every issue.
    #[inline]
    pub fn should_poll(&self) -> bool {
        self.left <= self.refill_mark && self.phase == Phase::Running
    }

    /// The next request to send now, if any: a retry that is due (same
    /// request id, same count) or a new request when the IDs on hand and on
    /// their way fall below what the measured rate needs. Call it until it
    /// returns `None`.
    pub fn poll_request(&mut self, now: u64) -> Option<Outgoing> {
        self.sample_rate(now);
        let out = self.next_outgoing(now);
        self.update_refill_mark();
        out
    }

    fn next_outgoing(&mut self, now: u64) -> Option<Outgoing> {
        if self.phase != Phase::Running {
            return None;
        }
        if let Some(out) = self.send_due(now) {
            return Some(out);
        }
        if self.at_capacity() {
            return None;
        }
        let slot = self.pending.iter().position(Option::is_none)?;
        if self.frozen || self.on_the_way() > self.low_water() {
            return None;
        }
        if self.known_remaining == Some(0) {
            self.phase = Phase::Exhausted;
            return None;
        }
        self.requests_made += 1;
        let count = self.next_count();
        self.last_range = count;
        self.pending[slot] = Some(Pending {
            number: self.requests_made,
            count,
            first_sent: None,
            attempt: 0,
            due: now,
        });
        self.send_due(now)
    }

    /// When the driver must call [`Lease::poll_request`] next at the latest
    /// (a retry or a request timeout), or `None` if nothing is scheduled.
    pub fn next_deadline(&self) -> Option<u64> {
        if self.phase != Phase::Running {
            return None;
        }
        self.pending.iter().flatten().map(|p| p.due).min()
    }

    /// Hands the engine a grant received for one of its requests.
    ///
    /// A grant is installed only if it answers a request still outstanding
    /// in this incarnation, so a replay or duplicate installs nothing twice.
    pub fn handle_grant(&mut self, grant: &Grant, replayed: bool, now: u64) -> GrantOutcome {
        let outcome = self.settle_grant(grant, replayed, now);
        match outcome {
            GrantOutcome::Installed => {}
            GrantOutcome::Duplicate => self.stats.duplicates_ignored += 1,
            GrantOutcome::Refused(_) => self.stats.grants_refused += 1,
        }
        outcome
    }

    fn settle_grant(&mut self, grant: &Grant, replayed: bool, now: u64) -> GrantOutcome {
        if grant.namespace != self.config.namespace {
            return GrantOutcome::Refused(GrantRefusal::WrongNamespace);
        }
        if grant.incarnation != self.incarnation {
            return GrantOutcome::Refused(GrantRefusal::WrongIncarnation);
        }
        let Some(number) = grant.request_id.number() else {
            return GrantOutcome::Refused(GrantRefusal::Unsolicited);
        };
        let Some(slot) = self.pending_slot(number) else {
            if number == 0 || number > self.requests_made {
                return GrantOutcome::Refused(GrantRefusal::Unsolicited);
            }
            let installed = self.recent.iter().flatten().find(|(n, _)| *n == number);
            return match installed {
                Some((_, range)) if *range != grant.range => {
                    GrantOutcome::Refused(GrantRefusal::Mismatch)
                }
                _ => GrantOutcome::Duplicate,
            };
        };
        let Some(pending) = self.pending[slot] else {
            return GrantOutcome::Refused(GrantRefusal::Unsolicited);
        };
        if pending.count != grant.range.count() {
            return GrantOutcome::Refused(GrantRefusal::WrongCount);
        }
        if self.phase == Phase::Closed {
            // Settled, not installed: its IDs are abandoned with the rest.
            self.pending[slot] = None;
            self.stats.abandoned = self.stats.abandoned.saturating_add(grant.range.count());
            return GrantOutcome::Duplicate;
        }
        self.pending[slot] = None;
        self.frozen = false;
        if let Some(r) = self.known_remaining.as_mut() {
            *r = r.saturating_sub(grant.range.count());
        }
        let latency = now.saturating_sub(pending.first_sent.unwrap_or(now));
        self.stats.last_grant_ms = latency;
        self.stats.max_grant_ms = self.stats.max_grant_ms.max(latency);
        self.stats.ranges_installed += 1;
        if replayed {
            self.stats.replays_installed += 1;
        }
        self.recent[self.recent_at] = Some((number, grant.range));
        self.recent_at = (self.recent_at + 1) % RECENT_INSTALLS;
        if self.left == 0 && self.ready[0].is_none() {
            self.cursor = grant.range.start();
            self.left = grant.range.count();
        } else if let Some(free) = self.ready.iter_mut().find(|r| r.is_none()) {
            *free = Some(grant.range);
        } else {
            // Cannot happen: requests are made only while a place is free.
            // Were it to, abandoning the range only leaves a gap.
            self.stats.abandoned = self.stats.abandoned.saturating_add(grant.range.count());
        }
        self.update_refill_mark();
        GrantOutcome::Installed
    }

    /// Tells the engine a request failed.
    ///
    /// Transport failures and `unavailable` are retried under the same
    /// request id after a backoff; `namespace_frozen` is retried until the
    /// namespace thaws; `namespace_exhausted` retires the request (and asks
    /// for what remains, if anything); any other code stops the engine from
    /// asking again, while IDs already installed can still be issued.
    pub fn handle_error(&mut self, request_id: &RequestId, failure: Failure, now: u64) {
        let Some(slot) = request_id.number().and_then(|n| self.pending_slot(n)) else {
            return;
        };
        let Some(mut p) = self.pending[slot] else {
            return;
        };
        match failure {
            Failure::Transport => {
                p.due = now.saturating_add(self.backoff(p.attempt));
                self.pending[slot] = Some(p);
            }
            Failure::Refused {
                code,
                remaining,
                retry_after_ms,
            } => match code {
                ErrorCode::Unavailable => {
                    let wait = self.backoff(p.attempt).max(retry_after_ms.unwrap_or(0));
                    p.due = now.saturating_add(wait);
                    self.pending[slot] = Some(p);
                }
                ErrorCode::NamespaceFrozen => {
                    self.frozen = true;
                    p.due = now.saturating_add(self.backoff(p.attempt));
                    self.pending[slot] = Some(p);
                }
                ErrorCode::NamespaceExhausted => {
                    self.pending[slot] = None;
                    let left = remaining.unwrap_or(0);
                    self.known_remaining = Some(left);
                    if left == 0 {
                        self.phase = Phase::Exhausted;
                        self.pending = [None; MAX_OUTSTANDING];
                    }
                }
                other => {
                    self.pending = [None; MAX_OUTSTANDING];
                    self.phase = Phase::Failed(other);
                }
            },
        }
        self.update_refill_mark();
    }

    /// Stops the engine and abandons every unused ID it holds; returns how
    /// many. Requests still in flight are abandoned too; if their grants
    /// arrive later they are not installed.
    pub fn close(&mut self) -> u64 {
        if self.phase == Phase::Closed {
            return 0;
        }
        let abandoned = self.available();
        self.left = 0;
        self.ready = [None; WAITING];
        self.phase = Phase::Closed;
        self.refill_mark = 0;
        self.stats.abandoned = self.stats.abandoned.saturating_add(abandoned);
        abandoned
    }

    fn pending_slot(&self, number: u64) -> Option<usize> {
        self.pending
            .iter()
            .position(|p| p.is_some_and(|p| p.number == number))
    }

    fn send_due(&mut self, now: u64) -> Option<Outgoing> {
        let slot = self
            .pending
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.filter(|p| p.due <= now).map(|p| (i, p.due)))
            .min_by_key(|&(_, due)| due)
            .map(|(i, _)| i)?;
        let mut p = self.pending[slot]?;
        let attempt = if p.first_sent.is_none() {
            self.stats.requests += 1;
            p.first_sent = Some(now);
            0
        } else {
            self.stats.retries += 1;
            p.attempt = p.attempt.saturating_add(1);
            p.attempt
        };
        p.due = now.saturating_add(self.config.request_timeout_ms);
        self.pending[slot] = Some(p);
        Some(Outgoing {
            request: GrantRequest {
                namespace: self.config.namespace,
                incarnation: self.incarnation,
                request_id: RequestId::numbered(p.number),
                count: p.count,
            },
            attempt,
        })
    }

    fn on_the_way(&self) -> u64 {
        self.pending
            .iter()
            .flatten()
            .fold(self.available(), |sum, p| sum.saturating_add(p.count))
    }

    /// IDs to keep on hand or on their way: the prefetch lead's worth at the
    /// measured rate, and never less than half the last range asked for.
    fn low_water(&self) -> u64 {
        let by_rate = self.rate.saturating_mul(self.config.prefetch_lead_ms) / 1000;
        by_rate.max(self.last_range / 2).max(1)
    }

    /// The next request's size: enough to last the target lifetime at the
    /// measured rate, within the configured bounds and what remains.
    fn next_count(&self) -> u64 {
        let wanted = if self.rate == 0 {
            self.config.initial_count
        } else {
            self.rate.saturating_mul(self.config.target_lifetime_ms) / 1000
        };
        let count = wanted.clamp(self.config.min_count, self.config.max_count);
        match self.known_remaining {
            Some(r) if r > 0 => count.min(r),
            _ => count,
        }
    }

    /// Whether no new request may be made: `max_outstanding` are in flight,
    /// or every place for a waiting range is spoken for.
    fn at_capacity(&self) -> bool {
        let outstanding = self.outstanding();
        outstanding >= self.config.max_outstanding
            || self.ready.iter().flatten().count() + outstanding >= WAITING
    }

    fn update_refill_mark(&mut self) {
        let have = self.on_the_way() - self.left;
        self.refill_mark = if self.phase != Phase::Running || self.at_capacity() {
            0
        } else {
            self.low_water().saturating_sub(have)
        };
    }

    fn sample_rate(&mut self, now: u64) {
        let elapsed = now.saturating_sub(self.sampled_at);
        let issued = self.stats.issued - self.sampled_issued;
        // Sample every RATE_SAMPLE_MS, or sooner when a whole range went by.
        let burst = elapsed > 0 && self.last_range > 0 && issued >= self.last_range;
        if elapsed < RATE_SAMPLE_MS && !burst {
            return;
        }
        let sample = issued.saturating_mul(1000) / elapsed;
        // Rise at once to a higher rate so a burst is served; decay gently.
        self.rate = if sample >= self.rate {
            sample
        } else {
            (self.rate / 4).saturating_mul(3).saturating_add(sample / 4)
        };
        self.sampled_at = now;
        self.sampled_issued = self.stats.issued;
    }

    fn backoff(&mut self, attempt: u32) -> u64 {
        let shift = attempt.min(20);
        let cap = self
            .config
            .retry_initial_ms
            .saturating_mul(1 << shift)
            .min(self.config.retry_max_ms);
        // xorshift64: jitter only, never part of an ID.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let half = cap / 2;
        half + self.rng % (cap - half + 1)
    }
}

#[cfg(test)]
mod tests;
