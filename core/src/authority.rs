//! The authority's decisions over one namespace's committed state.
//!
//! Pure functions: the caller loads the committed `NamespaceState` (and the
//! stored grant for the request's key, if any), asks for a decision, and
//! commits exactly what the decision says before replying. Nothing here
//! writes, so a refused request changes nothing.

use core::fmt;

use crate::code::ErrorCode;
use crate::names::{Incarnation, Namespace, RequestId};
use crate::range::{Range, BOUND_LIMIT};

/// Why a namespace configuration is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// `first` is 0; IDs are positive.
    ZeroFirst,
    /// `first` is greater than `max`: the namespace would hold nothing.
    FirstAboveMax,
    /// `maxCount` is 0: no request could ever be granted.
    ZeroMaxCount,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConfigError::ZeroFirst => "first must be at least 1",
            ConfigError::FirstAboveMax => "first must not be greater than max",
            ConfigError::ZeroMaxCount => "maxCount must be at least 1",
        })
    }
}

/// The fixed bounds of a namespace, validated at creation.
///
/// Guaranteed: `1 <= first <= max` and `max_count >= 1`.
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

    /// Validates a configuration; absent fields take the defaults.
    pub fn new(
        first: Option<u64>,
        max: Option<u64>,
        max_count: Option<u64>,
    ) -> Result<NamespaceConfig, ConfigError> {
        let first = first.unwrap_or(Self::DEFAULT_FIRST);
        let max = max.unwrap_or(Self::DEFAULT_MAX);
        let max_count = max_count.unwrap_or(Self::DEFAULT_MAX_COUNT);
        if first == 0 {
            return Err(ConfigError::ZeroFirst);
        }
        if first > max {
            return Err(ConfigError::FirstAboveMax);
        }
        if max_count == 0 {
            return Err(ConfigError::ZeroMaxCount);
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

/// Whether a namespace grants new ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
pub enum StateError {
    /// `next` lies outside `first..=max + 1`.
    NextOutOfBounds,
}

/// A namespace's committed allocation state.
///
/// Guaranteed: `first <= next <= max + 1`. Every ID below `next` may have
/// been granted; every ID from `next` to `max` never was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamespaceState {
    name: Namespace,
    config: NamespaceConfig,
    next: u128,
    status: NamespaceStatus,
}

impl NamespaceState {
    /// A new, active namespace whose next grant starts at `first`.
    pub fn create(name: Namespace, config: NamespaceConfig) -> NamespaceState {
        NamespaceState {
            name,
            config,
            next: u128::from(config.first),
            status: NamespaceStatus::Active,
        }
    }

    /// State loaded from storage, checked against the invariant.
    pub fn load(
        name: Namespace,
        config: NamespaceConfig,
        next: u128,
        status: NamespaceStatus,
    ) -> Result<NamespaceState, StateError> {
        if next < u128::from(config.first) || next > u128::from(config.max) + 1 {
            return Err(StateError::NextOutOfBounds);
        }
        Ok(NamespaceState {
            name,
            config,
            next,
            status,
        })
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

impl FloorError {
    /// The stable code for this refusal.
    pub const fn code(&self) -> ErrorCode {
        match self {
            FloorError::BelowNext { .. } => ErrorCode::FloorBelowNext,
            FloorError::AboveMax { .. } => ErrorCode::InvalidRequest,
        }
    }
}

/// A request for `count` IDs, keyed by `(incarnation, request_id)`.
///
/// On the wire (feature `serde`):
/// `{"namespace":"orders","incarnation":"A9","requestId":"r17","count":10000}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrantRequest {
    /// The namespace asked of.
    pub namespace: Namespace,
    /// The asking process's incarnation.
    pub incarnation: Incarnation,
    /// The request's identity within that incarnation.
    pub request_id: RequestId,
    /// How many IDs are asked for.
    pub count: u64,
}

/// A committed grant: the range given to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The namespace the range belongs to.
    pub namespace: Namespace,
    /// The incarnation it was granted to.
    pub incarnation: Incarnation,
    /// The request it answers.
    pub request_id: RequestId,
    /// The IDs granted.
    pub range: Range,
}

/// What the authority must do with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Commit `grant` together with the advanced state, then reply.
    New {
        /// The grant record to store.
        grant: Grant,
        /// The state to store with it (`next` advanced past the range).
        state: NamespaceState,
    },
    /// The request was already granted: reply with the stored grant again,
    /// writing nothing.
    Replay(Grant),
}

