//! The authority's decisions over one namespace's committed state.
//!
//! Pure functions: the caller loads the committed `NamespaceState` (and the
//! stored grant for the request's key, if any), asks for a decision, and
//! commits exactly what the decision says before replying. Nothing here
//! writes, so a refused request changes nothing.

use core::fmt;

use crate::code::ErrorCode;
use crate::ledger::{admit, Budget, Held, LedgerView, Record, LEDGER_FULL_RETRY_MS};
use crate::names::Namespace;
use crate::protocol::{Grant, GrantRequest};
use crate::range::{Range, BOUND_LIMIT};
use crate::text::Text;

/// Who made a request: the `sub` of the token it came with (at most 128
/// bytes). It is part of the request's identity: the same incarnation and
/// request id from another owner is another request.
pub type Owner = Text<128>;

/// Why a namespace configuration is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NamespaceConfigError {
    /// `first` is 0; IDs are positive.
    ZeroFirst,
    /// `first` is greater than `max`: the namespace would hold nothing.
    FirstAboveMax,
    /// `maxCount` is 0: no request could ever be granted.
    ZeroMaxCount,
    /// `maxCount` is above [`NamespaceConfig::MAX_COUNT_LIMIT`]: a count
    /// that large is not exact as a JS number.
    MaxCountTooLarge,
}

impl fmt::Display for NamespaceConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NamespaceConfigError::ZeroFirst => "first must be at least 1",
            NamespaceConfigError::FirstAboveMax => "first must not be greater than max",
            NamespaceConfigError::ZeroMaxCount => "maxCount must be at least 1",
            NamespaceConfigError::MaxCountTooLarge => {
                "maxCount must be at most 9007199254740991 (2^53 - 1)"
            }
        })
    }
}

impl core::error::Error for NamespaceConfigError {}

/// The fixed bounds of a namespace, validated at creation.
///
/// Guaranteed: `1 <= first <= max` and
/// `1 <= max_count <= MAX_COUNT_LIMIT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamespaceConfig {
    first: u64,
    max: u64,
    max_count: u64,
}

impl NamespaceConfig {
    /// The first ID of a namespace created without `first`.
    pub const DEFAULT_FIRST: u64 = 1;
    /// The inclusive maximum when none is given: 2^53 - 1, so IDs stay exact
    /// even where a careless JS caller turns them into numbers.
    pub const DEFAULT_MAX: u64 = (1 << 53) - 1;
    /// The largest request a namespace accepts when none is given.
    pub const DEFAULT_MAX_COUNT: u64 = 10_000_000;
    /// The largest `maxCount` a namespace may have: 2^53 - 1, so every
    /// count on the wire is exact as a JS number.
    pub const MAX_COUNT_LIMIT: u64 = crate::protocol::MAX_COUNT;

    /// Validates a configuration; absent fields take the defaults.
    pub fn new(
        first: Option<u64>,
        max: Option<u64>,
        max_count: Option<u64>,
    ) -> Result<NamespaceConfig, NamespaceConfigError> {
        let first = first.unwrap_or(Self::DEFAULT_FIRST);
        let max = max.unwrap_or(Self::DEFAULT_MAX);
        let max_count = max_count.unwrap_or(Self::DEFAULT_MAX_COUNT);
        if first == 0 {
            return Err(NamespaceConfigError::ZeroFirst);
        }
        if first > max {
            return Err(NamespaceConfigError::FirstAboveMax);
        }
        if max_count == 0 {
            return Err(NamespaceConfigError::ZeroMaxCount);
        }
        if max_count > Self::MAX_COUNT_LIMIT {
            return Err(NamespaceConfigError::MaxCountTooLarge);
        }
        Ok(NamespaceConfig {
            first,
            max,
            max_count,
        })
    }

    /// The first ID the namespace ever grants.
    pub const fn first(&self) -> u64 {
        self.first
    }

    /// The largest ID the namespace may grant (inclusive).
    pub const fn max(&self) -> u64 {
        self.max
    }

    /// The largest count one request may ask for.
    pub const fn max_count(&self) -> u64 {
        self.max_count
    }

    /// How many IDs the namespace holds in all.
    pub const fn capacity(&self) -> u128 {
        self.max as u128 - self.first as u128 + 1
    }
}

/// Where an ID stands in a namespace ([`NamespaceState::standing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdStanding {
    /// Below the namespace's first ID: never part of it.
    BeforeFirst,
    /// Above its max: never part of it.
    PastMax,
    /// At or above `next`: no grant has reached it yet.
    NotYetGranted,
    /// Below `next`: granted, or skipped (a floor, a fence skip at a
    /// start), never to be granted again.
    Passed,
}

