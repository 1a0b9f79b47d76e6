//! What the Durable Objects do, over [`Sql`]: the namespace object (grants,
//! admin actions, listings, retention) and the registry object.
//!
//! The front Worker sends each object one [`ObjectRequest`] (JSON); the
//! object answers with the final [`HttpReply`]. Every handler runs its
//! statements back to back with no `await`, and the output gate holds the
//! reply until the write is durable. A grant reads the state and the
//! stored grant, asks [`rangeid_core::decide`], then writes the boundary
//! advance and the grant row in one transaction ([`Sql::atomically`],
//! `transactionSync` on the runtime), boundary first. Admin actions write
//! their audit entry in the same transaction as the change. A failed write
//! commits nothing and answers `503 unavailable`.

use rangeid_core::authority::{FloorError, NamespaceConfig, NamespaceStatus};
use rangeid_core::reply::Capacity;
use rangeid_core::wire::{DecBound, DecU64, GrantReply, HttpAnswer};
use rangeid_core::{decide, Decision, ErrorCode, Grant, GrantRequest, Namespace};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

use crate::response::{ApiError, HttpReply};
use crate::store::{
    self, decode_grant, grant_params, int, opt_text, real, text, GrantRow, NamespaceRow, Sql,
    StoreError, Value, INSERT_GRANT, INSERT_NAMESPACE, SELECT_GRANT, SELECT_NAMESPACE,
    UPDATE_NAMESPACE,
};
use crate::summary::{rfc3339, summarize, Bucket, Summary, BUCKET_MS};

/// One request from the front Worker to an object. The front has already
/// authenticated, authorized and validated it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum ObjectRequest {
    /// Take a range.
    Grant {
        /// The validated request.
        request: GrantRequest,
    },
    /// Create the namespace.
    #[serde(rename_all = "camelCase")]
    Create {
        /// Its name.
        namespace: Namespace,
        /// Its first ID.
        first: DecU64,
        /// Its last ID.
        max: DecU64,
        /// Its largest request.
        max_count: u64,
        /// The token's `sub`.
        actor: String,
    },
    /// Read the summary.
    Summary {
        /// The namespace.
        namespace: Namespace,
    },
    /// List retained grants, newest first.
    Grants {
        /// The namespace.
        namespace: Namespace,
        /// Page size.
        limit: u32,
        /// Only grants starting below this.
        before: Option<DecBound>,
    },
    /// Find the retained grant holding `id`.
    Lookup {
        /// The namespace.
        namespace: Namespace,
        /// The ID.
        id: DecU64,
    },
    /// Raise `next` to `floor`.
    Floor {
        /// The namespace.
        namespace: Namespace,
        /// The new next value.
        floor: DecU64,
        /// The token's `sub`.
        actor: String,
    },
    /// Freeze (`frozen: true`) or unfreeze.
    SetFrozen {
        /// The namespace.
        namespace: Namespace,
        /// The new status.
        frozen: bool,
        /// Why, for the audit log.
        reason: String,
        /// The token's `sub`.
        actor: String,
    },
    /// List audit entries, newest first.
    Audit {
        /// The namespace.
        namespace: Namespace,
        /// Page size.
        limit: u32,
        /// Only entries with a smaller id.
        before: Option<DecBound>,
    },
}

/// A handled request: the answer, and whether a grant row was written at
/// that time (so the driver can make sure a pruning alarm is set).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The answer to send.
    pub reply: HttpReply,
    /// Set when a new grant row was committed, to its `at`.
    pub granted_at: Option<i64>,
}

impl From<ApiError> for Outcome {
    fn from(e: ApiError) -> Outcome {
        Outcome {
            reply: e.reply(),
            granted_at: None,
        }
    }
}

fn unavailable(e: StoreError) -> ApiError {
    ApiError::unavailable(format!("the authority cannot establish a safe answer: {e}"))
}

fn load(sql: &impl Sql, ns: &Namespace) -> Result<NamespaceRow, ApiError> {
    let rows = sql.exec(SELECT_NAMESPACE, &[]).map_err(unavailable)?;
    let Some(row) = rows.first() else {
        return Err(ApiError::namespace_not_found(ns.as_str()));
    };
    let row = NamespaceRow::decode(row).map_err(unavailable)?;
    if row.state.name() != ns {
        return Err(unavailable(StoreError(format!(
            "object holds namespace {}, asked for {ns}",
            row.state.name()
        ))));
    }
    Ok(row)
}

