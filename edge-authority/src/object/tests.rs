use std::cell::Cell;

use super::registry::{RegistryPage, RegistryRequest};
use super::*;
use crate::object::store::mem::MemSql;
use crate::object::store::{migrate, Value, NAMESPACE_MIGRATIONS, REGISTRY_MIGRATIONS};
use rangeid_core::fence::{Phase, Witnessed};
use rangeid_core::{Incarnation, RequestId};
use serde_json::Value as Json;

thread_local! {
    /// The witness's mark in a test (each test runs on its own thread).
    pub(crate) static WITNESS: Cell<u128> = const { Cell::new(0) };
}

/// Runs a request as the Worker's driver does ([`serve::Serving`]): a raise
/// goes to the witness ([`raise`]), an export reads it, and the request is
/// handled again.
pub(crate) fn run(db: &impl Sql, r: &ObjectRequest, now: i64) -> Outcome {
    let mut serving = serve::Serving::new(r);
    loop {
        match serving.poll(db, 0, now) {
            serve::Action::Finish(f) => {
                return Outcome {
                    reply: f.reply,
                    granted: f.granted,
                    refused: f.counted.filter(|_| f.refused_grant),
                }
            }
            serve::Action::Raise { target, .. } => {
                raise(db, target);
                serving.handle_raised(Ok(true));
            }
            serve::Action::ReadWitness => {
                let got = Witnessed::read(WITNESS.with(Cell::get));
                serving.handle_read(db, Ok(got), now);
            }
            serve::Action::PushSummary => {}
        }
    }
}

/// The test's witness, raised to at least `target`: its answer.
pub(super) fn witness_raise(target: u128) -> Witnessed {
    WITNESS.with(|w| {
        let was = w.get();
        w.set(rangeid_core::fence::witness_raise(was, target));
        Witnessed {
            mark: w.get(),
            was: Some(was),
        }
    })
}

/// A raise as the driver makes it ([`raise::Raising`]): the mark asked for
/// is recorded, the witness raises, and its answer is applied.
pub(super) fn raise(db: &impl Sql, target: u128) -> grant::Heard {
    let mut raising = raise::Raising::new(target, None);
    loop {
        match raising.poll(db).unwrap() {
            raise::RaiseAction::Ask { to } => {
                raising.handle_answer(db, witness_raise(to), T0).unwrap();
            }
            raise::RaiseAction::Done(heard) => return heard.expect("no namespace"),
            raise::RaiseAction::GaveUp => panic!("the witness stayed below the fence"),
        }
    }
}

/// A start (or check-in) as the driver makes it: the witness is read and
/// its mark applied; a witness below the fence is raised back first.
pub(super) fn check(db: &impl Sql, now: i64) -> grant::Heard {
    let sent_at = load_any(db).unwrap().unwrap().state.fence();
    let got = Witnessed::read(WITNESS.with(Cell::get));
    let heard = grant::witnessed(db, sent_at, got, Phase::Starting, now)
        .unwrap()
        .unwrap();
    match heard.raise_back {
        Some(mark) => raise(db, mark),
        None => heard,
    }
}

pub(crate) const T0: i64 = 1_800_000_000_000;

pub(super) fn ns(s: &str) -> Namespace {
    Namespace::new(s).unwrap()
}

pub(super) fn db() -> MemSql {
    let db = MemSql::new();
    migrate(&db, NAMESPACE_MIGRATIONS).unwrap();
    db
}

pub(super) fn create_req(name: &str, first: u64, max: u64, max_count: u64) -> ObjectRequest {
    ObjectRequest::Create {
        namespace: ns(name),
        first: DecU64(first),
        max: DecU64(max),
        max_count,
        actor: "ops".into(),
    }
}

pub(super) fn grant_req(name: &str, inc: &str, id: &str, count: u64) -> ObjectRequest {
    grant_as("svc", name, inc, id, count)
}

pub(crate) fn grant_as(owner: &str, name: &str, inc: &str, id: &str, count: u64) -> ObjectRequest {
    ObjectRequest::Grant {
        request: GrantRequest {
            namespace: ns(name),
            incarnation: Incarnation::new(inc).unwrap(),
            request_id: RequestId::new(id).unwrap(),
            count,
        },
        owner: owner.into(),
        relay: false,
        via: None,
        lease_ms: None,
    }
}

/// [`grant_as`] from a relay (a token of the `relay` role).
pub(crate) fn relay_grant_as(
    owner: &str,
    name: &str,
    inc: &str,
    id: &str,
    count: u64,
) -> ObjectRequest {
    let mut request = grant_as(owner, name, inc, id, count);
    if let ObjectRequest::Grant { relay, .. } = &mut request {
        *relay = true;
    }
    request
}

