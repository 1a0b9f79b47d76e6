//! Moving a namespace: the export on the source, the import on the
//! destination (each destination on a thread of its own, so its witness is
//! its own), and the unfreeze that would let both grant.

use super::*;
use rangeid_core::transfer::ExportDocument;

fn export_req(name: &str) -> ObjectRequest {
    ObjectRequest::Export {
        namespace: ns(name),
        reason: "to Cloudflare".into(),
        actor: "ops".into(),
        source: "http://127.0.0.1:8787".into(),
    }
}

fn import_req(doc: &Json) -> ObjectRequest {
    ObjectRequest::Import {
        namespace: ns("orders"),
        document: Box::new(serde_json::from_value(doc.clone()).unwrap()),
        actor: "ops".into(),
    }
}

fn unfreeze_req(name: &str) -> ObjectRequest {
    ObjectRequest::SetFrozen {
        namespace: ns(name),
        frozen: false,
        reason: "back".into(),
        actor: "ops".into(),
    }
}

fn dec(v: &Json) -> u128 {
    v.as_str().unwrap().parse().unwrap()
}

/// A source that granted `grants` ranges of 100: its export document.
fn exported_source(db: &MemSql, grants: usize) -> Json {
    call(db, create_req("orders", 1, u64::MAX, 1_000));
    for i in 0..grants {
        assert_eq!(
            call(db, grant_req("orders", "a", &format!("r{i}"), 100)).0,
            200
        );
    }
    let (s, doc) = call(db, export_req("orders"));
    assert_eq!(s, 200, "{doc}");
    doc
}

/// On a thread of its own (a witness of its own): imports `doc` into a
/// fresh destination, then grants `n` ranges there; the summary after the
/// import and the ranges.
fn destination(doc: &Json, n: usize) -> (u16, Json, Vec<(u128, u128)>) {
    let doc = doc.clone();
    std::thread::spawn(move || {
        let db = super::db();
        let (s, sum) = call(&db, import_req(&doc));
        let mut ranges = Vec::new();
        if s < 300 {
            check(&db, T0);
            for i in 0..n {
                let (gs, g) = call(&db, grant_req("orders", "d", &format!("r{i}"), 100));
                assert_eq!(gs, 200, "{g}");
                ranges.push(range_of(&g));
            }
        }
        (s, sum, ranges)
    })
    .join()
    .unwrap()
}

#[test]
fn an_export_freezes_in_the_same_commit_and_hands_over_the_highest_mark() {
    let db = db();
    let doc = exported_source(&db, 5);
    // The mark the witness held when read; since then the export retired it.
    let witness = dec(&doc["witness"]);
    assert_eq!(WITNESS.with(Cell::get), u128::from(u64::MAX) + 1);
    let (_, sum) = call(
        &db,
        ObjectRequest::Summary {
            namespace: ns("orders"),
        },
    );
    assert_eq!(sum["state"], "frozen");
    assert_eq!(dec(&doc["next"]), 501);
    assert_eq!(dec(&doc["witness"]), witness);
    assert!(
        witness > 501,
        "the fence is a chunk ahead of next: {witness}"
    );
    assert_eq!(
        dec(&doc["start"]),
        witness,
        "the highest of next, fence and witness"
    );
    assert_eq!(
        (
            doc["format"].as_str(),
            doc["source"].as_str(),
            doc["exportedBy"].as_str()
        ),
        (
            Some("rangeid-namespace-export/2"),
            Some("http://127.0.0.1:8787"),
            Some("ops")
        )
    );
    let parsed: ExportDocument = serde_json::from_value(doc.clone()).unwrap();
    assert_eq!(parsed.handover(&ns("orders")).unwrap().start(), witness);
    // Audited with what it handed over, and nothing is granted any more.
    let (_, a) = call(
        &db,
        ObjectRequest::Audit {
            namespace: ns("orders"),
            limit: 1,
            before: None,
        },
    );
    let entry = &a["audit"][0];
    assert_eq!(
        (entry["action"].as_str(), entry["reason"].as_str()),
        (Some("export"), Some("to Cloudflare"))
    );
    assert_eq!(entry["after"]["check"], doc["check"]);
    assert_eq!(entry["after"]["start"], doc["start"]);
    let (s, e) = call(&db, grant_req("orders", "a", "late", 1));
    assert_eq!((s, code(&e)), (423, "namespace_frozen"));
    // A replay of a grant it made still answers (the generator's retry).
    assert_eq!(call(&db, grant_req("orders", "a", "r0", 100)).0, 200);
}

