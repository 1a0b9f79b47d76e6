//! `Lease`: one generator's state for one namespace, as a sans-IO engine,
//! and the whole client half of the protocol.
//!
//! The driver loops over [`Lease::poll`] and carries out each [`Action`]:
//! it sends an [`Outgoing`] attempt, or cancels attempts the engine no
//! longer waits for. Whatever becomes of an attempt (an HTTP answer
//! classified by [`crate::Reply::from_http`], or no answer at all) goes
//! back through [`Lease::handle_reply`] with the attempt's [`Ticket`]. The
//! driver wakes the engine at [`Lease::next_deadline`] and whenever
//! [`Lease::should_poll`] says so. The engine never reads a clock: every
//! input that depends on time carries `now`, an [`Instant`] on the
//! driver's monotonic clock (see [`crate::time`]); durations are `*_ms`
//! milliseconds.
//!
//! Guaranteed, whatever the network does: an ID is issued at most once; it
//! comes from a range granted to this incarnation for a request this engine
//! made; a range is installed at most once, so a replayed or duplicated
//! grant never resets a cursor; the engine never steps past a range's end
//! and never wraps; a failure reported for a superseded attempt changes
//! nothing; a grant from any attempt of a request still pending installs.
//! Not guaranteed: any order between ranges, or that every ID of a range
//! is issued (`close` reports the tail it abandons).

use core::fmt;

use crate::code::ErrorCode;
use crate::names::Incarnation;
use crate::protocol::{GrantReply, GrantRequest};
use crate::range::Range;
use crate::reply::{Disposition, Reply, ReplyCode};
use crate::time::Instant;

mod config;
mod requests;
mod sizing;

pub use config::{
    ClientConfig, ConfigError, LeaseConfig, LeaseOptions, OptionName, OptionValue,
    BLOCKED_BACKOFF_FACTOR, MAX_DEADLINE_MS, MAX_OUTSTANDING, MAX_RANGE, MAX_REQUEST_AGE_MS,
    MAX_TIME_MS,
};
pub use requests::{Action, Outgoing, Ticket};
pub use sizing::{REMAINING_SHARE, TRUST_MS, WINDOW_MS};

use requests::{request_id, Requests};
use sizing::Sizing;

/// Installed ranges waiting behind the current one, at most. A new request
/// is made only while waiting ranges plus requests in flight stay below
/// this, so every grant that arrives has a place.
const WAITING: usize = 2 * MAX_OUTSTANDING;

/// Places for installed ranges: one more than [`WAITING`], kept for a
/// range that callers wait for (see [`Lease::set_demand`]), so a batch can
/// always be gathered however small the ranges on hand.
const PLACES: usize = WAITING + 1;

/// How many recent installs are remembered to check duplicate grants.
const RECENT_INSTALLS: usize = 16;

/// How many recent grant latencies the percentiles in [`Stats`] cover.
const LATENCIES: usize = 64;

/// Why no ID was issued. Nothing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IssueError {
    /// No range is ready yet; one is on its way or will be asked for.
    Unavailable,
    /// No range is ready and the authority refuses new ones while the
    /// namespace is frozen; the engine keeps asking.
    Frozen,
    /// No range is ready and the engine is blocked (see [`Blocked`]): a
    /// caller should not wait, but the engine asks again by itself; not
    /// final. The code is that of the answer that blocked it.
    Blocked(ReplyCode),
    /// The namespace has no IDs left: the authority said 0 remain, in a
    /// refusal or with the grant that took the last ones; final.
    Exhausted,
    /// The authority refused this engine for good (bad credentials, no such
    /// namespace, a request conflict, a code this version does not know);
    /// final.
    Failed(ReplyCode),
    /// The engine was closed; final.
    Closed,
    /// A batch of 0 IDs was asked for.
    EmptyBatch,
    /// A batch of exactly `n` cannot be had: with what this engine holds
    /// and has on its way, the namespace has fewer than `n` left (as the
    /// authority last said). Nothing was taken; smaller batches may still
    /// be served. Not final.
    TooFew {
        /// What the namespace has left to grant, as the engine last heard.
        remaining: u64,
        /// IDs this engine holds (installed, and the driver's lent block).
        available: u64,
    },
    /// A batch larger than the engine can gather: `limit` is
    /// [`Lease::batch_limit`]. Nothing was taken. Not final.
    BatchTooLarge {
        /// The largest batch this engine gathers.
        limit: u64,
    },
}

impl IssueError {
    /// Whether this engine can never issue again: everything but
    /// `Unavailable`, `Frozen` and `Blocked` (and `EmptyBatch`, which is
    /// the caller's mistake).
    pub const fn is_final(&self) -> bool {
        !matches!(
            self,
            IssueError::Unavailable
                | IssueError::Frozen
                | IssueError::Blocked(_)
                | IssueError::EmptyBatch
                | IssueError::TooFew { .. }
                | IssueError::BatchTooLarge { .. }
        )
    }

    /// Whether a caller should wait for a range (until its deadline):
    /// only for `Unavailable` and `Frozen`. Every other error is given to
    /// waiting callers at once, `Blocked` included.
    pub const fn waits(&self) -> bool {
        matches!(self, IssueError::Unavailable | IssueError::Frozen)
    }

    /// How many IDs the namespace has left, where this error says: 0 for
    /// `Exhausted`, whether a refusal or the last grant told the engine;
    /// what it last said for `TooFew`.
    pub const fn remaining(&self) -> Option<u64> {
        match self {
            IssueError::Exhausted => Some(0),
            IssueError::TooFew { remaining, .. } => Some(*remaining),
            _ => None,
        }
    }

    /// The code a JS caller sees: `unavailable`, `frozen`, `exhausted`,
    /// `closed`, `invalid_request` for an empty batch, or the refusal's
    /// [`ReplyCode::client_code`].
    pub fn client_code(&self) -> &'static str {
        match self {
            IssueError::Unavailable => "unavailable",
            IssueError::Frozen => "frozen",
            IssueError::Blocked(code) => code.client_code(),
            IssueError::Exhausted => "exhausted",
            IssueError::Failed(code) => code.client_code(),
            IssueError::Closed => "closed",
            IssueError::EmptyBatch | IssueError::BatchTooLarge { .. } => "invalid_request",
            IssueError::TooFew { .. } => "exhausted",
        }
    }
}