/// Whether a namespace grants new ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NamespaceStatus {
    /// Grants new ranges.
    Active,
    /// Refuses new ranges; replays of committed grants are still answered.
    Frozen,
}

impl NamespaceStatus {
    /// The stored and wire form: `"active"` or `"frozen"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            NamespaceStatus::Active => "active",
            NamespaceStatus::Frozen => "frozen",
        }
    }

    /// Parses the stored form.
    pub fn parse(s: &str) -> Option<NamespaceStatus> {
        match s {
            "active" => Some(NamespaceStatus::Active),
            "frozen" => Some(NamespaceStatus::Frozen),
            _ => None,
        }
    }
}

/// Why loaded state is refused: storage holds something no decision made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateError {
    /// `next` lies outside `first..=max + 1`.
    NextOutOfBounds,
    /// `fence` lies outside `first..=max + 1`.
    FenceOutOfBounds,
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StateError::NextOutOfBounds => "stored next lies outside first..=max + 1",
            StateError::FenceOutOfBounds => "stored fence lies outside first..=max + 1",
        })
    }
}

impl core::error::Error for StateError {}

/// A namespace's committed allocation state.
///
/// Guaranteed: `first <= next <= max + 1` and `first <= fence <= max + 1`.
/// Every ID below `next` may have been granted; every ID from `next` to
/// `max` never was. No grant ends above `fence`, the high-water mark the
/// witness acknowledged (see [`crate::fence`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamespaceState {
    name: Namespace,
    config: NamespaceConfig,
    next: u128,
    status: NamespaceStatus,
    fence: u128,
}

impl NamespaceState {
    /// A new, active namespace whose next grant starts at `first`, with its
    /// fence at `first`: nothing may be granted before the witness
    /// acknowledges a mark.
    pub fn create(name: Namespace, config: NamespaceConfig) -> NamespaceState {
        NamespaceState {
            name,
            config,
            next: u128::from(config.first),
            status: NamespaceStatus::Active,
            fence: u128::from(config.first),
        }
    }

    /// State loaded from storage, checked against the invariant.
    pub fn load(
        name: Namespace,
        config: NamespaceConfig,
        next: u128,
        status: NamespaceStatus,
        fence: u128,
    ) -> Result<NamespaceState, StateError> {
        let (first, end) = (u128::from(config.first), u128::from(config.max) + 1);
        if next < first || next > end {
            return Err(StateError::NextOutOfBounds);
        }
        if fence < first || fence > end {
            return Err(StateError::FenceOutOfBounds);
        }
        Ok(NamespaceState {
            name,
            config,
            next,
            status,
            fence,
        })
    }

    /// The mark no grant may end above.
    pub const fn fence(&self) -> u128 {
        self.fence
    }

    /// The same state with its fence moved up to `mark` (never down; capped
    /// at `max + 1`). Only a mark the witness acknowledged may be recorded.
    pub fn with_fence(&self, mark: u128) -> NamespaceState {
        let end = u128::from(self.config.max) + 1;
        NamespaceState {
            fence: self.fence.max(mark.min(end)),
            ..*self
        }
    }

    /// The same state without a fence (at `max + 1`): for a model or a
    /// benchmark with no witness, never for an authority.
    pub fn unfenced(&self) -> NamespaceState {
        self.with_fence(u128::MAX)
    }

    /// The same state with `next` moved up to `to` (never down; capped at
    /// `max + 1`), as a start that skips to the witness's mark does.
    pub fn skip_to(&self, to: u128) -> NamespaceState {
        let end = u128::from(self.config.max) + 1;
        NamespaceState {
            next: self.next.max(to.min(end)),
            ..*self
        }
    }

    /// The namespace's name.
    pub const fn name(&self) -> &Namespace {
        &self.name
    }

    /// Its fixed bounds.
    pub const fn config(&self) -> &NamespaceConfig {
        &self.config
    }

    /// The start of the next grant; `max + 1` once exhausted (up to 2^64).
    pub const fn next(&self) -> u128 {
        self.next
    }

    /// Active or frozen.
    pub const fn status(&self) -> NamespaceStatus {
        self.status
    }

    /// How many IDs are left to grant.
    pub const fn remaining(&self) -> u64 {
        // next >= first >= 1, so this is at most u64::MAX.
        (self.config.max as u128 + 1 - self.next) as u64
    }