fn buckets(sql: &impl Sql, now: i64) -> Result<Vec<Bucket>, ApiError> {
    let from = (now - 3_600_000).div_euclid(BUCKET_MS);
    let rows = sql
        .exec(
            "SELECT bucket, ranges, ids FROM rate WHERE bucket > ?",
            &[Value::Int(from)],
        )
        .map_err(unavailable)?;
    rows.iter()
        .map(|r| {
            Ok(Bucket {
                bucket: int(r, 0)?,
                ranges: int(r, 1)?,
                ids: real(r, 2)?,
            })
        })
        .collect::<Result<_, StoreError>>()
        .map_err(unavailable)
}

fn summary_of(sql: &impl Sql, row: &NamespaceRow, now: i64) -> Result<Summary, ApiError> {
    Ok(summarize(row, &buckets(sql, now)?, now))
}

/// Handles one request for the namespace object at `now` (ms).
pub fn handle(sql: &impl Sql, request: &ObjectRequest, now: i64) -> Outcome {
    let result = match request {
        ObjectRequest::Grant { request } => return grant(sql, request, now),
        ObjectRequest::Create {
            namespace,
            first,
            max,
            max_count,
            actor,
        } => create(sql, *namespace, (first.0, max.0, *max_count), actor, now),
        ObjectRequest::Summary { namespace } => load(sql, namespace)
            .and_then(|row| summary_of(sql, &row, now))
            .map(|s| HttpReply::json(200, &s)),
        ObjectRequest::Grants {
            namespace,
            limit,
            before,
        } => list_grants(sql, namespace, *limit, before.map(|b| b.0)),
        ObjectRequest::Lookup { namespace, id } => lookup(sql, namespace, id.0),
        ObjectRequest::Floor {
            namespace,
            floor,
            actor,
        } => raise_floor(sql, namespace, floor.0, actor, now),
        ObjectRequest::SetFrozen {
            namespace,
            frozen,
            reason,
            actor,
        } => set_frozen(sql, namespace, *frozen, reason, actor, now),
        ObjectRequest::Audit {
            namespace,
            limit,
            before,
        } => list_audit(sql, namespace, *limit, before.map(|b| b.0)),
    };
    match result {
        Ok(reply) => Outcome {
            reply,
            granted_at: None,
        },
        Err(e) => e.into(),
    }
}

fn grant(sql: &impl Sql, request: &GrantRequest, now: i64) -> Outcome {
    let row = match load(sql, &request.namespace) {
        Ok(row) => row,
        Err(e) => return e.into(),
    };
    let stored = match sql.exec(
        SELECT_GRANT,
        &[
            request.incarnation.as_str().into(),
            request.request_id.as_str().into(),
        ],
    ) {
        Ok(rows) => match rows.first().map(|r| decode_grant(*row.state.name(), r)) {
            None => None,
            Some(Ok(g)) => Some(g.grant),
            Some(Err(e)) => return unavailable(e).into(),
        },
        Err(e) => return unavailable(e).into(),
    };
    match decide(&row.state, stored.as_ref(), request) {
        Err(r) => Outcome {
            reply: HttpAnswer::refusal(&r).into(),
            granted_at: None,
        },
        Ok(Decision::Replay(g)) => Outcome {
            reply: HttpAnswer::grant(&GrantReply {
                grant: g,
                replayed: true,
                capacity: capacity(&row.state),
            })
            .into(),
            granted_at: None,
        },
        Ok(Decision::New { grant, state }) => commit_grant(sql, &row, grant, state, now),
    }
}

