use super::*;
use crate::store::mem::MemSql;
use crate::store::{migrate, NAMESPACE_SCHEMA, REGISTRY_SCHEMA};
use rangeid_core::{Incarnation, RequestId};

const T0: i64 = 1_800_000_000_000;

fn ns(s: &str) -> Namespace {
    Namespace::new(s).unwrap()
}

fn db() -> MemSql {
    let db = MemSql::new();
    migrate(&db, NAMESPACE_SCHEMA).unwrap();
    db
}

fn create_req(name: &str, first: u64, max: u64, max_count: u64) -> ObjectRequest {
    ObjectRequest::Create {
        namespace: ns(name),
        first: DecU64(first),
        max: DecU64(max),
        max_count,
        actor: "ops".into(),
    }
}

fn grant_req(name: &str, inc: &str, id: &str, count: u64) -> ObjectRequest {
    ObjectRequest::Grant {
        request: GrantRequest {
            namespace: ns(name),
            incarnation: Incarnation::new(inc).unwrap(),
            request_id: RequestId::new(id).unwrap(),
            count,
        },
    }
}

fn body(o: &Outcome) -> Json {
    serde_json::from_str(&o.reply.body).unwrap()
}

fn call(db: &MemSql, r: ObjectRequest) -> (u16, Json) {
    // Every request crosses the wire as JSON.
    let wire = serde_json::to_string(&r).unwrap();
    let back: ObjectRequest = serde_json::from_str(&wire).unwrap();
    assert_eq!(back, r);
    let o = handle(db, &back, T0);
    (o.reply.status, body(&o))
}

fn code(v: &Json) -> &str {
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
    let (s, v) = call(&db, create_req("n", 1, 100, 10));
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
}

#[test]
fn retention_prunes_old_grants_and_replays_get_fresh_ranges() {
    let db = db();
    call(&db, create_req("p", 1, 1000, 100));
    let o = handle(&db, &grant_req("p", "a", "r1", 5), T0);
    assert_eq!(o.granted_at, Some(T0));
    let day = 86_400_000;
    assert_eq!(prune(&db, T0 + 1000, day), Ok(Some(T0 + day)));
    let o = handle(&db, &grant_req("p", "a", "r1", 5), T0 + 1000);
    assert_eq!(body(&o)["replayed"], true);
    assert_eq!(prune(&db, T0 + day + 1, day), Ok(None));
    let o = handle(&db, &grant_req("p", "a", "r1", 5), T0 + day + 2);
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
fn registry_lists_sorted_and_is_idempotent() {
    let db = MemSql::new();
    migrate(&db, REGISTRY_SCHEMA).unwrap();
    for n in ["b", "a", "b"] {
        let r = handle_registry(&db, &RegistryRequest::Add { namespace: ns(n) }, T0);
        assert_eq!(r.status, 200);
    }
    let r = handle_registry(&db, &RegistryRequest::List, T0);
    let list: RegistryList = serde_json::from_str(&r.body).unwrap();
    assert_eq!(list.namespaces, vec![ns("a"), ns("b")]);
}

/// A store whose statements starting with `fail_on` fail.
struct Failing<'a> {
    inner: &'a MemSql,
    fail_on: &'static str,
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
    let o = handle(&broken, &grant_req("t", "a", "r1", 5), T0);
    assert_eq!(o.reply.status, 503);
    assert_eq!(o.reply.header("retry-after"), Some("1"));
    assert_eq!(o.granted_at, None);
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
    assert_eq!(handle(&broken, &floor, T0).reply.status, 503);
    let freeze = ObjectRequest::SetFrozen {
        namespace: ns("u"),
        frozen: true,
        reason: "x".into(),
        actor: "ops".into(),
    };
    assert_eq!(handle(&broken, &freeze, T0).reply.status, 503);
    let create = create_req("v", 1, 10, 1);
    let fresh = crate::store::mem::MemSql::new();
    migrate(&fresh, NAMESPACE_SCHEMA).unwrap();
    let broken_fresh = Failing {
        inner: &fresh,
        fail_on: "INSERT INTO audit",
    };
    assert_eq!(handle(&broken_fresh, &create, T0).reply.status, 503);
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
