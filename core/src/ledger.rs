//! The grant ledger's rules: how committed grants are kept, how a replay is
//! derived from what is kept, and what a caller may still add.
//!
//! **Identity.** A request is `(owner, incarnation, request_id)`, where the
//! owner is the `sub` of the token it came with. The ledger is only ever
//! searched under the caller's own owner, so the same incarnation and
//! request id from another `sub` is another request: it neither receives
//! nor blocks the first one's range.
//!
//! **Spans.** The ledger keeps [`Span`]s: consecutive grants of one
//! `(owner, incarnation)` under numbered request ids `r<n>`, `r<n+1>`, ...,
//! each of the same count, whose ranges follow each other with nothing in
//! between, committed within [`SPAN_MS`] of the span's first grant. A lone
//! grant is a span of one. A span is one stored row however many grants it
//! holds, and every grant in it is derived exactly: its request id, its
//! range, its owner and incarnation. Only its commit time is not kept per
//! grant: it lies between the span's first and last commit, at most
//! [`SPAN_MS`] apart. So a client looping `count: 1` with its shipped
//! request ids writes one row a minute, not one per grant, while replays
//! and "who got ID N" stay exact.
//!
//! **Limits.** [`Limits`], set per namespace: each caller (`sub`) takes at
//! most `grants_per_second` new grants per second (a token bucket holding
//! one second of grants), and holds at most `sub_ledger_rows` ledger rows;
//! the whole ledger holds at most `ledger_rows`. A grant a span absorbs
//! needs no new row. Past a limit the request is refused with a wait
//! ([`crate::authority::Refusal::RateLimited`],
//! [`crate::authority::Refusal::LedgerFull`]), answered `429` with
//! `Retry-After`; nothing is written. Per-caller limits keep one flooding
//! `sub` from starving the others.

use core::fmt;

use crate::authority::Owner;
use crate::names::{Incarnation, Namespace, RequestId};
use crate::protocol::Grant;
use crate::range::{Range, BOUND_LIMIT};

/// A span absorbs grants committed less than this long (ms) after its
/// first one, so every grant's commit time is known to within a minute and
/// pruning by age is never more than a minute coarse.
pub const SPAN_MS: i64 = 60_000;

/// How long a caller refused for a full ledger is asked to wait (ms): rows
/// leave the ledger only as they age past the retention.
pub const LEDGER_FULL_RETRY_MS: u64 = 60_000;

/// Why stored span fields are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpanError {
    /// A span holds no grant, or grants of no ID.
    Empty,
    /// A span of more than one grant whose first request id is not
    /// numbered, or whose numbers pass `u64::MAX`.
    NotNumbered,
    /// Its IDs would start at 0 or pass 2^64.
    OutOfBounds,
}

impl fmt::Display for SpanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SpanError::Empty => "a span holds at least one grant of at least one ID",
            SpanError::NotNumbered => {
                "a span of several grants needs numbered request ids within u64"
            }
            SpanError::OutOfBounds => "a span's IDs lie between 1 and 2^64 - 1",
        })
    }
}

impl core::error::Error for SpanError {}

/// Consecutive grants of one `(owner, incarnation)`, kept as one ledger
/// entry (see the module documentation). Grant `i` (from 0) has request id
/// `first` for `i = 0` and `r<n + i>` after it (where `first` is `r<n>`),
/// and the range `[start + i * count, start + (i + 1) * count)`.
///
/// Guaranteed: `grants >= 1`, `count >= 1`, `start >= 1`,
/// `start + grants * count <= 2^64`, and a span of several grants has a
/// numbered `first` whose numbers stay within `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    owner: Owner,
    incarnation: Incarnation,
    first: RequestId,
    grants: u64,
    count: u64,
    start: u64,
    first_at: i64,
    last_at: i64,
}

impl Span {
    /// The span of one grant, committed at `at` (ms) to `owner`.
    pub fn new(owner: Owner, grant: &Grant, at: i64) -> Span {
        Span {
            owner,
            incarnation: grant.incarnation,
            first: grant.request_id,
            grants: 1,
            count: grant.range.count(),
            start: grant.range.start(),
            first_at: at,
            last_at: at,
        }
    }

