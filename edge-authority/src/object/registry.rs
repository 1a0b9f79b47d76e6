//! The registry object: every namespace's name, and the latest summary its
//! object pushed, so a listing reads one object, not one per namespace.
//!
//! A namespace is added before its object is created (so a listing never
//! misses a created namespace), and each namespace object pushes its
//! summary when it changes, off its grant path. A name without a summary
//! yet (its object never answered) is listed by name alone and the front
//! asks that object directly.

use rangeid_core::Namespace;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::unavailable;
use crate::object::store::{opt_int, opt_text, text, Sql, StoreError, Value};
use crate::shared::response::HttpReply;

/// One request to the registry object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum RegistryRequest {
    /// Record a namespace (idempotent).
    Add {
        /// The namespace.
        namespace: Namespace,
    },
    /// Store a namespace's latest summary (JSON text), pushed by its
    /// object at `at` (ms); an older push never replaces a newer one.
    Put {
        /// The namespace.
        namespace: Namespace,
        /// Its summary, as JSON text.
        summary: String,
        /// When the object made it.
        at: i64,
    },
    /// A page of namespaces by name, after `after`, only those in `only`
    /// when it is given (a token's scope).
    #[serde(rename_all = "camelCase")]
    List {
        /// Page size.
        limit: u32,
        /// Only names after this one.
        after: Option<Namespace>,
        /// Only these names.
        only: Option<Vec<Namespace>>,
    },
}

/// One listed namespace: its name, and its summary when its object pushed
/// one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    /// The name.
    pub namespace: Namespace,
    /// The summary's JSON text, if pushed.
    pub summary: Option<String>,
    /// When it was pushed (ms).
    pub updated_at: Option<i64>,
}

/// The registry's answer to `List`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryPage {
    /// The namespaces, by name.
    pub namespaces: Vec<Listed>,
    /// The name to pass as `after` for the next page, if there may be one.
    pub next_after: Option<Namespace>,
}

/// Handles one request for the registry object at `now` (ms).
pub fn handle(sql: &impl Sql, request: &RegistryRequest, now: i64) -> HttpReply {
    let ok = || HttpReply::json(200, &json!({ "ok": true }));
    let result = match request {
        RegistryRequest::Add { namespace } => sql
            .exec(
                "INSERT INTO namespaces (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                &[namespace.as_str().into(), Value::Int(now)],
            )
            .map(|_| ok()),
        RegistryRequest::Put {
            namespace,
            summary,
            at,
        } => sql
            .exec(
                "INSERT INTO namespaces (name, created_at, summary, updated_at) VALUES (?, ?, ?, ?) \
                 ON CONFLICT (name) DO UPDATE SET summary = excluded.summary, \
                 updated_at = excluded.updated_at \
                 WHERE namespaces.updated_at IS NULL OR namespaces.updated_at <= excluded.updated_at",
                &[
                    namespace.as_str().into(),
                    Value::Int(now),
                    summary.as_str().into(),
                    Value::Int(*at),
                ],
            )
            .map(|_| ok()),
        RegistryRequest::List { limit, after, only } => list(sql, *limit, after.as_ref(), only.as_deref())
            .map(|page| HttpReply::json(200, &page)),
    };
    result.unwrap_or_else(|e| unavailable(e).reply())
}

fn list(
    sql: &impl Sql,
    limit: u32,
    after: Option<&Namespace>,
    only: Option<&[Namespace]>,
) -> Result<RegistryPage, StoreError> {
    let after: Value = after.map_or("", |a| a.as_str()).into();
    let rows = match only {
        None => sql.exec(
            "SELECT name, summary, updated_at FROM namespaces WHERE name > ? ORDER BY name LIMIT ?",
            &[after, Value::Int(limit.into())],
        )?,
        // One parameter however long the scope: a JSON array of names.
        Some(only) => sql.exec(
            "SELECT name, summary, updated_at FROM namespaces WHERE name > ? \
             AND name IN (SELECT value FROM json_each(?)) ORDER BY name LIMIT ?",
            &[
                after,
                serde_json::to_string(only)
                    .map_err(|e| StoreError(e.to_string()))?
                    .into(),
                Value::Int(limit.into()),
            ],
        )?,
    };
    let namespaces = rows
        .iter()
        .map(|r| {
            Ok(Listed {
                namespace: Namespace::new(text(r, 0)?)
                    .map_err(|e| StoreError(format!("stored name: {e}")))?,
                summary: opt_text(r, 1)?.map(str::to_owned),
                updated_at: opt_int(r, 2)?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    let next_after = (namespaces.len() as u64 == u64::from(limit))
        .then(|| namespaces.last().map(|l| l.namespace))
        .flatten();
    Ok(RegistryPage {
        namespaces,
        next_after,
    })
}
