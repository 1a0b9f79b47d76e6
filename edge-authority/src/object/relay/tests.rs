//! The relay object's logic against the namespace object's own logic (the
//! in-memory SQLite stand-in, screened and recorded by a [`RelayDesk`] as
//! its driver does): what the Durable Objects run, without the runtime.

use std::collections::BTreeSet;

use rangeid_core::names::{Incarnation, RequestId};
use rangeid_core::GrantRequest;

use super::*;
use crate::api::RelaysSetting;
use crate::object::relays::RelayDesk;
use crate::object::store::mem::MemSql;
use crate::object::tests::{create_req, db, ns, run, T0};

const LEASE: u64 = 1_000;

struct World {
    db: MemSql,
    desk: RelayDesk,
    relay: RelayRun,
    next_random: u8,
}

fn region(r: &str) -> Region {
    Region::new(r).unwrap()
}

impl World {
    fn new(max: u64, max_count: u64) -> World {
        let db = db();
        let mut desk = RelayDesk::new(LEASE, T0).unwrap();
        serve(&mut desk, &db, &create_req("orders", 1, max, max_count), T0);
        let relay = RelayRun::new(ns("orders"), region("weur"), LEASE, [1; 16], T0).unwrap();
        World {
            db,
            desk,
            relay,
            next_random: 2,
        }
    }

    fn random(&mut self) -> [u8; 16] {
        self.next_random += 1;
        [self.next_random; 16]
    }

    fn set_relays(&mut self, to: RelaysSetting, now: i64) -> HttpReply {
        let r = ObjectRequest::SetRelays {
            namespace: ns("orders"),
            relays: to,
            reason: "r".into(),
            actor: "ops".into(),
        };
        serve(&mut self.desk, &self.db, &r, now)
    }

    /// A generator's request through the relay, every step pumped with the
    /// namespace object answering at once: the generator's answer, if one
    /// came by `now`.
    fn ask(
        &mut self,
        handle: u64,
        owner: &str,
        inc: &str,
        id: &str,
        count: u64,
        now: i64,
    ) -> Option<HttpReply> {
        let random = self.random();
        self.relay
            .request(handle, owner, gen(inc, id, count), random, now);
        self.pump(now)
            .into_iter()
            .find(|(h, _)| *h == handle)
            .map(|(_, r)| r)
    }

    /// As [`World::ask`], but time runs on (to each deadline the relay
    /// names, the object answering at once) until the answer comes: it, and
    /// when.
    fn ask_waiting(
        &mut self,
        handle: u64,
        inc: &str,
        id: &str,
        count: u64,
        mut now: i64,
    ) -> (HttpReply, i64) {
        if let Some(r) = self.ask(handle, "svc", inc, id, count, now) {
            return (r, now);
        }
        for _ in 0..1_000 {
            now = self.relay.next_deadline().unwrap_or(now + 1).max(now + 1);
            if let Some((_, r)) = self.pump(now).into_iter().find(|(h, _)| *h == handle) {
                return (r, now);
            }
        }
        panic!("request {handle} never answered");
    }

    /// Polls until nothing is left to send: every attempt answered by the
    /// namespace object; the generators' answers.
    fn pump(&mut self, now: i64) -> Vec<(u64, HttpReply)> {
        let mut answers = Vec::new();
        loop {
            let steps = self.relay.poll(now);
            if steps.is_empty() {
                return answers;
            }
            for step in steps {
                match step {
                    Step::Send { ticket, request } => {
                        let reply = serve(&mut self.desk, &self.db, &request, now);
                        self.relay.root_reply(ticket, Some(&reply), now);
                    }
                    Step::Answer { handle, reply } => answers.push((handle, reply)),
                    // Reports reach the object as the driver sends them.
                    Step::Report { batch, request } => {
                        let reply = serve(&mut self.desk, &self.db, &request, now);
                        if reply.status != 200 {
                            self.relay.report_failed(batch, now);
                        }
                    }
                }
            }
        }
    }
}