    /// A span as stored, checked against the invariant.
    #[allow(clippy::too_many_arguments)]
    pub fn load(
        owner: Owner,
        incarnation: Incarnation,
        first: RequestId,
        grants: u64,
        count: u64,
        start: u64,
        first_at: i64,
        last_at: i64,
    ) -> Result<Span, SpanError> {
        if grants == 0 || count == 0 {
            return Err(SpanError::Empty);
        }
        if grants > 1 {
            let n = first.number().ok_or(SpanError::NotNumbered)?;
            n.checked_add(grants - 1).ok_or(SpanError::NotNumbered)?;
        }
        let end = u128::from(start) + u128::from(grants) * u128::from(count);
        if start == 0 || end > BOUND_LIMIT {
            return Err(SpanError::OutOfBounds);
        }
        Ok(Span {
            owner,
            incarnation,
            first,
            grants,
            count,
            start,
            first_at,
            last_at,
        })
    }

    /// Who made the requests (their token `sub`; empty for grants stored
    /// before owners were kept, which no caller can ask for).
    pub const fn owner(&self) -> &Owner {
        &self.owner
    }

    /// The incarnation the grants went to.
    pub const fn incarnation(&self) -> &Incarnation {
        &self.incarnation
    }

    /// The first grant's request id.
    pub const fn first(&self) -> &RequestId {
        &self.first
    }

    /// How many grants the span holds (at least 1).
    pub const fn grants(&self) -> u64 {
        self.grants
    }

    /// The IDs of each grant (at least 1).
    pub const fn count(&self) -> u64 {
        self.count
    }

    /// The first grant's first ID.
    pub const fn start(&self) -> u64 {
        self.start
    }

    /// One past the last grant's last ID (at most 2^64).
    pub const fn end(&self) -> u128 {
        self.start as u128 + self.grants as u128 * self.count as u128
    }

    /// When its first grant was committed (ms).
    pub const fn first_at(&self) -> i64 {
        self.first_at
    }

    /// When its last grant was committed (ms).
    pub const fn last_at(&self) -> i64 {
        self.last_at
    }

    /// The request id of grant `i`, if the span holds that many.
    pub fn request_id(&self, i: u64) -> Option<RequestId> {
        if i >= self.grants {
            return None;
        }
        if i == 0 {
            return Some(self.first);
        }
        // A span of several grants starts at a numbered id (invariant).
        let n = self.first.number()?;
        Some(RequestId::numbered(n.checked_add(i)?))
    }

    /// The range of grant `i`, if the span holds that many.
    pub fn range(&self, i: u64) -> Option<Range> {
        if i >= self.grants {
            return None;
        }
        // start + i * count < end <= 2^64 (invariant), so this fits a u64.
        let start = self.start as u128 + i as u128 * self.count as u128;
        Range::with_count(start as u64, self.count).ok()
    }

    /// Which grant of the span answers `request_id`, if one does.
    pub fn index_of(&self, request_id: &RequestId) -> Option<u64> {
        if *request_id == self.first {
            return Some(0);
        }
        let (n, m) = (self.first.number()?, request_id.number()?);
        let i = m.checked_sub(n)?;
        (i > 0 && i < self.grants).then_some(i)
    }

    /// Which grant of the span holds the ID `id`, if one does.
    pub fn index_holding(&self, id: u64) -> Option<u64> {
        if id < self.start || u128::from(id) >= self.end() {
            return None;
        }
        Some((id - self.start) / self.count)
    }

    /// The index of the last grant starting below `before`, if any does
    /// (for listings that page down by start).
    pub fn last_index_below(&self, before: u128) -> Option<u64> {
        let start = u128::from(self.start);
        if before <= start {
            return None;
        }
        let i = (before - start - 1) / u128::from(self.count);
        Some(i.min(u128::from(self.grants - 1)) as u64)
    }

    /// Grant `i` of the span, as a grant of `namespace`.
    pub fn grant(&self, namespace: Namespace, i: u64) -> Option<Grant> {
        Some(Grant {
            namespace,
            incarnation: self.incarnation,
            request_id: self.request_id(i)?,
            range: self.range(i)?,
        })
    }