/// Why a request is refused. Nothing is written for a refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `count` is 0 or above the namespace's `maxCount`.
    BadCount {
        /// The largest count allowed.
        max_count: u64,
    },
    /// The request names another namespace than this state's.
    WrongNamespace,
    /// The request key was used before with another count or namespace.
    Conflict,
    /// Fewer than `count` IDs remain; the request is refused whole.
    Exhausted {
        /// Exactly how many IDs remain.
        remaining: u64,
    },
    /// The namespace is frozen.
    Frozen,
}

impl Refusal {
    /// The stable code for this refusal.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Refusal::BadCount { .. } | Refusal::WrongNamespace => ErrorCode::InvalidRequest,
            Refusal::Conflict => ErrorCode::RequestConflict,
            Refusal::Exhausted { .. } => ErrorCode::NamespaceExhausted,
            Refusal::Frozen => ErrorCode::NamespaceFrozen,
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
        }
    }
}

/// Decides a range request against the committed state and the grant
/// stored under the request's `(incarnation, request_id)`, if any.
///
/// Guaranteed: a `New` range starts at `state.next()`, ends at or before
/// `max + 1`, and is exactly `count` long; a request whose key was granted
/// before gets that grant back (also while frozen), or `Conflict` if the
/// count or namespace differ. Nothing is ever cut short or wrapped.
pub fn decide(
    state: &NamespaceState,
    stored: Option<&Grant>,
    request: &GrantRequest,
) -> Result<Decision, Refusal> {
    let max_count = state.config.max_count;
    if request.count == 0 || request.count > max_count {
        return Err(Refusal::BadCount { max_count });
    }
    if let Some(stored) = stored {
        let same_key =
            stored.incarnation == request.incarnation && stored.request_id == request.request_id;
        if same_key
            && stored.namespace == request.namespace
            && stored.range.count() == request.count
        {
            return Ok(Decision::Replay(*stored));
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
    Ok(Decision::New {
        grant: Grant {
            namespace: request.namespace,
            incarnation: request.incarnation,
            request_id: request.request_id,
            range,
        },
        state: NamespaceState {
            next: range.end(),
            ..*state
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(name: &str, first: u64, max: u64, max_count: u64) -> NamespaceState {
        let config = NamespaceConfig::new(Some(first), Some(max), Some(max_count)).unwrap();
        NamespaceState::create(Namespace::new(name).unwrap(), config)
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
            Ok(Decision::New { grant, state }) => (grant, state),
            other => panic!("expected a new grant, got {other:?}"),
        }
    }

    #[test]
    fn seed_example_grants_1001_to_11001() {
        let s = ns("orders", 1001, NamespaceConfig::DEFAULT_MAX, 10_000);
        let (g, s2) = granted(decide(&s, None, &req("orders", "A9", "r17", 10_000)));
        assert_eq!((g.range.start(), g.range.end()), (1001, 11001));
        assert_eq!(s2.next(), 11001);
        assert_eq!(
            decide(&s2, Some(&g), &req("orders", "A9", "r17", 10_000)),
            Ok(Decision::Replay(g))
        );
        assert_eq!(
            decide(&s2, Some(&g), &req("orders", "A9", "r17", 9_999)),
            Err(Refusal::Conflict)
        );
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
            Err(ConfigError::ZeroFirst)
        );
        assert_eq!(
            NamespaceConfig::new(Some(10), Some(9), None),
            Err(ConfigError::FirstAboveMax)
        );
        assert_eq!(
            NamespaceConfig::new(None, None, Some(0)),
            Err(ConfigError::ZeroMaxCount)
        );
        let full = NamespaceConfig::new(Some(1), Some(u64::MAX), Some(u64::MAX)).unwrap();
        assert_eq!(full.capacity(), u128::from(u64::MAX));
    }

    #[test]
    fn counts_out_of_bounds_are_invalid() {
        let s = ns("orders", 1, 100, 10);
        assert_eq!(
            decide(&s, None, &req("orders", "a", "r", 0)),
            Err(Refusal::BadCount { max_count: 10 })
        );
        assert_eq!(
            decide(&s, None, &req("orders", "a", "r", 11)),
            Err(Refusal::BadCount { max_count: 10 })
        );
        assert_eq!(
            decide(&s, None, &req("other", "a", "r", 1)),
            Err(Refusal::WrongNamespace)
        );
    }

    #[test]
    fn exhaustion_is_exact_and_never_cut() {
        let s = ns("n", 1, 10, 100);
        let (_, s) = granted(decide(&s, None, &req("n", "a", "r1", 8)));
        assert_eq!(s.remaining(), 2);
        assert_eq!(
            decide(&s, None, &req("n", "a", "r2", 3)),
            Err(Refusal::Exhausted { remaining: 2 })
        );
        let (g, s) = granted(decide(&s, None, &req("n", "a", "r3", 2)));
        assert_eq!((g.range.start(), g.range.last()), (9, 10));
        assert_eq!(s.next(), 11);
        assert_eq!(
            decide(&s, None, &req("n", "a", "r4", 1)),
            Err(Refusal::Exhausted { remaining: 0 })
        );
    }

    #[test]
    fn exhaustion_at_u64_max() {
        let s = ns("top", u64::MAX - 4, u64::MAX, u64::MAX);
        let (g, s) = granted(decide(&s, None, &req("top", "a", "r1", 5)));
        assert_eq!(g.range.last(), u64::MAX);
        assert_eq!(g.range.end(), BOUND_LIMIT);
        assert_eq!(s.next(), BOUND_LIMIT);
        assert_eq!(s.remaining(), 0);
        assert_eq!(
            decide(&s, None, &req("top", "a", "r2", 1)),
            Err(Refusal::Exhausted { remaining: 0 })
        );
        // The replay still answers at the very top.
        assert_eq!(
            decide(&s, Some(&g), &req("top", "a", "r1", 5)),
            Ok(Decision::Replay(g))
        );
    }

    #[test]
    fn a_whole_u64_space_in_one_grant() {
        let s = ns("all", 1, u64::MAX, u64::MAX);
        let (g, s) = granted(decide(&s, None, &req("all", "a", "r1", u64::MAX)));
        assert_eq!(
            (g.range.start(), g.range.last(), g.range.count()),
            (1, u64::MAX, u64::MAX)
        );
        assert_eq!(s.remaining(), 0);
    }

    #[test]
    fn around_two_to_the_53_and_63() {
        for edge in [(1u64 << 53) - 1, 1 << 53, 1 << 63] {
            let s = ns("e", edge - 1, u64::MAX, 10);
            let (g, _) = granted(decide(&s, None, &req("e", "a", "r", 3)));
            assert_eq!((g.range.start(), g.range.last()), (edge - 1, edge + 1));
        }
    }

    #[test]
    fn frozen_refuses_new_but_replays_old() {
        let s = ns("f", 1, 100, 10);
        let (g, s) = granted(decide(&s, None, &req("f", "a", "r1", 5)));
        let frozen = s.with_status(NamespaceStatus::Frozen);
        assert_eq!(
            decide(&frozen, None, &req("f", "a", "r2", 5)),
            Err(Refusal::Frozen)
        );
        assert_eq!(
            decide(&frozen, Some(&g), &req("f", "a", "r1", 5)),
            Ok(Decision::Replay(g))
        );
    }

    #[test]
    fn floor_moves_up_only() {
        let s = ns("fl", 10, 100, 10);
        let (_, s) = granted(decide(&s, None, &req("fl", "a", "r1", 5)));
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
    fn load_checks_the_invariant() {
        let c = NamespaceConfig::new(Some(5), Some(10), None).unwrap();
        let n = Namespace::new("l").unwrap();
        assert!(NamespaceState::load(n, c, 5, NamespaceStatus::Active).is_ok());
        assert!(NamespaceState::load(n, c, 11, NamespaceStatus::Active).is_ok());
        assert_eq!(
            NamespaceState::load(n, c, 4, NamespaceStatus::Active),
            Err(StateError::NextOutOfBounds)
        );
        assert_eq!(
            NamespaceState::load(n, c, 12, NamespaceStatus::Active),
            Err(StateError::NextOutOfBounds)
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
