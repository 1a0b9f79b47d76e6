//! The grant ledger in SQLite: span rows (see [`rangeid_core::ledger`]),
//! each caller's usage, the ledger's row count and the namespace's limits.
//! Core decides; this reads what a decision needs ([`view`]), writes what
//! it decided ([`write`]), and prunes rows by age keeping the counts exact
//! ([`prune`]).
//!
//! `grants` holds one row per span, keyed by `(owner, incarnation, number,
//! request_id)`: `number` is the first request id's number, 20 digits, for
//! an id `r<n>` core numbers, and `''` for any other id. `subs` holds each
//! caller's row count and grant-rate bucket; `budget` the ledger's row
//! count and the limits an admin set (`NULL`: the default).

use rangeid_core::authority::Owner;
use rangeid_core::ledger::{span_for, Bucket, LedgerView, Limits, Record, Span, SpanKey, Usage};
use rangeid_core::{GrantRequest, Incarnation, RequestId};

use crate::object::store::{int, opt_int, pad, text, unpad, unpad_u64, Sql, StoreError, Value};

/// The columns of a span row, in [`decode`]'s order.
pub const SPAN_COLUMNS: &str = "owner, incarnation, request_id, grants, start, end, at, last_at";

/// At most this many rows are pruned in one go (one alarm); the alarm
/// comes back a second later for more.
pub const PRUNE_BATCH: i64 = 20_000;

/// A caller's bucket is forgotten once it has no rows and was last used
/// this long ago (ms): by then it has refilled.
const BUCKET_FORGOTTEN_MS: i64 = 1_000;

/// The `number` column for a request id: 20 digits of `n` for `r<n>`, or
/// `''`.
pub fn number_of(request_id: &RequestId) -> String {
    request_id
        .number()
        .map_or_else(String::new, |n| pad(n.into()))
}

/// Decodes a span row selected with [`SPAN_COLUMNS`]. The owner `''`
/// marks a grant stored before owners were kept.
pub fn decode(row: &[Value]) -> Result<Span, StoreError> {
    let owner = Owner::new(text(row, 0)?);
    let incarnation = Incarnation::new(text(row, 1)?)
        .map_err(|e| StoreError(format!("stored incarnation: {e}")))?;
    let first =
        RequestId::new(text(row, 2)?).map_err(|e| StoreError(format!("stored request id: {e}")))?;
    let grants = u64::try_from(int(row, 3)?)
        .map_err(|_| StoreError("stored span has a negative grant count".into()))?;
    let start = unpad_u64(text(row, 4)?)?;
    let end = unpad(text(row, 5)?)?;
    let ids = end
        .checked_sub(start.into())
        .ok_or_else(|| StoreError(format!("stored span ends at {end}, before {start}")))?;
    if grants == 0 || ids % u128::from(grants) != 0 {
        return Err(StoreError(format!(
            "stored span of {grants} grants holds {ids} IDs"
        )));
    }
    let count = u64::try_from(ids / u128::from(grants))
        .map_err(|_| StoreError("stored span's grants are too large".into()))?;
    Span::load(
        owner,
        incarnation,
        first,
        grants,
        count,
        start,
        int(row, 6)?,
        int(row, 7)?,
    )
    .map_err(|e| StoreError(format!("stored span: {e}")))
}

/// The caller's span for `request` (core's [`span_for`]), if stored.
fn find(sql: &impl Sql, request: &GrantRequest, owner: &Owner) -> Result<Option<Span>, StoreError> {
    let who = [
        Value::from(owner.as_str()),
        request.incarnation.as_str().into(),
    ];
    let rows = match span_for(&request.request_id) {
        SpanKey::Exact(id) => sql.exec(
            &format!(
                "SELECT {SPAN_COLUMNS} FROM grants WHERE owner = ? AND incarnation = ? \
                 AND number = '' AND request_id = ?"
            ),
            &[who[0].clone(), who[1].clone(), id.as_str().into()],
        )?,
        SpanKey::AtOrBelow(m) => sql.exec(
            &format!(
                "SELECT {SPAN_COLUMNS} FROM grants WHERE owner = ? AND incarnation = ? \
                 AND number > '' AND number <= ? ORDER BY number DESC LIMIT 1"
            ),
            &[who[0].clone(), who[1].clone(), pad(m.into()).into()],
        )?,
    };
    rows.first().map(|r| decode(r)).transpose()
}

/// The budget row's columns: the ledger's rows, then the limits.
const BUDGET_COLUMNS: &str = "b.rows, b.grants_per_second, b.ledger_rows, b.sub_ledger_rows";

