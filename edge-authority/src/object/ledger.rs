//! Reading a namespace's records: retained grants (paged, newest first),
//! "who got ID N", the audit log, per-minute grant rates; and pruning them
//! by retention.

use rangeid_core::wire::{DecBound, DecU64};
use rangeid_core::{ErrorCode, IdStanding, Namespace};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};

use rangeid_core::ledger::Span;

use super::spans::{self, SPAN_COLUMNS};
use super::{load, relay, reports, unavailable};
use crate::object::store::{self, int, opt_int, opt_text, text, Sql, StoreError, Value};
use crate::shared::response::{ApiError, HttpReply};
use crate::shared::summary::{rfc3339, MINUTE_MS};

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

/// A retained grant as listings and lookups show it: grant `i` of `span`.
/// `at` is when it was committed; for a grant kept in a span of several,
/// `span` says so: it was committed between `at` (the span's first grant)
/// and `span.lastAt`, at most a minute apart. `sub` is `null` for a grant
/// stored before owners were kept.
fn grant_json(ns: Namespace, span: &Span, i: u64) -> Result<Json, StoreError> {
    let g = span
        .grant(ns, i)
        .ok_or_else(|| StoreError(format!("no grant {i} in a span of {}", span.grants())))?;
    let owner = span.owner().as_str();
    let mut j = json!({
        "start": DecU64(g.range.start()),
        "end": DecBound(g.range.end()),
        "count": g.range.count(),
        "incarnation": g.incarnation,
        "requestId": g.request_id,
        "sub": (!owner.is_empty()).then_some(owner),
        "at": rfc3339(span.first_at()),
    });
    if span.grants() > 1 {
        j["span"] = json!({
            "firstRequestId": span.first(),
            "grants": span.grants(),
            "lastAt": rfc3339(span.last_at()),
        });
    }
    Ok(j)
}

/// The opening both listings share: the namespace must exist; then the
/// newest `limit` rows of `select` below `before` (absent: from `top`; never
/// past it), with the bound used. `select` binds the bound, then the limit;
/// `bind` writes the bound as its column holds it.
fn newest_below(
    sql: &impl Sql,
    ns: &Namespace,
    select: &str,
    before: Option<u128>,
    top: u128,
    bind: impl Fn(u128) -> Value,
    limit: u32,
) -> Result<(u128, Vec<Vec<Value>>), ApiError> {
    load(sql, ns)?;
    let before = before.unwrap_or(top).min(top);
    let rows = sql
        .exec(select, &[bind(before), Value::Int(limit.into())])
        .map_err(unavailable)?;
    Ok((before, rows))
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

/// Retained grants starting below `before`, newest (highest) first; the
/// grants of a span one by one, each derived exactly.
pub fn list_grants(
    sql: &impl Sql,
    ns: &Namespace,
    limit: u32,
    before: Option<u128>,
) -> Result<HttpReply, ApiError> {
    // Each span starting below `before` holds at least one grant that does.
    let (before, rows) = newest_below(
        sql,
        ns,
        &format!("SELECT {SPAN_COLUMNS} FROM grants WHERE start < ? ORDER BY start DESC LIMIT ?"),
        before,
        1 << 64,
        |b| store::pad(b).into(),
        limit,
    )?;
    let mut grants = Vec::new();
    let mut cursor = None;
    'spans: for r in &rows {
        let span = spans::decode(r).map_err(unavailable)?;
        let Some(last) = span.last_index_below(before) else {
            continue;
        };
        for i in (0..=last).rev() {
            if grants.len() == limit as usize {
                break 'spans;
            }
            grants.push(grant_json(*ns, &span, i).map_err(unavailable)?);
            cursor = span.range(i).map(|r| r.start().to_string());
        }
    }
    Ok(page_reply("grants", grants, limit, cursor))
}

