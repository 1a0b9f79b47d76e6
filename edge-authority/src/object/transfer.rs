//! Moving a namespace between authorities (self-hosted workerd and
//! Cloudflare, either way): the export on the source and the import on the
//! destination. Where the destination starts is core's decision
//! ([`rangeid_core::transfer::Handover`]); this stores it.
//!
//! - **Export** (`POST /v1/namespaces/{ns}/export`, admin): the driver first
//!   reads the witness's mark ([`export`] takes that answer), then one
//!   commit freezes the namespace and writes the `export` audit entry, and
//!   the answer is an [`ExportDocument`]: the configuration, `next`, the
//!   fence, the witness's mark, where the destination will start, and a
//!   SHA-256 check over all of it. Before answering, the driver raises the
//!   witness to the handover's retire mark (past `max`): the namespace is
//!   retired on the source for good, and even a copy of its storage from
//!   before the export starts with nothing to grant. An unfreeze is
//!   refused (`namespace_exported`), and so is another export.
//! - **Import** (`POST /v1/namespaces/{ns}/import`, admin, the document as
//!   the body): one commit creates the namespace with `next` already at the
//!   document's start and writes the `import` audit entry, so there is no
//!   moment at which the destination could grant below anything the source
//!   granted. Whether a document is taken, and what it creates, is core's
//!   decision ([`ExportDocument::import`]): a namespace that already exists
//!   is never written over (`namespace_exists`), the same document again is
//!   `already_imported`, and a foreign, old, edited or other namespace's
//!   document each has its own code; nothing is written on any refusal.

use rangeid_core::authority::NamespaceStatus;
use rangeid_core::fence::{Phase, Witnessed};
use rangeid_core::transfer::{
    check_format, Existing, ExportDocument, Handover, ImportError, Settings,
};
use rangeid_core::wire::DecBound;
use rangeid_core::{ErrorCode, Namespace};
use serde_json::json;

use super::{admin, grant, load, load_any, relays, spans, summary_of, unavailable};
use crate::object::store::{NamespaceRow, Sql, StoreError, INSERT_NAMESPACE};
use crate::shared::response::{ApiError, HttpReply};
use crate::shared::summary::rfc3339;

/// An import's refusal as the API answers it (core's code and message).
pub fn refusal(e: ImportError) -> ApiError {
    ApiError::new(e.code(), e.to_string())
}

/// Reads an import's body: its `format` first (so an old or foreign
/// document gets its own answer, [`check_format`]), then the document. Any
/// other failure to read it is [`ImportError::Malformed`].
pub fn read(body: &[u8]) -> Result<ExportDocument, ApiError> {
    crate::api::check_size(body.len())?;
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|_| refusal(ImportError::Malformed))?;
    let format = value
        .get("format")
        .and_then(serde_json::Value::as_str)
        .ok_or(refusal(ImportError::Malformed))?;
    check_format(format).map_err(refusal)?;
    serde_json::from_value(value).map_err(|e| {
        ApiError::new(
            ErrorCode::ExportInvalid,
            format!("{}: {e}", ImportError::Malformed),
        )
    })
}

/// Exports the namespace: applies `witness` (the mark the driver just read
/// from the witness, after the object's start, with a request sent when the
/// recorded fence was `sent_at_fence`) as any answer from it is applied,
/// then in one commit freezes the namespace and writes the
/// `export` audit entry; answers `200` with the [`ExportDocument`] and the
/// mark the driver must raise the witness to before it sends that answer
/// ([`Handover::retire_mark`]). Exporting again answers a new document
/// only while the retire has not happened (it failed: the first document
/// was never answered); after it, `namespace_exported`.
pub fn export(
    sql: &impl Sql,
    ns: &Namespace,
    (sent_at_fence, witness): (u128, Witnessed),
    (reason, actor, source): (&str, &str, &str),
    now: i64,
) -> Result<(HttpReply, u128), ApiError> {
    let before = load(sql, ns)?;
    let end = u128::from(before.state.config().max()) + 1;
    if before.state.fence() >= end && exported(sql).map_err(unavailable)? {
        // Retired already: a new document would start past the last ID.
        return Err(ApiError::new(
            ErrorCode::NamespaceExported,
            format!(
                "namespace {:?} was exported and is retired here; its document is the one \
                 the first export answered (its start and check are in the audit log's \
                 export entry)",
                ns.as_str()
            ),
        ));
    }
    grant::witnessed(sql, sent_at_fence, witness, Phase::Running, now).map_err(unavailable)?;
    let row = load(sql, ns)?;
    let handover = Handover::export(&row.state, witness.mark);
    let [grants_per_second, ledger_rows, sub_ledger_rows] =
        spans::set_limits_of(sql).map_err(unavailable)?;
    let settings = Settings {
        relays: relays::stored(sql).map_err(unavailable)?.is_on(),
        grants_per_second,
        ledger_rows,
        sub_ledger_rows,
    };
    let doc = ExportDocument::new(&handover, settings, source, &rfc3339(now), actor, reason);
    let after = NamespaceRow {
        state: row.state.with_status(NamespaceStatus::Frozen),
        ..row
    };
    sql.atomically(&mut || {
        admin::update(sql, &row, &after)?;
        admin::audit(
            sql,
            now,
            actor,
            "export",
            Some(json!({ "state": row.state.status().as_str() })),
            Some(json!({
                "state": "frozen",
                "next": doc.next,
                "fence": doc.fence,
                "witness": doc.witness,
                "start": doc.start,
                "check": doc.check,
            })),
            Some(reason),
        )
    })
    .map_err(unavailable)?;
    Ok((HttpReply::json(200, &doc), handover.retire_mark()))
}