/// The namespace object as its driver serves a request: screened, run,
/// recorded, all at `now`.
fn serve(desk: &mut RelayDesk, db: &MemSql, r: &ObjectRequest, now: i64) -> HttpReply {
    if let Err(e) = desk.screen(db, r, now) {
        return e.reply();
    }
    let reply = run(db, r, now).reply;
    let _ = desk.answered(db, r, reply.status, now, true);
    reply
}

fn gen(inc: &str, id: &str, count: u64) -> GrantRequest {
    GrantRequest {
        namespace: ns("orders"),
        incarnation: Incarnation::new(inc).unwrap(),
        request_id: RequestId::new(id).unwrap(),
        count,
    }
}

fn body(r: &HttpReply) -> serde_json::Value {
    serde_json::from_str(&r.body).unwrap()
}

/// `[start, end)` of a 200.
fn range(r: &HttpReply) -> (u64, u64) {
    assert_eq!(r.status, 200, "{}", r.body);
    let b = body(r);
    let n = |k: &str| b[k].as_str().unwrap().parse::<u64>().unwrap();
    (n("start"), n("end"))
}

#[test]
fn generators_get_disjoint_sub_ranges_of_what_the_object_granted_the_relay() {
    let mut w = World::new(10_000_000, 100_000);
    w.set_relays(RelaysSetting::On, T0);
    let mut got = Vec::new();
    for g in 0..20u64 {
        let reply = w
            .ask(
                g,
                &format!("svc-{g}"),
                &format!("gen{g}"),
                "r1",
                100 + g,
                T0 + 1,
            )
            .unwrap();
        got.push(range(&reply));
        // A retry gets the same sub-range, marked replayed.
        let again = w
            .ask(
                100 + g,
                &format!("svc-{g}"),
                &format!("gen{g}"),
                "r1",
                100 + g,
                T0 + 1,
            )
            .unwrap();
        assert_eq!(range(&again), range(&reply));
        assert_eq!(body(&again)["replayed"], true);
    }
    got.sort();
    for pair in got.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "{pair:?} overlap");
    }
    // The object's ledger holds the relay's grants only, under its sub;
    // every sub-range lies inside one of them.
    let (_, grants) = crate::object::tests::call(
        &w.db,
        ObjectRequest::Grants {
            namespace: ns("orders"),
            limit: 100,
            before: None,
        },
    );
    let roots: Vec<(u64, u64)> = grants["grants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            assert_eq!(g["sub"], "relay@weur");
            let n = |k: &str| g[k].as_str().unwrap().parse::<u64>().unwrap();
            (n("start"), n("end"))
        })
        .collect();
    assert!(!roots.is_empty());
    for (s, e) in &got {
        assert!(
            roots.iter().any(|(rs, re)| rs <= s && e <= re),
            "{s}..{e} outside {roots:?}"
        );
    }
    // Before the report is due, a lookup names the relay; once the relay
    // reported (its interval passed), the generator.
    let look = |w: &World, id: u64| {
        crate::object::tests::call(
            &w.db,
            ObjectRequest::Lookup {
                namespace: ns("orders"),
                id: rangeid_core::wire::DecU64(id),
            },
        )
        .1
    };
    let (s0, _) = got[7];
    assert_eq!(look(&w, s0)["relay"]["reported"], false);
    w.pump(T0 + 60_000);
    for (g, (s, e)) in got.iter().enumerate() {
        let v = look(&w, *s + (e - s) / 2);
        assert_eq!(v["relay"]["reported"], true, "{v}");
        assert_eq!(v["relay"]["sub"], "relay@weur");
        // Sorted by start, as the generators asked in order.
        assert_eq!(v["sub"], format!("svc-{g}"), "{v}");
        assert_eq!(v["incarnation"], format!("gen{g}"));
        assert_eq!(v["requestId"], "r1");
    }
}