    /// This span with `grant`, committed at `at` to `owner`, added as its
    /// next grant: `None` unless the grant is the next one, that is, for
    /// the same owner and incarnation, under the request id numbered one
    /// past the span's last, of the same count, starting where the span
    /// ends, and committed within [`SPAN_MS`] of the span's first grant.
    pub fn extended(&self, owner: &Owner, grant: &Grant, at: i64) -> Option<Span> {
        let next_number = self.first.number()?.checked_add(self.grants)?;
        let follows = *owner == self.owner
            && grant.incarnation == self.incarnation
            && grant.request_id.number() == Some(next_number)
            && grant.range.count() == self.count
            && u128::from(grant.range.start()) == self.end()
            && at.saturating_sub(self.first_at) < SPAN_MS;
        follows.then(|| Span {
            grants: self.grants + 1,
            last_at: self.last_at.max(at),
            ..*self
        })
    }
}

/// Why a namespace's limits are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitsError {
    /// A grant rate outside 1 to [`Limits::MAX_GRANTS_PER_SECOND`].
    GrantRate,
    /// A row budget outside 1 to [`Limits::MAX_LEDGER_ROWS`].
    Rows,
    /// A caller's row budget above the namespace's.
    SubAboveNamespace,
}

impl fmt::Display for LimitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitsError::GrantRate => write!(
                f,
                "grantsPerSecond must be from 1 to {}",
                Limits::MAX_GRANTS_PER_SECOND
            ),
            LimitsError::Rows => write!(
                f,
                "ledgerRows and subLedgerRows must be from 1 to {}",
                Limits::MAX_LEDGER_ROWS
            ),
            LimitsError::SubAboveNamespace => {
                f.write_str("subLedgerRows must not be above ledgerRows")
            }
        }
    }
}

impl core::error::Error for LimitsError {}

/// What one namespace lets its callers add (see the module documentation).
///
/// Guaranteed: `1 <= grants_per_second <= MAX_GRANTS_PER_SECOND` and
/// `1 <= sub_ledger_rows <= ledger_rows <= MAX_LEDGER_ROWS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    grants_per_second: u64,
    ledger_rows: u64,
    sub_ledger_rows: u64,
}

impl Limits {
    /// New grants per second one caller may take, by default: above twice
    /// the 2,000 grants/s one namespace object aims for, so honest use
    /// never meets it.
    pub const DEFAULT_GRANTS_PER_SECOND: u64 = 5_000;
    /// Rows the whole ledger may hold, by default.
    pub const DEFAULT_LEDGER_ROWS: u64 = 32_000_000;
    /// Rows one caller may hold, by default: a quarter of the ledger.
    pub const DEFAULT_SUB_LEDGER_ROWS: u64 = 8_000_000;
    /// The largest grant rate that may be set.
    pub const MAX_GRANTS_PER_SECOND: u64 = 1_000_000;
    /// The largest row budget that may be set.
    pub const MAX_LEDGER_ROWS: u64 = 1_000_000_000;
    /// The defaults.
    pub const DEFAULT: Limits = Limits {
        grants_per_second: Limits::DEFAULT_GRANTS_PER_SECOND,
        ledger_rows: Limits::DEFAULT_LEDGER_ROWS,
        sub_ledger_rows: Limits::DEFAULT_SUB_LEDGER_ROWS,
    };

    /// Validates limits; absent ones take the defaults, an absent
    /// per-caller budget no more than the namespace's.
    pub fn new(
        grants_per_second: Option<u64>,
        ledger_rows: Option<u64>,
        sub_ledger_rows: Option<u64>,
    ) -> Result<Limits, LimitsError> {
        let rate = grants_per_second.unwrap_or(Limits::DEFAULT_GRANTS_PER_SECOND);
        let rows = ledger_rows.unwrap_or(Limits::DEFAULT_LEDGER_ROWS);
        let sub = sub_ledger_rows.unwrap_or(Limits::DEFAULT_SUB_LEDGER_ROWS.min(rows));
        if !(1..=Limits::MAX_GRANTS_PER_SECOND).contains(&rate) {
            return Err(LimitsError::GrantRate);
        }
        for r in [rows, sub] {
            if !(1..=Limits::MAX_LEDGER_ROWS).contains(&r) {
                return Err(LimitsError::Rows);
            }
        }
        if sub > rows {
            return Err(LimitsError::SubAboveNamespace);
        }
        Ok(Limits {
            grants_per_second: rate,
            ledger_rows: rows,
            sub_ledger_rows: sub,
        })
    }