fn commit_grant(
    sql: &impl Sql,
    row: &NamespaceRow,
    grant: Grant,
    state: rangeid_core::NamespaceState,
    now: i64,
) -> Outcome {
    let count = grant.range.count();
    let advanced = NamespaceRow {
        state,
        last_grant_at: Some(now),
        ranges_granted: row.ranges_granted.saturating_add(1),
        ids_granted: row.ids_granted.saturating_add(count.into()),
        ..*row
    };
    // One transaction: the boundary advance and the grant row commit
    // together or not at all. The boundary still goes first, so a store
    // that lost the second statement alone would leave a gap, never an
    // overlap.
    let written = sql.atomically(&mut || {
        update(sql, row, &advanced)?;
        sql.exec(INSERT_GRANT, &grant_params(&grant, now))?;
        Ok(())
    });
    if let Err(e) = written {
        return unavailable(e).into();
    }
    // Statistics only; a failure here loses nothing that matters.
    let _ = sql.exec(
        "INSERT INTO rate (bucket, ranges, ids) VALUES (?, 1, ?) \
         ON CONFLICT (bucket) DO UPDATE SET ranges = ranges + 1, ids = ids + excluded.ids",
        &[
            Value::Int(now.div_euclid(BUCKET_MS)),
            Value::Real(count as f64),
        ],
    );
    Outcome {
        reply: HttpAnswer::grant(&GrantReply {
            grant,
            replayed: false,
            capacity: capacity(&advanced.state),
        })
        .into(),
        granted_at: Some(now),
    }
}

/// What a grant tells its client about the namespace: its largest request
/// and what remains (so clients of small namespaces ask for little).
fn capacity(state: &rangeid_core::NamespaceState) -> Capacity {
    Capacity {
        max_count: Some(state.config().max_count()),
        remaining: Some(state.remaining()),
    }
}

fn audit(
    sql: &impl Sql,
    now: i64,
    actor: &str,
    action: &str,
    before: Option<Json>,
    after: Option<Json>,
    reason: Option<&str>,
) -> Result<(), StoreError> {
    let as_text = |v: Option<Json>| v.map_or(Value::Null, |v| Value::Text(v.to_string()));
    sql.exec(
        "INSERT INTO audit (at, actor, action, before, after, reason) VALUES (?, ?, ?, ?, ?, ?)",
        &[
            Value::Int(now),
            actor.into(),
            action.into(),
            as_text(before),
            as_text(after),
            reason.map_or(Value::Null, Value::from),
        ],
    )
    .map(|_| ())
}

fn state_json(row: &NamespaceRow) -> Json {
    let c = row.state.config();
    json!({
        "first": DecU64(c.first()),
        "max": DecU64(c.max()),
        "maxCount": c.max_count(),
        "next": DecBound(row.state.next()),
        "state": row.state.status().as_str(),
    })
}

fn create(
    sql: &impl Sql,
    namespace: Namespace,
    (first, max, max_count): (u64, u64, u64),
    actor: &str,
    now: i64,
) -> Result<HttpReply, ApiError> {
    let existing = sql.exec(SELECT_NAMESPACE, &[]).map_err(unavailable)?;
    if !existing.is_empty() {
        return Err(ApiError::new(
            ErrorCode::NamespaceExists,
            format!("namespace {namespace:?} already exists"),
        ));
    }
    let config = NamespaceConfig::new(Some(first), Some(max), Some(max_count))
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    let row = NamespaceRow::create(namespace, config, now);
    sql.atomically(&mut || {
        sql.exec(INSERT_NAMESPACE, &row.insert_params())?;
        audit(
            sql,
            now,
            actor,
            "create",
            None,
            Some(state_json(&row)),
            None,
        )
    })
    .map_err(unavailable)?;
    Ok(HttpReply::json(201, &summarize(&row, &[], now)))
}

/// Moves the namespace row from `from` to `to`, refusing if `next` is no
/// longer the one read.
fn update(sql: &impl Sql, from: &NamespaceRow, to: &NamespaceRow) -> Result<(), StoreError> {
    let rows = sql.exec(UPDATE_NAMESPACE, &to.update_params(from.state.next()))?;
    if rows.len() != 1 {
        return Err(StoreError("next moved under the update".into()));
    }
    Ok(())
}

fn raise_floor(
    sql: &impl Sql,
    ns: &Namespace,
    floor: u64,
    actor: &str,
    now: i64,
) -> Result<HttpReply, ApiError> {
    let row = load(sql, ns)?;
    let state = row.state.raise_floor(floor).map_err(|e| match e {
        FloorError::BelowNext { next } => {
            let mut err = ApiError::new(
                e.code(),
                format!("floor {floor} is below next {next}; floors never lower next"),
            );
            err.next = Some(next);
            err
        }
        FloorError::AboveMax { max } => {
            ApiError::new(e.code(), format!("floor {floor} is above max {max}"))
        }
    })?;
    let after = NamespaceRow { state, ..row };
    let change = Change {
        action: "floor",
        before: json!({ "next": DecBound(row.state.next()) }),
        after: json!({ "next": DecBound(after.state.next()) }),
        reason: None,
    };
    commit_change(sql, now, actor, &row, &after, &change)
}

