//! Admin actions on a namespace: creation (idempotent for the same
//! configuration), floors, freezes, the limits on what callers add and the
//! relay setting. Each writes its audit entry
//! `{at, actor, action, before, after, reason}` in the same transaction as
//! the change: no change without its entry, no entry without its change.

use rangeid_core::authority::{FloorError, NamespaceConfig, NamespaceStatus};
use rangeid_core::ledger::Limits;
use rangeid_core::wire::{DecBound, DecU64};
use rangeid_core::{ErrorCode, Namespace};
use serde_json::{json, Value as Json};

use super::{load, load_any, spans, summary_of, unavailable};
use crate::api::{LimitsChange, RelaysSetting};
use crate::object::store::{
    NamespaceRow, Sql, StoreError, Value, INSERT_NAMESPACE, UPDATE_NAMESPACE,
};
use crate::shared::response::{ApiError, HttpReply};

/// Writes an audit entry.
pub(crate) fn audit(
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

/// Moves the namespace row from `from` to `to`, refusing if `next` is no
/// longer the one read.
pub(crate) fn update(
    sql: &impl Sql,
    from: &NamespaceRow,
    to: &NamespaceRow,
) -> Result<(), StoreError> {
    let rows = sql.exec(UPDATE_NAMESPACE, &to.update_params(from.state.next()))?;
    if rows.len() != 1 {
        return Err(StoreError("next moved under the update".into()));
    }
    Ok(())
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

/// Creates the namespace: 201 with its summary. Creating it again with the
/// same configuration answers 200 with the summary (so an admin can retry a
/// creation whose answer was lost); another configuration is 409.
pub fn create(
    sql: &impl Sql,
    namespace: Namespace,
    (first, max, max_count): (u64, u64, u64),
    actor: &str,
    now: i64,
) -> Result<HttpReply, ApiError> {
    let config = NamespaceConfig::new(Some(first), Some(max), Some(max_count))
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    if let Some(existing) = load_any(sql).map_err(unavailable)? {
        if *existing.state.name() == namespace && *existing.state.config() == config {
            return summary_of(sql, &existing, now).map(|s| HttpReply::json(200, &s));
        }
        return Err(ApiError::new(
            ErrorCode::NamespaceExists,
            format!("namespace {namespace:?} already exists with another configuration"),
        ));
    }
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
    summary_of(sql, &row, now).map(|s| HttpReply::json(201, &s))
}

/// The mark the fence's witness must hold before a floor at `floor` is
/// committed: `Some(floor)` when the floor is valid and above this object's
/// fence (so a restore of this object alone can never go back below it),
/// `None` when no raise is needed; the floor's own refusal otherwise.
pub fn floor_mark(sql: &impl Sql, ns: &Namespace, floor: u64) -> Result<Option<u128>, ApiError> {
    let row = load(sql, ns)?;
    let raised = row
        .state
        .raise_floor(floor)
        .map_err(|e| floor_error(floor, e))?;
    Ok((raised.next() > row.state.fence()).then_some(raised.next()))
}

fn floor_error(floor: u64, e: FloorError) -> ApiError {
    match e {
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
        // A refusal this version does not describe: its code and core's
        // words, nothing written.
        _ => ApiError::new(e.code(), format!("floor {floor} is refused: {e}")),
    }
}

/// Raises `next` to `floor`, audited; a floor below `next` is refused
/// (`floor_below_next`), so a floor never re-grants an ID. The driver first
/// has the witness hold the floor ([`floor_mark`]).
pub fn raise_floor(
    sql: &impl Sql,
    ns: &Namespace,
    floor: u64,
    actor: &str,
    now: i64,
) -> Result<HttpReply, ApiError> {
    let row = load(sql, ns)?;
    let state = row
        .state
        .raise_floor(floor)
        .map_err(|e| floor_error(floor, e))?;
    let after = NamespaceRow { state, ..row };
    let change = Change {
        action: "floor",
        before: json!({ "next": DecBound(row.state.next()) }),
        after: json!({ "next": DecBound(after.state.next()) }),
        reason: None,
    };
    commit_change(sql, now, actor, &row, &after, &change)
}

/// Freezes (`frozen`) or unfreezes the namespace, with a reason. An
/// unfreeze after an export is refused (`namespace_exported`): the
/// namespace was retired here.
pub fn set_frozen(
    sql: &impl Sql,
    ns: &Namespace,
    frozen: bool,
    reason: &str,
    actor: &str,
    now: i64,
) -> Result<HttpReply, ApiError> {
    let row = load(sql, ns)?;
    let exported = !frozen && super::transfer::exported(sql).map_err(unavailable)?;
    if exported {
        return Err(super::transfer::still_exported(ns));
    }
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

/// Turns relays on or off for the namespace, with a reason, audited
/// (`relays`, before and after: `{"relays": "on" | "off"}`). Turning them
/// off is an admin act the driver answers only once no relay can serve a
/// range granted before it (see [`super::relays`]).
pub fn set_relays(
    sql: &impl Sql,
    ns: &Namespace,
    to: RelaysSetting,
    reason: &str,
    actor: &str,
    now: i64,
) -> Result<HttpReply, ApiError> {
    let row = load(sql, ns)?;
    let before = super::relays::stored(sql).map_err(unavailable)?;
    let after = before.after(to);
    sql.atomically(&mut || {
        super::relays::store(sql, after)?;
        audit(
            sql,
            now,
            actor,
            "relays",
            Some(json!({ "relays": before.setting().as_str() })),
            Some(json!({ "relays": after.setting().as_str() })),
            Some(reason),
        )
    })
    .map_err(unavailable)?;
    summary_of(sql, &row, now).map(|s| HttpReply::json(200, &s))
}

fn limits_json(l: &Limits) -> Json {
    json!({
        "grantsPerSecond": l.grants_per_second(),
        "ledgerRows": l.ledger_rows(),
        "subLedgerRows": l.sub_ledger_rows(),
    })
}

/// Changes the limits on what callers add, audited (`limits`, before and
/// after: the limits in effect). The change must leave `subLedgerRows`
/// within `ledgerRows`; lowering a budget below what is held refuses new
/// rows until enough age out, and never deletes any.
pub fn set_limits(
    sql: &impl Sql,
    ns: &Namespace,
    change: LimitsChange,
    actor: &str,
    now: i64,
) -> Result<HttpReply, ApiError> {
    let row = load(sql, ns)?;
    let stored = spans::set_limits_of(sql).map_err(unavailable)?;
    let (_, before) = spans::budget(sql).map_err(unavailable)?;
    let set = [
        change.grants_per_second.apply(stored[0]),
        change.ledger_rows.apply(stored[1]),
        change.sub_ledger_rows.apply(stored[2]),
    ];
    let after =
        Limits::new(set[0], set[1], set[2]).map_err(|e| ApiError::invalid(e.to_string()))?;
    sql.atomically(&mut || {
        spans::set_limits(sql, set[0], set[1], set[2])?;
        audit(
            sql,
            now,
            actor,
            "limits",
            Some(limits_json(&before)),
            Some(limits_json(&after)),
            None,
        )
    })
    .map_err(unavailable)?;
    summary_of(sql, &row, now).map(|s| HttpReply::json(200, &s))
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