    /// New grants per second one caller may take.
    pub const fn grants_per_second(&self) -> u64 {
        self.grants_per_second
    }

    /// Rows the whole ledger may hold.
    pub const fn ledger_rows(&self) -> u64 {
        self.ledger_rows
    }

    /// Rows one caller may hold.
    pub const fn sub_ledger_rows(&self) -> u64 {
        self.sub_ledger_rows
    }

    /// How many of `offered` reported rows (a relay's sub-grants) the
    /// ledger keeps, now that it holds `rows` and the relay `relay_rows`:
    /// reports never take the last quarter of either budget, which stays
    /// for grants, so a relay's reports can never refuse a generator's
    /// range (docs/relays.md §6).
    pub const fn report_room(&self, rows: u64, relay_rows: u64, offered: u64) -> u64 {
        let ledger = (self.ledger_rows - self.ledger_rows.div_ceil(4)).saturating_sub(rows);
        let relay =
            (self.sub_ledger_rows - self.sub_ledger_rows.div_ceil(4)).saturating_sub(relay_rows);
        let room = if ledger < relay { ledger } else { relay };
        if offered < room {
            offered
        } else {
            room
        }
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}

/// One thousandth of a grant: the unit a [`Bucket`] counts in.
const MILLI: u64 = 1_000;

/// A caller's grant-rate bucket: it holds up to one second of grants and
/// refills at the namespace's rate; each new grant takes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    // In thousandths of a grant.
    level: u64,
    // When `level` was measured (ms).
    at: i64,
}

impl Bucket {
    /// The bucket of a caller never seen (or not for a while): full.
    pub const FULL: Bucket = Bucket {
        level: u64::MAX,
        at: i64::MIN,
    };

    /// A bucket as stored: `level` thousandths of a grant at `at` (ms).
    pub const fn load(level: u64, at: i64) -> Bucket {
        Bucket { level, at }
    }

    /// The stored level, in thousandths of a grant (capped at `u64::MAX`
    /// for a full bucket never measured).
    pub const fn level(&self) -> u64 {
        self.level
    }

    /// When the level was measured (ms).
    pub const fn at(&self) -> i64 {
        self.at
    }

    /// The bucket after taking one grant at `now` at `per_second`, or how
    /// long (ms, at least 1) until one is there. A clock that went back
    /// finds the bucket full (a refusal writes nothing, so a bucket measured
    /// in the future would otherwise stay empty until the clock caught up).
    pub fn take(&self, per_second: u64, now: i64) -> Result<Bucket, u64> {
        let per_second = per_second.max(1);
        let cap = per_second.saturating_mul(MILLI);
        // One second refills a full bucket; a longer wait adds nothing.
        let elapsed = if now < self.at {
            1_000
        } else {
            now.saturating_sub(self.at).min(1_000) as u64
        };
        // per_second grants a second is per_second thousandths a ms.
        let level = self
            .level
            .saturating_add(elapsed.saturating_mul(per_second))
            .min(cap);
        if level >= MILLI {
            return Ok(Bucket {
                level: level - MILLI,
                at: now,
            });
        }
        Err((MILLI - level).div_ceil(per_second).max(1))
    }
}

/// One caller's (one `sub`'s) use of a namespace's ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    /// Ledger rows it holds.
    pub rows: u64,
    /// Its grant-rate bucket.
    pub bucket: Bucket,
}

impl Usage {
    /// A caller with no rows and a full bucket.
    pub const NEW: Usage = Usage {
        rows: 0,
        bucket: Bucket::FULL,
    };
}

/// Whose row budget a refusal names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Budget {
    /// The caller's own (`sub_ledger_rows`).
    Caller,
    /// The whole ledger's (`ledger_rows`).
    Namespace,
}

/// What the ledger holds that a grant decision reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LedgerView {
    /// The caller's span for the request (see [`span_for`]), if any.
    pub span: Option<Span>,
    /// The caller's use of the ledger.
    pub caller: Usage,
    /// Rows the whole ledger holds.
    pub rows: u64,
    /// The namespace's limits.
    pub limits: Limits,
}