pub(super) fn body(o: &Outcome) -> Json {
    serde_json::from_str(&o.reply.body).unwrap()
}

pub(super) fn call(db: &MemSql, r: ObjectRequest) -> (u16, Json) {
    // Every request crosses the wire as JSON.
    let wire = serde_json::to_string(&r).unwrap();
    let back: ObjectRequest = serde_json::from_str(&wire).unwrap();
    assert_eq!(back, r);
    let o = run(db, &back, T0);
    (o.reply.status, body(&o))
}

pub(super) fn code(v: &Json) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

#[test]
fn seed_example_grant_replay_conflict() {
    let db = db();
    let (s, v) = call(&db, create_req("orders", 1001, u64::MAX, 10_000));
    assert_eq!((s, v["next"].as_str()), (201, Some("1001")));
    let (s, g) = call(&db, grant_req("orders", "A9", "r17", 10_000));
    assert_eq!(s, 200);
    assert_eq!(
        (g["start"].as_str(), g["end"].as_str()),
        (Some("1001"), Some("11001"))
    );
    assert_eq!(g["replayed"], false);
    let (s, r) = call(&db, grant_req("orders", "A9", "r17", 10_000));
    assert_eq!(
        (s, r["start"].as_str(), r["replayed"].as_bool()),
        (200, Some("1001"), Some(true))
    );
    let (s, c) = call(&db, grant_req("orders", "A9", "r17", 9_999));
    assert_eq!((s, code(&c)), (409, "request_conflict"));
    let (_, g2) = call(&db, grant_req("orders", "A9", "r18", 1));
    assert_eq!(g2["start"], "11001");
    let (_, sum) = call(
        &db,
        ObjectRequest::Summary {
            namespace: ns("orders"),
        },
    );
    assert_eq!(sum["next"], "11002");
    assert_eq!(sum["rangesGranted"], 2);
    assert_eq!(sum["idsGranted"], "10001");
    assert_eq!(sum["grantRate"]["lastMinute"]["ranges"], 2);
}

#[test]
fn missing_namespace_and_bad_counts() {
    let db = db();
    let (s, v) = call(&db, grant_req("nope", "a", "r", 1));
    assert_eq!((s, code(&v)), (404, "namespace_not_found"));
    let (s, v) = call(
        &db,
        ObjectRequest::Summary {
            namespace: ns("nope"),
        },
    );
    assert_eq!((s, code(&v)), (404, "namespace_not_found"));
    call(&db, create_req("n", 1, 100, 10));
    let (s, v) = call(&db, grant_req("n", "a", "r", 11));
    assert_eq!((s, code(&v)), (400, "invalid_request"));
    let (s, v) = call(&db, grant_req("n", "a", "r", 0));
    assert_eq!((s, code(&v)), (400, "invalid_request"));
    // Creating again with the same configuration is answered as done (a
    // lost reply retried); with another it is refused.
    let (s, v) = call(&db, create_req("n", 1, 100, 10));
    assert_eq!((s, v["namespace"].as_str()), (200, Some("n")), "{v}");
    let (s, v) = call(&db, create_req("n", 1, 100, 11));
    assert_eq!((s, code(&v)), (409, "namespace_exists"));
    // A different name reaching this object is refused, not answered.
    let (s, v) = call(&db, grant_req("m", "a", "r", 1));
    assert_eq!((s, code(&v)), (503, "unavailable"));
}

#[test]
fn exhaustion_exactly_at_max_and_at_u64_max() {
    for (first, max) in [(1u64, 10u64), (u64::MAX - 9, u64::MAX)] {
        let db = db();
        call(&db, create_req("e", first, max, 100));
        let (s, _) = call(&db, grant_req("e", "a", "r1", 8));
        assert_eq!(s, 200);
        let (s, v) = call(&db, grant_req("e", "a", "r2", 3));
        assert_eq!(
            (s, code(&v), v["error"]["remaining"].as_str()),
            (409, "namespace_exhausted", Some("2"))
        );
        let (s, v) = call(&db, grant_req("e", "a", "r3", 2));
        assert_eq!(s, 200);
        assert_eq!(
            v["end"].as_str().unwrap(),
            (u128::from(max) + 1).to_string()
        );
        let (s, v) = call(&db, grant_req("e", "a", "r4", 1));
        assert_eq!((s, v["error"]["remaining"].as_str()), (409, Some("0")));
        let (_, sum) = call(&db, ObjectRequest::Summary { namespace: ns("e") });
        assert_eq!(sum["remaining"], "0");
        assert_eq!(
            sum["next"].as_str().unwrap(),
            (u128::from(max) + 1).to_string()
        );
        // Replays still answer at the top.
        let (s, v) = call(&db, grant_req("e", "a", "r3", 2));
        assert_eq!((s, v["replayed"].as_bool()), (200, Some(true)));
    }
}