/// The retained grant holding `id`, or `404 grant_not_found` with where
/// the ID stands (core's [`rangeid_core::IdStanding`]).
pub fn lookup(sql: &impl Sql, ns: &Namespace, id: u64) -> Result<HttpReply, ApiError> {
    let row = load(sql, ns)?;
    let rows = sql
        .exec(
            &format!(
                "SELECT {SPAN_COLUMNS} FROM grants WHERE start <= ? ORDER BY start DESC LIMIT 1"
            ),
            &[store::pad(id.into()).into()],
        )
        .map_err(unavailable)?;
    let span = rows
        .first()
        .map(|r| spans::decode(r))
        .transpose()
        .map_err(unavailable)?;
    let found = span.and_then(|s| Some((s, s.index_holding(id)?)));
    let Some((span, i)) = found else {
        let state = &row.state;
        let why = match state.standing(id) {
            IdStanding::BeforeFirst => format!(
                "it is below this namespace's first ID ({}): never granted here",
                state.config().first()
            ),
            IdStanding::PastMax => format!(
                "it is above this namespace's max ({}): never granted here",
                state.config().max()
            ),
            IdStanding::NotYetGranted => format!(
                "it has not been granted yet: the next grant starts at {}",
                state.next()
            ),
            // Passed, and any standing a newer core adds.
            _ => "it was passed, but no retained grant holds it: it was skipped \
                  (a floor, or the rest of a fence chunk at a restart; never issued), \
                  or its grant left the ledger (kept 24 hours by default, within the \
                  ledger's row limits)"
                .to_owned(),
        };
        return Err(ApiError::new(
            ErrorCode::GrantNotFound,
            format!("no retained grant of {ns:?} contains {id}: {why}"),
        ));
    };
    let root = grant_json(*ns, &span, i).map_err(unavailable)?;
    // A relay's grant: the generator its report names, else the relay.
    let mut body = if relay::reserved_owner(span.owner().as_str()) {
        let mut via = root.clone();
        match reports::holding(sql, *ns, &span, id).map_err(unavailable)? {
            Some(h) => {
                via["reported"] = json!(true);
                via["reportedAt"] = json!(rfc3339(h.reported_at));
                json!({
                    "start": DecU64(h.grant.range.start()),
                    "end": DecBound(h.grant.range.end()),
                    "count": h.grant.range.count(),
                    "incarnation": h.grant.incarnation,
                    "requestId": h.grant.request_id,
                    "sub": h.sub,
                    "at": root["at"],
                    "relay": via,
                })
            }
            None => {
                via["reported"] = json!(false);
                let mut body = root;
                body["relay"] = via;
                body
            }
        }
    } else {
        root
    };
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
    // Entry ids are small integers; bind nothing an f64 would round.
    const SAFE: u128 = (1 << 53) - 1;
    let (_, rows) = newest_below(
        sql,
        ns,
        "SELECT seq, at, actor, action, before, after, reason FROM audit WHERE seq < ? \
         ORDER BY seq DESC LIMIT ?",
        before,
        SAFE,
        |b| Value::Int(b as i64),
        limit,
    )?;
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

/// Deletes spans whose last grant was committed before
/// `now - retention_ms` (at most [`spans::PRUNE_BATCH`] at a time, keeping
/// the row counts exact), relays' reports kept before then, and minute
/// buckets older than a day. Returns when
/// the next pruning is due (the oldest remaining span's last commit plus
/// `retention_ms`, or a second from now while more are due), or `None`
/// with no grant left.
///
/// A replay whose grant was pruned is answered as a new request: it gets a
/// fresh range and the old one stays unused (a gap, never a repeat). A
/// span is kept as long as its last grant is within the retention, so
/// every grant is kept at least that long, and at most a minute longer.
pub fn prune(sql: &impl Sql, now: i64, retention_ms: i64) -> Result<Option<i64>, StoreError> {
    spans::prune(sql, now - retention_ms, now)?;
    let oldest_report = reports::prune(sql, now - retention_ms)?;
    sql.exec(
        "DELETE FROM minutes WHERE minute < ?",
        &[Value::Int((now - RATES_KEPT_MS).div_euclid(MINUTE_MS))],
    )?;
    let rows = sql.exec("SELECT MIN(last_at) FROM grants", &[])?;
    let oldest = match rows.first() {
        Some(r) => opt_int(r, 0)?,
        None => None,
    };
    let oldest = match (oldest, oldest_report) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    Ok(oldest.map(|at| (at + retention_ms).max(now + 1_000)))
}
