use super::*;
use crate::code::ErrorCode;
use crate::lease::Outgoing;
use crate::names::RequestId;
use crate::range::Range;
use crate::reply::{Message, Refused, ReplyCode};
use std::vec::Vec;

fn ns() -> Namespace {
    Namespace::new("orders").unwrap()
}

fn config() -> RelayConfig {
    let mut c = RelayConfig::new(ns());
    c.upstream.min_range_size = 100;
    c.upstream.max_outstanding = 1;
    c.terms = RelayTerms::new(1_000).unwrap();
    c.park_ms = 50;
    c
}

fn at(ms: u64) -> Instant {
    Instant::from_ms(ms)
}

fn relay(c: RelayConfig) -> Relay {
    Relay::new(c, [1; 16], at(0)).unwrap()
}

fn gen_req(inc: &str, id: &str, count: u64) -> GrantRequest {
    GrantRequest {
        namespace: ns(),
        incarnation: Incarnation::new(inc).unwrap(),
        request_id: RequestId::new(id).unwrap(),
        count,
    }
}

fn sub(s: &str) -> Owner {
    Owner::new(s)
}

/// The relay's next attempt to the root at `now`.
fn to_root(r: &mut Relay, now: u64) -> Option<Outgoing> {
    loop {
        if let Action::Send(out) = r.poll_root(at(now))? {
            return Some(out);
        }
    }
}

fn root_grants(
    r: &mut Relay,
    out: &Outgoing,
    start: u64,
    remaining: Option<u64>,
    now: u64,
) -> Handled {
    let reply = Reply::Grant(GrantReply {
        grant: Grant {
            namespace: out.request.namespace,
            incarnation: out.request.incarnation,
            request_id: out.request.request_id,
            range: Range::with_count(start, out.request.count).unwrap(),
        },
        replayed: false,
        capacity: Capacity {
            max_count: Some(1_000),
            remaining,
        },
    });
    r.handle_root_reply(out.ticket, &reply, at(now))
}

fn refused(code: ErrorCode, remaining: Option<u64>, max_count: Option<u64>) -> Reply {
    Reply::Refused(Refused {
        code: ReplyCode::Known(code),
        status: code.http_status(),
        message: Message::new("m"),
        remaining,
        max_count,
        retry_after_ms: None,
    })
}

/// A generator's request, then the object's `403` to the relay's attempt:
/// forbidden is final for the relay, which stops and answers unavailable.
fn stop_by_forbidden(r: &mut Relay) {
    r.handle_request(1, sub("a"), gen_req("g", "r1", 10), at(0));
    let out = to_root(r, 0).unwrap();
    r.handle_root_reply(
        out.ticket,
        &refused(ErrorCode::Forbidden, None, None),
        at(1),
    );
    assert!(r.stopped());
    assert_eq!(answers(r), [(1, Answer::Unavailable)]);
}

fn answers(r: &mut Relay) -> Vec<(u64, Answer)> {
    core::iter::from_fn(|| r.poll_answer()).collect()
}

fn range_of(a: &Answer) -> Range {
    match a {
        Answer::Grant(g) => g.grant.range,
        other => panic!("expected a grant, got {other:?}"),
    }
}

