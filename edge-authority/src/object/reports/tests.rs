//! Relays' reports on the namespace object, with an in-memory SQLite.

use super::*;
use crate::api::{LimitsChange, RelaysSetting, Setting};
use crate::object::prune;
use crate::object::relay::root_request;
use crate::object::store::mem::MemSql;
use crate::object::tests::{body, call, create_req, db, grant_as, ns, range_of, run, T0};
use crate::object::ObjectRequest;
use rangeid_core::GrantRequest;
use serde_json::Value as Json;

const RELAY: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn region(r: &str) -> Region {
    Region::new(r).unwrap()
}

/// A namespace `n` with relays on, and the relay of `eu` granted `count`
/// IDs under incarnation [`RELAY`]: its range.
fn with_relay_grant(count: u64) -> (MemSql, (u128, u128)) {
    let db = db();
    call(&db, create_req("n", 1, 1 << 40, 100_000));
    let (s, _) = call(
        &db,
        ObjectRequest::SetRelays {
            namespace: ns("n"),
            relays: RelaysSetting::On,
            reason: "edge".into(),
            actor: "ops".into(),
        },
    );
    assert_eq!(s, 200);
    let request = GrantRequest {
        namespace: ns("n"),
        incarnation: Incarnation::new(RELAY).unwrap(),
        request_id: RequestId::new("r1").unwrap(),
        count,
    };
    let (s, g) = call(&db, root_request(request, &region("eu"), 10_000));
    assert_eq!(s, 200, "{g}");
    (db, range_of(&g))
}

fn sub(who: &str, inc: &str, start: u128, end: u128, relay: &str) -> Reported {
    Reported {
        sub: who.into(),
        incarnation: Incarnation::new(inc).unwrap(),
        request_id: RequestId::new("r1").unwrap(),
        start: DecU64(start as u64),
        end: DecBound(end),
        relay: Incarnation::new(relay).unwrap(),
    }
}

fn view() -> RelayView {
    RelayView {
        incarnation: Incarnation::new(RELAY).unwrap(),
        held: DecU64(900),
        abandoned: DecU64(7),
        sub_grants: 2,
        dropped: 1,
        refused: RelayRefused::default(),
    }
}

fn report(db: &MemSql, r: &str, grants: Vec<Reported>, now: i64) -> (u16, Json) {
    report_as(db, r, grants, view(), now)
}

fn report_as(
    db: &MemSql,
    r: &str,
    grants: Vec<Reported>,
    relay: RelayView,
    now: i64,
) -> (u16, Json) {
    let request = ObjectRequest::Report {
        namespace: ns("n"),
        region: region(r),
        grants,
        relay,
    };
    let wire = serde_json::to_string(&request).unwrap();
    let back: ObjectRequest = serde_json::from_str(&wire).unwrap();
    assert_eq!(back, request);
    let o = run(db, &back, now);
    (o.reply.status, body(&o))
}

/// The namespace's row budgets: the ledger's and each sub's.
fn set_limits(db: &MemSql, ledger: u64, sub: u64) {
    let (s, v) = call(
        db,
        ObjectRequest::SetLimits {
            namespace: ns("n"),
            change: LimitsChange {
                grants_per_second: Setting::Keep,
                ledger_rows: Setting::To(ledger),
                sub_ledger_rows: Setting::To(sub),
            },
            actor: "ops".into(),
        },
    );
    assert_eq!(s, 200, "{v}");
}

fn lookup(db: &MemSql, id: u128) -> Json {
    let (s, v) = call(
        db,
        ObjectRequest::Lookup {
            namespace: ns("n"),
            id: DecU64(id as u64),
        },
    );
    assert_eq!(s, 200, "{v}");
    v
}

fn summary(db: &MemSql) -> Json {
    call(db, ObjectRequest::Summary { namespace: ns("n") }).1
}