#[test]
fn with_relays_off_the_relay_stops_and_sends_generators_to_the_object_then_revives() {
    let mut w = World::new(10_000_000, 100_000);
    // Never on: the object refuses the relay, which says so.
    let reply = w.ask(1, "svc", "gen1", "r1", 10, T0).unwrap();
    assert_eq!(reply.status, 503);
    assert_eq!(reply.header(ROUTE_HEADER), Some("object"));
    assert!(w.relay.relay().stopped());
    let first = *w.relay.relay().incarnation();
    // On: the next request revives the relay under a new incarnation.
    w.set_relays(RelaysSetting::On, T0 + 1);
    let reply = w.ask(2, "svc", "gen1", "r1", 10, T0 + 2).unwrap();
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_ne!(*w.relay.relay().incarnation(), first);
    assert_eq!(w.relay.relay().stats().revivals, 1);
}

#[test]
fn a_revocation_closes_the_named_incarnation_and_the_object_stops_waiting() {
    let mut w = World::new(10_000_000, 100_000);
    w.set_relays(RelaysSetting::On, T0);
    let t = T0 + 10 * LEASE as i64;
    assert_eq!(w.ask(1, "svc", "gen1", "r1", 10, t).unwrap().status, 200);
    let held = *w.relay.relay().incarnation();
    assert!(w.relay.relay().stats().held > 0);
    // A freeze commits; the object waits for the relay, and knows whom to
    // revoke: this relay object's region, with its incarnation.
    let freeze = ObjectRequest::SetFrozen {
        namespace: ns("orders"),
        frozen: true,
        reason: "r".into(),
        actor: "ops".into(),
    };
    let status = run(&w.db, &freeze, t + 1).reply.status;
    let mut act = w
        .desk
        .answered(&w.db, &freeze, status, t + 1, true)
        .expect("a relay holds a grant");
    assert!(w.desk.wait_ms(&mut act, t + 1).is_some());
    let mut asked = BTreeSet::new();
    let targets = w.desk.to_revoke(&act, &asked, t + 1);
    assert_eq!(targets, vec![(region("weur"), vec![held])]);
    // Another incarnation named: nothing closes, the relay keeps its range.
    let other = Incarnation::new("not-this-one").unwrap();
    assert_eq!(w.relay.revoke(&[other], [9; 16], t + 2).closed, None);
    assert!(w.relay.relay().stats().held > 0);
    // Its own: closed, what it held abandoned.
    let revoked = w.relay.revoke(&targets[0].1, [9; 16], t + 2);
    assert_eq!(revoked.closed, Some(held));
    assert_eq!(w.relay.relay().stats().held, 0);
    w.desk.revoked(held, t + 2);
    asked.insert(held);
    assert_eq!(
        w.desk.wait_ms(&mut act, t + 3),
        None,
        "acknowledged at once"
    );
    assert!(w.desk.to_revoke(&act, &asked, t + 3).is_empty());
    // Frozen: the relay, which holds nothing now, says so.
    let reply = w.ask(2, "svc", "gen2", "r1", 10, t + 4).unwrap();
    assert_eq!(
        body(&reply)["error"]["code"],
        "namespace_frozen",
        "{}",
        reply.body
    );
}

#[test]
fn no_token_takes_ranges_under_a_relay_objects_sub() {
    let mut w = World::new(10_000_000, 100_000);
    w.set_relays(RelaysSetting::On, T0);
    let served = w.ask(1, "svc", "g1", "r1", 10, T0 + 1).unwrap();
    assert_eq!(served.status, 200, "{}", served.body);
    // The relay object's own root request, as its ledger row shows it: a
    // token whose sub is the relay's asks for it again, to be replayed the
    // range the relay is cutting up.
    let inc = w.relay.relay().incarnation().as_str().to_owned();
    for relay in [false, true] {
        let mut request =
            crate::object::tests::grant_as(&relay_owner(&region("weur")), "orders", &inc, "r1", 1);
        if let ObjectRequest::Grant { relay: r, .. } = &mut request {
            *r = relay;
        }
        let reply = serve(&mut w.desk, &w.db, &request, T0 + 2);
        assert_eq!(reply.status, 403, "{}", reply.body);
        assert!(reply.body.contains("reserved"), "{}", reply.body);
    }
    assert!(reserved_owner("relay@anything"));
    assert!(!reserved_owner("svc-relay@x"));
}

