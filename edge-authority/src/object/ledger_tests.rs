//! The grant ledger through the namespace object: a request's identity,
//! spans that keep a `count: 1` loop in a row a minute with every replay
//! and lookup exact, the limits (429 with `Retry-After`, audited changes,
//! one caller's flood not starving another), pruning, and fence chunks
//! that follow recent grants.

use rangeid_core::ledger::{Limits, SPAN_MS};

use super::tests::{
    body, call, check, code, create_req, db, grant_as, ns, raise, range_of, run, Failing, T0,
};
use super::*;
use crate::api::{LimitsChange, Setting};
use crate::object::store::mem::MemSql;

fn rows(db: &MemSql) -> u64 {
    spans::budget(db).unwrap().0
}

fn stored_rows(db: &MemSql) -> u64 {
    let r = db.exec("SELECT COUNT(*) FROM grants", &[]).unwrap();
    crate::object::store::int(&r[0], 0).unwrap() as u64
}

fn limits(name: &str, rate: Setting, total: Setting, sub: Setting) -> ObjectRequest {
    ObjectRequest::SetLimits {
        namespace: ns(name),
        change: LimitsChange {
            grants_per_second: rate,
            ledger_rows: total,
            sub_ledger_rows: sub,
        },
        actor: "ops".into(),
    }
}

#[test]
fn a_count_one_loop_is_a_row_a_minute_and_every_grant_stays_exact() {
    let db = db();
    call(&db, create_req("flood", 1, u64::MAX, 1_000));
    // Three minutes of count: 1 grants, one every 5 ms, from one sub and
    // incarnation with the shipped request ids.
    let n = 36_000u64;
    for i in 0..n {
        let o = run(
            &db,
            &grant_as("flooder", "flood", "f1", &format!("r{i}"), 1),
            T0 + i as i64 * 5,
        );
        assert_eq!(o.reply.status, 200, "{}", o.reply.body);
    }
    // Rows: one a minute (a span covers grants within a minute of its first).
    let minutes = (n * 5).div_ceil(SPAN_MS as u64);
    assert_eq!((rows(&db), stored_rows(&db)), (minutes, minutes));
    // Every replay is exact, here and at the spans' edges.
    for i in [0, 1, 11_999, 12_000, 12_001, 23_999, 24_000, n - 1] {
        let o = run(
            &db,
            &grant_as("flooder", "flood", "f1", &format!("r{i}"), 1),
            T0 + n as i64 * 5,
        );
        let v = body(&o);
        assert_eq!(
            (v["replayed"].as_bool(), range_of(&v)),
            (Some(true), (u128::from(i) + 1, u128::from(i) + 2)),
            "r{i}"
        );
        // Another count for the same request is its conflict, and another
        // sub's same body its own new request.
        let c = run(
            &db,
            &grant_as("flooder", "flood", "f1", &format!("r{i}"), 2),
            T0,
        );
        assert_eq!(
            (c.reply.status, code(&body(&c)).to_owned()),
            (409, "request_conflict".into())
        );
    }
    // "Who got ID N" is exact too, with the span's commit times.
    let (s, v) = call(
        &db,
        ObjectRequest::Lookup {
            namespace: ns("flood"),
            id: DecU64(12_001),
        },
    );
    assert_eq!(
        (s, v["requestId"].as_str(), v["sub"].as_str()),
        (200, Some("r12000"), Some("flooder"))
    );
    assert_eq!(v["span"]["firstRequestId"], "r12000");
    assert_eq!(v["span"]["grants"], 12_000);
    // The listing pages through a span grant by grant.
    let (_, page) = call(
        &db,
        ObjectRequest::Grants {
            namespace: ns("flood"),
            limit: 3,
            before: Some(DecBound(12_003)),
        },
    );
    let ids: Vec<&str> = page["grants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["requestId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["r12001", "r12000", "r11999"]);
    assert_eq!(page["nextBefore"], "12000");
}

