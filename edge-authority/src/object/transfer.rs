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
//!   SHA-256 check over all of it. From then on the source stays frozen: an
//!   unfreeze is refused (`namespace_exported`) unless it says it abandons
//!   the move.
//! - **Import** (`POST /v1/namespaces/{ns}/import`, admin, the document as
//!   the body): one commit creates the namespace with `next` already at the
//!   document's start and writes the `import` audit entry, so there is no
//!   moment at which the destination could grant below anything the source
//!   granted. A namespace that already exists is never written over
//!   (`namespace_exists`); the same document again answers `200` with the
//!   summary, so an admin whose answer was lost can retry.

use rangeid_core::authority::{NamespaceConfig, NamespaceStatus};
use rangeid_core::fence::{Phase, Witnessed};
use rangeid_core::transfer::Handover;
use rangeid_core::wire::{DecBound, DecU64};
use rangeid_core::{ErrorCode, Namespace};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::{admin, grant, load, load_any, summary_of, unavailable};
use crate::api::MAX_REASON;
use crate::response::{ApiError, HttpReply};
use crate::store::{NamespaceRow, Sql, StoreError, INSERT_NAMESPACE};
use crate::summary::rfc3339;

/// The document's format, first field of every export.
pub const FORMAT: &str = "rangeid-namespace-export/1";
/// The longest `source` (the exporting authority's origin) accepted.
pub const MAX_SOURCE: usize = 512;
/// The longest `exportedBy` (a token `sub`), in bytes.
pub const MAX_ACTOR: usize = 128;

/// What an export answers and an import takes: a namespace's state as its
/// source handed it over. Every ID-valued field is a decimal string. The
/// `check` (`sha256:` and 64 hex digits) covers every other field as this
/// type serializes them with `check` empty, so a document that was cut,
/// edited or mixed up with another is refused; it is a checksum, not a
/// signature (an admin of the destination may create any namespace anyway).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExportDocument {
    /// [`FORMAT`].
    pub format: String,
    /// The namespace.
    pub namespace: Namespace,
    /// Its first ID.
    pub first: DecU64,
    /// Its last ID.
    pub max: DecU64,
    /// Its largest request.
    pub max_count: u64,
    /// The source's `next` when it froze.
    pub next: DecBound,
    /// The fence the source had recorded.
    pub fence: DecBound,
    /// The mark the source's witness held, read just before the freeze.
    pub witness: DecBound,
    /// Where the destination's first grant starts: the highest of the three
    /// ([`Handover::start`]); an import checks it.
    pub start: DecBound,
    /// The exporting authority's origin (as its request named it).
    pub source: String,
    /// When the export was committed (RFC 3339).
    pub exported_at: String,
    /// The `sub` of the admin token that exported.
    pub exported_by: String,
    /// Why, as the export's audit entry says.
    pub reason: String,
    /// `sha256:` and the hex digest of the document with `check` empty.
    pub check: String,
}