#[test]
fn a_token_relay_is_never_a_revocation_target() {
    let mut w = World::new(10_000_000, 100_000);
    w.set_relays(RelaysSetting::On, T0);
    let t = T0 + 10 * LEASE as i64;
    let token_relay =
        crate::object::tests::relay_grant_as("relay-eu", "orders", "tok-relay", "r1", 10);
    assert_eq!(serve(&mut w.desk, &w.db, &token_relay, t).status, 200);
    let act = w
        .desk
        .begin(crate::object::relays::Stored::On, t + 1)
        .unwrap();
    assert!(w.desk.to_revoke(&act, &BTreeSet::new(), t + 1).is_empty());
}

#[test]
fn at_exhaustion_the_relay_says_what_it_can_still_grant() {
    // 1,000 IDs; the relay's ranges are at most maxCount (100).
    let mut w = World::new(1_000, 100);
    w.set_relays(RelaysSetting::On, T0);
    let mut issued = 0u64;
    let mut handle = 0u64;
    let mut now = T0 + 1;
    loop {
        handle += 1;
        now += 1;
        let (reply, at) = w.ask_waiting(handle, "gen1", &format!("r{handle}"), 30, now);
        now = at;
        if reply.status == 200 {
            let (s, e) = range(&reply);
            issued += e - s;
            continue;
        }
        let b = body(&reply);
        assert_eq!(b["error"]["code"], "namespace_exhausted", "{}", reply.body);
        let remaining: u64 = b["error"]["remaining"].as_str().unwrap().parse().unwrap();
        assert!(remaining < 30, "remaining {remaining}");
        if remaining == 0 {
            break;
        }
        // Asking for exactly what remains is served.
        handle += 1;
        let (last, at) = w.ask_waiting(handle, "gen1", &format!("r{handle}"), remaining, now);
        now = at;
        let (s, e) = range(&last);
        issued += e - s;
    }
    // Every ID handed out once, or abandoned by the relay (a range whose
    // serving time ran out while the test's clock ran on).
    let abandoned = w.relay.relay().stats().abandoned;
    assert_eq!(
        issued + abandoned,
        1_000,
        "issued {issued}, abandoned {abandoned}"
    );
    assert!(issued >= 900, "issued {issued}");
    assert!(handle < 200);
}

#[test]
fn a_relay_that_cannot_reach_the_object_answers_unavailable_after_its_park_time_not_exhausted() {
    let mut w = World::new(10_000_000, 100_000);
    w.set_relays(RelaysSetting::On, T0);
    let random = w.random();
    w.relay.request(1, "svc", gen("gen1", "r1", 10), random, T0);
    let mut answered = None;
    let mut now = T0;
    while answered.is_none() && now < T0 + 10_000 {
        for step in w.relay.poll(now) {
            match step {
                Step::Send { ticket, .. } => w.relay.root_reply(ticket, None, now),
                Step::Answer { handle, reply } => answered = Some((handle, reply, now)),
                Step::Report { .. } => {}
            }
        }
        now = w.relay.next_deadline().unwrap_or(now + 1).max(now + 1);
    }
    let (handle, reply, at) = answered.expect("answered");
    assert_eq!(handle, 1);
    assert_eq!(reply.status, 503);
    assert_eq!(body(&reply)["error"]["code"], "unavailable");
    assert_eq!(
        reply.header(ROUTE_HEADER),
        None,
        "not stopped: stays routed here"
    );
    assert!(at - T0 >= 2_000, "parked for park_ms ({} ms)", at - T0);
}

#[test]
fn messages_and_names() {
    let r = RelayRequest::Revoke {
        namespace: ns("orders"),
        region: region("weur"),
        incarnations: vec![Incarnation::new("abc").unwrap()],
    };
    let text = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<RelayRequest>(&text).unwrap(), r);
    assert_eq!(object_name(&ns("orders"), &region("weur")), "weur/orders");
    assert!(!rangeid_core::Namespace::PATTERN.contains('/'));
    assert_eq!(relay_owner(&region("weur")), "relay@weur");
}