#[test]
fn sub_ranges_lie_inside_the_root_grant_and_replay_exactly() {
    let mut r = relay(config());
    r.handle_request(1, sub("a"), gen_req("g1", "r1", 10), at(0));
    assert!(answers(&mut r).is_empty(), "parked until a root grant");
    let out = to_root(&mut r, 0).unwrap();
    assert_eq!(out.request.incarnation, *r.incarnation());
    assert!(out.request.count >= 100);
    assert_eq!(
        root_grants(&mut r, &out, 5_000, Some(1_000_000), 3),
        Handled::Installed
    );
    let first = answers(&mut r);
    assert_eq!(first.len(), 1);
    let g = range_of(&first[0].1);
    assert_eq!((first[0].0, g.start(), g.count()), (1, 5_000, 10));
    // The same request again: the same range, replayed.
    r.handle_request(2, sub("a"), gen_req("g1", "r1", 10), at(4));
    let again = answers(&mut r);
    assert_eq!(range_of(&again[0].1), g);
    assert!(matches!(
        again[0].1,
        Answer::Grant(GrantReply { replayed: true, .. })
    ));
    // Another count under the same id is a conflict; another sub's same
    // key is another request.
    r.handle_request(3, sub("a"), gen_req("g1", "r1", 9), at(4));
    assert_eq!(answers(&mut r)[0].1, Answer::Refused(Refusal::Conflict));
    r.handle_request(4, sub("b"), gen_req("g1", "r1", 10), at(4));
    let theirs = range_of(&answers(&mut r)[0].1);
    assert_eq!(theirs.start(), 5_010);
    let s = r.stats();
    assert_eq!((s.sub_grants, s.replays, s.conflicts), (2, 1, 1));
    // Reported in a batch once the interval passes.
    assert_eq!(r.poll_report(at(5)), None);
    let batch = r.poll_report(at(2_003)).unwrap();
    assert_eq!(batch.grants.len(), 2);
    assert_eq!(batch.grants[0].relay, *r.incarnation());
    assert_eq!(batch.grants[1].grant.range, theirs);
}

#[test]
fn an_idle_relay_takes_no_more_ranges_until_a_generator_asks_again() {
    let mut r = relay(config());
    let serve = r.config().terms.serve_ms();
    r.handle_request(1, sub("a"), gen_req("g1", "r1", 10), at(0));
    let out = to_root(&mut r, 0).unwrap();
    root_grants(&mut r, &out, 5_000, Some(1 << 40), 1);
    assert_eq!(answers(&mut r).len(), 1);
    // Nobody asks for ten leases: whatever the relay held runs out, and it
    // sends nothing to the root from a lease after the last request.
    let mut now = 1;
    let mut sent_after = Vec::new();
    while now < 10 * serve {
        while let Some(action) = r.poll_root(at(now)) {
            if let Action::Send(out) = action {
                if now >= serve {
                    sent_after.push(now);
                }
                // The root grants whatever is asked, at once.
                root_grants(&mut r, &out, 1_000_000 + now, Some(1 << 40), now);
            }
        }
        assert!(r.idle(at(now)) || now < serve, "idle at {now}");
        now = r
            .next_deadline()
            .map_or(now + 1_000, |d| d.as_ms())
            .max(now + 1);
    }
    assert_eq!(sent_after, Vec::<u64>::new(), "ranges taken while idle");
    // A generator asks again: the relay asks the root, and serves it.
    r.handle_request(2, sub("a"), gen_req("g1", "r2", 10), at(now));
    assert!(!r.idle(at(now)));
    let out = to_root(&mut r, now).unwrap();
    root_grants(&mut r, &out, 9_000_000, Some(1 << 40), now);
    assert_eq!(answers(&mut r).len(), 1);
}

#[test]
fn the_replay_memory_is_bounded_and_then_a_retry_gets_a_new_range() {
    let mut c = config();
    c.replay_entries = 2;
    let mut r = relay(c);
    r.handle_request(1, sub("a"), gen_req("g", "r1", 5), at(0));
    let out = to_root(&mut r, 0).unwrap();
    root_grants(&mut r, &out, 100, None, 1);
    let g1 = range_of(&answers(&mut r)[0].1);
    for id in ["r2", "r3"] {
        r.handle_request(2, sub("a"), gen_req("g", id, 5), at(2));
    }
    answers(&mut r);
    r.handle_request(3, sub("a"), gen_req("g", "r1", 5), at(3));
    let later = range_of(&answers(&mut r)[0].1);
    assert_ne!(later, g1, "forgotten: a new range, never the old one again");
    assert!(!later.overlaps(&g1));
    assert_eq!(r.stats().forgotten, 2);
}