/// An admin change's audit entry: what was done, the state before and after.
struct Change<'a> {
    action: &'a str,
    before: Json,
    after: Json,
    reason: Option<&'a str>,
}

/// Writes `after` over `row` and the change's audit entry in one
/// transaction, then answers with the new summary.
fn commit_change(
    sql: &impl Sql,
    now: i64,
    actor: &str,
    row: &NamespaceRow,
    after: &NamespaceRow,
    change: &Change<'_>,
) -> Result<HttpReply, ApiError> {
    sql.atomically(&mut || {
        update(sql, row, after)?;
        audit(
            sql,
            now,
            actor,
            change.action,
            Some(change.before.clone()),
            Some(change.after.clone()),
            change.reason,
        )
    })
    .map_err(unavailable)?;
    summary_of(sql, after, now).map(|s| HttpReply::json(200, &s))
}

fn set_frozen(
    sql: &impl Sql,
    ns: &Namespace,
    frozen: bool,
    reason: &str,
    actor: &str,
    now: i64,
) -> Result<HttpReply, ApiError> {
    let row = load(sql, ns)?;
    let status = if frozen {
        NamespaceStatus::Frozen
    } else {
        NamespaceStatus::Active
    };
    let after = NamespaceRow {
        state: row.state.with_status(status),
        ..row
    };
    let change = Change {
        action: if frozen { "freeze" } else { "unfreeze" },
        before: json!({ "state": row.state.status().as_str() }),
        after: json!({ "state": status.as_str() }),
        reason: Some(reason),
    };
    commit_change(sql, now, actor, &row, &after, &change)
}

fn grant_json(g: &GrantRow) -> Json {
    json!({
        "start": DecU64(g.grant.range.start()),
        "end": DecBound(g.grant.range.end()),
        "count": g.grant.range.count(),
        "incarnation": g.grant.incarnation,
        "requestId": g.grant.request_id,
        "at": rfc3339(g.at),
    })
}

fn page_reply(key: &str, items: Vec<Json>, limit: u32, cursor: Option<String>) -> HttpReply {
    let next = if items.len() as u64 == u64::from(limit) {
        cursor
    } else {
        None
    };
    let mut body = serde_json::Map::new();
    body.insert(key.into(), Json::Array(items));
    body.insert("nextBefore".into(), next.map_or(Json::Null, Json::String));
    HttpReply::json(200, &body)
}

