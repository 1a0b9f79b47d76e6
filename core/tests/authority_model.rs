//! Property test: the authority decision against a model that is simply the
//! set of granted intervals (and which request, `(owner, incarnation,
//! request id)`, got which).
//!
//! The decision runs over a ledger kept the authority's way: spans, found
//! by core's `span_for` among the caller's own, extended as core records,
//! with per-caller usage and limits. Over random operation sequences on
//! namespaces near 1, 2^53 and 2^64 - 1: granted intervals never overlap,
//! stay within `[first, max]` and below the fence, have exactly the asked
//! count; a replay returns exactly the interval that request got, never
//! another owner's; refusals change nothing, say exactly how much remains,
//! and a limit refuses only past it. The object may be restored to any
//! earlier snapshot (losing grants, keys and usage) and restarted against
//! the witness, and the witness may be restored to any earlier snapshot of
//! its own (the object checks in with it before anything else happens):
//! even then, and with both in turn, no interval is ever granted twice.

use std::collections::BTreeMap;

use proptest::prelude::*;
use rangeid_core::authority::{
    decide, Decision, FloorError, NamespaceConfig, NamespaceState, NamespaceStatus, Owner, Refusal,
};
use rangeid_core::fence;
use rangeid_core::ledger::{span_for, Budget, LedgerView, Limits, Span, SpanKey, Usage};
use rangeid_core::protocol::{Grant, GrantRequest};
use rangeid_core::{Incarnation, Namespace, RequestId};

/// The ledger as the authority stores it: spans by (owner, incarnation,
/// number or '' , first request id), each owner's usage, the row count.
#[derive(Clone, Default)]
struct Ledger {
    spans: BTreeMap<(String, String, String, String), Span>,
    usage: BTreeMap<String, Usage>,
    rows: u64,
}

fn number(id: &RequestId) -> String {
    id.number().map_or_else(String::new, |n| format!("{n:020}"))
}

impl Ledger {
    fn view(&self, request: &GrantRequest, owner: &Owner, limits: Limits) -> LedgerView {
        let (o, i) = (
            owner.as_str().to_owned(),
            request.incarnation.as_str().to_owned(),
        );
        let span = match span_for(&request.request_id) {
            SpanKey::Exact(id) => self
                .spans
                .get(&(o.clone(), i.clone(), String::new(), id.as_str().to_owned()))
                .copied(),
            SpanKey::AtOrBelow(m) => {
                let lo = (o.clone(), i.clone(), "0".repeat(20), String::new());
                let hi = (o.clone(), i.clone(), format!("{m:020}"), "~".into());
                self.spans.range(lo..=hi).next_back().map(|(_, s)| *s)
            }
        };
        LedgerView {
            span,
            caller: self.usage.get(&o).copied().unwrap_or(Usage::NEW),
            rows: self.rows,
            limits,
        }
    }

    fn key(span: &Span) -> (String, String, String, String) {
        (
            span.owner().as_str().to_owned(),
            span.incarnation().as_str().to_owned(),
            number(span.first()),
            span.first().as_str().to_owned(),
        )
    }
}