#[test]
fn counts_are_bounded_by_max_count_learned_from_the_root() {
    let mut r = relay(config());
    r.handle_request(1, sub("a"), gen_req("g", "r1", 5_000), at(0));
    let out = to_root(&mut r, 0).unwrap();
    assert!(out.request.count >= 5_000, "sized to hold the request");
    r.handle_root_reply(
        out.ticket,
        &refused(ErrorCode::InvalidRequest, None, Some(1_000)),
        at(2),
    );
    assert_eq!(
        answers(&mut r),
        [(1, Answer::Refused(Refusal::BadCount { max_count: 1_000 }))]
    );
    r.handle_request(2, sub("a"), gen_req("g", "r2", 0), at(3));
    assert_eq!(
        answers(&mut r)[0].1,
        Answer::Refused(Refusal::BadCount { max_count: 1_000 })
    );
}

#[test]
fn only_dry_is_unavailable_and_exhausted_says_what_it_can_still_grant() {
    let mut r = relay(config());
    r.handle_request(1, sub("a"), gen_req("g", "r1", 10), at(0));
    let out = to_root(&mut r, 0).unwrap();
    assert_eq!(out.request.count, 100);
    // No answer from the root: the request waits park_ms, then unavailable.
    r.tick(at(49));
    assert!(answers(&mut r).is_empty());
    r.tick(at(50));
    assert_eq!(answers(&mut r), [(1, Answer::Unavailable)]);
    // The root grants 100, then says it is exhausted.
    root_grants(&mut r, &out, 1, Some(0), 51);
    r.handle_request(2, sub("a"), gen_req("g", "r2", 95), at(52));
    assert_eq!(range_of(&answers(&mut r)[0].1).count(), 95);
    r.handle_request(3, sub("a"), gen_req("g", "r3", 10), at(53));
    let out = to_root(&mut r, 53).unwrap();
    r.handle_root_reply(
        out.ticket,
        &refused(ErrorCode::NamespaceExhausted, Some(0), None),
        at(54),
    );
    // 5 held in one piece: exhausted, with what one request can still get.
    assert_eq!(
        answers(&mut r),
        [(3, Answer::Refused(Refusal::Exhausted { remaining: 5 }))]
    );
    r.handle_request(4, sub("a"), gen_req("g", "r4", 5), at(55));
    assert_eq!(range_of(&answers(&mut r)[0].1).count(), 5);
    r.handle_request(5, sub("a"), gen_req("g", "r5", 1), at(56));
    assert_eq!(
        answers(&mut r),
        [(5, Answer::Refused(Refusal::Exhausted { remaining: 0 }))]
    );
}

#[test]
fn a_frozen_root_is_passed_on_once_what_is_held_is_gone() {
    let mut r = relay(config());
    r.handle_request(1, sub("a"), gen_req("g", "r1", 10), at(0));
    let out = to_root(&mut r, 0).unwrap();
    r.handle_root_reply(
        out.ticket,
        &refused(ErrorCode::NamespaceFrozen, None, None),
        at(1),
    );
    assert_eq!(answers(&mut r), [(1, Answer::Refused(Refusal::Frozen))]);
    // With no sub-grant to report, the refusal is still reported: an
    // empty batch within the interval, and none once nothing changed.
    assert_eq!(r.poll_report(at(2)), None);
    let batch = r.poll_report(at(2_002)).unwrap();
    assert!(batch.grants.is_empty());
    assert_eq!(r.stats().frozen, 1);
    assert_eq!(r.poll_report(at(10_000)), None);
    // A batch that failed is sent again, its view with it.
    r.report_failed(batch, at(10_001));
    assert!(r.poll_report(at(12_001)).is_some());
    assert_eq!(r.poll_report(at(20_000)), None);
}