#[test]
fn a_lookup_names_the_generator_once_reported_and_the_relay_before() {
    let (db, (a, _)) = with_relay_grant(1_000);
    // Before any report: the relay's grant, unreported.
    let v = lookup(&db, a + 15);
    assert_eq!(v["sub"], "relay@eu");
    assert_eq!(v["relay"]["reported"], false);
    assert_eq!(v["relay"]["sub"], "relay@eu");
    let batch = vec![
        sub("svc-a", "g1", a, a + 10, RELAY),
        sub("svc-b", "g2", a + 10, a + 20, RELAY),
    ];
    let (s, k) = report(&db, "eu", batch.clone(), T0 + 5);
    assert_eq!(
        (s, &k),
        (
            200,
            &serde_json::json!({"kept": 2, "known": 0, "unmatched": 0, "dropped": 0})
        )
    );
    let v = lookup(&db, a + 15);
    assert_eq!(
        (v["sub"].as_str(), v["incarnation"].as_str()),
        (Some("svc-b"), Some("g2"))
    );
    assert_eq!(range_of(&v), (a + 10, a + 20));
    assert_eq!(v["count"], 10);
    assert_eq!(v["relay"]["sub"], "relay@eu");
    assert_eq!(v["relay"]["incarnation"], RELAY);
    assert_eq!(v["relay"]["reported"], true);
    assert_eq!(range_of(&v["relay"]), (a, a + 1_000));
    // Past the reported sub-grants: the relay still.
    let v = lookup(&db, a + 20);
    assert_eq!(
        (v["sub"].as_str(), v["relay"]["reported"].as_bool()),
        (Some("relay@eu"), Some(false))
    );
    // The same batch again keeps nothing twice.
    let (_, k) = report(&db, "eu", batch, T0 + 6);
    assert_eq!(
        (k["kept"].as_u64(), k["known"].as_u64()),
        (Some(0), Some(2))
    );
    let s = summary(&db);
    let r = &s["ledger"]["relays"][0];
    assert_eq!(r["sub"], "relay@eu");
    assert_eq!(
        (r["batches"].as_u64(), r["kept"].as_u64()),
        (Some(2), Some(2))
    );
    // The relay's own drops, as it last said; none for lack of room.
    assert_eq!(
        (r["dropped"].as_u64(), r["backlogDropped"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(
        (r["held"].as_str(), r["abandoned"].as_str()),
        (Some("900"), Some("7"))
    );
    assert_eq!(r["incarnation"], RELAY);
    // One row for the relay's grant, two for its reports.
    assert_eq!(s["ledger"]["rows"], 3);
}

#[test]
fn a_report_outside_the_relays_own_grant_is_not_kept() {
    let (db, (a, b)) = with_relay_grant(100);
    let other = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    // Another incarnation, another region's relay, past the grant's end,
    // across it, and an empty range.
    for (r, g) in [
        ("eu", sub("svc", "g", a, a + 5, other)),
        ("us", sub("svc", "g", a, a + 5, RELAY)),
        ("eu", sub("svc", "g", b, b + 5, RELAY)),
        ("eu", sub("svc", "g", b - 2, b + 2, RELAY)),
        ("eu", sub("svc", "g", a + 3, a + 3, RELAY)),
    ] {
        let (s, k) = report(&db, r, vec![g.clone()], T0 + 1);
        assert_eq!(
            (s, k["kept"].as_u64(), k["unmatched"].as_u64()),
            (200, Some(0), Some(1)),
            "{g:?}"
        );
    }
    let relays = summary(&db)["ledger"]["relays"].clone();
    let eu = relays
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["sub"] == "relay@eu");
    assert_eq!(eu.unwrap()["unmatched"], 4);
    // A generator's own grant is no relay's to report.
    let (_, g) = call(&db, grant_as("svc", "n", "g9", "r1", 10));
    let (c, _) = range_of(&g);
    let (_, k) = report(&db, "eu", vec![sub("x", "g", c, c + 1, RELAY)], T0 + 1);
    assert_eq!(k["unmatched"], 1);
    assert_eq!(lookup(&db, c)["sub"], "svc");
    assert_eq!(lookup(&db, a)["relay"]["reported"], false);
}

#[test]
fn reports_never_take_the_last_quarter_of_the_budget() {
    let (db, (a, _)) = with_relay_grant(1_000);
    set_limits(&db, 40, 40);
    let batch = (0..35)
        .map(|i| sub("svc", &format!("g{i}"), a + i, a + i + 1, RELAY))
        .collect();
    let (_, k) = report(&db, "eu", batch, T0 + 1);
    // 30 rows of 40 at most: the relay's grant and 29 reports.
    assert_eq!(
        (k["kept"].as_u64(), k["dropped"].as_u64()),
        (Some(29), Some(6))
    );
    let s = summary(&db);
    assert_eq!(s["ledger"]["rows"], 30);
    assert_eq!(s["ledger"]["relays"][0]["dropped"], 6);
    // Generators still get ranges.
    for i in 0..5 {
        let (st, g) = call(&db, grant_as(&format!("svc{i}"), "n", "g", "r1", 1));
        assert_eq!(st, 200, "{g}");
    }
}

#[test]
fn one_generator_cannot_crowd_out_anothers_reports() {
    let (db, (a, _)) = with_relay_grant(1_000);
    set_limits(&db, 400, 40);
    // One generator's 40 sub-grants: 30 kept, three quarters of its budget.
    let greedy = (0..40)
        .map(|i| sub("greedy", "g", a + i, a + i + 1, RELAY))
        .collect();
    let (_, k) = report(&db, "eu", greedy, T0 + 1);
    assert_eq!(
        (k["kept"].as_u64(), k["dropped"].as_u64()),
        (Some(30), Some(10))
    );
    // Another's, through the same relay, still kept.
    let other = (40..45)
        .map(|i| sub("other", "h", a + i, a + i + 1, RELAY))
        .collect();
    let (_, k) = report(&db, "eu", other, T0 + 2);
    assert_eq!(
        (k["kept"].as_u64(), k["dropped"].as_u64()),
        (Some(5), Some(0))
    );
    assert_eq!(crate::object::spans::rows_of(&db, "greedy"), Ok(30));
    assert_eq!(crate::object::spans::rows_of(&db, "relay@eu"), Ok(1));
}

#[test]
fn reports_are_pruned_with_the_retention_and_their_rows_given_back() {
    let (db, (a, _)) = with_relay_grant(1_000);
    let day = 86_400_000;
    report(
        &db,
        "eu",
        vec![sub("svc", "g", a, a + 10, RELAY)],
        T0 + 10_000,
    );
    assert_eq!(summary(&db)["ledger"]["rows"], 2);
    // The relay's grant goes first; the report is due 10 s later.
    assert_eq!(prune(&db, T0 + day + 1, day), Ok(Some(T0 + 10_000 + day)));
    assert_eq!(summary(&db)["ledger"]["rows"], 1);
    assert_eq!(prune(&db, T0 + day + 10_001, day), Ok(None));
    assert_eq!(summary(&db)["ledger"]["rows"], 0);
    assert_eq!(crate::object::spans::rows_of(&db, "svc"), Ok(0));
    // The relay that reported nothing for the retention is forgotten.
    assert_eq!(summary(&db)["ledger"]["relays"], serde_json::json!([]));
}

#[test]
fn a_retry_of_a_reported_sub_grant_at_the_object_is_a_new_request() {
    let (db, (a, b)) = with_relay_grant(1_000);
    report(&db, "eu", vec![sub("svc", "g", a, a + 10, RELAY)], T0 + 1);
    // The same request (sub, incarnation, request id) reaches the object
    // directly, after its relay restarted: a fresh range, outside the
    // relay's, never the sub-range again.
    let (s, g) = call(&db, grant_as("svc", "n", "g", "r1", 10));
    assert_eq!(s, 200);
    assert_eq!(g["replayed"], false);
    let (c, d) = range_of(&g);
    assert!(d <= a || c >= b, "[{c}, {d}) inside the relay's [{a}, {b})");
}

#[test]
fn a_report_for_a_namespace_that_does_not_exist_is_refused() {
    let db = db();
    let (s, v) = report(&db, "eu", vec![], T0);
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (404, Some("namespace_not_found"))
    );
}

#[test]
fn a_batch_sent_again_at_the_edge_of_the_room_is_known_not_dropped() {
    let (db, (a, _)) = with_relay_grant(1_000);
    set_limits(&db, 40, 40);
    let batch: Vec<_> = (0..29)
        .map(|i| sub("svc", &format!("g{i}"), a + i, a + i + 1, RELAY))
        .collect();
    let (_, k) = report(&db, "eu", batch.clone(), T0 + 1);
    assert_eq!(k["kept"], 29);
    // The answer was lost; the relay sends the same batch again.
    let (_, k) = report(&db, "eu", batch, T0 + 2);
    assert_eq!(
        (k["known"].as_u64(), k["dropped"].as_u64()),
        (Some(29), Some(0)),
        "{k}"
    );
}

#[test]
fn a_tiny_budget_keeps_its_last_quarter() {
    let l = rangeid_core::ledger::Limits::new(None, Some(3), Some(3)).unwrap();
    assert!(
        l.report_room(0, 0, 10) < 3,
        "room {}",
        l.report_room(0, 0, 10)
    );
}

/// A relay's instances at `now`: its summary entry.
fn relay_at(db: &MemSql, now: i64) -> Json {
    let o = run(db, &ObjectRequest::Summary { namespace: ns("n") }, now);
    body(&o)["ledger"]["relays"][0].clone()
}

#[test]
fn a_splits_instances_are_summed_and_an_ended_instance_counts_what_it_held_as_abandoned() {
    let (db, _) = with_relay_grant(1_000);
    let twin = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    let as_of = |inc: &str, held: u64, abandoned: u64, sub_grants: u64| RelayView {
        incarnation: Incarnation::new(inc).unwrap(),
        held: DecU64(held),
        abandoned: DecU64(abandoned),
        sub_grants,
        dropped: 0,
        refused: RelayRefused {
            frozen: held % 7,
            exhausted: 0,
            conflict: 1,
        },
    };
    // Two live instances of relay@eu (a split) report in turn: neither
    // overwrites the other.
    report_as(&db, "eu", vec![], as_of(RELAY, 600, 5, 40), T0 + 10);
    report_as(&db, "eu", vec![], as_of(twin, 300, 2, 9), T0 + 20);
    report_as(&db, "eu", vec![], as_of(RELAY, 550, 5, 45), T0 + 30);
    let r = relay_at(&db, T0 + 40);
    assert_eq!(
        (
            r["instances"].as_u64(),
            r["live"].as_u64(),
            r["held"].as_str(),
            r["abandoned"].as_str(),
            r["subGrants"].as_u64()
        ),
        (Some(2), Some(2), Some("850"), Some("7"), Some(54)),
        "{r}"
    );
    assert_eq!(r["incarnation"], RELAY, "the latest to report");
    // What each instance refused, as it last said, summed.
    assert_eq!(
        r["refused"],
        serde_json::json!({"frozen": 550 % 7 + 300 % 7, "exhausted": 0, "conflict": 2})
    );
    // A lease later the twin has not reported again: it ended (a restart
    // or an eviction), and what it held counts as abandoned.
    let lease = rangeid_core::relay::RELAY_LEASE_MS as i64;
    let r = relay_at(&db, T0 + 31 + lease);
    assert_eq!(
        (
            r["live"].as_u64(),
            r["held"].as_str(),
            r["abandoned"].as_str()
        ),
        (Some(1), Some("550"), Some("307")),
        "{r}"
    );
    // The twin reports again after all (a split that was idle): live
    // again, and its own count of what expired takes over.
    report_as(&db, "eu", vec![], as_of(twin, 0, 302, 9), T0 + 32 + lease);
    let r = relay_at(&db, T0 + 33 + lease);
    assert_eq!(
        (
            r["live"].as_u64(),
            r["held"].as_str(),
            r["abandoned"].as_str()
        ),
        (Some(1), Some("0"), Some("857")),
        "the first instance ended now: {r}"
    );
}