#[test]
fn other_callers_break_spans_but_never_share_them() {
    let db = db();
    call(&db, create_req("mix", 1, u64::MAX, 1_000));
    let mut t = T0;
    for i in 0..50 {
        t += 1;
        run(
            &db,
            &grant_as("flooder", "mix", "f1", &format!("r{i}"), 1),
            t,
        );
        if i % 10 == 9 {
            // An honest generator takes a range now and then.
            let o = run(&db, &grant_as("svc", "mix", "h1", &format!("r{i}"), 100), t);
            assert_eq!(o.reply.status, 200);
        }
    }
    // The flooder's spans end where another grant came between: 5 honest
    // rows, 5 flooder spans (the last one still open).
    assert_eq!(rows(&db), 10);
    let (_, sum) = call(
        &db,
        ObjectRequest::Summary {
            namespace: ns("mix"),
        },
    );
    assert_eq!(sum["ledger"]["rows"], 10);
    assert_eq!(
        sum["ledger"]["topSubs"],
        serde_json::json!([{"sub": "flooder", "rows": 5}, {"sub": "svc", "rows": 5}])
    );
    assert!(sum["ledger"]["bytes"].as_u64().unwrap() > 0);
}

#[test]
fn limits_are_audited_and_refuse_with_retry_after() {
    let db = db();
    call(&db, create_req("lim", 1, u64::MAX, 1_000));
    let (s, v) = call(
        &db,
        limits("lim", Setting::To(2), Setting::To(6), Setting::To(3)),
    );
    assert_eq!(
        (s, v["limits"].clone()),
        (
            200,
            serde_json::json!({"grantsPerSecond": 2, "ledgerRows": 6, "subLedgerRows": 3})
        )
    );
    let (s, v) = call(
        &db,
        limits("lim", Setting::Keep, Setting::Keep, Setting::To(7)),
    );
    assert_eq!(
        (s, code(&v)),
        (400, "invalid_request"),
        "a caller's budget above the ledger's"
    );
    let (_, a) = call(
        &db,
        ObjectRequest::Audit {
            namespace: ns("lim"),
            limit: 10,
            before: None,
        },
    );
    let e = &a["audit"][0];
    assert_eq!(
        (e["action"].as_str(), e["actor"].as_str()),
        (Some("limits"), Some("ops"))
    );
    assert_eq!(
        e["before"]["grantsPerSecond"],
        Limits::DEFAULT_GRANTS_PER_SECOND
    );
    assert_eq!(e["after"]["subLedgerRows"], 3);
    assert_eq!(
        a["audit"].as_array().unwrap().len(),
        2,
        "a refused change is not audited"
    );

    // Two grants a second per caller; the third waits half a second.
    let grant = |sub: &str, id: &str, count: u64, at: i64| {
        run(&db, &grant_as(sub, "lim", "a", id, count), at)
    };
    assert_eq!(grant("flooder", "x1", 1, T0).reply.status, 200);
    assert_eq!(grant("flooder", "x2", 2, T0).reply.status, 200);
    let o = grant("flooder", "x3", 3, T0);
    assert_eq!(
        (o.reply.status, code(&body(&o)).to_owned()),
        (429, "rate_limited".into())
    );
    assert_eq!(o.reply.header("retry-after"), Some("1"));
    assert_eq!(o.refused, Some(Counted::RateLimited));
    // Another caller has its own rate.
    assert_eq!(grant("svc", "y1", 1, T0).reply.status, 200);
    // A second later the flooder may again, until its three rows are held.
    assert_eq!(grant("flooder", "x3", 3, T0 + 1_000).reply.status, 200);
    let o = grant("flooder", "x4", 4, T0 + 2_000);
    assert_eq!(
        (o.reply.status, code(&body(&o)).to_owned()),
        (429, "ledger_full".into())
    );
    assert_eq!(o.reply.header("retry-after"), Some("60"));
    assert_eq!(o.refused, Some(Counted::LedgerFull));
    assert!(body(&o)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("this token's sub holds 3"));
    // Nothing was written for the refusals; replays still answer.
    assert_eq!(rows(&db), 4);
    assert_eq!(grant("flooder", "x1", 1, T0 + 2_000).reply.status, 200);
    // The others are served until the whole ledger's six rows are held.
    assert_eq!(grant("svc", "y2", 1, T0 + 2_000).reply.status, 200);
    assert_eq!(grant("other", "z1", 1, T0 + 2_000).reply.status, 200);
    let o = grant("other", "z2", 1, T0 + 3_000);
    assert_eq!(
        (o.reply.status, code(&body(&o)).to_owned()),
        (429, "ledger_full".into())
    );
    assert!(body(&o)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("the namespace's ledger holds 6"));
    // Back to the defaults: served again.
    let (s, v) = call(
        &db,
        limits("lim", Setting::Default, Setting::Default, Setting::Default),
    );
    assert_eq!(
        (s, v["limits"]["ledgerRows"].as_u64()),
        (200, Some(Limits::DEFAULT_LEDGER_ROWS))
    );
    assert_eq!(grant("other", "z2", 1, T0 + 3_000).reply.status, 200);
}