#[test]
fn nothing_is_served_from_a_root_grant_past_its_lease() {
    let c = config();
    let serve = c.terms.serve_ms();
    let mut r = relay(c);
    r.handle_request(1, sub("a"), gen_req("g", "r1", 10), at(0));
    let out = to_root(&mut r, 0).unwrap();
    root_grants(&mut r, &out, 1, None, 10);
    assert_eq!(range_of(&answers(&mut r)[0].1).start(), 1);
    r.handle_request(2, sub("a"), gen_req("g", "r2", 10), at(serve - 1));
    assert_eq!(range_of(&answers(&mut r)[0].1).start(), 11);
    // At serve_ms after the request was first sent, the rest is gone.
    r.handle_request(3, sub("a"), gen_req("g", "r3", 10), at(serve));
    assert!(answers(&mut r).is_empty(), "parked: nothing held");
    assert_eq!(r.stats().abandoned, 80);
    // A grant that arrives after its lease ran out is not installed.
    let out = to_root(&mut r, serve).unwrap();
    assert_eq!(
        root_grants(&mut r, &out, 500, None, 2 * serve),
        Handled::Expired
    );
    assert!(answers(&mut r)
        .iter()
        .all(|(_, a)| *a == Answer::Unavailable));
    assert_eq!(r.next_deadline().map(|d| d > at(2 * serve)), Some(true));
}

#[test]
fn a_revocation_closes_the_incarnation_and_a_late_grant_never_installs() {
    let mut r = relay(config());
    r.handle_request(1, sub("a"), gen_req("g", "r1", 10), at(0));
    let out = to_root(&mut r, 0).unwrap();
    root_grants(&mut r, &out, 1, None, 1);
    answers(&mut r);
    r.handle_request(2, sub("a"), gen_req("g", "r2", 10), at(2));
    answers(&mut r);
    // A request in flight when the revocation comes.
    r.handle_request(3, sub("a"), gen_req("g", "r3", 200), at(3));
    let in_flight = to_root(&mut r, 3).unwrap();
    let old = *r.incarnation();
    assert_eq!(r.handle_revoke([2; 16], at(4)), old);
    assert_ne!(*r.incarnation(), old);
    assert_eq!(r.stats().abandoned, 80);
    assert_eq!(
        root_grants(&mut r, &in_flight, 1_000, None, 5),
        Handled::NotOurs(crate::lease::GrantRefusal::WrongIncarnation)
    );
    assert!(answers(&mut r).is_empty());
    // The waiting request is served under the new incarnation.
    let fresh = to_root(&mut r, 5).unwrap();
    assert_eq!(fresh.request.incarnation, *r.incarnation());
    root_grants(&mut r, &fresh, 2_000, None, 6);
    assert_eq!(range_of(&answers(&mut r)[0].1).start(), 2_000);
    // A retry of a request handed out before the revocation still replays.
    r.handle_request(4, sub("a"), gen_req("g", "r2", 10), at(7));
    assert_eq!(range_of(&answers(&mut r)[0].1).start(), 11);
}

#[test]
fn a_late_refusal_to_the_closed_incarnation_does_not_stop_the_new_one() {
    let mut r = relay(config());
    r.handle_request(1, sub("a"), gen_req("g", "r1", 10), at(0));
    let before = to_root(&mut r, 0).unwrap();
    r.handle_revoke([2; 16], at(1));
    let after = to_root(&mut r, 1).unwrap();
    assert_eq!(after.request.incarnation, *r.incarnation());
    assert_ne!(
        after.ticket, before.ticket,
        "the new request has its own ticket"
    );
    // The object refuses the closed incarnation's attempt (revoked): stale
    // for the new incarnation, which goes on.
    let stale = r.handle_root_reply(
        before.ticket,
        &refused(ErrorCode::Forbidden, None, None),
        at(2),
    );
    assert_eq!(stale, Handled::Stale);
    assert!(!r.stopped());
    root_grants(&mut r, &after, 500, None, 3);
    assert_eq!(range_of(&answers(&mut r)[0].1).start(), 500);
}