impl fmt::Display for IssueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IssueError::Unavailable => f.write_str("no ID is ready yet"),
            IssueError::Frozen => f.write_str("the namespace is frozen"),
            IssueError::Blocked(code) => write!(
                f,
                "range requests are refused ({code}) by something other than the authority, or with fresh credentials; asking again later"
            ),
            IssueError::Exhausted => f.write_str("the namespace is exhausted"),
            IssueError::Failed(code) => write!(f, "the authority refused this generator: {code}"),
            IssueError::Closed => f.write_str("the generator is closed"),
            IssueError::EmptyBatch => f.write_str("a batch must ask for at least 1 ID"),
            IssueError::TooFew {
                remaining,
                available,
            } => write!(
                f,
                "the namespace has {remaining} IDs left and this generator holds {available}: fewer than the batch"
            ),
            IssueError::BatchTooLarge { limit } => {
                write!(f, "a batch may ask for at most {limit} IDs here")
            }
        }
    }
}

impl core::error::Error for IssueError {}

/// What became of an attempt's outcome handed to [`Lease::handle_reply`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Handled {
    /// A grant, installed: its IDs will be issued.
    Installed,
    /// A repeat of a grant already installed (or already settled); ignored,
    /// and counted in [`Stats::duplicates_ignored`].
    Duplicate,
    /// A grant that arrived after [`Lease::close`]: settled, not installed;
    /// its IDs are counted in [`Stats::abandoned`] (and only there).
    Abandoned,
    /// A grant that arrived after its range's lifetime ran out (see
    /// [`Lease::set_range_lifetime`]): settled, not installed; its IDs are
    /// counted in [`Stats::abandoned`].
    Expired,
    /// A grant not installed: it does not answer a request of this engine.
    NotOurs(GrantRefusal),
    /// A failure of an attempt that was superseded, or of a request already
    /// settled; ignored.
    Stale,
    /// A failure; the request will be sent again (or a smaller one made).
    WillRetry,
    /// A failure that blocks the engine (see [`Blocked`]); the request
    /// will be sent again after the block's backoff.
    Blocked,
    /// A failure that stops the engine asking (exhausted, or refused for
    /// good); installed IDs still issue.
    Stopped,
}

/// Why a grant was not installed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrantRefusal {
    /// For another namespace.
    WrongNamespace,
    /// For another incarnation (for example, a previous run's).
    WrongIncarnation,
    /// For a request id this engine never made.
    Unsolicited,
    /// For another request than the attempt it came back on.
    WrongTicket,
    /// Its count differs from the request's.
    WrongCount,
    /// It repeats a request id with a different range than was installed.
    Mismatch,
}

/// Grant round trips: from a request's first send to its grant, in ms,
/// over the last 64 grants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Latency {
    /// Grants measured in all.
    pub count: u64,
    /// The median of the last 64.
    pub p50: u64,
    /// The 99th percentile of the last 64.
    pub p99: u64,
    /// The longest ever.
    pub max: u64,
}

/// Counters a user would want. They only grow, but for the present state
/// (`available`, `reserved_ahead` and `outstanding`) and the latency
/// percentiles (`grant_ms.p50` and `p99`, over the last 64 grants).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// IDs returned to callers.
    pub issued: u64,
    /// IDs installed and not yet returned (including what the driver holds
    /// unreturned of a lent block).
    pub available: u64,
    /// IDs reserved ahead: `available` plus what requests in flight ask
    /// for.
    pub reserved_ahead: u64,
    /// IDs this engine reserved in all: every range granted to it, and
    /// every request given up without a refusal (its range may have been
    /// committed; after `close`, those still in flight). Only grows;
    /// requests in flight are in `reserved_ahead`.
    pub reserved: u64,
    /// Requests in flight now.
    pub outstanding: u64,
    /// Ranges installed.
    pub ranges_installed: u64,
    /// Installed grants that the authority marked as replays.
    pub replays_installed: u64,
    /// Grants ignored as repeats of one already installed.
    pub duplicates_ignored: u64,
    /// Grants refused as not ours or inconsistent.
    pub grants_refused: u64,
    /// Failures of superseded attempts or settled requests, ignored.
    pub stale_ignored: u64,
    /// New range requests made.
    pub requests: u64,
    /// Repeats of a request under the same request id.
    pub retries: u64,
    /// Requests given up after [`MAX_REQUEST_AGE_MS`] without an answer.
    pub requests_expired: u64,
    /// Calls that found no ID ready.
    pub starved: u64,
    /// Times the engine became blocked (see [`Blocked`]).
    pub blocks: u64,
    /// Times a block ended: the authority answered again.
    pub unblocks: u64,
    /// IDs abandoned (by `close`, or grants that arrived after it).
    pub abandoned: u64,
    /// Grant round trips.
    pub grant_ms: Latency,
}

/// Where the engine is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Issuing and asking for ranges.
    Running,
    /// The authority has no more IDs; issuing what is left.
    Exhausted,
    /// The authority refused this engine for good; issuing what is left.
    Failed(ReplyCode),
    /// Closed; issues nothing.
    Closed,
}

/// Why the engine is blocked, and until when: something other than a
/// rangeid authority (a proxy, a WAF, a server at a wrong URL) refused its
/// requests with a 4xx, or the authority refused its credentials even
/// fresh. Callers are not made to wait; the engine sends one request at a
/// time again after a backoff from `retry_max_ms` that doubles per blocked
/// answer up to [`BLOCKED_BACKOFF_FACTOR`] times it (and at least
/// `Retry-After`), with fresh credentials after a 401. The block ends when
/// the authority answers again: a grant, or any of its own refusals but
/// `unauthenticated`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The code of the last answer that blocked (a foreign answer's, from
    /// its status).
    pub code: ReplyCode,
    /// Blocked answers in a row.
    pub answers: u32,
    /// When the engine asks again, on the engine's clock.
    pub until: Instant,
}

/// Exactly the IDs of one batch ([`Lease::take_exact`]): `from_lent` IDs
/// from the rest of the driver's lent block first, then whole pieces of
/// installed ranges, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    /// How many IDs the driver takes from the rest of its lent block first.
    pub from_lent: u64,
    pieces: [Option<Range>; PLACES + 1],
}

impl Batch {
    /// The pieces after the lent block's, in order (each from one range).
    pub fn pieces(&self) -> impl Iterator<Item = Range> + '_ {
        self.pieces.iter().flatten().copied()
    }

    /// How many IDs it holds in all.
    pub fn count(&self) -> u64 {
        self.pieces()
            .fold(self.from_lent, |sum, r| sum.saturating_add(r.count()))
    }
}