impl LedgerView {
    /// An empty ledger with the default limits (tests, models).
    pub const EMPTY: LedgerView = LedgerView {
        span: None,
        caller: Usage::NEW,
        rows: 0,
        limits: Limits::DEFAULT,
    };

    /// The same view with the caller's span `span`.
    pub fn with_span(self, span: Option<Span>) -> LedgerView {
        LedgerView { span, ..self }
    }
}

/// Which stored span a decision for `request_id` needs, as a store finds
/// it among the caller's spans of the request's incarnation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKey {
    /// The span whose first request id is exactly this (an id that is not
    /// numbered is never inside a longer span).
    Exact(RequestId),
    /// The span with the greatest numbered first request id at or below
    /// this number: the one that holds the request, or that it may extend.
    AtOrBelow(u64),
}

/// The key to look the caller's span up by, for `request_id`.
pub fn span_for(request_id: &RequestId) -> SpanKey {
    match request_id.number() {
        Some(m) => SpanKey::AtOrBelow(m),
        None => SpanKey::Exact(*request_id),
    }
}

/// What a new grant writes to the ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// The span to store.
    pub span: Span,
    /// Whether it replaces the span the decision read (the grant was
    /// absorbed: same key, no new row) rather than being a new row.
    pub extends: bool,
    /// The caller's use after the grant.
    pub caller: Usage,
    /// Rows the whole ledger holds after the grant.
    pub rows: u64,
}

/// Why a new grant may not be added now: how long to wait and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Held {
    Rate {
        retry_after_ms: u64,
        per_second: u64,
    },
    Full {
        budget: Budget,
        rows: u64,
    },
}