/// The ledger's row count and the namespace's limits from a row selected
/// with [`BUDGET_COLUMNS`] first.
fn decode_budget(r: &[Value]) -> Result<(u64, Limits), StoreError> {
    let opt = |i| -> Result<Option<u64>, StoreError> {
        Ok(opt_int(r, i)?.map(|v| u64::try_from(v).unwrap_or(0)))
    };
    let limits = Limits::new(opt(1)?, opt(2)?, opt(3)?)
        .map_err(|e| StoreError(format!("stored limits: {e}")))?;
    Ok((u64::try_from(int(r, 0)?).unwrap_or(0), limits))
}

/// The ledger's row count and the namespace's limits.
pub fn budget(sql: &impl Sql) -> Result<(u64, Limits), StoreError> {
    let rows = sql.exec(
        &format!("SELECT {BUDGET_COLUMNS} FROM budget b WHERE b.id = 1"),
        &[],
    )?;
    rows.first()
        .map_or(Ok((0, Limits::DEFAULT)), |r| decode_budget(r))
}

/// Everything a grant decision for `request` from `owner` reads: the
/// caller's span, and in one statement the budget with the caller's usage
/// (its rows and bucket; a caller never seen has none and a full bucket).
pub fn view(
    sql: &impl Sql,
    request: &GrantRequest,
    owner: &Owner,
) -> Result<LedgerView, StoreError> {
    let rows = sql.exec(
        &format!(
            "SELECT {BUDGET_COLUMNS}, s.rows, s.level, s.at FROM budget b \
             LEFT JOIN subs s ON s.sub = ? WHERE b.id = 1"
        ),
        &[owner.as_str().into()],
    )?;
    let Some(r) = rows.first() else {
        return Err(StoreError("the budget row is missing".into()));
    };
    let (total, limits) = decode_budget(r)?;
    let caller = match opt_int(r, 4)? {
        None => Usage::NEW,
        Some(held) => Usage {
            rows: u64::try_from(held).unwrap_or(0),
            bucket: Bucket::load(u64::try_from(int(r, 5)?).unwrap_or(0), int(r, 6)?),
        },
    };
    Ok(LedgerView {
        span: find(sql, request, owner)?,
        caller,
        rows: total,
        limits,
    })
}