/// The check of the document this object's namespace was imported from,
/// if it was imported.
fn imported_check(sql: &impl Sql) -> Result<Option<String>, StoreError> {
    let rows = sql.exec(
        "SELECT after FROM audit WHERE action = 'import' ORDER BY seq LIMIT 1",
        &[],
    )?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let after: serde_json::Value = serde_json::from_str(crate::object::store::text(row, 0)?)
        .map_err(|e| StoreError(format!("stored import entry: {e}")))?;
    Ok(after["check"].as_str().map(str::to_owned))
}

/// Imports the namespace `ns` from `doc`: `201` with its summary, the
/// namespace created as core decides ([`ExportDocument::import`]), the
/// limits the document's settings carry, and the `import` audit entry
/// (with those settings), in one commit. Relays start off here whatever
/// the source had: turning them on raises this authority's witness first,
/// an admin act of its own. Every refusal writes nothing.
pub fn import(
    sql: &impl Sql,
    ns: &Namespace,
    doc: &ExportDocument,
    actor: &str,
    now: i64,
) -> Result<HttpReply, ApiError> {
    let check = if load_any(sql).map_err(unavailable)?.is_some() {
        Some(imported_check(sql).map_err(unavailable)?)
    } else {
        None
    };
    let existing = match &check {
        None => Existing::Nothing,
        Some(Some(check)) => Existing::Imported { check },
        Some(None) => Existing::Created,
    };
    let state = doc.import(ns, existing).map_err(refusal)?;
    let settings = doc.settings();
    let row = NamespaceRow {
        state,
        ..NamespaceRow::create(*state.name(), *state.config(), now)
    };
    sql.atomically(&mut || {
        sql.exec(INSERT_NAMESPACE, &row.insert_params())?;
        spans::set_limits(
            sql,
            settings.grants_per_second,
            settings.ledger_rows,
            settings.sub_ledger_rows,
        )?;
        admin::audit(
            sql,
            now,
            actor,
            "import",
            None,
            Some(json!({
                "first": doc.first,
                "max": doc.max,
                "maxCount": doc.max_count,
                "next": DecBound(row.state.next()),
                "state": "active",
                "limits": {
                    "grantsPerSecond": settings.grants_per_second,
                    "ledgerRows": settings.ledger_rows,
                    "subLedgerRows": settings.sub_ledger_rows,
                },
                "relays": "off",
                "relaysAtSource": if settings.relays { "on" } else { "off" },
                "from": {
                    "source": doc.source,
                    "exportedAt": doc.exported_at,
                    "exportedBy": doc.exported_by,
                    "next": doc.next,
                    "fence": doc.fence,
                    "witness": doc.witness,
                },
                "check": doc.check,
            })),
            Some(&doc.reason),
        )
    })
    .map_err(unavailable)?;
    summary_of(sql, &row, now).map(|s| HttpReply::json(201, &s))
}

/// Whether the namespace was exported and not unfrozen since: its newest
/// `export` or `unfreeze` audit entry is an export.
pub fn exported(sql: &impl Sql) -> Result<bool, StoreError> {
    let rows = sql.exec(
        "SELECT action FROM audit WHERE action = 'export' LIMIT 1",
        &[],
    )?;
    Ok(!rows.is_empty())
}

/// The refusal of an unfreeze after an export.
pub fn still_exported(ns: &Namespace) -> ApiError {
    ApiError::new(
        ErrorCode::NamespaceExported,
        format!(
            "namespace {:?} was exported to move it to another authority and is retired here \
             (its witness is past its last ID); unfreezing it would let two authorities grant \
             the same IDs. Import its document on the destination",
            ns.as_str()
        ),
    )
}