fn list_grants(
    sql: &impl Sql,
    ns: &Namespace,
    limit: u32,
    before: Option<u128>,
) -> Result<HttpReply, ApiError> {
    load(sql, ns)?;
    let before = store::pad(before.unwrap_or(1 << 64).min(1 << 64));
    let rows = sql
        .exec(
            "SELECT incarnation, request_id, start, end, at FROM grants WHERE start < ? \
             ORDER BY start DESC LIMIT ?",
            &[before.into(), Value::Int(limit.into())],
        )
        .map_err(unavailable)?;
    let grants = rows
        .iter()
        .map(|r| decode_grant(*ns, r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(unavailable)?;
    let cursor = grants.last().map(|g| g.grant.range.start().to_string());
    Ok(page_reply(
        "grants",
        grants.iter().map(grant_json).collect(),
        limit,
        cursor,
    ))
}

fn lookup(sql: &impl Sql, ns: &Namespace, id: u64) -> Result<HttpReply, ApiError> {
    load(sql, ns)?;
    let rows = sql
        .exec(
            "SELECT incarnation, request_id, start, end, at FROM grants WHERE start <= ? \
             ORDER BY start DESC LIMIT 1",
            &[store::pad(id.into()).into()],
        )
        .map_err(unavailable)?;
    let found = rows
        .first()
        .map(|r| decode_grant(*ns, r))
        .transpose()
        .map_err(unavailable)?
        .filter(|g| g.grant.range.contains(id));
    let Some(g) = found else {
        return Err(ApiError::new(
            ErrorCode::GrantNotFound,
            format!("no retained grant of {ns:?} contains {id}"),
        ));
    };
    let mut body = grant_json(&g);
    body["namespace"] = json!(ns);
    body["id"] = json!(DecU64(id));
    Ok(HttpReply::json(200, &body))
}

fn list_audit(
    sql: &impl Sql,
    ns: &Namespace,
    limit: u32,
    before: Option<u128>,
) -> Result<HttpReply, ApiError> {
    load(sql, ns)?;
    // Entry ids are small integers; bind nothing an f64 would round.
    const SAFE: u128 = (1 << 53) - 1;
    let before = before.unwrap_or(SAFE).min(SAFE) as i64;
    let rows = sql
        .exec(
            "SELECT seq, at, actor, action, before, after, reason FROM audit WHERE seq < ? \
             ORDER BY seq DESC LIMIT ?",
            &[Value::Int(before), Value::Int(limit.into())],
        )
        .map_err(unavailable)?;
    let parse = |t: Option<&str>| -> Json {
        t.and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or(Json::Null)
    };
    let entries = rows
        .iter()
        .map(|r| -> Result<(i64, Json), StoreError> {
            let seq = int(r, 0)?;
            Ok((
                seq,
                json!({
                    "id": seq.to_string(),
                    "at": rfc3339(int(r, 1)?),
                    "actor": text(r, 2)?,
                    "action": text(r, 3)?,
                    "before": parse(opt_text(r, 4)?),
                    "after": parse(opt_text(r, 5)?),
                    "reason": opt_text(r, 6)?,
                }),
            ))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(unavailable)?;
    let cursor = entries.last().map(|(seq, _)| seq.to_string());
    Ok(page_reply(
        "audit",
        entries.into_iter().map(|(_, e)| e).collect(),
        limit,
        cursor,
    ))
}

/// Deletes grants committed before `now - retention_ms` and rate buckets
/// older than an hour. Returns when the next pruning is due (the oldest
/// remaining grant's `at + retention_ms`), or `None` with no grant left.
///
/// A replay whose grant was pruned is answered as a new request: it gets a
/// fresh range and the old one stays unused (a gap, never a repeat).
pub fn prune(sql: &impl Sql, now: i64, retention_ms: i64) -> Result<Option<i64>, StoreError> {
    sql.exec(
        "DELETE FROM grants WHERE at < ?",
        &[Value::Int(now - retention_ms)],
    )?;
    sql.exec(
        "DELETE FROM rate WHERE bucket <= ?",
        &[Value::Int((now - 3_600_000).div_euclid(BUCKET_MS))],
    )?;
    let rows = sql.exec("SELECT MIN(at) FROM grants", &[])?;
    let oldest = match rows.first() {
        Some(r) => store::opt_int(r, 0)?,
        None => None,
    };
    Ok(oldest.map(|at| (at + retention_ms).max(now + 1_000)))
}

/// One request to the registry object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum RegistryRequest {
    /// Record a namespace (idempotent).
    Add {
        /// The namespace.
        namespace: Namespace,
    },
    /// List every namespace, by name.
    List,
}

/// The registry's answer to `List`: `{"namespaces":["a","b"]}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistryList {
    /// The names, sorted.
    pub namespaces: Vec<Namespace>,
}

/// Handles one request for the registry object at `now` (ms).
pub fn handle_registry(sql: &impl Sql, request: &RegistryRequest, now: i64) -> HttpReply {
    let result = match request {
        RegistryRequest::Add { namespace } => sql
            .exec(
                "INSERT INTO namespaces (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                &[namespace.as_str().into(), Value::Int(now)],
            )
            .map(|_| HttpReply::json(200, &json!({ "ok": true }))),
        RegistryRequest::List => sql
            .exec("SELECT name FROM namespaces ORDER BY name", &[])
            .and_then(|rows| {
                rows.iter()
                    .map(|r| {
                        Namespace::new(text(r, 0)?)
                            .map_err(|e| StoreError(format!("stored name: {e}")))
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .map(|namespaces| HttpReply::json(200, &RegistryList { namespaces })),
    };
    result.unwrap_or_else(|e| unavailable(e).reply())
}

#[cfg(test)]
mod tests;