#[test]
fn the_witness_read_at_export_covers_a_raise_the_source_never_recorded() {
    let db = db();
    call(&db, create_req("orders", 1, u64::MAX, 1_000));
    call(&db, grant_req("orders", "a", "r0", 100));
    // A raise the witness acknowledged and whose answer was lost: the
    // object recorded that it asked, not the mark.
    grant::record_asked(&db, 50_000).unwrap();
    WITNESS.with(|w| w.set(50_000));
    let (_, doc) = call(&db, export_req("orders"));
    assert_eq!(
        (dec(&doc["next"]), dec(&doc["witness"]), dec(&doc["start"])),
        (101, 50_000, 50_000)
    );
    let (_, _, ranges) = destination(&doc, 3);
    assert!(
        ranges.iter().all(|&(start, _)| start >= 50_000),
        "{ranges:?}"
    );
}

#[test]
fn the_destination_starts_at_the_document_and_never_grants_below_the_witness_mark() {
    let db = db();
    let doc = exported_source(&db, 20);
    let source: Vec<(u128, u128)> = (0..20)
        .map(|i| range_of(&call(&db, grant_req("orders", "a", &format!("r{i}"), 100)).1))
        .collect();
    let mark = dec(&doc["witness"]);
    let (s, sum, ranges) = destination(&doc, 20);
    assert_eq!(s, 201, "{sum}");
    assert_eq!(
        (sum["state"].as_str(), dec(&sum["next"])),
        (Some("active"), mark)
    );
    assert_eq!(
        ranges[0].0, mark,
        "the first grant starts exactly at the source's mark"
    );
    for &(a, b) in &ranges {
        assert!(a >= mark);
        assert!(
            source.iter().all(|&(c, d)| b <= c || a >= d),
            "[{a}, {b}) overlaps the source"
        );
    }
}

#[test]
fn an_import_is_audited_and_refuses_the_same_document_again_or_an_existing_namespace() {
    let db = db();
    let doc = exported_source(&db, 2);
    std::thread::spawn(move || {
        let dest = super::db();
        let (s, _) = call(&dest, import_req(&doc));
        assert_eq!(s, 201);
        let (again, e) = call(&dest, import_req(&doc));
        assert_eq!((again, code(&e)), (409, "already_imported"), "{e}");
        assert_eq!(audit_actions(&dest, "orders"), ["import"]);
        let (_, a) = call(
            &dest,
            ObjectRequest::Audit {
                namespace: ns("orders"),
                limit: 1,
                before: None,
            },
        );
        let after = &a["audit"][0]["after"];
        assert_eq!(
            (after["next"].clone(), after["from"]["witness"].clone()),
            (doc["start"].clone(), doc["witness"].clone())
        );
        // Another document for the same name: never written over.
        let source_db = super::db();
        let other_doc = exported_source(&source_db, 1);
        let (s, e) = call(&dest, import_req(&other_doc));
        assert_eq!((s, code(&e)), (409, "namespace_exists"));
        // Nor over a namespace created here.
        let fresh = super::db();
        call(&fresh, create_req("orders", 1, u64::MAX, 1_000));
        let (s, e) = call(&fresh, import_req(&doc));
        assert_eq!((s, code(&e)), (409, "namespace_exists"));
        assert_eq!(audit_actions(&fresh, "orders"), ["create"]);
    })
    .join()
    .unwrap();
}

#[test]
fn a_document_that_was_edited_is_refused_and_changes_nothing() {
    let db = db();
    let doc = exported_source(&db, 3);
    for (field, value, want) in [
        ("witness", Json::from("5"), "export_invalid"),
        ("start", Json::from("7"), "export_invalid"),
        ("next", Json::from("1"), "export_invalid"),
        ("maxCount", Json::from(1), "export_invalid"),
        (
            "format",
            Json::from("rangeid-namespace-export/3"),
            "export_unsupported",
        ),
        ("namespace", Json::from("payments"), "export_invalid"),
    ] {
        let mut edited = doc.clone();
        edited[field] = value;
        let d = edited.clone();
        let (s, e) = std::thread::spawn(move || {
            let dest = super::db();
            let out = call(&dest, import_req(&d));
            assert!(
                load_any(&dest).unwrap().is_none(),
                "nothing was created: {out:?}"
            );
            out
        })
        .join()
        .unwrap();
        assert_eq!((s, code(&e)), (400, want), "{field}: {e}");
    }
}

#[test]
fn the_source_stays_frozen_and_retired() {
    let db = db();
    exported_source(&db, 1);
    let (s, e) = call(&db, unfreeze_req("orders"));
    assert_eq!((s, code(&e)), (409, "namespace_exported"));
    let (_, sum) = call(
        &db,
        ObjectRequest::Summary {
            namespace: ns("orders"),
        },
    );
    assert_eq!(sum["state"], "frozen");
    // The witness is past the last ID.
    assert_eq!(WITNESS.with(Cell::get), u128::from(u64::MAX) + 1);
    // Freezing again changes nothing of that; exporting again is refused
    // (the document is the first export's).
    let freeze = ObjectRequest::SetFrozen {
        namespace: ns("orders"),
        frozen: true,
        reason: "still".into(),
        actor: "ops".into(),
    };
    assert_eq!(call(&db, freeze).0, 200);
    assert_eq!(call(&db, unfreeze_req("orders")).0, 409);
    let (s, again) = call(&db, export_req("orders"));
    assert_eq!((s, code(&again)), (409, "namespace_exported"), "{again}");
    assert_eq!(call(&db, unfreeze_req("orders")).0, 409);
}

