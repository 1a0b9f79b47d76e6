//! Property test: the authority decision against a model that is simply the
//! set of granted intervals (and which key got which).
//!
//! Over random operation sequences on namespaces near 1, 2^53 and 2^64 - 1:
//! granted intervals never overlap, stay within `[first, max]`, have exactly
//! the asked count; replays return the same interval; refusals change
//! nothing and say exactly how much remains.

use std::collections::BTreeMap;

use proptest::prelude::*;
use rangeid_core::authority::{
    decide, Decision, FloorError, Grant, GrantRequest, NamespaceConfig, NamespaceState,
    NamespaceStatus, Refusal,
};
use rangeid_core::{Incarnation, Namespace, RequestId};

#[derive(Clone, Debug)]
enum Op {
    Request {
        inc: u8,
        req: u8,
        count: u64,
        other_ns: bool,
    },
    Floor(u64),
    Freeze,
    Unfreeze,
}

fn op(max_count: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u8..3, 0u8..6, 0..=max_count + 1, prop::bool::weighted(0.05)).prop_map(
            |(inc, req, count, other_ns)| Op::Request { inc, req, count, other_ns }
        ),
        1 => (0u64..64).prop_map(Op::Floor),
        1 => Just(Op::Freeze),
        1 => Just(Op::Unfreeze),
    ]
}

fn namespace() -> impl Strategy<Value = (u64, u64, u64)> {
    // (first, max, max_count): small spaces so exhaustion happens, at the edges.
    let base = prop_oneof![
        Just(1u64),
        Just((1u64 << 53) - 40),
        Just((1u64 << 63) - 40),
        Just(u64::MAX - 200),
    ];
    (base, 0u64..200, 1u64..40).prop_map(|(first, span, max_count)| {
        let max = first.saturating_add(span);
        (first, max, max_count)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn decisions_match_the_interval_model(
        (first, max, max_count) in namespace(),
        ops in prop::collection::vec(op(40), 1..80),
    ) {
        let name = Namespace::new("model").unwrap();
        let config = NamespaceConfig::new(Some(first), Some(max), Some(max_count)).unwrap();
        let mut state = NamespaceState::create(name, config);
        let mut granted: BTreeMap<u64, u64> = BTreeMap::new(); // start -> last
        let mut by_key: BTreeMap<(u8, u8), Grant> = BTreeMap::new();

        for op in ops {
            match op {
                Op::Request { inc, req, count, other_ns } => {
                    let request = GrantRequest {
                        namespace: if other_ns { Namespace::new("elsewhere").unwrap() } else { name },
                        incarnation: Incarnation::new(&format!("inc{inc}")).unwrap(),
                        request_id: RequestId::new(&format!("r{req}")).unwrap(),
                        count,
                    };
                    let stored = by_key.get(&(inc, req)).copied();
                    let before = state;
                    match decide(&state, stored.as_ref(), &request) {
                        Ok(Decision::New { grant, state: after }) => {
                            prop_assert!(stored.is_none());
                            prop_assert!(!other_ns);
                            prop_assert_eq!(before.status(), NamespaceStatus::Active);
                            let r = grant.range;
                            prop_assert_eq!(r.count(), count);
                            prop_assert!(r.start() >= first && r.last() <= max);
                            prop_assert_eq!(u128::from(r.start()), before.next());
                            prop_assert_eq!(after.next(), r.end());
                            let overlap = granted.range(..=r.last()).next_back()
                                .is_some_and(|(_, &last)| last >= r.start());
                            prop_assert!(!overlap, "{:?} overlaps a granted interval", r);
                            granted.insert(r.start(), r.last());
                            by_key.insert((inc, req), grant);
                            state = after;
                        }
                        Ok(Decision::Replay(g)) => {
                            prop_assert_eq!(Some(g), stored);
                            prop_assert_eq!(g.range.count(), count);
                        }
                        Err(refusal) => {
                            prop_assert_eq!(state, before);
                            match refusal {
                                Refusal::BadCount { .. } => prop_assert!(count == 0 || count > max_count),
                                Refusal::Conflict => {
                                    let s = stored.unwrap();
                                    prop_assert!(s.range.count() != count || other_ns);
                                }
                                Refusal::WrongNamespace => prop_assert!(other_ns),
                                Refusal::Frozen => prop_assert_eq!(state.status(), NamespaceStatus::Frozen),
                                Refusal::Exhausted { remaining } => {
                                    let exact = u128::from(max) + 1 - state.next();
                                    prop_assert_eq!(u128::from(remaining), exact);
                                    prop_assert!(count > remaining);
                                }
                            }
                        }
                    }
                }
                Op::Floor(offset) => {
                    let floor = first.saturating_add(offset);
                    match state.raise_floor(floor) {
                        Ok(after) => {
                            prop_assert!(after.next() >= state.next());
                            prop_assert_eq!(after.next(), u128::from(floor));
                            state = after;
                        }
                        Err(FloorError::BelowNext { next }) => prop_assert!(u128::from(floor) < next),
                        Err(FloorError::AboveMax { .. }) => prop_assert!(floor > max),
                    }
                }
                Op::Freeze => state = state.with_status(NamespaceStatus::Frozen),
                Op::Unfreeze => state = state.with_status(NamespaceStatus::Active),
            }
            // Every ID below `next` may be used; none at or above it was granted.
            if let Some((_, &last)) = granted.iter().next_back() {
                prop_assert!(u128::from(last) < state.next());
            }
        }
    }
}