/// Writes a decided record: the span (a new row, or the caller's span it
/// extends, compare-and-set on the span read), the caller's usage, and the
/// ledger's row count when it changed. Run it in the grant's transaction.
pub fn write(sql: &impl Sql, view: &LedgerView, record: &Record) -> Result<(), StoreError> {
    let span = &record.span;
    if record.extends {
        let before = view
            .span
            .ok_or_else(|| StoreError("an extended span that was never read".into()))?;
        let done = sql.exec(
            "UPDATE grants SET grants = ?, end = ?, last_at = ? WHERE start = ? AND grants = ? \
             RETURNING start",
            &[
                grants_value(span.grants())?,
                pad(span.end()).into(),
                Value::Int(span.last_at()),
                pad(before.start().into()).into(),
                grants_value(before.grants())?,
            ],
        )?;
        if done.len() != 1 {
            return Err(StoreError("the span moved under the grant".into()));
        }
    } else {
        sql.exec(
            &format!(
                "INSERT INTO grants ({SPAN_COLUMNS}, number) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            ),
            &[
                span.owner().as_str().into(),
                span.incarnation().as_str().into(),
                span.first().as_str().into(),
                grants_value(span.grants())?,
                pad(span.start().into()).into(),
                pad(span.end()).into(),
                Value::Int(span.first_at()),
                Value::Int(span.last_at()),
                number_of(span.first()).into(),
            ],
        )?;
    }
    let bucket = record.caller.bucket;
    sql.exec(
        "INSERT INTO subs (sub, rows, level, at) VALUES (?, ?, ?, ?) \
         ON CONFLICT (sub) DO UPDATE SET rows = excluded.rows, level = excluded.level, \
         at = excluded.at",
        &[
            span.owner().as_str().into(),
            small(record.caller.rows)?,
            small(bucket.level())?,
            Value::Int(bucket.at()),
        ],
    )?;
    if record.rows != view.rows {
        sql.exec(
            "UPDATE budget SET rows = ? WHERE id = 1",
            &[small(record.rows)?],
        )?;
    }
    Ok(())
}

/// The rows `sub` holds (0 for a caller never seen).
pub fn rows_of(sql: &impl Sql, sub: &str) -> Result<u64, StoreError> {
    let rows = sql.exec("SELECT rows FROM subs WHERE sub = ?", &[sub.into()])?;
    Ok(match rows.first() {
        Some(r) => u64::try_from(int(r, 0)?).unwrap_or(0),
        None => 0,
    })
}

/// Counts `n` more rows, not spans of grants (a relay's reports), for
/// `sub` (the ledger's count: [`add_ledger_rows`]). Run it in the
/// transaction that adds them.
pub fn add_rows(sql: &impl Sql, sub: &str, n: u64, now: i64) -> Result<(), StoreError> {
    if n == 0 {
        return Ok(());
    }
    // A caller first seen here gets a full bucket: the level measured
    // long enough ago to have refilled.
    sql.exec(
        "INSERT INTO subs (sub, rows, level, at) VALUES (?, ?, 0, ?) \
         ON CONFLICT (sub) DO UPDATE SET rows = rows + excluded.rows",
        &[
            sub.into(),
            small(n)?,
            Value::Int(now.saturating_sub(BUCKET_FORGOTTEN_MS)),
        ],
    )?;
    Ok(())
}

/// Counts `n` more rows that are not spans of grants in the ledger.
pub fn add_ledger_rows(sql: &impl Sql, n: u64) -> Result<(), StoreError> {
    if n > 0 {
        sql.exec(
            "UPDATE budget SET rows = rows + ? WHERE id = 1",
            &[small(n)?],
        )?;
    }
    Ok(())
}

/// Takes `n` rows added with [`add_rows`] off `sub`'s count. Run it in
/// the transaction that deletes them.
pub fn remove_rows(sql: &impl Sql, sub: &str, n: u64) -> Result<(), StoreError> {
    sql.exec(
        "UPDATE subs SET rows = MAX(rows - ?, 0) WHERE sub = ?",
        &[small(n)?, sub.into()],
    )?;
    Ok(())
}

/// Takes `n` rows added with [`add_ledger_rows`] off the ledger's count.
pub fn remove_ledger_rows(sql: &impl Sql, n: u64) -> Result<(), StoreError> {
    if n > 0 {
        sql.exec(
            "UPDATE budget SET rows = MAX(rows - ?, 0) WHERE id = 1",
            &[small(n)?],
        )?;
    }
    Ok(())
}

/// Stores `limits` (`None` fields: back to the default). Run it in the
/// change's transaction with its audit entry.
pub fn set_limits(
    sql: &impl Sql,
    grants_per_second: Option<u64>,
    ledger_rows: Option<u64>,
    sub_ledger_rows: Option<u64>,
) -> Result<(), StoreError> {
    let v = |o: Option<u64>| o.map_or(Ok(Value::Null), small);
    sql.exec(
        "UPDATE budget SET grants_per_second = ?, ledger_rows = ?, sub_ledger_rows = ? \
         WHERE id = 1",
        &[v(grants_per_second)?, v(ledger_rows)?, v(sub_ledger_rows)?],
    )?;
    Ok(())
}

/// The limits an admin set, each `None` where it was left at the default.
pub fn set_limits_of(sql: &impl Sql) -> Result<[Option<u64>; 3], StoreError> {
    let rows = sql.exec(
        "SELECT grants_per_second, ledger_rows, sub_ledger_rows FROM budget WHERE id = 1",
        &[],
    )?;
    let Some(r) = rows.first() else {
        return Ok([None; 3]);
    };
    let opt = |i| -> Result<Option<u64>, StoreError> {
        Ok(opt_int(r, i)?.map(|v| u64::try_from(v).unwrap_or(0)))
    };
    Ok([opt(0)?, opt(1)?, opt(2)?])
}

/// The callers holding the most rows, most first: `(sub, rows)`.
pub fn top_subs(sql: &impl Sql, limit: u32) -> Result<Vec<(String, u64)>, StoreError> {
    sql.exec(
        "SELECT sub, rows FROM subs WHERE rows > 0 ORDER BY rows DESC, sub LIMIT ?",
        &[Value::Int(limit.into())],
    )?
    .iter()
    .map(|r| {
        Ok((
            text(r, 0)?.to_owned(),
            u64::try_from(int(r, 1)?).unwrap_or(0),
        ))
    })
    .collect()
}

/// Deletes at most [`PRUNE_BATCH`] spans whose last grant was committed
/// before `cutoff` (oldest first), taking them off their callers' and the
/// ledger's row counts in the same transaction, and forgets callers with
/// no rows whose buckets have refilled. Returns how many rows went.
pub fn prune(sql: &impl Sql, cutoff: i64, now: i64) -> Result<u64, StoreError> {
    let mut pruned = 0;
    sql.atomically(&mut || {
        // The batch: the oldest spans by (last_at, rowid), a total order,
        // so the count and the delete see the same rows.
        const BATCH: &str = "SELECT rowid FROM grants WHERE last_at < ? \
             ORDER BY last_at, rowid LIMIT ?";
        let params = [Value::Int(cutoff), Value::Int(PRUNE_BATCH)];
        let by_owner = sql.exec(
            &format!("SELECT owner, COUNT(*) FROM grants WHERE rowid IN ({BATCH}) GROUP BY owner"),
            &params,
        )?;
        pruned = 0;
        for r in &by_owner {
            let n = int(r, 1)?;
            sql.exec(
                "UPDATE subs SET rows = MAX(rows - ?, 0) WHERE sub = ?",
                &[Value::Int(n), text(r, 0)?.into()],
            )?;
            pruned += u64::try_from(n).unwrap_or(0);
        }
        if pruned == 0 {
            return Ok(());
        }
        sql.exec(
            &format!("DELETE FROM grants WHERE rowid IN ({BATCH})"),
            &params,
        )?;
        sql.exec(
            "UPDATE budget SET rows = MAX(rows - ?, 0) WHERE id = 1",
            &[small(pruned)?],
        )?;
        Ok(())
    })?;
    sql.exec(
        "DELETE FROM subs WHERE rows <= 0 AND at < ?",
        &[Value::Int(now.saturating_sub(BUCKET_FORGOTTEN_MS))],
    )?;
    Ok(pruned)
}

/// A count stored as an INTEGER: refused past 2^53 - 1, where the runtime
/// would round it (no count here comes near).
fn small(v: u64) -> Result<Value, StoreError> {
    i64::try_from(v)
        .ok()
        .filter(|v| *v < 1 << 53)
        .map(Value::Int)
        .ok_or_else(|| StoreError(format!("{v} is too large to store as an integer")))
}

fn grants_value(grants: u64) -> Result<Value, StoreError> {
    small(grants)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::store::mem::MemSql;
    use crate::object::store::{migrate, NAMESPACE_MIGRATIONS};
    use rangeid_core::{Grant, Namespace, Range};

    fn db() -> MemSql {
        let db = MemSql::new();
        migrate(&db, NAMESPACE_MIGRATIONS).unwrap();
        db
    }

    fn grant(id: &str, start: u64, end: u128) -> Grant {
        Grant {
            namespace: Namespace::new("top").unwrap(),
            incarnation: Incarnation::new("A9").unwrap(),
            request_id: RequestId::new(id).unwrap(),
            range: Range::new(start, end).unwrap(),
        }
    }

    fn request(id: &str, count: u64) -> GrantRequest {
        GrantRequest {
            namespace: Namespace::new("top").unwrap(),
            incarnation: Incarnation::new("A9").unwrap(),
            request_id: RequestId::new(id).unwrap(),
            count,
        }
    }

    fn insert(db: &MemSql, span: Span) {
        let view = LedgerView::EMPTY;
        let record = Record {
            span,
            extends: false,
            caller: Usage {
                rows: 1,
                bucket: Bucket::load(0, 0),
            },
            rows: 1,
        };
        write(db, &view, &record).unwrap();
    }

    #[test]
    fn a_span_at_the_top_round_trips_and_is_found_by_its_owner_only() {
        let db = db();
        let svc = Owner::new("svc");
        let span = Span::new(svc, &grant("r1", u64::MAX - 1, 1 << 64), 5);
        insert(&db, span);
        let found = view(&db, &request("r1", 2), &svc).unwrap();
        assert_eq!(found.span, Some(span));
        assert_eq!((found.rows, found.caller.rows), (1, 1));
        // A later numbered request finds it too (it may extend it).
        assert_eq!(view(&db, &request("r9", 2), &svc).unwrap().span, Some(span));
        assert_eq!(view(&db, &request("r0", 2), &svc).unwrap().span, None);
        // Another owner finds nothing, and is a new caller.
        let other = view(&db, &request("r1", 2), &Owner::new("svc2")).unwrap();
        assert_eq!((other.span, other.caller), (None, Usage::NEW));
        // An id that is not numbered is found exactly.
        let odd = Span::new(svc, &grant("r01", 5, 6), 5);
        insert(&db, odd);
        assert_eq!(view(&db, &request("r01", 1), &svc).unwrap().span, Some(odd));
        assert_eq!(view(&db, &request("r02", 1), &svc).unwrap().span, None);
    }

    #[test]
    fn the_migration_numbers_request_ids_as_core_does() {
        let db = MemSql::new();
        migrate(&db, &NAMESPACE_MIGRATIONS[..3]).unwrap();
        let ids = [
            "r0",
            "r1",
            "r17",
            "r01",
            "r00",
            "r",
            "rr1",
            "R1",
            "r1a",
            "x1",
            "r18446744073709551615",
            "r18446744073709551616",
            "r99999999999999999999",
            "r184467440737095516150",
            "r1.5",
            "r-1",
            "r 1",
        ];
        for (i, id) in ids.iter().enumerate() {
            if RequestId::new(id).is_err() {
                continue;
            }
            let owner = if i % 2 == 0 {
                Value::Null
            } else {
                Value::from("svc")
            };
            let start = i as u128 * 10 + 1;
            db.exec(
                "INSERT INTO grants (incarnation, request_id, start, end, at, owner) \
                 VALUES ('A9', ?, ?, ?, ?, ?)",
                &[
                    (*id).into(),
                    pad(start).into(),
                    pad(start + 10).into(),
                    Value::Int(7),
                    owner,
                ],
            )
            .unwrap();
        }
        migrate(&db, NAMESPACE_MIGRATIONS).unwrap();
        let rows = db
            .exec(
                "SELECT request_id, number, owner, grants, at, last_at FROM grants ORDER BY start",
                &[],
            )
            .unwrap();
        let mut seen = 0;
        for (i, id) in ids.iter().enumerate() {
            let Ok(rid) = RequestId::new(id) else {
                continue;
            };
            let r = &rows[seen];
            seen += 1;
            assert_eq!(text(r, 0).unwrap(), *id);
            assert_eq!(text(r, 1).unwrap(), number_of(&rid), "{id}");
            let owner = if i % 2 == 0 { "" } else { "svc" };
            assert_eq!(
                text(r, 2).unwrap(),
                owner,
                "pre-owner rows belong to no one"
            );
            assert_eq!(
                (int(r, 3).unwrap(), int(r, 4).unwrap(), int(r, 5).unwrap()),
                (1, 7, 7)
            );
        }
        assert_eq!(seen, rows.len());
        // The counts match the rows.
        let (total, limits) = budget(&db).unwrap();
        assert_eq!((total, limits), (rows.len() as u64, Limits::DEFAULT));
        let owned = rows.iter().filter(|r| text(r, 2).unwrap() == "svc").count() as u64;
        let svc = view(&db, &request("r0", 10), &Owner::new("svc"))
            .unwrap()
            .caller;
        assert_eq!(svc.rows, owned);
        // A row from before owners is never found for a caller: not even
        // one whose sub is empty (no token has one).
        let legacy = view(&db, &request("r0", 10), &Owner::new("")).unwrap();
        assert!(legacy.span.is_none() || legacy.span.unwrap().owner().as_str().is_empty());
    }

    #[test]
    fn pruning_keeps_the_counts_exact() {
        let db = db();
        for (i, owner) in ["a", "b", "a", "c", "a"].iter().enumerate() {
            let i = i as u64;
            let span = Span::new(
                Owner::new(owner),
                &grant(&format!("r{i}"), 1 + i * 10, u128::from(11 + i * 10)),
                i as i64 * 100,
            );
            let view = view(&db, &request(&format!("r{i}"), 10), &Owner::new(owner)).unwrap();
            let record = Record {
                span,
                extends: false,
                caller: Usage {
                    rows: view.caller.rows + 1,
                    bucket: Bucket::load(0, i as i64 * 100),
                },
                rows: view.rows + 1,
            };
            write(&db, &view, &record).unwrap();
        }
        assert_eq!(budget(&db).unwrap().0, 5);
        assert_eq!(
            top_subs(&db, 5).unwrap(),
            vec![("a".into(), 3), ("b".into(), 1), ("c".into(), 1)]
        );
        // Spans committed before 250: the first three.
        assert_eq!(prune(&db, 250, 10_000).unwrap(), 3);
        assert_eq!(budget(&db).unwrap().0, 2);
        assert_eq!(
            top_subs(&db, 5).unwrap(),
            vec![("a".into(), 1), ("c".into(), 1)]
        );
        let b = view(&db, &request("r0", 10), &Owner::new("b")).unwrap();
        assert_eq!(b.caller, Usage::NEW, "b is forgotten");
        assert_eq!(prune(&db, 250, 10_000).unwrap(), 0);
        assert_eq!(prune(&db, 1 << 52, 10_000).unwrap(), 2);
        assert_eq!(budget(&db).unwrap().0, 0);
    }
}