#[test]
fn floor_never_lowers_and_is_audited() {
    let db = db();
    call(&db, create_req("f", 10, 1000, 100));
    call(&db, grant_req("f", "a", "r1", 5));
    let floor = |n: u64| ObjectRequest::Floor {
        namespace: ns("f"),
        floor: DecU64(n),
        actor: "ops".into(),
    };
    let (s, v) = call(&db, floor(14));
    assert_eq!(
        (s, code(&v), v["error"]["next"].as_str()),
        (409, "floor_below_next", Some("15"))
    );
    let (s, v) = call(&db, floor(1001));
    assert_eq!((s, code(&v)), (400, "invalid_request"));
    let (s, v) = call(&db, floor(500));
    assert_eq!((s, v["next"].as_str()), (200, Some("500")));
    let (_, g) = call(&db, grant_req("f", "a", "r2", 1));
    assert_eq!(g["start"], "500");
    let (_, a) = call(
        &db,
        ObjectRequest::Audit {
            namespace: ns("f"),
            limit: 10,
            before: None,
        },
    );
    let entries = a["audit"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "refused floors write nothing: {a}");
    assert_eq!(entries[0]["action"], "floor");
    assert_eq!(entries[0]["actor"], "ops");
    assert_eq!(entries[0]["before"]["next"], "15");
    assert_eq!(entries[0]["after"]["next"], "500");
    assert_eq!(entries[1]["action"], "create");
    assert_eq!(entries[1]["after"]["first"], "10");
}

#[test]
fn frozen_refuses_new_grants_but_replays() {
    let db = db();
    call(&db, create_req("z", 1, 1000, 100));
    call(&db, grant_req("z", "a", "r1", 5));
    let set = |frozen| ObjectRequest::SetFrozen {
        namespace: ns("z"),
        frozen,
        reason: "incident 7".into(),
        actor: "ops".into(),
    };
    let (s, v) = call(&db, set(true));
    assert_eq!((s, v["state"].as_str()), (200, Some("frozen")));
    let (s, v) = call(&db, grant_req("z", "a", "r2", 5));
    assert_eq!((s, code(&v)), (423, "namespace_frozen"));
    let (s, v) = call(&db, grant_req("z", "a", "r1", 5));
    assert_eq!((s, v["replayed"].as_bool()), (200, Some(true)));
    let (s, v) = call(&db, set(false));
    assert_eq!((s, v["state"].as_str()), (200, Some("active")));
    let (s, v) = call(&db, grant_req("z", "a", "r2", 5));
    assert_eq!((s, v["start"].as_str()), (200, Some("6")));
    let (_, a) = call(
        &db,
        ObjectRequest::Audit {
            namespace: ns("z"),
            limit: 1,
            before: None,
        },
    );
    assert_eq!(a["audit"][0]["action"], "unfreeze");
    assert_eq!(a["audit"][0]["reason"], "incident 7");
    assert_eq!(a["audit"][0]["before"]["state"], "frozen");
    let before = a["nextBefore"].as_str().unwrap().parse::<u128>().unwrap();
    let (_, a2) = call(
        &db,
        ObjectRequest::Audit {
            namespace: ns("z"),
            limit: 1,
            before: Some(DecBound(before)),
        },
    );
    assert_eq!(a2["audit"][0]["action"], "freeze");
    let (s, a3) = call(
        &db,
        ObjectRequest::Audit {
            namespace: ns("z"),
            limit: 10,
            before: Some(DecBound(1 << 64)),
        },
    );
    assert_eq!((s, a3["audit"].as_array().map(Vec::len)), (200, Some(3)));
}