#[test]
fn the_gate_waits_for_every_relay_it_knows_and_for_a_lease_past_its_start() {
    let terms = RelayTerms::new(1_000).unwrap();
    let wait = terms.wait_ms();
    let (a, b) = (
        Incarnation::new("relay-a").unwrap(),
        Incarnation::new("relay-b").unwrap(),
    );
    let mut gate = RelayGate::new(terms, at(100));
    // Right after a start (a restore may have forgotten relays): wait.
    let mut act = gate.begin(at(150));
    assert_eq!(
        gate.check(&mut act, at(150)),
        ActStatus::Wait {
            until: at(100 + wait),
            waiting_for: 0
        }
    );
    assert_eq!(gate.check(&mut act, at(100 + wait)), ActStatus::Acknowledge);
    gate.granted(a, at(5_000));
    gate.granted(b, at(5_500));
    let mut act = gate.begin(at(6_000));
    assert_eq!(act.pending().count(), 2);
    // A grant after the act does not hold it up (for a floor it is above
    // the floor; a freeze grants none).
    gate.granted(a, at(6_001));
    assert!(matches!(
        gate.check(&mut act, at(6_000)),
        ActStatus::Wait { waiting_for: 2, .. }
    ));
    // b acknowledges a revocation; a cannot be reached and is waited out.
    gate.revoked(b, at(6_000));
    assert!(gate.is_revoked(&b));
    assert_eq!(
        gate.check(&mut act, at(6_000)),
        ActStatus::Wait {
            until: at(5_000 + wait),
            waiting_for: 1
        }
    );
    assert_eq!(gate.live(at(6_000)).collect::<Vec<_>>(), [&a]);
    assert_eq!(
        gate.check(&mut act, at(5_000 + wait)),
        ActStatus::Acknowledge
    );
    gate.prune(at(6_001 + wait));
    assert!(gate.is_empty());
}

#[test]
fn the_object_admits_relay_requests_only_while_relays_are_on_and_unrevoked() {
    let mut gate = RelayGate::new(RelayTerms::DEFAULT, at(0));
    let a = Incarnation::new("relay-a").unwrap();
    assert_eq!(gate.admit(true, &a), Ok(()));
    assert_eq!(gate.admit(false, &a), Err(RelayRefusal::RelaysOff));
    gate.revoked(a, at(0));
    assert_eq!(gate.admit(true, &a), Err(RelayRefusal::Revoked));
    assert_eq!(RelayRefusal::Revoked.code(), ErrorCode::Forbidden);
    // For the relay, forbidden is final: it stops, and answers unavailable.
    let mut r = relay(config());
    stop_by_forbidden(&mut r);
}

#[test]
fn a_relay_with_a_longer_lease_is_waited_out_for_all_of_it() {
    let short = RelayTerms::new(1_000).unwrap();
    let long = RelayTerms::new(5_000).unwrap();
    let mut gate = RelayGate::new(short, at(0));
    let a = Incarnation::new("relay-a").unwrap();
    gate.widen(long);
    gate.granted(a, at(100_000));
    let mut act = gate.begin(at(100_010));
    assert_eq!(
        gate.check(&mut act, at(100_000 + short.wait_ms())),
        ActStatus::Wait {
            until: at(100_000 + long.wait_ms()),
            waiting_for: 1
        }
    );
    assert_eq!(
        gate.check(&mut act, at(100_000 + long.wait_ms())),
        ActStatus::Acknowledge
    );
    // The wait never shrinks; and a start waits the widest lease.
    gate.widen(short);
    assert_eq!(gate.terms(), long);
    let mut start = RelayGate::new(short, at(0));
    start.widen(long);
    let mut act = start.begin(at(1));
    assert_eq!(
        start.check(&mut act, at(short.wait_ms())),
        ActStatus::Wait {
            until: at(long.wait_ms()),
            waiting_for: 0
        }
    );
}