    /// How many IDs were granted (or skipped by a floor) so far.
    pub const fn used(&self) -> u128 {
        self.next - self.config.first as u128
    }

    /// Where `id` stands by this state alone: outside the namespace, not
    /// granted yet, or passed (granted, or skipped by a floor or a fence
    /// skip; only the ledger says which grant, if one, holds it).
    pub const fn standing(&self, id: u64) -> IdStanding {
        if id < self.config.first {
            IdStanding::BeforeFirst
        } else if id > self.config.max {
            IdStanding::PastMax
        } else if id as u128 >= self.next {
            IdStanding::NotYetGranted
        } else {
            IdStanding::Passed
        }
    }

    /// Moves `next` up to `floor`. A floor equal to `next` changes nothing;
    /// a lower one is refused, so a floor can never re-grant an ID.
    pub fn raise_floor(&self, floor: u64) -> Result<NamespaceState, FloorError> {
        if u128::from(floor) < self.next {
            return Err(FloorError::BelowNext { next: self.next });
        }
        if floor > self.config.max {
            return Err(FloorError::AboveMax {
                max: self.config.max,
            });
        }
        Ok(NamespaceState {
            next: u128::from(floor),
            ..*self
        })
    }

    /// The same state with another status.
    pub fn with_status(&self, status: NamespaceStatus) -> NamespaceState {
        NamespaceState { status, ..*self }
    }
}

/// Why a floor is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FloorError {
    /// The floor is below `next`; floors never move it down.
    BelowNext {
        /// The namespace's current next value.
        next: u128,
    },
    /// The floor is above the namespace's `max`.
    AboveMax {
        /// The namespace's max.
        max: u64,
    },
}

impl fmt::Display for FloorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FloorError::BelowNext { next } => {
                write!(f, "the floor is below next {next}; floors never lower next")
            }
            FloorError::AboveMax { max } => write!(f, "the floor is above max {max}"),
        }
    }
}

impl core::error::Error for FloorError {}

impl FloorError {
    /// The stable code for this refusal.
    pub const fn code(&self) -> ErrorCode {
        match self {
            FloorError::BelowNext { .. } => ErrorCode::FloorBelowNext,
            FloorError::AboveMax { .. } => ErrorCode::InvalidRequest,
        }
    }
}

/// What the authority must do with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // Short-lived; boxing would need a heap.
#[non_exhaustive]
pub enum Decision {
    /// Commit `grant` together with the advanced state and the ledger
    /// record, then reply.
    New {
        /// The grant.
        grant: Grant,
        /// The state to store with it (`next` advanced past the range).
        state: NamespaceState,
        /// What to write to the ledger: the span holding the grant (a new
        /// row, or the caller's span it extends) and the usage after it.
        record: Record,
    },
    /// The request was already granted: reply with its grant again,
    /// writing nothing.
    Replay(Grant),
    /// The range would end above the fence: have the witness raise its
    /// mark to at least `at_least` (and a chunk beyond, see
    /// [`crate::fence::target`]), record the acknowledged mark, then decide
    /// again. Nothing is written now.
    RaiseFence {
        /// The end the range needs.
        at_least: u128,
    },
}

/// Why a request is refused. Nothing is written for a refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// `count` is 0 or above the namespace's `maxCount`.
    BadCount {
        /// The largest count allowed.
        max_count: u64,
    },
    /// The request names another namespace than this state's.
    WrongNamespace,
    /// The caller used this incarnation and request id before with another
    /// count or namespace.
    Conflict,
    /// Fewer than `count` IDs remain; the request is refused whole.
    Exhausted {
        /// Exactly how many IDs remain.
        remaining: u64,
    },
    /// The namespace is frozen.
    Frozen,
    /// The caller took its grants of the last second: ask again later.
    RateLimited {
        /// How long until the next grant is there, in ms.
        retry_after_ms: u64,
        /// The namespace's grant rate per caller.
        per_second: u64,
    },
    /// The grant would need a ledger row past a row budget: ask again once
    /// older rows have aged out.
    LedgerFull {
        /// The caller's budget or the whole ledger's.
        budget: Budget,
        /// That budget, in rows.
        rows: u64,
    },
}