#[test]
fn pruning_gives_the_budget_back() {
    let db = db();
    call(&db, create_req("pr", 1, u64::MAX, 1_000));
    call(
        &db,
        limits("pr", Setting::Keep, Setting::Keep, Setting::To(2)),
    );
    let grant = |id: &str, count: u64, at: i64| run(&db, &grant_as("f", "pr", "a", id, count), at);
    assert_eq!(grant("x1", 1, T0).reply.status, 200);
    assert_eq!(grant("x2", 2, T0 + 10_000).reply.status, 200);
    assert_eq!(grant("x3", 3, T0 + 20_000).reply.status, 429);
    let day = 86_400_000;
    // The first row ages out: one row back.
    assert_eq!(prune(&db, T0 + day + 1, day), Ok(Some(T0 + 10_000 + day)));
    assert_eq!(rows(&db), 1);
    assert_eq!(grant("x3", 3, T0 + day + 2).reply.status, 200);
    assert_eq!(grant("x4", 4, T0 + day + 3).reply.status, 429);
}

#[test]
fn a_span_is_kept_while_its_last_grant_is_retained() {
    let db = db();
    call(&db, create_req("keep", 1, u64::MAX, 1_000));
    for i in 0..3 {
        run(
            &db,
            &grant_as("f", "keep", "a", &format!("r{i}"), 1),
            T0 + i * 20_000,
        );
    }
    assert_eq!(rows(&db), 1);
    let day = 86_400_000;
    // Due a day after its last grant, not its first.
    assert_eq!(prune(&db, T0 + day + 1, day), Ok(Some(T0 + 40_000 + day)));
    assert_eq!(rows(&db), 1);
    assert_eq!(prune(&db, T0 + 40_001 + day, day), Ok(None));
    assert_eq!(rows(&db), 0);
}

#[test]
fn a_failed_span_or_usage_write_commits_nothing() {
    let db = db();
    call(&db, create_req("t", 1, 1_000, 100));
    run(&db, &grant_as("f", "t", "a", "r1", 5), T0);
    for statement in ["UPDATE grants", "INSERT INTO subs", "UPDATE budget"] {
        let broken = Failing {
            inner: &db,
            fail_on: statement,
        };
        let id = if statement == "UPDATE grants" {
            "r2"
        } else {
            "x"
        };
        let o = run(&broken, &grant_as("f", "t", "a", id, 5), T0 + 1);
        assert_eq!(o.reply.status, 503, "{statement}");
    }
    let (_, sum) = call(&db, ObjectRequest::Summary { namespace: ns("t") });
    assert_eq!(
        (sum["next"].as_str(), sum["ledger"]["rows"].as_u64()),
        (Some("6"), Some(1))
    );
}

/// The driver's start after a restart: moves `next` up to the witness's
/// mark; returns what it skipped.
fn restart(db: &MemSql, at: i64) -> u128 {
    check(db, at).skipped
}

/// A grant as the driver makes it: the fence raised as needed, then the
/// background raise ahead of need.
fn grant_now(db: &MemSql, id: &str, count: u64, at: i64) {
    let o = run(db, &grant_as("svc", "wake", "a", id, count), at);
    assert_eq!(o.reply.status, 200, "{}", o.reply.body);
    if let Some(target) = o.granted.and_then(|g| g.refill) {
        raise(db, target);
    }
}

#[test]
fn an_object_that_wakes_now_and_then_skips_what_its_recent_grants_call_for() {
    let db = db();
    call(&db, create_req("wake", 1, u64::MAX, 10_000_000));
    // A busy minute that once took a million IDs at a time.
    grant_now(&db, "r0", 1_000_000, T0);
    let first = restart(&db, T0 + 1);
    // Then it wakes every five minutes, takes 1,000 IDs and sleeps again.
    let mut skips = Vec::new();
    for i in 1..=4 {
        let at = T0 + i * 300_000;
        grant_now(&db, &format!("r{i}"), 1_000, at);
        skips.push(restart(&db, at + 1));
    }
    // The restart right after the big grant skips the rest of its chunk
    // (twice the grant); every later one only what a 1,000-ID grant calls
    // for. (Sized by the largest grant ever, each skipped 2,000,000.)
    assert_eq!(first, 2_000_000);
    assert_eq!(skips, vec![2_000; 4]);
}