fn digest(doc: &ExportDocument) -> String {
    let bare = ExportDocument {
        check: String::new(),
        ..doc.clone()
    };
    // Serializing a struct of strings and integers cannot fail.
    let text = serde_json::to_string(&bare).unwrap_or_default();
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Printable text of at most `max` bytes (no control characters).
fn printable(field: &str, text: &str, max: usize) -> Result<(), ApiError> {
    if text.len() > max || text.chars().any(char::is_control) {
        return Err(ApiError::invalid(format!(
            "document: {field} must be at most {max} bytes of printable text"
        )));
    }
    Ok(())
}

impl ExportDocument {
    /// The document for `handover`, with its check.
    pub fn new(
        handover: &Handover,
        source: &str,
        exported_at: i64,
        exported_by: &str,
        reason: &str,
    ) -> ExportDocument {
        let c = handover.config();
        let mut doc = ExportDocument {
            format: FORMAT.to_owned(),
            namespace: *handover.name(),
            first: DecU64(c.first()),
            max: DecU64(c.max()),
            max_count: c.max_count(),
            next: DecBound(handover.next()),
            fence: DecBound(handover.fence()),
            witness: DecBound(handover.witness()),
            start: DecBound(handover.start()),
            source: source.chars().take(MAX_SOURCE).collect(),
            exported_at: rfc3339(exported_at),
            exported_by: exported_by.to_owned(),
            reason: reason.to_owned(),
            check: String::new(),
        };
        doc.check = digest(&doc);
        doc
    }

    /// The handover the document describes, checked: its format, its
    /// check, its text fields, core's invariants, and that its `start` is
    /// the one core decides. Every refusal is `400 invalid_request`.
    pub fn handover(&self) -> Result<Handover, ApiError> {
        if self.format != FORMAT {
            return Err(ApiError::invalid(format!(
                "document: format must be {FORMAT:?}, got {:?}",
                self.format
            )));
        }
        if self.check != digest(self) {
            return Err(ApiError::invalid(
                "document: its check does not match its contents (cut, edited or mixed up with \
                 another); export it again",
            ));
        }
        printable("source", &self.source, MAX_SOURCE)?;
        printable("exportedBy", &self.exported_by, MAX_ACTOR)?;
        printable("exportedAt", &self.exported_at, 64)?;
        if self.reason.chars().count() > MAX_REASON || self.reason.chars().any(char::is_control) {
            return Err(ApiError::invalid(format!(
                "document: reason must be at most {MAX_REASON} printable characters"
            )));
        }
        let config =
            NamespaceConfig::new(Some(self.first.0), Some(self.max.0), Some(self.max_count))
                .map_err(|e| ApiError::invalid(format!("document: {e}")))?;
        let handover = Handover::from_parts(
            self.namespace,
            config,
            self.next.0,
            self.fence.0,
            self.witness.0,
        )
        .map_err(|e| ApiError::invalid(format!("document: {e}")))?;
        if handover.start() != self.start.0 {
            return Err(ApiError::invalid(format!(
                "document: start {} is not where these marks start ({})",
                self.start.0,
                handover.start()
            )));
        }
        Ok(handover)
    }
}

/// Exports the namespace: applies `witness` (the mark the driver just read
/// from the witness, after the object's start) as any answer from it is
/// applied, then in one commit freezes the namespace and writes the
/// `export` audit entry; answers `200` with the [`ExportDocument`].
/// Exporting again (the namespace is then already frozen) answers a new
/// document at least as high: import only one of them.
pub fn export(
    sql: &impl Sql,
    ns: &Namespace,
    witness: Witnessed,
    (reason, actor, source): (&str, &str, &str),
    now: i64,
) -> Result<HttpReply, ApiError> {
    load(sql, ns)?;
    grant::witnessed(sql, witness, Phase::Running, now).map_err(unavailable)?;
    let row = load(sql, ns)?;
    let handover = Handover::export(&row.state, witness.mark);
    let doc = ExportDocument::new(&handover, source, now, actor, reason);
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
    Ok(HttpReply::json(200, &doc))
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
    let after: serde_json::Value = serde_json::from_str(crate::store::text(row, 0)?)
        .map_err(|e| StoreError(format!("stored import entry: {e}")))?;
    Ok(after["check"].as_str().map(str::to_owned))
}

/// Imports a namespace from `doc`: `201` with its summary, the namespace
/// created active with `next` at the document's start and the `import`
/// audit entry, in one commit. The same document again: `200` with the
/// summary. Any existing namespace otherwise: `409 namespace_exists`,
/// nothing written.
pub fn import(
    sql: &impl Sql,
    doc: &ExportDocument,
    actor: &str,
    now: i64,
) -> Result<HttpReply, ApiError> {
    let handover = doc.handover()?;
    if let Some(existing) = load_any(sql).map_err(unavailable)? {
        let same = existing.state.name() == handover.name()
            && imported_check(sql).map_err(unavailable)?.as_deref() == Some(doc.check.as_str());
        if same {
            return summary_of(sql, &existing, now).map(|s| HttpReply::json(200, &s));
        }
        return Err(ApiError::new(
            ErrorCode::NamespaceExists,
            format!(
                "namespace {:?} already exists here; an import never writes over a namespace",
                handover.name().as_str()
            ),
        ));
    }
    let row = NamespaceRow {
        state: handover.import(),
        ..NamespaceRow::create(*handover.name(), *handover.config(), now)
    };
    sql.atomically(&mut || {
        sql.exec(INSERT_NAMESPACE, &row.insert_params())?;
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
        "SELECT action FROM audit WHERE action IN ('export', 'unfreeze') ORDER BY seq DESC LIMIT 1",
        &[],
    )?;
    Ok(rows
        .first()
        .is_some_and(|r| crate::store::text(r, 0) == Ok("export")))
}

/// The refusal of an unfreeze after an export that was not abandoned.
pub fn still_exported(ns: &Namespace) -> ApiError {
    ApiError::new(
        ErrorCode::NamespaceExported,
        format!(
            "namespace {:?} was exported to move it to another authority; unfreezing it here \
             would let two authorities grant the same IDs. Only if the document was never \
             imported anywhere, unfreeze with abandonExport: true",
            ns.as_str()
        ),
    )
}