#[derive(Clone, Debug)]
enum Op {
    Request {
        inc: u8,
        req: u8,
        who: u8,
        count: u64,
        other_ns: bool,
        /// ms since the previous operation.
        wait: u64,
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
        8 => (0u8..3, 0u8..8, prop::bool::weighted(0.2), prop_oneof![2 => Just(1u64), 5 => 0..=max_count + 1], prop::bool::weighted(0.05), prop_oneof![4 => 0u64..400, 1 => 0u64..90_000]).prop_map(
            |(inc, req, other, count, other_ns, wait)| Op::Request { inc, req, who: u8::from(other), count, other_ns, wait }
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

fn limits() -> impl Strategy<Value = Limits> {
    prop_oneof![
        2 => Just(Limits::DEFAULT),
        1 => (1u64..6, 1u64..8, 1u64..8).prop_map(|(rate, rows, sub)| {
            Limits::new(Some(rate), Some(rows), Some(sub.min(rows))).unwrap()
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn decisions_match_the_interval_model(
        (first, max, max_count) in namespace(),
        ops in prop::collection::vec(op(40), 1..80),
        limits in limits(),
    ) {
        let name = Namespace::new("model").unwrap();
        let config = NamespaceConfig::new(Some(first), Some(max), Some(max_count)).unwrap();
        let mut state = NamespaceState::create(name, config);
        let mut witness = state.fence();
        let mut now: i64 = 1_000_000;
        let mut granted: BTreeMap<u64, u64> = BTreeMap::new(); // start -> last, never rolled back
        // What each request got: (owner, incarnation, request) -> grant.
        let mut by_key: BTreeMap<(u8, u8, u8), Grant> = BTreeMap::new();
        let mut ledger = Ledger::default();
        let mut asked = 0u128;
        let mut snapshots = vec![(state, by_key.clone(), ledger.clone(), witness, asked)];

        for op in ops {
            match op {
                Op::Request { inc, req, who, count, other_ns, wait } => {
                    now += wait as i64;
                    let id = if req < 6 { format!("r{req}") } else { format!("x{req}") };
                    let request = GrantRequest {
                        namespace: if other_ns { Namespace::new("elsewhere").unwrap() } else { name },
                        incarnation: Incarnation::new(&format!("inc{inc}")).unwrap(),
                        request_id: RequestId::new(&id).unwrap(),
                        count,
                    };
                    let owner = Owner::new(if who == 0 { "generator-a" } else { "generator-b" });
                    let stored = by_key.get(&(who, inc, req)).copied();
                    let before = state;
                    let view = ledger.view(&request, &owner, limits);
                    let mut decision = decide(&state, &view, &request, &owner, now);
                    if let Ok(Decision::RaiseFence { at_least }) = decision {
                        // The witness acknowledges a chunk beyond, then the
                        // object records it and decides again.
                        prop_assert!(at_least > state.fence());
                        let chunk = fence::chunk(0, 0, count, 0, state.remaining());
                        let target = fence::target(&state, at_least, chunk);
                        asked = asked.max(target);
                        witness = fence::witness_raise(witness, target);
                        state = state.with_fence(witness);
                        decision = decide(&state, &view, &request, &owner, now);
                    }
                    match decision {
                        Ok(Decision::New { grant, state: after, record }) => {
                            prop_assert!(stored.is_none(), "{:?} was granted {:?} before", request, stored);
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
                            by_key.insert((who, inc, req), grant);
                            // The record: the span holds the grant as its last,
                            // and the counts move by one row exactly when a new
                            // row is written, within the budgets.
                            let span = record.span;
                            let last = span.grants() - 1;
                            prop_assert_eq!(span.grant(name, last), Some(grant));
                            prop_assert_eq!(span.owner(), &owner);
                            if record.extends {
                                let old = view.span.unwrap();
                                prop_assert_eq!(Ledger::key(&old), Ledger::key(&span));
                                prop_assert_eq!(span.grants(), old.grants() + 1);
                                prop_assert!(now - span.first_at() < rangeid_core::ledger::SPAN_MS);
                                prop_assert_eq!((record.rows, record.caller.rows), (view.rows, view.caller.rows));
                            } else {
                                prop_assert_eq!(span.grants(), 1);
                                prop_assert_eq!((record.rows, record.caller.rows), (view.rows + 1, view.caller.rows + 1));
                                prop_assert!(record.rows <= limits.ledger_rows());
                                prop_assert!(record.caller.rows <= limits.sub_ledger_rows());
                                prop_assert!(!ledger.spans.contains_key(&Ledger::key(&span)));
                            }
                            ledger.spans.insert(Ledger::key(&span), span);
                            ledger.usage.insert(owner.as_str().to_owned(), record.caller);
                            ledger.rows = record.rows;
                            state = after;
                        }
                        Ok(Decision::Replay(g)) => {
                            // Exactly what this request got, from its own span.
                            prop_assert_eq!(Some(g), stored, "{:?} replayed another's grant", request);
                            prop_assert_eq!(g.range.count(), count);
                        }
                        Ok(Decision::RaiseFence { .. }) => prop_assert!(false, "raised twice"),
                        Ok(other) => prop_assert!(false, "a decision the model does not know: {:?}", other),
                        Err(refusal) => {
                            prop_assert_eq!(state.next(), before.next());
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
                                Refusal::RateLimited { retry_after_ms, per_second } => {
                                    prop_assert_eq!(per_second, limits.grants_per_second());
                                    prop_assert!((1..=1_000).contains(&retry_after_ms));
                                    prop_assert!(stored.is_none());
                                }
                                Refusal::LedgerFull { budget, rows } => {
                                    prop_assert!(stored.is_none());
                                    match budget {
                                        Budget::Caller => {
                                            prop_assert_eq!(rows, limits.sub_ledger_rows());
                                            prop_assert!(view.caller.rows >= rows);
                                        }
                                        Budget::Namespace => {
                                            prop_assert_eq!(rows, limits.ledger_rows());
                                            prop_assert!(view.rows >= rows);
                                        }
                                        other => prop_assert!(false, "a budget the model does not know: {:?}", other),
                                    }
                                }
                                other => prop_assert!(false, "unexpected {:?}", other),
                            }
                        }
                    }
                }
                Op::Restore(back) => {
                    let (old, keys, old_ledger, _, old_asked) = snapshots[snapshots.len().saturating_sub(back)].clone();
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
                    ledger = old_ledger;
                }
                Op::RestoreWitness(back) => {
                    witness = snapshots[snapshots.len().saturating_sub(back)].3;
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
                        Err(other) => prop_assert!(false, "a floor refusal the model does not know: {:?}", other),
                    }
                }
                Op::Freeze => state = state.with_status(NamespaceStatus::Frozen),
                Op::Unfreeze => state = state.with_status(NamespaceStatus::Active),
            }
            snapshots.push((state, by_key.clone(), ledger.clone(), witness, asked));
            // Every ID below `next` may be used; none at or above it was
            // granted, even after a restore.
            if let Some((_, &last)) = granted.iter().next_back() {
                prop_assert!(u128::from(last) < state.next());
            }
            // Every request the ledger holds is derived exactly as granted.
            for span in ledger.spans.values() {
                let who = u8::from(span.owner().as_str() == "generator-b");
                let inc: u8 = span.incarnation().as_str()[3..].parse().unwrap();
                for i in 0..span.grants() {
                    let g = span.grant(name, i).unwrap();
                    let id = g.request_id.as_str();
                    let req: u8 = id[1..].parse().unwrap();
                    prop_assert_eq!(by_key.get(&(who, inc, req)), Some(&g));
                }
            }
        }
    }
}
