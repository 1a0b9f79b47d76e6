//! Reading a namespace's records: retained grants (paged, newest first),
//! "who got ID N", the audit log, per-minute grant rates; and pruning them
//! by retention.

use rangeid_core::wire::{DecBound, DecU64};
use rangeid_core::{ErrorCode, Namespace};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

use super::{load, unavailable};
use crate::response::{ApiError, HttpReply};
use crate::store::{
    self, decode_grant, int, opt_int, opt_text, text, GrantRow, Sql, StoreError, Value,
    GRANT_COLUMNS,
};
use crate::summary::{rfc3339, MINUTE_MS};

/// How long minute buckets are kept: a day.
pub const RATES_KEPT_MS: i64 = 86_400_000;

/// A window of per-minute grant rates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Window {
    /// The last hour: at most 61 buckets.
    #[serde(rename = "1h")]
    Hour,
    /// The last day: at most 1,441 buckets.
    #[serde(rename = "24h")]
    Day,
}

impl Window {
    /// The window's text in the API: `1h` or `24h`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Window::Hour => "1h",
            Window::Day => "24h",
        }
    }

    /// The window named `text`.
    pub fn parse(text: &str) -> Option<Window> {
        match text {
            "1h" => Some(Window::Hour),
            "24h" => Some(Window::Day),
            _ => None,
        }
    }

    const fn span_ms(self) -> i64 {
        match self {
            Window::Hour => 3_600_000,
            Window::Day => RATES_KEPT_MS,
        }
    }
}

fn grant_json(g: &GrantRow) -> Json {
    json!({
        "start": DecU64(g.grant.range.start()),
        "end": DecBound(g.grant.range.end()),
        "count": g.grant.range.count(),
        "incarnation": g.grant.incarnation,
        "requestId": g.grant.request_id,
        "sub": g.owner.map(|o| o.as_str().to_owned()),
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

/// Retained grants starting below `before`, newest (highest) first.
pub fn list_grants(
    sql: &impl Sql,
    ns: &Namespace,
    limit: u32,
    before: Option<u128>,
) -> Result<HttpReply, ApiError> {
    load(sql, ns)?;
    let before = store::pad(before.unwrap_or(1 << 64).min(1 << 64));
    let rows = sql
        .exec(
            &format!(
                "SELECT {GRANT_COLUMNS} FROM grants WHERE start < ? ORDER BY start DESC LIMIT ?"
            ),
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

/// The retained grant holding `id`, or `404 grant_not_found`.
pub fn lookup(sql: &impl Sql, ns: &Namespace, id: u64) -> Result<HttpReply, ApiError> {
    load(sql, ns)?;
    let rows = sql
        .exec(
            &format!(
                "SELECT {GRANT_COLUMNS} FROM grants WHERE start <= ? ORDER BY start DESC LIMIT 1"
            ),
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

/// Audit entries with an id below `before`, newest first.
pub fn list_audit(
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

/// The per-minute buckets of `window` before `now`, oldest first; only
/// minutes with grants (a chart fills the others with zero). Reads at most
/// 1,441 rows.
pub fn rates(
    sql: &impl Sql,
    ns: &Namespace,
    window: Window,
    now: i64,
) -> Result<HttpReply, ApiError> {
    load(sql, ns)?;
    let from = (now - window.span_ms()).div_euclid(MINUTE_MS) + 1;
    let buckets = store::minutes_since(sql, from)
        .map_err(unavailable)?
        .into_iter()
        .map(|m| {
            json!({
                "minute": rfc3339(m.minute * MINUTE_MS),
                "ranges": m.ranges,
                "ids": DecBound(m.ids),
            })
        })
        .collect::<Vec<_>>();
    Ok(HttpReply::json(
        200,
        &json!({
            "namespace": ns,
            "window": window.as_str(),
            "bucketSeconds": 60,
            "from": rfc3339(from * MINUTE_MS),
            "to": rfc3339(now),
            "buckets": buckets,
        }),
    ))
}

/// Deletes grants committed before `now - retention_ms` and minute buckets
/// older than a day. Returns when the next pruning is due (the oldest
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
        "DELETE FROM minutes WHERE minute < ?",
        &[Value::Int((now - RATES_KEPT_MS).div_euclid(MINUTE_MS))],
    )?;
    let rows = sql.exec("SELECT MIN(at) FROM grants", &[])?;
    let oldest = match rows.first() {
        Some(r) => opt_int(r, 0)?,
        None => None,
    };
    Ok(oldest.map(|at| (at + retention_ms).max(now + 1_000)))
}