#[test]
fn an_export_whose_retire_failed_may_be_exported_again() {
    // The driver answers 503 when the witness cannot be retired: no
    // document went out, and the next export answers one.
    let db = db();
    call(&db, create_req("orders", 1, u64::MAX, 1_000));
    call(&db, grant_req("orders", "a", "r0", 100));
    let (reply, _retire) = transfer::export(
        &db,
        &ns("orders"),
        (0, Witnessed::read(WITNESS.with(Cell::get))),
        ("move", "ops", "here"),
        0,
    )
    .unwrap();
    assert_eq!(reply.status, 200);
    let (s, doc) = call(&db, export_req("orders"));
    assert_eq!(s, 200, "{doc}");
    assert!(dec(&doc["start"]) > 100);
}

#[test]
fn a_copy_of_the_source_from_before_the_export_grants_nothing() {
    // The review's case: the source's storage alone is put back to a copy
    // from before the export (active, no export entry); it starts against
    // its witness, which the export retired past the last ID.
    let db = db();
    call(&db, create_req("orders", 1, u64::MAX, 1_000));
    assert_eq!(call(&db, grant_req("orders", "a", "r0", 100)).0, 200);
    let copy = snapshot(&db);
    let (s, doc) = call(&db, export_req("orders"));
    assert_eq!(s, 200, "{doc}");
    restore(&db, &copy);
    db.exec("DELETE FROM audit WHERE action = 'export'", &[])
        .unwrap();
    check(&db, 0);
    let (s, e) = call(&db, grant_req("orders", "b", "r0", 1));
    assert_eq!(
        (s, code(&e)),
        (409, "namespace_exhausted"),
        "a restored source must not grant from {} on: {e}",
        doc["start"]
    );
}

#[test]
fn an_export_without_its_audit_entry_commits_nothing() {
    let db = db();
    call(&db, create_req("orders", 1, u64::MAX, 1_000));
    call(&db, grant_req("orders", "a", "r0", 100));
    let broken = Failing {
        inner: &db,
        fail_on: "INSERT INTO audit",
    };
    let o = run(&broken, &export_req("orders"), T0);
    assert_eq!(o.reply.status, 503);
    let (_, sum) = call(
        &db,
        ObjectRequest::Summary {
            namespace: ns("orders"),
        },
    );
    assert_eq!(sum["state"], "active", "not frozen without its entry");
    assert_eq!(call(&db, grant_req("orders", "a", "r1", 1)).0, 200);
    let (s, e) = call(&super::db(), export_req("missing"));
    assert_eq!((s, code(&e)), (404, "namespace_not_found"));
}

#[test]
fn the_settings_move_with_the_namespace_limits_applied_and_relays_noted() {
    use crate::api::{LimitsChange, Setting};
    let db = db();
    call(&db, create_req("orders", 1, u64::MAX, 1_000));
    let (s, v) = call(
        &db,
        ObjectRequest::SetLimits {
            namespace: ns("orders"),
            change: LimitsChange {
                grants_per_second: Setting::To(7),
                ledger_rows: Setting::Keep,
                sub_ledger_rows: Setting::To(300),
            },
            actor: "ops".into(),
        },
    );
    assert_eq!(s, 200, "{v}");
    crate::object::relays::store(&db, crate::object::relays::Stored::On).unwrap();
    let (s, doc) = call(&db, export_req("orders"));
    assert_eq!(s, 200, "{doc}");
    assert_eq!(
        doc["settings"],
        serde_json::json!({"relays": true, "grantsPerSecond": 7, "ledgerRows": null, "subLedgerRows": 300})
    );
    let d = doc.clone();
    let (summary, entry, relays) = std::thread::spawn(move || {
        let dest = super::db();
        let (s, summary) = call(&dest, import_req(&d));
        assert_eq!(s, 201, "{summary}");
        let (_, audit) = call(
            &dest,
            ObjectRequest::Audit {
                namespace: ns("orders"),
                limit: 10,
                before: None,
            },
        );
        let relays = crate::object::relays::stored(&dest).unwrap();
        (summary, audit["audit"][0].clone(), relays)
    })
    .join()
    .unwrap();
    assert_eq!(
        (
            summary["limits"]["grantsPerSecond"].as_u64(),
            summary["limits"]["subLedgerRows"].as_u64()
        ),
        (Some(7), Some(300)),
        "{summary}"
    );
    assert_eq!(summary["relays"], "off", "{summary}");
    assert!(!relays.is_on(), "relays start off at the destination");
    assert_eq!(entry["action"], "import");
    assert_eq!(entry["after"]["relaysAtSource"], "on", "{entry}");
    assert_eq!(entry["after"]["limits"]["grantsPerSecond"], 7, "{entry}");
}