#[test]
fn grants_listing_and_lookup() {
    let db = db();
    call(&db, create_req("l", 1, 1_000_000, 1000));
    for i in 0..5 {
        call(&db, grant_req("l", "inc", &format!("r{i}"), 10));
    }
    let (_, v) = call(
        &db,
        ObjectRequest::Grants {
            namespace: ns("l"),
            limit: 2,
            before: None,
        },
    );
    let g = v["grants"].as_array().unwrap();
    assert_eq!(
        (g[0]["start"].as_str(), g[1]["start"].as_str()),
        (Some("41"), Some("31"))
    );
    assert_eq!(g[0]["count"], 10);
    assert_eq!(g[0]["requestId"], "r4");
    assert_eq!(v["nextBefore"], "31");
    let (_, v) = call(
        &db,
        ObjectRequest::Grants {
            namespace: ns("l"),
            limit: 10,
            before: Some(DecBound(31)),
        },
    );
    assert_eq!(v["grants"].as_array().unwrap().len(), 3);
    assert!(v["nextBefore"].is_null());
    let (s, v) = call(
        &db,
        ObjectRequest::Lookup {
            namespace: ns("l"),
            id: DecU64(25),
        },
    );
    assert_eq!(
        (s, v["start"].as_str(), v["requestId"].as_str()),
        (200, Some("21"), Some("r2"))
    );
    assert_eq!(v["id"], "25");
    let (s, v) = call(
        &db,
        ObjectRequest::Lookup {
            namespace: ns("l"),
            id: DecU64(51),
        },
    );
    assert_eq!((s, code(&v)), (404, "grant_not_found"));
    // The refusal says where the ID stands.
    let why = |id: u64| {
        let (_, v) = call(
            &db,
            ObjectRequest::Lookup {
                namespace: ns("l"),
                id: DecU64(id),
            },
        );
        v["error"]["message"].as_str().unwrap_or("").to_owned()
    };
    assert!(
        why(51).ends_with("it has not been granted yet: the next grant starts at 51"),
        "{}",
        why(51)
    );
    assert!(why(1_000_001).ends_with("above this namespace's max (1000000): never granted here"));
    assert!(why(0).contains("below this namespace's first ID (1)"));
    call(
        &db,
        ObjectRequest::Floor {
            namespace: ns("l"),
            floor: DecU64(100),
            actor: "ops".into(),
        },
    );
    assert!(
        why(70).contains("it was passed, but no retained grant holds it"),
        "{}",
        why(70)
    );
}

/// The refill each grant hands its driver keeps the fence ahead of need:
/// applied after every grant, as the driver does in the background, no
/// grant after the first waits for the witness.
#[test]
fn grants_whose_refills_are_applied_never_wait_for_the_fence() {
    let db = db();
    call(&db, create_req("refill", 1, u64::MAX, 1000));
    let (mut waited, mut refills) = (0, 0);
    for i in 0..400 {
        let request = grant_req("refill", "a", &format!("q{i}"), 100);
        let mut serving = serve::Serving::new(&request);
        let done = loop {
            match serving.poll(&db, 0, T0 + i) {
                serve::Action::Finish(f) => break f,
                serve::Action::Raise { target, .. } => {
                    waited += 1;
                    raise(&db, target);
                    serving.handle_raised(Ok(true));
                }
                other => panic!("unexpected {other:?}"),
            }
        };
        assert_eq!(done.reply.status, 200, "{}", done.reply.body);
        if let Some(target) = done.granted.and_then(|g| g.refill) {
            refills += 1;
            raise(&db, target);
        }
    }
    assert_eq!(waited, 1, "only the first grant waits for the witness");
    assert!(
        refills > 1,
        "the fence was refilled ahead of need ({refills})"
    );
}

#[test]
fn retention_prunes_old_grants_and_replays_get_fresh_ranges() {
    let db = db();
    call(&db, create_req("p", 1, 1000, 100));
    let o = run(&db, &grant_req("p", "a", "r1", 5), T0);
    assert_eq!(o.granted.map(|g| g.at), Some(T0));
    let day = 86_400_000;
    assert_eq!(prune(&db, T0 + 1000, day), Ok(Some(T0 + day)));
    let o = run(&db, &grant_req("p", "a", "r1", 5), T0 + 1000);
    assert_eq!(body(&o)["replayed"], true);
    assert_eq!(prune(&db, T0 + day + 1, day), Ok(None));
    let o = run(&db, &grant_req("p", "a", "r1", 5), T0 + day + 2);
    let v = body(&o);
    assert_eq!(
        (v["replayed"].as_bool(), v["start"].as_str()),
        (Some(false), Some("6"))
    );
}

#[test]
fn many_grants_are_disjoint_and_contiguous() {
    let db = db();
    call(&db, create_req("d", 1, u64::MAX, 1_000_000));
    let mut expect: u128 = 1;
    for i in 0..300u64 {
        let (s, v) = call(
            &db,
            grant_req("d", &format!("i{}", i % 7), &format!("r{i}"), i % 13 + 1),
        );
        assert_eq!(s, 200);
        let start: u128 = v["start"].as_str().unwrap().parse().unwrap();
        let end: u128 = v["end"].as_str().unwrap().parse().unwrap();
        assert_eq!(start, expect);
        expect = end;
    }
}