impl Refusal {
    /// The stable code for this refusal.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Refusal::BadCount { .. } | Refusal::WrongNamespace => ErrorCode::InvalidRequest,
            Refusal::Conflict => ErrorCode::RequestConflict,
            Refusal::Exhausted { .. } => ErrorCode::NamespaceExhausted,
            Refusal::Frozen => ErrorCode::NamespaceFrozen,
            Refusal::RateLimited { .. } => ErrorCode::RateLimited,
            Refusal::LedgerFull { .. } => ErrorCode::LedgerFull,
        }
    }

    /// How long the caller should wait before asking again (ms), for the
    /// refusals that are about now rather than about the request.
    pub const fn retry_after_ms(&self) -> Option<u64> {
        match self {
            Refusal::RateLimited { retry_after_ms, .. } => Some(*retry_after_ms),
            Refusal::LedgerFull { .. } => Some(LEDGER_FULL_RETRY_MS),
            _ => None,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::BadCount { max_count } => {
                write!(f, "count must be between 1 and {max_count}")
            }
            Refusal::WrongNamespace => f.write_str("request names another namespace"),
            Refusal::Conflict => {
                f.write_str("requestId was already used with a different count or namespace")
            }
            Refusal::Exhausted { remaining } => {
                write!(f, "only {remaining} IDs remain in the namespace")
            }
            Refusal::Frozen => f.write_str("namespace is frozen"),
            Refusal::RateLimited { per_second, .. } => write!(
                f,
                "this token's sub took its {per_second} grants of the last second; retry after Retry-After"
            ),
            Refusal::LedgerFull {
                budget: Budget::Caller,
                rows,
            } => write!(
                f,
                "this token's sub holds {rows} ledger rows, its budget; retry after Retry-After, as older grants age out"
            ),
            Refusal::LedgerFull {
                budget: Budget::Namespace,
                rows,
            } => write!(
                f,
                "the namespace's ledger holds {rows} rows, its budget; retry after Retry-After, as older grants age out"
            ),
        }
    }
}

impl core::error::Error for Refusal {}