/// One generator's lease engine. See the module documentation.
///
/// Deliberately not `Clone`: two copies of one live cursor would issue the
/// same IDs.
#[derive(Debug)]
pub struct Lease {
    config: LeaseConfig,
    incarnation: Incarnation,
    // The current range: the next ID and how many are left in it.
    cursor: u64,
    left: u64,
    // The block last lent to the driver, counted as returned at the next
    // `lend`, `take` or `take_more`.
    lent: u64,
    // Installed ranges not yet started, oldest first.
    ready: [Option<Range>; PLACES],
    // When each range may no longer be used (see `set_range_lifetime`),
    // on the driver's clock in ms: the current one's, and each ready
    // range's at its place. `u64::MAX` without a lifetime.
    current_until: u64,
    ready_until: [u64; PLACES],
    range_lifetime_ms: Option<u64>,
    requests: Requests,
    recent: [Option<(u64, Range)>; RECENT_INSTALLS],
    recent_at: usize,
    phase: Phase,
    frozen: bool,
    blocked: Option<Blocked>,
    // What the authority last said remains, after an exhaustion refusal.
    known_remaining: Option<u64>,
    last_failure: Option<Reply>,
    sizing: Sizing,
    // IDs asked for in all, less requests refused (never granted).
    reserved: u64,
    // Poll when `left` falls to this mark; see `should_poll`.
    refill_mark: u64,
    // IDs callers are waiting for (see `set_demand`).
    demand: u64,
    latencies: [u64; LATENCIES],
    stats: Stats,
}

impl Lease {
    /// A new engine with a fresh incarnation made from 16 random bytes.
    ///
    /// The bytes must come from a good random source: two engines with the
    /// same bytes share an incarnation and may be handed the same ranges.
    pub fn new(config: LeaseConfig, random: [u8; 16], now: Instant) -> Result<Lease, ConfigError> {
        config.check()?;
        Ok(Lease::unchecked(config, random, now))
    }