/// The record of a new `grant` to `owner` at `now`, within the limits, or
/// why it must wait: every new grant takes one from the caller's bucket;
/// one the caller's span absorbs needs no row, any other needs a row
/// within both budgets.
pub(crate) fn admit(
    view: &LedgerView,
    owner: &Owner,
    grant: &Grant,
    now: i64,
) -> Result<Record, Held> {
    let limits = &view.limits;
    let bucket = view
        .caller
        .bucket
        .take(limits.grants_per_second, now)
        .map_err(|retry_after_ms| Held::Rate {
            retry_after_ms,
            per_second: limits.grants_per_second,
        })?;
    if let Some(span) = view.span.and_then(|s| s.extended(owner, grant, now)) {
        return Ok(Record {
            span,
            extends: true,
            caller: Usage {
                bucket,
                ..view.caller
            },
            rows: view.rows,
        });
    }
    if view.caller.rows >= limits.sub_ledger_rows {
        return Err(Held::Full {
            budget: Budget::Caller,
            rows: limits.sub_ledger_rows,
        });
    }
    if view.rows >= limits.ledger_rows {
        return Err(Held::Full {
            budget: Budget::Namespace,
            rows: limits.ledger_rows,
        });
    }
    Ok(Record {
        span: Span::new(*owner, grant, now),
        extends: false,
        caller: Usage {
            rows: view.caller.rows + 1,
            bucket,
        },
        rows: view.rows + 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(s: &str) -> Owner {
        Owner::new(s)
    }

    fn grant(inc: &str, id: &str, start: u64, count: u64) -> Grant {
        Grant {
            namespace: Namespace::new("n").unwrap(),
            incarnation: Incarnation::new(inc).unwrap(),
            request_id: RequestId::new(id).unwrap(),
            range: Range::with_count(start, count).unwrap(),
        }
    }

    #[test]
    fn a_span_absorbs_exactly_the_next_grant() {
        let me = owner("svc");
        let s = Span::new(me, &grant("a", "r7", 100, 3), 0);
        let s = s.extended(&me, &grant("a", "r8", 103, 3), 10).unwrap();
        assert_eq!((s.grants(), s.end(), s.last_at()), (2, 106, 10));
        // Each refused: another owner, incarnation, request, count, start, or too late.
        for (who, g, at) in [
            (owner("other"), grant("a", "r9", 106, 3), 20),
            (me, grant("b", "r9", 106, 3), 20),
            (me, grant("a", "r10", 106, 3), 20),
            (me, grant("a", "r8", 106, 3), 20),
            (me, grant("a", "r9", 106, 4), 20),
            (me, grant("a", "r9", 107, 3), 20),
            (me, grant("a", "x9", 106, 3), 20),
            (me, grant("a", "r9", 106, 3), SPAN_MS),
        ] {
            assert_eq!(s.extended(&who, &g, at), None, "{who:?} {g:?} {at}");
        }
        let s = s
            .extended(&me, &grant("a", "r9", 106, 3), SPAN_MS - 1)
            .unwrap();
        // Every grant is derived exactly.
        for (i, (id, start)) in [("r7", 100), ("r8", 103), ("r9", 106)].iter().enumerate() {
            let i = i as u64;
            assert_eq!(s.index_of(&RequestId::new(id).unwrap()), Some(i));
            assert_eq!(s.request_id(i).unwrap().as_str(), *id);
            assert_eq!(s.range(i), Range::with_count(*start, 3).ok());
            assert_eq!(s.index_holding(*start + 2), Some(i));
        }
        assert_eq!(s.index_of(&RequestId::new("r10").unwrap()), None);
        assert_eq!(s.index_of(&RequestId::new("r6").unwrap()), None);
        assert_eq!(s.index_of(&RequestId::new("r07").unwrap()), None);
        assert_eq!((s.index_holding(99), s.index_holding(109)), (None, None));
        assert_eq!((s.request_id(3), s.range(3)), (None, None));
        assert_eq!(s.last_index_below(100), None);
        assert_eq!(s.last_index_below(101), Some(0));
        assert_eq!(s.last_index_below(106), Some(1));
        assert_eq!(s.last_index_below(107), Some(2));
        assert_eq!(s.last_index_below(1 << 64), Some(2));
    }

    #[test]
    fn a_report_never_takes_the_last_quarter_of_a_budget() {
        let l = Limits::new(None, Some(400), Some(100)).unwrap();
        assert_eq!(l.report_room(0, 0, 10), 10);
        assert_eq!(l.report_room(0, 70, 10), 5);
        assert_eq!(l.report_room(295, 0, 10), 5);
        assert_eq!(l.report_room(300, 0, 10), 0);
        assert_eq!(l.report_room(0, 75, 10), 0);
        assert_eq!(l.report_room(u64::MAX, u64::MAX, 10), 0);
    }

    #[test]
    fn a_sub_grant_lies_in_its_relays_grant_only() {
        use crate::relay::SubGrant;
        let relay = owner("relay@eu");
        let s = Span::new(relay, &grant("R", "r1", 100, 10), 0);
        let s = s.extended(&relay, &grant("R", "r2", 110, 10), 1).unwrap();
        let sub = |inc: &str, start, count| SubGrant {
            owner: owner("gen"),
            grant: grant("g", "r1", start, count),
            relay: Incarnation::new(inc).unwrap(),
        };
        assert!(sub("R", 100, 10).lies_in(&s, &relay));
        assert!(sub("R", 112, 3).lies_in(&s, &relay));
        // Across two of the relay's grants, outside them, another
        // incarnation, another relay.
        assert!(!sub("R", 108, 4).lies_in(&s, &relay));
        assert!(!sub("R", 118, 3).lies_in(&s, &relay));
        assert!(!sub("R", 99, 2).lies_in(&s, &relay));
        assert!(!sub("Q", 100, 1).lies_in(&s, &relay));
        assert!(!sub("R", 100, 1).lies_in(&s, &owner("relay@us")));
    }

    #[test]
    fn an_id_that_is_not_numbered_stays_alone() {
        let me = owner("svc");
        let s = Span::new(me, &grant("a", "x", 1, 1), 0);
        assert_eq!(s.extended(&me, &grant("a", "x", 2, 1), 1), None);
        assert_eq!(s.index_of(&RequestId::new("x").unwrap()), Some(0));
    }

    #[test]
    fn spans_at_the_edges() {
        let me = owner("svc");
        let inc = Incarnation::new("a").unwrap();
        let top = RequestId::numbered(u64::MAX);
        // The last request number cannot be followed.
        let s = Span::new(me, &grant("a", top.as_str(), 1, 1), 0);
        assert_eq!(
            s.extended(&me, &grant("a", "r0", 2, 1), 0),
            None,
            "numbers never wrap"
        );
        // A span ending at 2^64 exactly.
        let s = Span::load(me, inc, RequestId::numbered(0), 2, (1 << 63) - 1, 2, 0, 0).unwrap();
        assert_eq!(s.end(), 1 << 64);
        assert_eq!(s.range(1).unwrap().last(), u64::MAX);
        assert_eq!(s.index_holding(u64::MAX), Some(1));
        let r = |id: &str| RequestId::new(id).unwrap();
        assert_eq!(
            Span::load(me, inc, r("r1"), 0, 1, 1, 0, 0),
            Err(SpanError::Empty)
        );
        assert_eq!(
            Span::load(me, inc, r("r1"), 1, 0, 1, 0, 0),
            Err(SpanError::Empty)
        );
        assert_eq!(
            Span::load(me, inc, r("x"), 2, 1, 1, 0, 0),
            Err(SpanError::NotNumbered)
        );
        assert_eq!(
            Span::load(me, inc, top, 2, 1, 1, 0, 0),
            Err(SpanError::NotNumbered)
        );
        assert_eq!(
            Span::load(me, inc, r("r1"), 2, 1 << 63, 1, 0, 0),
            Err(SpanError::OutOfBounds)
        );
        assert_eq!(
            Span::load(me, inc, r("r1"), 1, 1, 0, 0, 0),
            Err(SpanError::OutOfBounds)
        );
        assert_eq!(span_for(&r("r17")), SpanKey::AtOrBelow(17));
        assert_eq!(span_for(&r("r017")), SpanKey::Exact(r("r017")));
    }

    #[test]
    fn a_bucket_holds_a_second_and_refills_at_the_rate() {
        let mut b = Bucket::FULL;
        for _ in 0..10 {
            b = b.take(10, 0).unwrap();
        }
        assert_eq!(b.take(10, 0), Err(100), "a tenth of a second for the next");
        assert_eq!(b.take(10, 50), Err(50));
        let b = b.take(10, 100).unwrap();
        assert_eq!(b.take(10, 100), Err(100));
        // Never more than a second's worth, however long it waited.
        let mut b = b;
        for _ in 0..10 {
            b = b.take(10, 1_000_000).unwrap();
        }
        assert!(b.take(10, 1_000_000).is_err());
        // A clock that went back finds it full, then counts from there.
        let back = b.take(10, 0).unwrap();
        assert_eq!((back.level(), back.at()), (9_000, 0));
        assert_eq!(Bucket::load(0, 5).take(10, 105).map(|b| b.level()), Ok(0));
        // Extreme rates and levels never overflow.
        let fast = Limits::MAX_GRANTS_PER_SECOND;
        assert!(Bucket::FULL.take(fast, i64::MAX).is_ok());
        assert!(Bucket::load(0, i64::MIN).take(fast, i64::MAX).is_ok());
        assert_eq!(Bucket::load(0, 0).take(1, 0), Err(1_000));
    }

    #[test]
    fn limits_validate() {
        assert_eq!(Limits::new(None, None, None), Ok(Limits::DEFAULT));
        assert!(
            Limits::DEFAULT.grants_per_second() > 4_000,
            "above the relay goal"
        );
        assert_eq!(
            Limits::new(Some(0), None, None),
            Err(LimitsError::GrantRate)
        );
        assert_eq!(
            Limits::new(Some(Limits::MAX_GRANTS_PER_SECOND + 1), None, None),
            Err(LimitsError::GrantRate)
        );
        assert_eq!(Limits::new(None, Some(0), Some(0)), Err(LimitsError::Rows));
        assert_eq!(
            Limits::new(None, Some(10), Some(11)),
            Err(LimitsError::SubAboveNamespace)
        );
        // A namespace budget below the default per-caller one, set alone:
        // the per-caller budget follows it down.
        let l = Limits::new(None, Some(10), None).unwrap();
        assert_eq!((l.ledger_rows(), l.sub_ledger_rows()), (10, 10));
        let l = Limits::new(Some(1), Some(1), Some(1)).unwrap();
        assert_eq!(
            (l.grants_per_second(), l.ledger_rows(), l.sub_ledger_rows()),
            (1, 1, 1)
        );
        assert!(Limits::new(
            Some(Limits::MAX_GRANTS_PER_SECOND),
            Some(Limits::MAX_LEDGER_ROWS),
            Some(Limits::MAX_LEDGER_ROWS)
        )
        .is_ok());
    }
}