/// Decides a range request from `owner` at `now` (ms) against the
/// committed state and what the ledger holds for it (`ledger.span`: the
/// caller's span found by [`crate::ledger::span_for`]; the caller's usage
/// and the namespace's limits).
///
/// Guaranteed: a request is `(owner, incarnation, request_id)`: one that
/// was granted before gets that grant back (also while frozen) when its
/// count and namespace match, and `Conflict` otherwise; a span of another
/// owner or incarnation is never answered. A `New` range starts at
/// `state.next()`, ends at or before both `max + 1` and the fence, and is
/// exactly `count` long; a range that would end above the fence is
/// `RaiseFence`, never granted. A new grant past the caller's rate or a row
/// budget is refused with a wait (`RateLimited`, `LedgerFull`) before any
/// fence raise. Nothing is ever cut short or wrapped.
pub fn decide(
    state: &NamespaceState,
    ledger: &LedgerView,
    request: &GrantRequest,
    owner: &Owner,
    now: i64,
) -> Result<Decision, Refusal> {
    let max_count = state.config.max_count;
    if request.count == 0 || request.count > max_count {
        return Err(Refusal::BadCount { max_count });
    }
    let mine = ledger
        .span
        .filter(|s| s.owner() == owner && *s.incarnation() == request.incarnation);
    if let Some((span, i)) = mine.and_then(|s| Some((s, s.index_of(&request.request_id)?))) {
        if request.namespace == state.name && span.count() == request.count {
            if let Some(grant) = span.grant(state.name, i) {
                return Ok(Decision::Replay(grant));
            }
        }
        return Err(Refusal::Conflict);
    }
    if request.namespace != state.name {
        return Err(Refusal::WrongNamespace);
    }
    if state.status == NamespaceStatus::Frozen {
        return Err(Refusal::Frozen);
    }
    let remaining = state.remaining();
    if request.count > remaining {
        return Err(Refusal::Exhausted { remaining });
    }
    // remaining >= count >= 1, so next <= max and the range ends by max + 1.
    let start = state.next as u64;
    let range =
        Range::with_count(start, request.count).map_err(|_| Refusal::Exhausted { remaining })?;
    debug_assert!(range.end() <= BOUND_LIMIT);
    let grant = Grant {
        namespace: request.namespace,
        incarnation: request.incarnation,
        request_id: request.request_id,
        range,
    };
    let view = LedgerView {
        span: mine,
        ..*ledger
    };
    let record = admit(&view, owner, &grant, now).map_err(|held| match held {
        Held::Rate {
            retry_after_ms,
            per_second,
        } => Refusal::RateLimited {
            retry_after_ms,
            per_second,
        },
        Held::Full { budget, rows } => Refusal::LedgerFull { budget, rows },
    })?;
    if range.end() > state.fence {
        return Ok(Decision::RaiseFence {
            at_least: range.end(),
        });
    }
    Ok(Decision::New {
        grant,
        state: NamespaceState {
            next: range.end(),
            ..*state
        },
        record,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{Limits, Span};
    use crate::names::{Incarnation, RequestId};

    /// An unfenced state: the fence has its own tests below.
    fn ns(name: &str, first: u64, max: u64, max_count: u64) -> NamespaceState {
        let config = NamespaceConfig::new(Some(first), Some(max), Some(max_count)).unwrap();
        NamespaceState::create(Namespace::new(name).unwrap(), config).unfenced()
    }

    fn me() -> Owner {
        Owner::new("generator-a")
    }

    const NONE: LedgerView = LedgerView::EMPTY;

    fn mine(grant: Grant) -> LedgerView {
        NONE.with_span(Some(Span::new(me(), &grant, 0)))
    }

    fn req(name: &str, inc: &str, id: &str, count: u64) -> GrantRequest {
        GrantRequest {
            namespace: Namespace::new(name).unwrap(),
            incarnation: Incarnation::new(inc).unwrap(),
            request_id: RequestId::new(id).unwrap(),
            count,
        }
    }

    fn granted(d: Result<Decision, Refusal>) -> (Grant, NamespaceState) {
        match d {
            Ok(Decision::New { grant, state, .. }) => (grant, state),
            other => panic!("expected a new grant, got {other:?}"),
        }
    }

    #[test]
    fn seed_example_grants_1001_to_11001() {
        let s = ns("orders", 1001, NamespaceConfig::DEFAULT_MAX, 10_000);
        let (g, s2) = granted(decide(
            &s,
            &NONE,
            &req("orders", "A9", "r17", 10_000),
            &me(),
            0,
        ));
        assert_eq!((g.range.start(), g.range.end()), (1001, 11001));
        assert_eq!(s2.next(), 11001);
        assert_eq!(
            decide(&s2, &mine(g), &req("orders", "A9", "r17", 10_000), &me(), 0),
            Ok(Decision::Replay(g))
        );
        assert_eq!(
            decide(&s2, &mine(g), &req("orders", "A9", "r17", 9_999), &me(), 0),
            Err(Refusal::Conflict)
        );
    }

    #[test]
    fn an_id_stands_outside_ahead_of_or_behind_next() {
        let cfg = NamespaceConfig::new(Some(100), Some(1_000), None).unwrap();
        let st = NamespaceState::create(Namespace::new("s").unwrap(), cfg)
            .raise_floor(500)
            .unwrap();
        assert_eq!(st.standing(99), IdStanding::BeforeFirst);
        assert_eq!(st.standing(100), IdStanding::Passed);
        assert_eq!(st.standing(499), IdStanding::Passed);
        assert_eq!(st.standing(500), IdStanding::NotYetGranted);
        assert_eq!(st.standing(1_000), IdStanding::NotYetGranted);
        assert_eq!(st.standing(1_001), IdStanding::PastMax);
    }

    #[test]
    fn config_defaults_and_errors() {
        let c = NamespaceConfig::new(None, None, None).unwrap();
        assert_eq!(
            (c.first(), c.max(), c.max_count()),
            (1, (1 << 53) - 1, 10_000_000)
        );
        assert_eq!(
            NamespaceConfig::new(Some(0), None, None),
            Err(NamespaceConfigError::ZeroFirst)
        );
        assert_eq!(
            NamespaceConfig::new(Some(10), Some(9), None),
            Err(NamespaceConfigError::FirstAboveMax)
        );
        assert_eq!(
            NamespaceConfig::new(None, None, Some(0)),
            Err(NamespaceConfigError::ZeroMaxCount)
        );
        let limit = NamespaceConfig::MAX_COUNT_LIMIT;
        assert!(NamespaceConfig::new(None, None, Some(limit)).is_ok());
        assert_eq!(
            NamespaceConfig::new(None, None, Some(limit + 1)),
            Err(NamespaceConfigError::MaxCountTooLarge)
        );
        let full = NamespaceConfig::new(Some(1), Some(u64::MAX), Some(limit)).unwrap();
        assert_eq!(full.capacity(), u128::from(u64::MAX));
    }

    #[test]
    fn counts_out_of_bounds_are_invalid() {
        let s = ns("orders", 1, 100, 10);
        assert_eq!(
            decide(&s, &NONE, &req("orders", "a", "r", 0), &me(), 0),
            Err(Refusal::BadCount { max_count: 10 })
        );
        assert_eq!(
            decide(&s, &NONE, &req("orders", "a", "r", 11), &me(), 0),
            Err(Refusal::BadCount { max_count: 10 })
        );
        assert_eq!(
            decide(&s, &NONE, &req("other", "a", "r", 1), &me(), 0),
            Err(Refusal::WrongNamespace)
        );
    }

    #[test]
    fn exhaustion_is_exact_and_never_cut() {
        let s = ns("n", 1, 10, 100);
        let (_, s) = granted(decide(&s, &NONE, &req("n", "a", "r1", 8), &me(), 0));
        assert_eq!(s.remaining(), 2);
        assert_eq!(
            decide(&s, &NONE, &req("n", "a", "r2", 3), &me(), 0),
            Err(Refusal::Exhausted { remaining: 2 })
        );
        let (g, s) = granted(decide(&s, &NONE, &req("n", "a", "r3", 2), &me(), 0));
        assert_eq!((g.range.start(), g.range.last()), (9, 10));
        assert_eq!(s.next(), 11);
        assert_eq!(
            decide(&s, &NONE, &req("n", "a", "r4", 1), &me(), 0),
            Err(Refusal::Exhausted { remaining: 0 })
        );
    }

    #[test]
    fn exhaustion_at_u64_max() {
        let s = ns("top", u64::MAX - 4, u64::MAX, 5);
        let (g, s) = granted(decide(&s, &NONE, &req("top", "a", "r1", 5), &me(), 0));
        assert_eq!(g.range.last(), u64::MAX);
        assert_eq!(g.range.end(), BOUND_LIMIT);
        assert_eq!(s.next(), BOUND_LIMIT);
        assert_eq!(s.remaining(), 0);
        assert_eq!(
            decide(&s, &NONE, &req("top", "a", "r2", 1), &me(), 0),
            Err(Refusal::Exhausted { remaining: 0 })
        );
        // The replay still answers at the very top.
        assert_eq!(
            decide(&s, &mine(g), &req("top", "a", "r1", 5), &me(), 0),
            Ok(Decision::Replay(g))
        );
    }

    #[test]
    fn the_largest_grant_ends_at_u64_max() {
        let limit = NamespaceConfig::MAX_COUNT_LIMIT;
        let s = ns("all", u64::MAX - limit + 1, u64::MAX, limit);
        let (g, s) = granted(decide(&s, &NONE, &req("all", "a", "r1", limit), &me(), 0));
        assert_eq!(
            (g.range.start(), g.range.last(), g.range.count()),
            (u64::MAX - limit + 1, u64::MAX, limit)
        );
        assert_eq!(s.remaining(), 0);
    }

    #[test]
    fn around_two_to_the_53_and_63() {
        for edge in [(1u64 << 53) - 1, 1 << 53, 1 << 63] {
            let s = ns("e", edge - 1, u64::MAX, 10);
            let (g, _) = granted(decide(&s, &NONE, &req("e", "a", "r", 3), &me(), 0));
            assert_eq!((g.range.start(), g.range.last()), (edge - 1, edge + 1));
        }
    }

    #[test]
    fn frozen_refuses_new_but_replays_old() {
        let s = ns("f", 1, 100, 10);
        let (g, s) = granted(decide(&s, &NONE, &req("f", "a", "r1", 5), &me(), 0));
        let frozen = s.with_status(NamespaceStatus::Frozen);
        assert_eq!(
            decide(&frozen, &NONE, &req("f", "a", "r2", 5), &me(), 0),
            Err(Refusal::Frozen)
        );
        assert_eq!(
            decide(&frozen, &mine(g), &req("f", "a", "r1", 5), &me(), 0),
            Ok(Decision::Replay(g))
        );
    }

    #[test]
    fn floor_moves_up_only() {
        let s = ns("fl", 10, 100, 10);
        let (_, s) = granted(decide(&s, &NONE, &req("fl", "a", "r1", 5), &me(), 0));
        assert_eq!(s.raise_floor(14), Err(FloorError::BelowNext { next: 15 }));
        assert_eq!(s.raise_floor(15).map(|s| s.next()), Ok(15));
        assert_eq!(s.raise_floor(50).map(|s| s.next()), Ok(50));
        assert_eq!(s.raise_floor(100).map(|s| s.remaining()), Ok(1));
        assert_eq!(s.raise_floor(101), Err(FloorError::AboveMax { max: 100 }));
        assert_eq!(
            FloorError::BelowNext { next: 1 }.code(),
            ErrorCode::FloorBelowNext
        );
    }

    #[test]
    fn a_request_is_its_owner_incarnation_and_request_id() {
        let s = ns("o", 1, 100, 10);
        let (g, s) = granted(decide(&s, &NONE, &req("o", "a", "r1", 5), &me(), 0));
        let other = Owner::new("generator-b");
        // Even handed the first owner's span, another owner's request with
        // the same key is its own: a new range, never the first's...
        let (theirs, s) = granted(decide(&s, &mine(g), &req("o", "a", "r1", 5), &other, 0));
        assert_eq!(theirs.range.start(), 6);
        // ...and another count is no conflict for anyone but itself.
        let (_, s) = granted(decide(&s, &mine(g), &req("o", "a", "r1", 4), &other, 0));
        // The first owner's retry still replays its own range.
        assert_eq!(
            decide(&s, &mine(g), &req("o", "a", "r1", 5), &me(), 0),
            Ok(Decision::Replay(g))
        );
        assert_eq!(
            decide(&s, &mine(g), &req("o", "a", "r1", 4), &me(), 0),
            Err(Refusal::Conflict)
        );
        // A span of another incarnation is not this request's either.
        let (_, _) = granted(decide(&s, &mine(g), &req("o", "b", "r1", 5), &me(), 0));
    }

    #[test]
    fn a_span_absorbs_the_next_request_and_replays_each() {
        let s = ns("sp", 1, 1_000, 10);
        let (g1, s) = granted(decide(&s, &NONE, &req("sp", "a", "r1", 1), &me(), 0));
        let span = Span::new(me(), &g1, 0);
        let view = NONE.with_span(Some(span));
        let Ok(Decision::New {
            grant: g2,
            state: s,
            record,
        }) = decide(&s, &view, &req("sp", "a", "r2", 1), &me(), 5)
        else {
            panic!("a new grant");
        };
        assert!(record.extends, "absorbed: no new row");
        assert_eq!((record.rows, record.caller.rows), (0, 0));
        assert_eq!((record.span.grants(), record.span.end()), (2, 3));
        let view = NONE.with_span(Some(record.span));
        for (id, g) in [("r1", g1), ("r2", g2)] {
            assert_eq!(
                decide(&s, &view, &req("sp", "a", id, 1), &me(), 9),
                Ok(Decision::Replay(g))
            );
            assert_eq!(
                decide(&s, &view, &req("sp", "a", id, 2), &me(), 9),
                Err(Refusal::Conflict)
            );
        }
        // Another count starts a new row.
        let Ok(Decision::New { record, .. }) =
            decide(&s, &view, &req("sp", "a", "r3", 2), &me(), 9)
        else {
            panic!("a new grant");
        };
        assert!(!record.extends);
        assert_eq!((record.rows, record.caller.rows), (1, 1));
    }

    #[test]
    fn limits_refuse_with_a_wait_and_write_nothing() {
        let s = ns("lim", 1, 1_000, 10);
        let limits = Limits::new(Some(2), Some(3), Some(2)).unwrap();
        let base = LedgerView { limits, ..NONE };
        // The rate: two a second, then a wait.
        let taken = |view: &LedgerView, id, now| match decide(
            &s,
            view,
            &req("lim", "a", id, 1),
            &me(),
            now,
        ) {
            Ok(Decision::New { record, .. }) => Ok(record),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e),
        };
        let r1 = taken(&base, "x1", 0).unwrap();
        let v = LedgerView {
            caller: r1.caller,
            rows: r1.rows,
            ..base
        };
        let r2 = taken(&v, "x2", 0).unwrap();
        let v = LedgerView {
            caller: r2.caller,
            rows: r2.rows,
            ..base
        };
        let refused = taken(&v, "x3", 0).unwrap_err();
        assert_eq!(
            refused,
            Refusal::RateLimited {
                retry_after_ms: 500,
                per_second: 2
            }
        );
        assert_eq!(refused.code(), ErrorCode::RateLimited);
        assert_eq!(refused.retry_after_ms(), Some(500));
        // Half a second later one more is there, but the caller's rows are spent.
        let full = taken(&v, "x3", 500).unwrap_err();
        assert_eq!(
            full,
            Refusal::LedgerFull {
                budget: Budget::Caller,
                rows: 2
            }
        );
        assert_eq!(full.code(), ErrorCode::LedgerFull);
        assert_eq!(full.retry_after_ms(), Some(LEDGER_FULL_RETRY_MS));
        // Another caller has its own rows, until the whole ledger is full.
        let other = LedgerView { rows: 3, ..base };
        assert_eq!(
            decide(&s, &other, &req("lim", "a", "x1", 1), &Owner::new("b"), 0),
            Err(Refusal::LedgerFull {
                budget: Budget::Namespace,
                rows: 3
            })
        );
        // Replays, frozen and exhausted answers come before any limit.
        let (g, _) = granted(decide(&s, &NONE, &req("lim", "a", "r1", 1), &me(), 0));
        let spent = LedgerView {
            span: Some(Span::new(me(), &g, 0)),
            ..v
        };
        assert_eq!(
            decide(&s, &spent, &req("lim", "a", "r1", 1), &me(), 0),
            Ok(Decision::Replay(g))
        );
        let frozen = s.with_status(NamespaceStatus::Frozen);
        assert_eq!(
            decide(&frozen, &v, &req("lim", "a", "x3", 1), &me(), 0),
            Err(Refusal::Frozen)
        );
        // A throttled request raises no fence.
        let fenced = NamespaceState::create(
            Namespace::new("lim").unwrap(),
            NamespaceConfig::new(Some(1), Some(1_000), Some(10)).unwrap(),
        );
        assert!(matches!(
            decide(&fenced, &v, &req("lim", "a", "x3", 1), &me(), 0),
            Err(Refusal::RateLimited { .. })
        ));
    }

    #[test]
    fn nothing_is_granted_past_the_fence() {
        let config = NamespaceConfig::new(Some(1), Some(100), Some(50)).unwrap();
        let fresh = NamespaceState::create(Namespace::new("f").unwrap(), config);
        assert_eq!(
            fresh.fence(),
            1,
            "a new namespace is fenced at its first ID"
        );
        assert_eq!(
            decide(&fresh, &NONE, &req("f", "a", "r1", 10), &me(), 0),
            Ok(Decision::RaiseFence { at_least: 11 })
        );
        let s = fresh.with_fence(11);
        let (g, s) = granted(decide(&s, &NONE, &req("f", "a", "r1", 10), &me(), 0));
        assert_eq!(g.range.end(), 11, "up to the fence exactly");
        assert_eq!(
            decide(&s, &NONE, &req("f", "a", "r2", 1), &me(), 0),
            Ok(Decision::RaiseFence { at_least: 12 })
        );
        // Replays need no fence; fences never move down; they stop at max + 1.
        assert_eq!(
            decide(&s, &mine(g), &req("f", "a", "r1", 10), &me(), 0),
            Ok(Decision::Replay(g))
        );
        assert_eq!(s.with_fence(5).fence(), 11);
        assert_eq!(s.with_fence(1_000).fence(), 101);
        // A floor past the fence still needs the fence raised.
        let floored = s.raise_floor(60).unwrap();
        assert_eq!(
            decide(&floored, &NONE, &req("f", "a", "r3", 1), &me(), 0),
            Ok(Decision::RaiseFence { at_least: 61 })
        );
    }

    #[test]
    fn load_checks_the_invariant() {
        let c = NamespaceConfig::new(Some(5), Some(10), None).unwrap();
        let n = Namespace::new("l").unwrap();
        let a = NamespaceStatus::Active;
        assert!(NamespaceState::load(n, c, 5, a, 5).is_ok());
        assert!(NamespaceState::load(n, c, 11, a, 11).is_ok());
        assert_eq!(
            NamespaceState::load(n, c, 4, a, 5),
            Err(StateError::NextOutOfBounds)
        );
        assert_eq!(
            NamespaceState::load(n, c, 12, a, 5),
            Err(StateError::NextOutOfBounds)
        );
        assert_eq!(
            NamespaceState::load(n, c, 5, a, 12),
            Err(StateError::FenceOutOfBounds)
        );
    }

    #[test]
    fn refusal_codes() {
        assert_eq!(Refusal::Conflict.code(), ErrorCode::RequestConflict);
        assert_eq!(
            Refusal::Exhausted { remaining: 1 }.code(),
            ErrorCode::NamespaceExhausted
        );
        assert_eq!(Refusal::Frozen.code(), ErrorCode::NamespaceFrozen);
        assert_eq!(
            Refusal::BadCount { max_count: 1 }.code(),
            ErrorCode::InvalidRequest
        );
    }
}