    /// [`Lease::new`] for a configuration already checked.
    fn unchecked(config: LeaseConfig, random: [u8; 16], now: Instant) -> Lease {
        let now = now.as_ms();
        let mut seed = 0u64;
        for chunk in random.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            seed ^= u64::from_le_bytes(word);
        }
        Lease {
            config,
            incarnation: Incarnation::from_random(random),
            cursor: 0,
            left: 0,
            lent: 0,
            ready: [None; PLACES],
            current_until: u64::MAX,
            ready_until: [u64::MAX; PLACES],
            range_lifetime_ms: None,
            requests: Requests::new(seed),
            recent: [None; RECENT_INSTALLS],
            recent_at: 0,
            phase: Phase::Running,
            frozen: false,
            blocked: None,
            known_remaining: None,
            last_failure: None,
            sizing: Sizing::new(now),
            reserved: 0,
            refill_mark: 0,
            demand: 0,
            latencies: [0; LATENCIES],
            stats: Stats::default(),
        }
    }

    /// A new engine for this one's configuration and range lifetime, under
    /// a fresh incarnation made from `random` (as [`Lease::new`]), whose
    /// request numbers go on after this engine's. So an answer to one of
    /// this engine's attempts, which a driver hands over by its [`Ticket`]
    /// alone, never matches an attempt of the new engine: it is
    /// [`Handled::Stale`], not taken for the new engine's request of the
    /// same number (a relay's driver, after a revocation, gets both).
    pub fn successor(&self, random: [u8; 16], now: Instant) -> Lease {
        let mut next = Lease::unchecked(self.config, random, now);
        next.range_lifetime_ms = self.range_lifetime_ms;
        next.requests.made = self.requests.made;
        next
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

    /// Whether (and why, and until when) the engine is blocked; `None`
    /// once stopped.
    pub fn blocked(&self) -> Option<Blocked> {
        self.blocked.filter(|_| self.phase == Phase::Running)
    }

    /// The last failure of a current attempt (a refusal or no usable
    /// answer; while blocked, the answer that blocked it or a later
    /// refusal); cleared by the next installed grant. What a driver puts in
    /// the error it gives a caller who waited in vain.
    pub fn last_failure(&self) -> Option<&Reply> {
        self.last_failure.as_ref()
    }

    /// The counters, counting `lent_unused` IDs of the lent block as not
    /// returned (pass 0 when nothing is lent).
    pub fn stats(&self, lent_unused: u64) -> Stats {
        let mut s = self.stats;
        let unused = lent_unused.min(self.lent);
        s.issued = s.issued.saturating_add(self.lent - unused);
        s.available = self.available().saturating_add(unused);
        s.reserved_ahead = s.available.saturating_add(self.requests.in_flight_ids());
        // The engine's own figure also holds what is in flight, which a
        // refusal takes back; what it reports only grows. Once closed, what
        // was still in flight is given up: it may have been committed.
        s.reserved = if self.phase == Phase::Closed {
            self.reserved
        } else {
            self.reserved.saturating_sub(self.requests.in_flight_ids())
        };
        s.outstanding = self.requests.outstanding() as u64;
        if self.phase == Phase::Closed {
            // What was in flight is given up: nothing is outstanding or
            // ahead any more (its grants, if they come, are abandoned).
            s.outstanding = 0;
            s.reserved_ahead = s.available;
        }
        let n = (s.grant_ms.count as usize).min(LATENCIES);
        let mut recent = self.latencies;
        let recent = &mut recent[..n];
        // Insertion sort: 64 values at most, and far smaller code than the
        // library's sort in the wasm client.
        for i in 1..n {
            let mut j = i;
            while j > 0 && recent[j - 1] > recent[j] {
                recent.swap(j - 1, j);
                j -= 1;
            }
        }
        if n > 0 {
            s.grant_ms.p50 = recent[n / 2];
            s.grant_ms.p99 = recent[(n * 99 / 100).min(n - 1)];
        }
        s
    }

    /// The measured consumption rate, in IDs per second.
    pub fn rate(&self) -> u64 {
        self.sizing.rate
    }

    /// IDs installed and not yet issued or lent.
    pub fn available(&self) -> u64 {
        self.ready
            .iter()
            .flatten()
            .fold(self.left, |sum, r| sum.saturating_add(r.count()))
    }

    /// How many requests are outstanding.
    pub fn outstanding(&self) -> usize {
        self.requests.outstanding()
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

    /// Up to `n` contiguous unused IDs, all from one range, returned to the
    /// caller.
    ///
    /// Returns fewer than `n` when the current range has fewer left; it
    /// never joins two ranges. When the current range is used up it moves
    /// to the next installed one first.
    pub fn take(&mut self, n: u64) -> Result<Range, IssueError> {
        if n == 0 {
            return Err(IssueError::EmptyBatch);
        }
        self.settle_lent();
        let r = if self.left != 0 {
            let r = self.cut(n);
            self.update_refill_mark();
            Ok(self.count_issued(r))
        } else {
            self.take_slow(n)
        };
        self.note_batch(n, r.as_ref().map_or(0, Range::count));
        r
    }

    /// Gives every range installed from now on a lifetime: it may be used
    /// only until `lifetime_ms` after its request was first sent (on the
    /// driver's clock). A grant that arrives later is not installed
    /// ([`Handled::Expired`]); [`Lease::take_whole`] never takes from an
    /// expired range, and [`Lease::expire_ranges`] abandons them. For an
    /// engine whose ranges are on loan (a relay's, see `crate::relay`):
    /// such a driver takes IDs with `take_whole` only. Without it (the
    /// default) ranges never expire.
    pub fn set_range_lifetime(&mut self, lifetime_ms: u64) {
        self.range_lifetime_ms = Some(lifetime_ms);
    }

    /// Abandons every installed range whose lifetime ran out by `now`
    /// (see [`Lease::set_range_lifetime`]); returns how many IDs that
    /// abandoned (counted in [`Stats::abandoned`]).
    pub fn expire_ranges(&mut self, now: Instant) -> u64 {
        let now = now.as_ms();
        let mut gone = 0u64;
        if self.left > 0 && self.lent == 0 && self.current_until <= now {
            gone = gone.saturating_add(self.left);
            self.left = 0;
        }
        for i in 0..PLACES {
            if self.ready_until[i] <= now {
                if let Some(r) = self.ready[i].take() {
                    gone = gone.saturating_add(r.count());
                }
            }
        }
        self.compact_ready();
        if self.left == 0 && self.lent == 0 {
            // The next live range becomes current, as `install_next` would.
            if let Some(range) = self.ready[0].take() {
                self.current_until = self.ready_until[0];
                self.ready.rotate_left(1);
                self.ready_until.rotate_left(1);
                self.cursor = range.start();
                self.left = range.count();
            }
        }
        self.stats.abandoned = self.stats.abandoned.saturating_add(gone);
        self.update_refill_mark();
        gone
    }

    /// Moves the ready ranges to the front, keeping their order.
    fn compact_ready(&mut self) {
        let mut to = 0;
        for from in 0..PLACES {
            if let Some(r) = self.ready[from] {
                let until = self.ready_until[from];
                self.ready[from] = None;
                self.ready[to] = Some(r);
                self.ready_until[to] = until;
                to += 1;
            }
        }
        for i in to..PLACES {
            self.ready_until[i] = u64::MAX;
        }
    }

    /// Exactly `n` contiguous IDs from one installed range still within
    /// its lifetime at `now`, returned to the caller, or nothing: the
    /// current range when it has `n` left, else the first waiting range
    /// that holds `n` (its start is cut off; the current range keeps its
    /// rest for smaller requests). When none holds `n`, nothing is taken,
    /// the next range asked for is sized to hold `n`, and the error says
    /// why (as [`Lease::issue_error`]). A relay's sub-grants come from here.
    pub fn take_whole(&mut self, n: u64, now: Instant) -> Result<Range, IssueError> {
        if n == 0 {
            return Err(IssueError::EmptyBatch);
        }
        if self.phase == Phase::Closed {
            return Err(IssueError::Closed);
        }
        self.settle_lent();
        self.expire_ranges(now);
        if self.left >= n {
            let r = self.cut(n);
            self.update_refill_mark();
            return Ok(self.count_issued(r));
        }
        let fits = self
            .ready
            .iter()
            .position(|r| r.is_some_and(|r| r.count() >= n));
        if let Some(i) = fits {
            let Some(range) = self.ready[i] else {
                unreachable!("position found a range here");
            };
            let taken = match Range::with_count(range.start(), n) {
                Ok(r) => r,
                Err(_) => unreachable!("the range holds n IDs"),
            };
            // What is left; none when the range ended at 2^64 exactly.
            self.ready[i] = range
                .start()
                .checked_add(n)
                .and_then(|rest| Range::new(rest, range.end()).ok());
            self.compact_ready();
            self.update_refill_mark();
            return Ok(self.count_issued(taken));
        }
        self.note_batch(n, 0);
        self.stats.starved += 1;
        Err(self.issue_error())
    }

    /// When the next installed range's lifetime runs out (see
    /// [`Lease::set_range_lifetime`]), if one has a lifetime.
    pub fn next_expiry(&self) -> Option<Instant> {
        let current = (self.left > 0).then_some(self.current_until);
        let ready = self
            .ready
            .iter()
            .zip(self.ready_until)
            .filter_map(|(r, until)| r.map(|_| until));
        current
            .into_iter()
            .chain(ready)
            .filter(|&u| u != u64::MAX)
            .min()
            .map(Instant::from_ms)
    }

    /// The most IDs one [`Lease::take_whole`] can take now: the longest
    /// installed range's rest (expired ones included until
    /// [`Lease::expire_ranges`] drops them).
    pub fn largest_whole(&self) -> u64 {
        self.ready
            .iter()
            .flatten()
            .map(Range::count)
            .fold(self.left, u64::max)
    }

    /// A caller asked for `n` in one batch and got `got`: the next range is
    /// sized to hold such a batch.
    fn note_batch(&mut self, n: u64, got: u64) {
        if got < n {
            self.sizing.batch = self.sizing.batch.max(n);
        }
    }

    /// Up to `n` IDs that continue the current range, or `None` when it is
    /// used up: never from another range. A driver joins them to the end
    /// of its lent block to answer a batch contiguously.
    pub fn take_more(&mut self, n: u64) -> Option<Range> {
        self.settle_lent();
        if self.left == 0 || n == 0 || self.phase == Phase::Closed {
            return None;
        }
        let r = self.cut(n);
        self.note_batch(n, r.count());
        self.update_refill_mark();
        Some(self.count_issued(r))
    }

    /// Exactly `n` IDs for one caller, across ranges when it must, or
    /// nothing at all: never part of a batch. `lent_unused` is what the
    /// driver holds unreturned of its lent block; the batch takes from it
    /// first ([`Batch::from_lent`]), then the block counts as returned.
    ///
    /// Fails, taking nothing, with why no batch can be had now: as
    /// [`Lease::issue_error`] says while the engine may still gather it (a
    /// driver then waits, and tells the engine with [`Lease::set_demand`]),
    /// or at once when it never can: [`IssueError::TooFew`] when the
    /// namespace (as the authority last said) and what the engine holds and
    /// has on its way add up to fewer than `n`; [`IssueError::BatchTooLarge`]
    /// above [`Lease::batch_limit`]; `Exhausted` or `Failed` once stopped.
    pub fn take_exact(&mut self, n: u64, lent_unused: u64) -> Result<Batch, IssueError> {
        if let Err(e) = self.check_exact(n, lent_unused) {
            if !matches!(e, IssueError::EmptyBatch | IssueError::Closed) {
                self.stats.starved += 1;
            }
            return Err(e);
        }
        let lent = lent_unused.min(self.lent);
        let mut batch = Batch {
            from_lent: n.min(lent),
            pieces: [None; PLACES + 1],
        };
        if n <= lent {
            // The driver's block holds it all; it stays lent.
            return Ok(batch);
        }
        let need = n - lent;
        // The driver hands the whole rest of its block to this caller.
        self.settle_lent();
        let mut left = need;
        for piece in batch.pieces.iter_mut() {
            if left == 0 {
                break;
            }
            if self.left == 0 {
                self.install_next()?;
            }
            let r = self.cut(left);
            left -= r.count();
            *piece = Some(self.count_issued(r));
        }
        self.update_refill_mark();
        Ok(batch)
    }

    /// Whether [`Lease::take_exact`]`(n, lent_unused)` would succeed now,
    /// changing nothing (not even [`Stats::starved`]): `Ok` when it would,
    /// else the error it would fail with. A driver that must stop its
    /// readers to count what it holds (seal its blocks) asks this first,
    /// with a snapshot of what it holds: readers only ever lower it, so an
    /// error here is the error `take_exact` would give after the seal.
    pub fn check_exact(&self, n: u64, lent_unused: u64) -> Result<(), IssueError> {
        if n == 0 {
            return Err(IssueError::EmptyBatch);
        }
        if self.phase == Phase::Closed {
            return Err(IssueError::Closed);
        }
        let lent = lent_unused.min(self.lent);
        if n > lent && self.available() < n - lent {
            return Err(self.batch_error(n, lent));
        }
        Ok(())
    }

    /// Why a batch of `n` cannot be had now, with `lent` IDs in the
    /// driver's block: never (too few left, too large, stopped), or not
    /// yet (the engine's issue error).
    fn batch_error(&self, n: u64, lent: u64) -> IssueError {
        let held = self.available().saturating_add(lent);
        if n > self.batch_limit() {
            return IssueError::BatchTooLarge {
                limit: self.batch_limit(),
            };
        }
        let coming = self.requests.in_flight_ids();
        let remaining = match self.phase {
            // No new request will be made; only those on their way count.
            Phase::Exhausted | Phase::Failed(_) if coming == 0 => {
                return match self.phase {
                    Phase::Failed(code) => IssueError::Failed(code),
                    _ => IssueError::TooFew {
                        remaining: 0,
                        available: held,
                    },
                };
            }
            Phase::Exhausted | Phase::Failed(_) => Some(0),
            _ => self.namespace_remaining(),
        };
        // What the namespace has left only shrinks (other generators, floors,
        // restores skip ahead): past it, no wait can gather `n`.
        if let Some(r) = remaining {
            if held.saturating_add(coming).saturating_add(r) < n {
                return IssueError::TooFew {
                    remaining: r,
                    available: held,
                };
            }
        }
        self.issue_error()
    }

    /// What the namespace has left to grant, as the authority last said
    /// (with a grant, or in an exhaustion refusal), if it said.
    fn namespace_remaining(&self) -> Option<u64> {
        match (self.known_remaining, self.sizing.namespace.remaining) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The largest batch [`Lease::take_exact`] gathers: as many of the
    /// largest ranges it asks for (`max_range_size`, and the namespace's
    /// `maxCount` once known) as it keeps places for ranges waiting (8).
    /// Up to one such range beyond what is on hand is always gathered (a
    /// place is kept for it); more needs free places, which only ranges
    /// installed and left unused (callers who gave up) can take.
    pub fn batch_limit(&self) -> u64 {
        let largest = self
            .config
            .max_range_size
            .min(self.sizing.namespace.max_count.unwrap_or(u64::MAX));
        largest.saturating_mul(WAITING as u64)
    }

    /// Tells the engine how many IDs callers are waiting for now (all of
    /// them; 0 when none wait), with `lent_unused` IDs of the lent block
    /// still in the driver's hands. While what it holds and has on its way
    /// is less, it asks for more whatever its measured rate, and sizes the
    /// request to the shortfall (within `max_range_size`, the namespace's
    /// `maxCount` and what it has left; above the share of what remains a
    /// start may take). A driver sets it before each [`Lease::poll`].
    pub fn set_demand(&mut self, ids: u64, lent_unused: u64) {
        // What is on its way counts the whole lent block; what of it was
        // already returned to callers does not serve this demand.
        let returned = self.lent - lent_unused.min(self.lent);
        self.demand = if ids == 0 {
            0
        } else {
            ids.saturating_add(returned)
        };
    }

    /// Lends the driver up to `n` IDs of one range to issue itself (a local
    /// block that spares a call per ID); never past the refill mark, so the
    /// driver is back when the next range must be asked for. They count as
    /// returned when the driver lends again, takes, or closes: a driver
    /// must return every ID of a block before the next `lend`, and report
    /// what it did not return to [`Lease::close_with_unused`].
    pub fn lend(&mut self, n: u64) -> Result<Range, IssueError> {
        self.lend_keeping(n, 0)
    }

    /// Like [`Lease::lend`], for a driver that still holds `lent_unused`
    /// unreturned IDs of the blocks lent before (a native driver keeps one
    /// block issuing and the next one ready behind it): they stay lent,
    /// and the rest of what was lent counts as returned. `lent_unused` is
    /// then passed, as usual, to [`Lease::stats`], [`Lease::take_exact`],
    /// [`Lease::set_demand`] and [`Lease::close_with_unused`], counting
    /// every block the driver holds.
    pub fn lend_keeping(&mut self, n: u64, lent_unused: u64) -> Result<Range, IssueError> {
        if n == 0 {
            return Err(IssueError::EmptyBatch);
        }
        let keep = lent_unused.min(self.lent);
        self.lent -= keep;
        self.settle_lent();
        if self.left == 0 {
            if let Err(e) = self.install_next() {
                self.lent = keep;
                self.update_refill_mark();
                return Err(e);
            }
        }
        // Lend no further than the refill mark, so the driver comes back
        // (and the engine asks for the next range) when it is reached.
        self.update_refill_mark();
        let ahead = self.left.saturating_sub(self.refill_mark);
        let r = self.cut(if ahead > 0 { n.min(ahead) } else { n });
        self.lent = keep + r.count();
        self.update_refill_mark();
        Ok(r)
    }

    fn settle_lent(&mut self) {
        self.stats.issued = self.stats.issued.saturating_add(self.lent);
        self.lent = 0;
    }

    /// Cuts up to `n` IDs off the current range, which must not be empty.
    fn cut(&mut self, n: u64) -> Range {
        let grab = n.min(self.left);
        let start = self.cursor;
        self.cursor = self.cursor.wrapping_add(grab);
        self.left -= grab;
        match Range::with_count(start, grab) {
            Ok(r) => r,
            Err(_) => unreachable!("the current range holds `grab` IDs from the cursor"),
        }
    }

    fn count_issued(&mut self, r: Range) -> Range {
        self.stats.issued += r.count();
        r
    }

    #[cold]
    fn take_slow(&mut self, n: u64) -> Result<Range, IssueError> {
        if n == 0 {
            return Err(IssueError::EmptyBatch);
        }
        self.install_next()?;
        let r = self.cut(n);
        self.update_refill_mark();
        Ok(self.count_issued(r))
    }

    /// Makes the next installed range current, or says why there is none.
    fn install_next(&mut self) -> Result<(), IssueError> {
        if self.phase == Phase::Closed {
            return Err(IssueError::Closed);
        }
        if let Some(range) = self.ready[0].take() {
            self.current_until = self.ready_until[0];
            self.ready.rotate_left(1);
            self.ready_until.rotate_left(1);
            self.cursor = range.start();
            self.left = range.count();
            return Ok(());
        }
        self.stats.starved += 1;
        Err(self.issue_error())
    }

    /// The error an issue gets when no installed ID is left: `Unavailable`
    /// or `Frozen` while the engine is still asking, else why it stopped.
    pub fn issue_error(&self) -> IssueError {
        match self.phase {
            Phase::Running if self.blocked.is_some() => IssueError::Blocked(
                self.blocked
                    .map_or(ReplyCode::Known(ErrorCode::Unavailable), |b| b.code),
            ),
            Phase::Running if self.frozen => IssueError::Frozen,
            Phase::Running => IssueError::Unavailable,
            // Stopped, but a request in flight may still bring a committed
            // range: not final until it is installed or given up.
            Phase::Exhausted | Phase::Failed(_) if self.requests.outstanding() > 0 => {
                IssueError::Unavailable
            }
            Phase::Exhausted => IssueError::Exhausted,
            Phase::Failed(code) => IssueError::Failed(code),
            Phase::Closed => IssueError::Closed,
        }
    }

    /// Whether the driver should call [`Lease::poll`] now because the IDs
    /// on hand fell to the refill mark. Cheap enough to ask after every
    /// issue.
    #[inline]
    pub fn should_poll(&self) -> bool {
        self.left <= self.refill_mark && self.phase == Phase::Running
    }

    /// The next thing the driver must do now, if any: cancel attempts the
    /// engine no longer waits for, send a retry that is due (same request
    /// id, same count), or send a new request when the IDs on hand and on
    /// their way fall below what the measured rate needs. Call it until it
    /// returns `None`, after every [`Lease::handle_reply`], when
    /// [`Lease::should_poll`] says so and at [`Lease::next_deadline`].
    pub fn poll(&mut self, now: Instant) -> Option<Action> {
        let now = now.as_ms();
        match self.phase {
            Phase::Running => {
                self.stats.requests_expired += self.requests.expire(now, MAX_REQUEST_AGE_MS);
            }
            // Stopped: a request whose attempt has run out of time is not
            // sent again but given up (it stays reserved: its range may
            // have been committed), and its attempt cancelled.
            Phase::Exhausted | Phase::Failed(_) => {
                while let Some(p) = self.requests.give_up_due(now) {
                    if p.first_sent.is_none() {
                        // Never sent: nothing can have been committed.
                        self.reserved = self.reserved.saturating_sub(p.count);
                    }
                }
            }
            Phase::Closed => {}
        }
        if let Some(ticket) = self.requests.next_cancel() {
            return Some(Action::Cancel(ticket));
        }
        self.sizing
            .sample(now, self.stats.issued, self.config.min_range_size);
        let out = self.next_send(now);
        self.update_refill_mark();
        out.map(Action::Send)
    }

    fn next_send(&mut self, now: u64) -> Option<Outgoing> {
        if self.phase != Phase::Running {
            return None;
        }
        if let Some(out) = self.send_due(now) {
            return Some(out);
        }
        let outstanding = self.requests.outstanding();
        // While frozen or blocked, one request at a time probes for the end.
        let on_the_way = self.on_the_way();
        let wanted = self.demand > on_the_way;
        if self.at_capacity_for(wanted)
            || ((self.frozen || self.blocked.is_some()) && outstanding > 0)
            || (on_the_way > self.sizing.low_water(&self.config) && !wanted)
        {
            return None;
        }
        // Callers wait for more than is on hand and on its way: the next
        // range holds the shortfall.
        if wanted {
            self.sizing.batch = self.sizing.batch.max(self.demand - on_the_way);
        }
        if self.known_remaining == Some(0) {
            self.phase = Phase::Exhausted;
            return None;
        }
        // Nothing on hand, lent or on its way: the engine must ask, whatever
        // slow start allows (requests given up after an outage still count
        // as reserved: their ranges may have been committed).
        let starved = self.on_the_way() == 0;
        let count = self.sizing.next_count(
            &self.config,
            self.stats.issued,
            self.reserved,
            self.known_remaining,
            starved,
        )?;
        // Blocked: a new request (one that replaces an expired probe) waits
        // for the block's time too.
        let due = self.blocked.map_or(now, |b| b.until.as_ms().max(now));
        if !self.requests.make(count, due) {
            return None;
        }
        self.reserved = self.reserved.saturating_add(count);
        self.sizing.last_range = count;
        let largest = self
            .config
            .max_range_size
            .min(self.sizing.namespace.max_count.unwrap_or(u64::MAX));
        if count >= self.sizing.batch.min(largest) {
            self.sizing.batch = 0;
        }
        self.send_due(now)
    }

    fn send_due(&mut self, now: u64) -> Option<Outgoing> {
        let (namespace, incarnation) = (self.config.namespace, self.incarnation);
        let (out, first) = self
            .requests
            .send_due(now, self.config.request_timeout_ms, |p| GrantRequest {
                namespace,
                incarnation,
                request_id: request_id(p.number),
                count: p.count,
            })?;
        if first {
            self.stats.requests += 1;
        } else {
            self.stats.retries += 1;
        }
        Some(out)
    }

    /// When the driver must call [`Lease::poll`] next at the latest (a retry
    /// or an attempt's timeout), or `None` if nothing is scheduled.
    pub fn next_deadline(&self) -> Option<Instant> {
        if self.phase == Phase::Closed {
            return None;
        }
        // Stopped engines still time out what is in flight (see `poll`).
        self.requests.next_due().map(Instant::from_ms)
    }

    /// Hands the engine the outcome of the attempt `ticket`: a classified
    /// HTTP answer, or [`Reply::no_answer`] when there was none (the
    /// connection failed, or the driver cancelled it).
    ///
    /// A grant is installed only if it answers a request still pending in
    /// this incarnation, from whichever of its attempts; so a replay or a
    /// duplicate installs nothing twice. A failure counts only for a
    /// request's latest attempt; then [`Disposition`] decides.
    pub fn handle_reply(&mut self, ticket: Ticket, reply: &Reply, now: Instant) -> Handled {
        let now = now.as_ms();
        let handled = match reply {
            Reply::Grant(g) => self.handle_grant(ticket, g, now),
            failure => self.handle_failure(ticket, failure, now),
        };
        match handled {
            Handled::Duplicate => self.stats.duplicates_ignored += 1,
            Handled::NotOurs(_) => self.stats.grants_refused += 1,
            Handled::Stale => self.stats.stale_ignored += 1,
            _ => {}
        }
        self.update_refill_mark();
        handled
    }

    fn handle_grant(&mut self, ticket: Ticket, reply: &GrantReply, now: u64) -> Handled {
        let grant = &reply.grant;
        if grant.namespace != self.config.namespace {
            return Handled::NotOurs(GrantRefusal::WrongNamespace);
        }
        if grant.incarnation != self.incarnation {
            return Handled::NotOurs(GrantRefusal::WrongIncarnation);
        }
        let Some(number) = grant.request_id.number() else {
            return Handled::NotOurs(GrantRefusal::Unsolicited);
        };
        if number == 0 || number > self.requests.made {
            return Handled::NotOurs(GrantRefusal::Unsolicited);
        }
        if number != ticket.request {
            return Handled::NotOurs(GrantRefusal::WrongTicket);
        }
        let Some(slot) = self.requests.slot(number) else {
            let installed = self.recent.iter().flatten().find(|(n, _)| *n == number);
            return match installed {
                Some((_, range)) if *range != grant.range => {
                    Handled::NotOurs(GrantRefusal::Mismatch)
                }
                _ => Handled::Duplicate,
            };
        };
        let Some(pending) = self.requests.pending[slot] else {
            return Handled::NotOurs(GrantRefusal::Unsolicited);
        };
        if pending.count != grant.range.count() {
            return Handled::NotOurs(GrantRefusal::WrongCount);
        }
        self.requests.settle(slot);
        if self.phase == Phase::Closed {
            // Settled, not installed: its IDs are abandoned with the rest.
            self.stats.abandoned = self.stats.abandoned.saturating_add(grant.range.count());
            return Handled::Abandoned;
        }
        self.frozen = false;
        self.end_block();
        self.last_failure = None;
        let ns = &mut self.sizing.namespace;
        ns.max_count = reply.capacity.max_count.or(ns.max_count);
        ns.remaining = reply.capacity.remaining.or(ns.remaining);
        // What remains after this grant, as the authority said; a refusal's
        // figure may already count this grant, so never subtract it again.
        if let (Some(known), Some(now_left)) = (self.known_remaining, reply.capacity.remaining) {
            self.known_remaining = Some(known.min(now_left));
        }
        let latency = now.saturating_sub(pending.first_sent.unwrap_or(now));
        let g = &mut self.stats.grant_ms;
        self.latencies[(g.count % LATENCIES as u64) as usize] = latency;
        g.count += 1;
        g.max = g.max.max(latency);
        // A range with a lifetime whose first send is unknown counts as
        // expired: its window cannot be placed, so it is never served.
        let until = self.range_lifetime_ms.map_or(u64::MAX, |ms| {
            pending.first_sent.map_or(0, |sent| sent.saturating_add(ms))
        });
        if until <= now {
            // Its time to be used ran out on the way: a gap, never issued.
            self.stats.abandoned = self.stats.abandoned.saturating_add(grant.range.count());
            return Handled::Expired;
        }
        self.stats.ranges_installed += 1;
        if reply.replayed {
            self.stats.replays_installed += 1;
        }
        self.recent[self.recent_at] = Some((number, grant.range));
        self.recent_at = (self.recent_at + 1) % RECENT_INSTALLS;
        // A grant becomes current only when nothing is: not while a lent
        // block of the current range is out, or `take_more` would continue
        // the block from another range.
        if self.left == 0 && self.lent == 0 && self.ready[0].is_none() {
            self.cursor = grant.range.start();
            self.left = grant.range.count();
            self.current_until = until;
        } else if let Some(free) = self.ready.iter().position(Option::is_none) {
            self.ready[free] = Some(grant.range);
            self.ready_until[free] = until;
        } else {
            // Cannot happen: requests are made only while a place is free.
            // Were it to, abandoning the range only leaves a gap.
            self.stats.abandoned = self.stats.abandoned.saturating_add(grant.range.count());
        }
        Handled::Installed
    }

    fn handle_failure(&mut self, ticket: Ticket, reply: &Reply, now: u64) -> Handled {
        if self.phase == Phase::Closed {
            return Handled::Stale;
        }
        let Some(slot) = self.requests.slot(ticket.request) else {
            return Handled::Stale;
        };
        let Some(p) = self.requests.pending[slot] else {
            return Handled::Stale;
        };
        // A superseded attempt's failure changes nothing, stopped or not:
        // the attempt after it may still bring the committed range.
        if p.first_sent.is_none() || ticket.attempt != p.attempt {
            return Handled::Stale;
        }
        if self.phase != Phase::Running {
            // Stopped: a request still in flight is not sent again. A refusal
            // says nothing was committed; after no usable answer its range
            // may have been, so it stays reserved (given up).
            if matches!(reply, Reply::Refused(_)) {
                self.unreserve(slot);
            } else {
                self.requests.settle(slot);
            }
            return Handled::Stopped;
        }
        let Some(disposition) = reply.disposition() else {
            return Handled::Stale;
        };
        let retry_after = reply.retry_after_ms().unwrap_or(0);
        // The authority answered with a refusal of its own: the way to it
        // is open again, whatever it says.
        let own_refusal = matches!(reply, Reply::Refused(_))
            && !matches!(
                disposition,
                Disposition::Reauthenticate | Disposition::Blocked
            );
        if own_refusal {
            self.end_block();
        }
        // While blocked, a later attempt that got no usable answer does not
        // hide what blocked the engine.
        if self.blocked.is_none() || !matches!(reply, Reply::Transient(_)) {
            self.last_failure = Some(*reply);
        }
        let backoff = self.requests.backoff(
            p.attempt,
            self.config.retry_initial_ms,
            self.config.retry_max_ms,
        );
        match disposition {
            Disposition::Retry => {
                let wait = backoff.max(retry_after);
                self.requests
                    .retry_at(slot, now.saturating_add(wait), false);
                Handled::WillRetry
            }
            Disposition::Frozen => {
                self.frozen = true;
                self.requests
                    .retry_at(slot, now.saturating_add(backoff), false);
                Handled::WillRetry
            }
            Disposition::Reauthenticate if !p.sent_fresh => {
                self.requests.retry_at(slot, now, true);
                Handled::WillRetry
            }
            Disposition::Reauthenticate | Disposition::Blocked => {
                let code = reply
                    .code()
                    .unwrap_or(ReplyCode::Known(ErrorCode::Unavailable));
                let answers = self.blocked.map_or(0, |b| b.answers).saturating_add(1);
                if self.blocked.is_none() {
                    self.stats.blocks += 1;
                }
                let first = self.config.retry_max_ms;
                let longest = first
                    .saturating_mul(BLOCKED_BACKOFF_FACTOR)
                    .min(MAX_TIME_MS);
                let wait = self
                    .requests
                    .backoff(answers - 1, first, longest)
                    .max(retry_after);
                let until = now.saturating_add(wait);
                self.blocked = Some(Blocked {
                    code,
                    answers,
                    until: Instant::from_ms(until),
                });
                // Credentials refused even fresh: every probe asks for
                // fresh ones, so a token source that mends is heard.
                let fresh = disposition == Disposition::Reauthenticate;
                self.requests.retry_at(slot, until, fresh);
                Handled::Blocked
            }
            Disposition::Exhausted { remaining } if remaining > 0 => {
                // Retire this request; the next one asks for what remains.
                self.unreserve(slot);
                self.known_remaining = Some(remaining);
                Handled::WillRetry
            }
            // Stop asking. Other requests in flight may still bring
            // committed grants: they install when they come, and are
            // never sent again.
            Disposition::Exhausted { .. } => {
                self.known_remaining = Some(0);
                self.unreserve(slot);
                self.phase = Phase::Exhausted;
                Handled::Stopped
            }
            Disposition::CountAbove { max_count } if p.count > max_count => {
                // Retire this request; the next one is sized within the
                // namespace's maxCount, which no grant had told us yet.
                self.unreserve(slot);
                self.sizing.namespace.max_count = Some(max_count);
                // Dealt with: an error given to a caller later should not
                // name this refusal.
                self.last_failure = None;
                Handled::WillRetry
            }
            _ => {
                // Final (and a count refusal that cannot be mended).
                self.unreserve(slot);
                let Some(code) = reply.code() else {
                    return Handled::Stale;
                };
                self.phase = Phase::Failed(code);
                Handled::Stopped
            }
        }
    }

    /// Ends a block, if there is one: the authority answered again.
    fn end_block(&mut self) {
        if self.blocked.take().is_some() {
            self.stats.unblocks += 1;
        }
    }

    /// Settles the request in `slot`, refused: it was never granted.
    fn unreserve(&mut self, slot: usize) {
        if let Some(p) = self.requests.settle(slot) {
            self.reserved = self.reserved.saturating_sub(p.count);
        }
    }

    /// Stops the engine and abandons every unused ID it holds; returns how
    /// many. Requests still in flight are abandoned too; if their grants
    /// arrive later they are not installed.
    pub fn close(&mut self) -> u64 {
        self.close_with_unused(0)
    }

    /// Like [`Lease::close`], for a driver that holds `lent_unused` IDs of
    /// its lent block unreturned; they are abandoned with the rest.
    pub fn close_with_unused(&mut self, lent_unused: u64) -> u64 {
        if self.phase == Phase::Closed {
            return 0;
        }
        let unused = lent_unused.min(self.lent);
        self.lent -= unused;
        self.settle_lent();
        let abandoned = self.available().saturating_add(unused);
        // A request never sent (one waiting out a block) reserved nothing.
        let unsent = self.requests.drop_unsent();
        self.reserved = self.reserved.saturating_sub(unsent);
        self.left = 0;
        self.ready = [None; PLACES];
        self.current_until = u64::MAX;
        self.ready_until = [u64::MAX; PLACES];
        // Requests stay pending but are never sent again: a grant that
        // still arrives is counted as abandoned, not installed.
        self.phase = Phase::Closed;
        self.refill_mark = 0;
        self.stats.abandoned = self.stats.abandoned.saturating_add(abandoned);
        abandoned
    }

    /// IDs on hand (installed, and the lent block as if none of it were
    /// returned yet) and on their way.
    fn on_the_way(&self) -> u64 {
        self.available()
            .saturating_add(self.lent)
            .saturating_add(self.requests.in_flight_ids())
    }

    /// Whether no new request may be made: `max_outstanding` are in flight,
    /// or every place for a waiting range is spoken for.
    fn at_capacity(&self) -> bool {
        self.at_capacity_for(false)
    }

    /// Like [`Lease::at_capacity`]; `wanted` when callers wait for more
    /// than is on hand and on its way. Then, once the ordinary places are
    /// spoken for, the kept one may be used by one request while nothing
    /// else is in flight: sized to what callers wait for beyond what is on
    /// hand, its range completes any batch up to [`Lease::batch_limit`].
    fn at_capacity_for(&self, wanted: bool) -> bool {
        let outstanding = self.requests.outstanding();
        let ready = self.ready.iter().flatten().count();
        if outstanding >= self.config.max_outstanding {
            return true;
        }
        if ready + outstanding < WAITING {
            return false;
        }
        !(wanted && outstanding == 0 && ready < PLACES)
    }

    fn update_refill_mark(&mut self) {
        let have = self.on_the_way() - self.left;
        self.refill_mark = if self.phase != Phase::Running || self.at_capacity() {
            0
        } else {
            self.sizing.low_water(&self.config).saturating_sub(have)
        };
    }
}

#[cfg(test)]
mod tests;