#[test]
fn a_revocation_outlives_a_prune_for_a_lease() {
    let terms = RelayTerms::new(1_000).unwrap();
    let wait = terms.wait_ms();
    let mut gate = RelayGate::new(terms, at(0));
    let (a, b) = (
        Incarnation::new("relay-a").unwrap(),
        Incarnation::new("relay-b").unwrap(),
    );
    gate.granted(a, at(100));
    // b was never granted to in this run of the object.
    gate.revoked(a, at(5_000));
    gate.revoked(b, at(5_000));
    gate.prune(at(5_000 + wait - 1));
    assert_eq!(gate.admit(true, &a), Err(RelayRefusal::Revoked));
    assert_eq!(gate.admit(true, &b), Err(RelayRefusal::Revoked));
    // Revoked relays hold nothing an act must wait for.
    assert_eq!(gate.begin(at(5_001)).pending().count(), 0);
    gate.prune(at(5_000 + wait));
    assert!(gate.is_empty(), "forgotten a lease after the revocation");
}

#[test]
fn a_bad_park_time_is_refused() {
    let mut c = config();
    c.park_ms = 0;
    assert_eq!(
        Relay::new(c, [0; 16], at(0)).err(),
        Some(RelayConfigError::ParkMs)
    );
    let mut c = config();
    c.upstream.min_range_size = 0;
    assert!(matches!(
        Relay::new(c, [0; 16], at(0)),
        Err(RelayConfigError::Upstream(_))
    ));
}

#[test]
fn a_stopped_relay_revives_under_a_new_incarnation_and_serves_again() {
    let mut r = relay(config());
    let first = *r.incarnation();
    // Not stopped: nothing to revive.
    assert!(!r.revive([2; 16], at(0)));
    assert_eq!(*r.incarnation(), first);
    stop_by_forbidden(&mut r);
    // Relays back on: a request reaches it again; the driver revives the
    // relay first, then hands it the request.
    assert!(r.revive([3; 16], at(2)));
    r.handle_request(2, sub("a"), gen_req("g", "r2", 10), at(2));
    assert!(!r.stopped());
    assert_ne!(*r.incarnation(), first);
    assert_eq!(r.stats().revivals, 1);
    let out = to_root(&mut r, 2).unwrap();
    assert_eq!(out.request.incarnation, *r.incarnation());
    // The late grant to the stopped incarnation would not install; the new
    // one does, and the waiting request is served from it.
    root_grants(&mut r, &out, 500, None, 3);
    let got = answers(&mut r);
    assert_eq!(got.len(), 1);
    match got[0] {
        (2, Answer::Grant(g)) => assert_eq!(g.grant.range.start(), 500),
        ref other => panic!("{other:?}"),
    }
}

#[test]
fn a_revocation_of_another_incarnation_changes_nothing() {
    let mut r = relay(config());
    r.handle_request(1, sub("a"), gen_req("g", "r1", 10), at(0));
    let out = to_root(&mut r, 0).unwrap();
    root_grants(&mut r, &out, 1_000, None, 1);
    let _ = answers(&mut r);
    let held = r.stats().held;
    assert!(held > 0);
    let mine = *r.incarnation();
    let stale = Incarnation::new("someone-else").unwrap();
    assert_eq!(r.handle_revoke_of(&[stale], [7; 16], at(2)), None);
    assert_eq!((*r.incarnation(), r.stats().held), (mine, held));
    // Named: closed, what it held abandoned, a new incarnation.
    assert_eq!(
        r.handle_revoke_of(&[stale, mine], [7; 16], at(3)),
        Some(mine)
    );
    assert_ne!(*r.incarnation(), mine);
    assert_eq!(r.stats().held, 0);
    assert_eq!(r.stats().revocations, 1);
}

#[test]
fn a_config_for_a_lease_sizes_ranges_to_what_may_be_served() {
    let terms = RelayTerms::new(3_000).unwrap();
    let c = RelayConfig::with_terms(ns(), terms);
    assert_eq!(c.terms, terms);
    assert_eq!(c.upstream.target_lifetime_ms, terms.serve_ms() / 4);
    assert_eq!(c.upstream.prefetch_lead_ms, terms.serve_ms() / 10);
    assert!(Relay::new(c, [0; 16], at(0)).is_ok());
}
