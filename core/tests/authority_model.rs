//! Property test: the authority decision against a model that is simply the
//! set of granted intervals (and which key and owner got which).
//!
//! Over random operation sequences on namespaces near 1, 2^53 and 2^64 - 1:
//! granted intervals never overlap, stay within `[first, max]` and below the
//! fence, have exactly the asked count; replays return the same interval to
//! its owner only; refusals change nothing and say exactly how much
//! remains. The object may be restored to any earlier snapshot (losing
//! grants and keys) and restarted against the witness, and the witness may
//! be restored to any earlier snapshot of its own (the object checks in
//! with it before anything else happens): even then, and with both in
//! turn, no interval is ever granted twice.

use std::collections::BTreeMap;

use proptest::prelude::*;
use rangeid_core::authority::{
    decide, Decision, FloorError, GrantRequest, NamespaceConfig, NamespaceState, NamespaceStatus,
    Owner, Refusal, StoredGrant,
};
use rangeid_core::fence;
use rangeid_core::{Incarnation, Namespace, RequestId};

#[derive(Clone, Debug)]
enum Op {
    Request {
        inc: u8,
        req: u8,
        who: u8,
        count: u64,
        other_ns: bool,
    },
    /// Restore the object's storage to the snapshot this many steps back,
    /// then start it against the witness.
    Restore(usize),
    /// Restore the witness's storage to its snapshot this many steps back;
    /// the object checks in with it next (its periodic check).
    RestoreWitness(usize),
    Floor(u64),
    Freeze,
    Unfreeze,
}

fn op(max_count: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u8..3, 0u8..6, prop::bool::weighted(0.1), 0..=max_count + 1, prop::bool::weighted(0.05)).prop_map(
            |(inc, req, other, count, other_ns)| Op::Request { inc, req, who: u8::from(other), count, other_ns }
        ),
        1 => (1usize..20).prop_map(Op::Restore),
        1 => (1usize..20).prop_map(Op::RestoreWitness),
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
        let mut witness = state.fence();
        let mut granted: BTreeMap<u64, u64> = BTreeMap::new(); // start -> last, never rolled back
        let mut by_key: BTreeMap<(u8, u8), StoredGrant> = BTreeMap::new();
        let mut asked = 0u128;
        let mut snapshots = vec![(state, by_key.clone(), witness, asked)];

        for op in ops {
            match op {
                Op::Request { inc, req, who, count, other_ns } => {
                    let request = GrantRequest {
                        namespace: if other_ns { Namespace::new("elsewhere").unwrap() } else { name },
                        incarnation: Incarnation::new(&format!("inc{inc}")).unwrap(),
                        request_id: RequestId::new(&format!("r{req}")).unwrap(),
                        count,
                    };
                    let owner = Owner::new(if who == 0 { "generator-a" } else { "generator-b" });
                    let stored = by_key.get(&(inc, req)).copied();
                    let before = state;
                    let mut decision = decide(&state, stored.as_ref(), &request, &owner);
                    if let Ok(Decision::RaiseFence { at_least }) = decision {
                        // The witness acknowledges a chunk beyond, then the
                        // object records it and decides again.
                        prop_assert!(at_least > state.fence());
                        let chunk = fence::chunk(0, 0, count, 0, state.remaining());
                        let target = fence::target(&state, at_least, chunk);
                        asked = asked.max(target);
                        witness = fence::witness_raise(witness, target);
                        state = state.with_fence(witness);
                        decision = decide(&state, stored.as_ref(), &request, &owner);
                    }
                    match decision {
                        Ok(Decision::New { grant, state: after }) => {
                            prop_assert!(stored.is_none());
                            prop_assert!(!other_ns);
                            prop_assert_eq!(before.status(), NamespaceStatus::Active);
                            let r = grant.range;
                            prop_assert_eq!(r.count(), count);
                            prop_assert!(r.start() >= first && r.last() <= max);
                            prop_assert!(r.end() <= witness, "{:?} ends above the witness's mark {}", r, witness);
                            prop_assert_eq!(u128::from(r.start()), state.next());
                            prop_assert_eq!(after.next(), r.end());
                            let overlap = granted.range(..=r.last()).next_back()
                                .is_some_and(|(_, &last)| last >= r.start());
                            prop_assert!(!overlap, "{:?} overlaps a granted interval", r);
                            granted.insert(r.start(), r.last());
                            by_key.insert((inc, req), StoredGrant { grant, owner });
                            state = after;
                        }
                        Ok(Decision::Replay(g)) => {
                            let s = stored.unwrap();
                            prop_assert_eq!(g, s.grant);
                            prop_assert_eq!(s.owner, owner);
                            prop_assert_eq!(g.range.count(), count);
                        }
                        Ok(Decision::RaiseFence { .. }) => prop_assert!(false, "raised twice"),
                        Err(refusal) => {
                            prop_assert_eq!(state.next(), before.next());
                            match refusal {
                                Refusal::BadCount { .. } => prop_assert!(count == 0 || count > max_count),
                                Refusal::Conflict => {
                                    let s = stored.unwrap();
                                    prop_assert!(s.grant.range.count() != count || other_ns);
                                }
                                Refusal::NotOwner => prop_assert!(stored.unwrap().owner != owner),
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
                Op::Restore(back) => {
                    let (old, keys, _, old_asked) = snapshots[snapshots.len().saturating_sub(back)].clone();
                    let r = fence::observe(&old, old_asked, old.fence(), fence::Witnessed::read(witness), fence::Phase::Starting);
                    prop_assert!(r.state.next() >= old.next());
                    prop_assert_eq!(r.state.fence(), witness.max(old.fence()));
                    state = r.state;
                    asked = old_asked;
                    if let Some(mark) = r.raise_back {
                        witness = fence::witness_raise(witness, mark);
                        asked = asked.max(mark);
                    }
                    by_key = keys;
                }
                Op::RestoreWitness(back) => {
                    witness = snapshots[snapshots.len().saturating_sub(back)].2;
                    let r = fence::observe(&state, asked, state.fence(), fence::Witnessed::read(witness), fence::Phase::Running);
                    prop_assert_eq!(r.state.next(), state.next(), "a check while running skips nothing");
                    prop_assert_eq!(r.raise_back.is_some(), witness < state.fence() && state.fence() > u128::from(first));
                    state = r.state;
                    if let Some(mark) = r.raise_back {
                        witness = fence::witness_raise(witness, mark);
                        asked = asked.max(mark);
                    }
                    prop_assert!(witness >= state.fence() || state.fence() == u128::from(first));
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
            snapshots.push((state, by_key.clone(), witness, asked));
            // Every ID below `next` may be used; none at or above it was
            // granted, even after a restore.
            if let Some((_, &last)) = granted.iter().next_back() {
                prop_assert!(u128::from(last) < state.next());
            }
        }
    }
}