#[test]
fn registry_lists_pages_in_order_and_keeps_the_newest_summary() {
    let db = MemSql::new();
    migrate(&db, REGISTRY_MIGRATIONS).unwrap();
    for n in ["c", "b", "a", "b"] {
        let r = registry::handle(&db, &RegistryRequest::Add { namespace: ns(n) }, T0);
        assert_eq!(r.status, 200);
    }
    let put = |summary: &str, at| RegistryRequest::Put {
        namespace: ns("b"),
        summary: summary.into(),
        at,
    };
    registry::handle(&db, &put(r#"{"v":2}"#, T0 + 2), T0);
    registry::handle(&db, &put(r#"{"v":1}"#, T0 + 1), T0);
    let list = |limit, after: Option<&str>, only: Option<Vec<&str>>| -> RegistryPage {
        let r = registry::handle(
            &db,
            &RegistryRequest::List {
                limit,
                after: after.map(ns),
                only: only.map(|o| o.into_iter().map(ns).collect()),
            },
            T0,
        );
        serde_json::from_str(&r.body).unwrap()
    };
    let first = list(2, None, None);
    let names: Vec<_> = first.namespaces.iter().map(|l| l.namespace).collect();
    assert_eq!(names, vec![ns("a"), ns("b")]);
    assert_eq!(first.next_after, Some(ns("b")));
    assert_eq!(
        first.namespaces[1].summary.as_deref(),
        Some(r#"{"v":2}"#),
        "an older push never wins"
    );
    assert_eq!(first.namespaces[0].summary, None);
    let second = list(2, Some("b"), None);
    assert_eq!(second.namespaces.len(), 1);
    assert_eq!(second.next_after, None);
    let scoped = list(10, None, Some(vec!["c", "zz"]));
    assert_eq!(
        scoped
            .namespaces
            .iter()
            .map(|l| l.namespace)
            .collect::<Vec<_>>(),
        vec![ns("c")]
    );
}

#[test]
fn a_request_is_its_sub_incarnation_and_request_id() {
    let db = db();
    call(&db, create_req("own", 1, 1000, 100));
    let (s, mine) = call(&db, grant_as("svc-a", "own", "inc", "r1", 5));
    assert_eq!(s, 200);
    // Another generator token posts the same body: its own request, with
    // its own range; nothing of the first one's range is shown.
    let (s, theirs) = call(&db, grant_as("svc-b", "own", "inc", "r1", 5));
    assert_eq!((s, theirs["replayed"].clone()), (200, Json::Bool(false)));
    assert_eq!(range_of(&theirs), (6, 11));
    // It pre-claims svc-a's next request with another count: svc-a is not
    // blocked, and gets a range of its own.
    let (s, _) = call(&db, grant_as("svc-b", "own", "inc", "r2", 7));
    assert_eq!(s, 200);
    let (s, next) = call(&db, grant_as("svc-a", "own", "inc", "r2", 5));
    assert_eq!((s, next["replayed"].clone()), (200, Json::Bool(false)));
    // Each replay answers its own caller's range.
    for (sub, id, want) in [
        ("svc-a", "r1", &mine),
        ("svc-b", "r1", &theirs),
        ("svc-a", "r2", &next),
    ] {
        let count = if sub == "svc-b" && id == "r2" { 7 } else { 5 };
        let (s, again) = call(&db, grant_as(sub, "own", "inc", id, count));
        assert_eq!(
            (s, range_of(&again), again["replayed"].clone()),
            (200, range_of(want), Json::Bool(true)),
            "{sub} {id}"
        );
    }
    let (_, listed) = call(
        &db,
        ObjectRequest::Grants {
            namespace: ns("own"),
            limit: 10,
            before: None,
        },
    );
    let subs: Vec<&str> = listed["grants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["sub"].as_str().unwrap())
        .collect();
    assert_eq!(subs, ["svc-a", "svc-b", "svc-b", "svc-a"]);
}

#[test]
fn creation_is_idempotent_for_the_same_configuration() {
    let db = db();
    let (s, first) = call(&db, create_req("c", 1, 1000, 100));
    assert_eq!(s, 201);
    let (s, again) = call(&db, create_req("c", 1, 1000, 100));
    assert_eq!((s, again["next"].clone()), (200, first["next"].clone()));
    let (s, other) = call(&db, create_req("c", 1, 2000, 100));
    assert_eq!((s, code(&other)), (409, "namespace_exists"));
    let (_, a) = call(
        &db,
        ObjectRequest::Audit {
            namespace: ns("c"),
            limit: 10,
            before: None,
        },
    );
    assert_eq!(
        a["audit"].as_array().map(Vec::len),
        Some(1),
        "one creation, audited once"
    );
}

/// Every row of the namespace object's tables, as a backup holds them.
type Backup = Vec<(&'static str, Vec<Vec<Value>>)>;

const TABLES: [&str; 8] = [
    "namespace",
    "grants",
    "subs",
    "budget",
    "minutes",
    "reports",
    "relay_reports",
    "relay_instances",
];

pub(super) fn snapshot(db: &MemSql) -> Backup {
    TABLES
        .iter()
        .map(|t| (*t, db.exec(&format!("SELECT * FROM {t}"), &[]).unwrap()))
        .collect()
}

/// Puts the namespace object's storage back to `copy` (the witness, which
/// is another object, is untouched).
pub(super) fn restore(db: &MemSql, copy: &Backup) {
    for (table, rows) in copy {
        db.exec(&format!("DELETE FROM {table}"), &[]).unwrap();
        for r in rows {
            let marks = vec!["?"; r.len()].join(", ");
            db.exec(&format!("INSERT INTO {table} VALUES ({marks})"), r)
                .unwrap();
        }
    }
}

pub(super) fn range_of(v: &Json) -> (u128, u128) {
    let n = |k: &str| v[k].as_str().unwrap().parse::<u128>().unwrap();
    (n("start"), n("end"))
}

#[test]
fn a_restored_copy_never_grants_again_what_it_forgot() {
    let db = db();
    call(&db, create_req("fence", 1, u64::MAX, 1_000));
    let mut acknowledged = Vec::new();
    for i in 0..20 {
        let (_, g) = call(&db, grant_req("fence", "a", &format!("r{i}"), 100));
        acknowledged.push(range_of(&g));
    }
    let copy = snapshot(&db);
    for i in 20..40 {
        let (_, g) = call(&db, grant_req("fence", "a", &format!("r{i}"), 100));
        acknowledged.push(range_of(&g));
    }
    let witness = WITNESS.with(Cell::get);
    assert!(
        acknowledged.iter().all(|&(_, end)| end <= witness),
        "no grant ends above the witness's mark"
    );
    restore(&db, &copy);
    // The start skips to the witness's mark and says so in the audit log.
    let st = check(&db, T0 + 1);
    assert!(st.forward && st.skipped > 0, "{st:?}");
    for i in 0..40 {
        let (s, g) = call(&db, grant_req("fence", "b", &format!("r{i}"), 100));
        assert_eq!(s, 200);
        let (start, end) = range_of(&g);
        for &(a, b) in &acknowledged {
            assert!(
                end <= a || start >= b,
                "[{start}, {end}) overlaps [{a}, {b})"
            );
        }
    }
    let (_, a) = call(
        &db,
        ObjectRequest::Audit {
            namespace: ns("fence"),
            limit: 1,
            before: None,
        },
    );
    let entry = &a["audit"][0];
    assert_eq!(
        (entry["action"].as_str(), entry["actor"].as_str()),
        (Some("fence_forward"), Some("system"))
    );
    let (_, sum) = call(
        &db,
        ObjectRequest::Summary {
            namespace: ns("fence"),
        },
    );
    assert_eq!(sum["fence"]["rollbacks"], 1);
    assert_ne!(sum["fence"]["skipped"], "0");
}

fn audit_actions(db: &MemSql, name: &str) -> Vec<String> {
    let (_, a) = call(
        db,
        ObjectRequest::Audit {
            namespace: ns(name),
            limit: 100,
            before: None,
        },
    );
    a["audit"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect()
}

/// The issue's scenario: both objects copied; grants go on; the witness
/// alone is put back; the object checks in; then the object alone is put
/// back. Without the raise back, the copy reads the old mark and grants
/// again what it forgot.
#[test]
fn a_witness_put_back_is_raised_back_before_the_object_is_restored() {
    let db = db();
    call(&db, create_req("two", 1, u64::MAX, 1_000));
    let mut acknowledged = Vec::new();
    for i in 0..5 {
        let (_, g) = call(&db, grant_req("two", "a", &format!("r{i}"), 100));
        acknowledged.push(range_of(&g));
    }
    let object_copy = snapshot(&db);
    let witness_copy = WITNESS.with(Cell::get);
    // Grant past the copy until the witness's mark moves.
    let mut i = 5;
    while WITNESS.with(Cell::get) == witness_copy {
        let (_, g) = call(&db, grant_req("two", "a", &format!("r{i}"), 100));
        acknowledged.push(range_of(&g));
        i += 1;
    }
    let highest = acknowledged.iter().map(|&(_, e)| e).max().unwrap();
    // The witness's files go back; the object checks in and mends it.
    WITNESS.with(|w| w.set(witness_copy));
    let heard = check(&db, T0 + 1);
    assert!(heard.behind_mended && !heard.forward, "{heard:?}");
    assert!(
        WITNESS.with(Cell::get) >= highest,
        "raised back above every grant"
    );
    assert!(audit_actions(&db, "two").contains(&"witness_behind".to_owned()));
    let (_, sum) = call(
        &db,
        ObjectRequest::Summary {
            namespace: ns("two"),
        },
    );
    assert_eq!(sum["fence"]["witnessBehind"], 1);
    // Then the object's files go back to the copy: it starts above every grant.
    restore(&db, &object_copy);
    let st = check(&db, T0 + 2);
    assert!(st.forward, "{st:?}");
    for j in 0..10 {
        let (s, g) = call(&db, grant_req("two", "b", &format!("r{j}"), 100));
        assert_eq!(s, 200);
        let (start, _) = range_of(&g);
        assert!(
            start >= highest,
            "[{start}, ..) below the highest earlier end {highest}"
        );
    }
    // A wiped witness (its class dropped) is raised back the same way.
    WITNESS.with(|w| w.set(0));
    assert!(check(&db, T0 + 3).behind_mended);
    assert!(WITNESS.with(Cell::get) > highest);
}

/// A raise the witness wrote but whose answer never arrived (or arrived
/// after the object stopped) is the object's own: no rollback is reported.
#[test]
fn a_lost_witness_answer_is_not_a_rollback() {
    let db = db();
    call(&db, create_req("lost", 1, u64::MAX, 1_000));
    call(&db, grant_req("lost", "a", "r1", 100));
    let (_, before) = call(
        &db,
        ObjectRequest::Summary {
            namespace: ns("lost"),
        },
    );
    let fence: u128 = before["fence"]["mark"].as_str().unwrap().parse().unwrap();
    let target = fence + 10_000;
    grant::record_asked(&db, target).unwrap();
    WITNESS.with(|w| w.set(rangeid_core::fence::witness_raise(w.get(), target)));
    // ... the answer is lost; the object restarts and reads the witness.
    let st = check(&db, T0 + 1);
    assert!(!st.forward && st.skipped > 0, "{st:?}");
    assert!(!audit_actions(&db, "lost").contains(&"fence_forward".to_owned()));
    let (_, sum) = call(
        &db,
        ObjectRequest::Summary {
            namespace: ns("lost"),
        },
    );
    assert_eq!(sum["fence"]["rollbacks"], 0);
}

#[test]
fn an_ordinary_restart_skips_the_rest_of_its_chunk_and_is_not_audited() {
    let db = db();
    call(&db, create_req("r", 1, u64::MAX, 1_000));
    let (_, g) = call(&db, grant_req("r", "a", "r1", 100));
    let (_, end) = range_of(&g);
    let witness = WITNESS.with(Cell::get);
    assert!(
        witness > end,
        "the mark is a chunk ahead: {witness} vs {end}"
    );
    let st = check(&db, T0 + 1);
    assert_eq!((st.skipped, st.forward), (witness - end, false));
    let (_, a) = call(
        &db,
        ObjectRequest::Audit {
            namespace: ns("r"),
            limit: 10,
            before: None,
        },
    );
    assert!(a["audit"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["action"] != "fence_forward"));
}

#[test]
fn rates_are_per_minute_and_exact() {
    let db = db();
    call(&db, create_req("rate", 1, u64::MAX, (1 << 53) - 1));
    let big = (1u64 << 53) - 1;
    for (i, at) in [T0, T0 + 10_000, T0 + 60_000].into_iter().enumerate() {
        let o = run(&db, &grant_req("rate", "a", &format!("r{i}"), big), at);
        assert_eq!(o.reply.status, 200, "{}", o.reply.body);
    }
    let o = run(
        &db,
        &ObjectRequest::Rates {
            namespace: ns("rate"),
            window: Window::Hour,
        },
        T0 + 90_000,
    );
    let v = body(&o);
    assert_eq!(
        (v["window"].as_str(), v["bucketSeconds"].as_u64()),
        (Some("1h"), Some(60))
    );
    let buckets = v["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 2);
    assert_eq!(buckets[0]["ranges"], 2);
    assert_eq!(buckets[0]["ids"], "18014398509481982", "past 2^53, exactly");
    assert_eq!(buckets[1]["ids"], big.to_string());
    assert!(v["buckets"].to_string().len() < 400);
}

/// A store whose statements starting with `fail_on` fail.
pub(super) struct Failing<'a> {
    pub(super) inner: &'a MemSql,
    pub(super) fail_on: &'static str,
}

impl Sql for Failing<'_> {
    fn exec(&self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, StoreError> {
        if sql.starts_with(self.fail_on) {
            return Err(StoreError("injected failure".into()));
        }
        self.inner.exec(sql, params)
    }

    fn atomically(
        &self,
        body: &mut dyn FnMut() -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.inner.atomically(body)
    }
}

#[test]
fn a_failed_grant_write_commits_nothing() {
    let db = db();
    call(&db, create_req("t", 1, 1000, 100));
    let broken = Failing {
        inner: &db,
        fail_on: "INSERT INTO grants",
    };
    let o = run(&broken, &grant_req("t", "a", "r1", 5), T0);
    assert_eq!(o.reply.status, 503);
    assert_eq!(o.reply.header("retry-after"), Some("1"));
    assert_eq!(o.granted, None);
    let (_, sum) = call(&db, ObjectRequest::Summary { namespace: ns("t") });
    assert_eq!(
        (sum["next"].as_str(), sum["rangesGranted"].as_u64()),
        (Some("1"), Some(0))
    );
    // The retry with the same key is then a new grant from the same start.
    let (s, g) = call(&db, grant_req("t", "a", "r1", 5));
    assert_eq!(
        (s, g["start"].as_str(), g["replayed"].as_bool()),
        (200, Some("1"), Some(false))
    );
}

#[test]
fn an_admin_change_without_its_audit_entry_commits_nothing() {
    let db = db();
    call(&db, create_req("u", 1, 1000, 100));
    let broken = Failing {
        inner: &db,
        fail_on: "INSERT INTO audit",
    };
    let floor = ObjectRequest::Floor {
        namespace: ns("u"),
        floor: DecU64(50),
        actor: "ops".into(),
    };
    assert_eq!(run(&broken, &floor, T0).reply.status, 503);
    let freeze = ObjectRequest::SetFrozen {
        namespace: ns("u"),
        frozen: true,
        reason: "x".into(),
        actor: "ops".into(),
    };
    assert_eq!(run(&broken, &freeze, T0).reply.status, 503);
    let create = create_req("v", 1, 10, 1);
    let fresh = crate::object::store::mem::MemSql::new();
    migrate(&fresh, NAMESPACE_MIGRATIONS).unwrap();
    let broken_fresh = Failing {
        inner: &fresh,
        fail_on: "INSERT INTO audit",
    };
    assert_eq!(run(&broken_fresh, &create, T0).reply.status, 503);
    assert!(fresh.exec(SELECT_NAMESPACE, &[]).unwrap().is_empty());
    let (_, sum) = call(&db, ObjectRequest::Summary { namespace: ns("u") });
    assert_eq!(
        (sum["next"].as_str(), sum["state"].as_str()),
        (Some("1"), Some("active"))
    );
    let (_, a) = call(
        &db,
        ObjectRequest::Audit {
            namespace: ns("u"),
            limit: 10,
            before: None,
        },
    );
    assert_eq!(a["audit"].as_array().map(Vec::len), Some(1));
}

/// A floor right after a restore: the object hears from its witness first
/// (its start), so the rollback is audited; had the floor gone ahead, its
/// own raise would have lifted the witness and hidden the rollback.
#[test]
fn a_floor_after_a_restore_waits_for_the_start_and_shows_the_rollback() {
    let floor = ObjectRequest::Floor {
        namespace: ns("fl"),
        floor: DecU64(1_000_000),
        actor: "ops".into(),
    };
    assert!(floor.waits_for_witness());
    assert!(grant_req("fl", "a", "r", 1).waits_for_witness());
    assert!(!ObjectRequest::Summary {
        namespace: ns("fl")
    }
    .waits_for_witness());

    let db = db();
    call(&db, create_req("fl", 1, u64::MAX, 1_000));
    call(&db, grant_req("fl", "a", "r1", 100));
    let copy = snapshot(&db);
    for i in 2..30 {
        call(&db, grant_req("fl", "a", &format!("r{i}"), 100));
    }
    restore(&db, &copy);
    // The driver's order for a request that waits: the start, then the floor.
    let st = check(&db, T0 + 1);
    assert!(st.forward, "{st:?}");
    let (status, _) = call(&db, floor);
    assert_eq!(status, 200);
    let actions = audit_actions(&db, "fl");
    assert!(actions.contains(&"fence_forward".to_owned()), "{actions:?}");
    // Had the floor raised the witness first, the start would read a mark
    // the object asked for itself: no rollback to see. (Another namespace
    // object, with its own witness: the first one's floor raised it.)
    WITNESS.with(|w| w.set(0));
    let db = self::db();
    call(&db, create_req("fl", 1, u64::MAX, 1_000));
    call(&db, grant_req("fl", "a", "r1", 100));
    let copy = snapshot(&db);
    for i in 2..30 {
        call(&db, grant_req("fl", "a", &format!("r{i}"), 100));
    }
    restore(&db, &copy);
    let mark = admin::floor_mark(&db, &ns("fl"), 1_000_000)
        .unwrap()
        .unwrap();
    raise(&db, mark);
    assert!(
        !check(&db, T0 + 2).forward,
        "the floor's raise hid the rollback"
    );
}

mod transfer_tests;
