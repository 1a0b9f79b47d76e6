//! The Durable Objects' SQLite schema and row codec.
//!
//! Every ID-valued column (IDs, bounds, counts of IDs) is TEXT holding
//! exactly 20 zero-padded decimal digits, so values up to 2^64 sort and
//! round-trip exactly: the runtime hands SQL INTEGERs to Rust through an
//! f64 and would silently round anything past 2^53. INTEGER columns hold
//! only small values (milliseconds since the epoch, row ids, counters of
//! ranges); REAL columns only approximate rates.
//!
//! [`Sql`] is the one statement-level interface the object logic uses; the
//! Worker implements it on `SqlStorage`, tests on an in-memory SQLite.

use std::fmt;

use rangeid_core::authority::{NamespaceConfig, NamespaceState, NamespaceStatus};
use rangeid_core::{Grant, Incarnation, Namespace, Range, RequestId};

/// A SQL value as bound or read.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `NULL`.
    Null,
    /// An INTEGER; only ever a small value (|v| < 2^53).
    Int(i64),
    /// A REAL.
    Real(f64),
    /// TEXT.
    Text(String),
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(s)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

/// A storage failure, or stored data no decision could have written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Executes statements with positional `?` parameters and returns their
/// rows, each a list of column values in select order.
///
/// Implementations must not yield: the object runs every statement of one
/// request back to back so the runtime commits them together.
pub trait Sql {
    /// Runs `sql` with `params`.
    fn exec(&self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, StoreError>;

    /// Runs `body` as one transaction: every statement it ran commits
    /// together, or, when it returns `Err` (or a statement fails), none
    /// does and that error is returned.
    fn atomically(
        &self,
        body: &mut dyn FnMut() -> Result<(), StoreError>,
    ) -> Result<(), StoreError>;
}

/// The namespace object's tables. Idempotent.
pub const NAMESPACE_SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS namespace (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        name TEXT NOT NULL,
        first TEXT NOT NULL,
        max TEXT NOT NULL,
        max_count TEXT NOT NULL,
        next TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_grant_at INTEGER,
        ranges_granted TEXT NOT NULL,
        ids_granted TEXT NOT NULL
    )",
    "CREATE TABLE IF NOT EXISTS grants (
        incarnation TEXT NOT NULL,
        request_id TEXT NOT NULL,
        start TEXT NOT NULL,
        end TEXT NOT NULL,
        at INTEGER NOT NULL,
        PRIMARY KEY (incarnation, request_id)
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS grants_by_start ON grants (start)",
    "CREATE INDEX IF NOT EXISTS grants_by_at ON grants (at)",
    "CREATE TABLE IF NOT EXISTS audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        before TEXT,
        after TEXT,
        reason TEXT
    )",
    "CREATE TABLE IF NOT EXISTS rate (
        bucket INTEGER PRIMARY KEY,
        ranges INTEGER NOT NULL,
        ids REAL NOT NULL
    )",
];

/// The registry object's table. Idempotent.
pub const REGISTRY_SCHEMA: &[&str] = &["CREATE TABLE IF NOT EXISTS namespaces (
        name TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL
    )"];

/// Runs every statement of a schema.
pub fn migrate(sql: &impl Sql, schema: &[&str]) -> Result<(), StoreError> {
    for statement in schema {
        sql.exec(statement, &[])?;
    }
    Ok(())
}

/// Formats a value up to 2^64 as exactly 20 zero-padded digits.
pub fn pad(value: u128) -> String {
    format!("{value:020}")
}

/// Parses exactly 20 decimal digits into a value no greater than 2^64.
pub fn unpad(text: &str) -> Result<u128, StoreError> {
    if text.len() != 20 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(StoreError(format!(
            "stored number {text:?} is not 20 digits"
        )));
    }
    text.parse::<u128>()
        .ok()
        .filter(|&v| v <= 1 << 64)
        .ok_or_else(|| StoreError(format!("stored number {text:?} is out of range")))
}

/// [`unpad`] for values that must fit a `u64`.
pub fn unpad_u64(text: &str) -> Result<u64, StoreError> {
    unpad(text).and_then(|v| {
        u64::try_from(v).map_err(|_| StoreError(format!("stored number {text:?} exceeds u64")))
    })
}

/// Column `i` of `row` as text.
pub fn text(row: &[Value], i: usize) -> Result<&str, StoreError> {
    match row.get(i) {
        Some(Value::Text(s)) => Ok(s),
        other => Err(StoreError(format!(
            "column {i}: expected text, got {other:?}"
        ))),
    }
}

/// Column `i` of `row` as a small integer (a REAL holding an integral
/// value is accepted: the runtime may report either).
pub fn int(row: &[Value], i: usize) -> Result<i64, StoreError> {
    match row.get(i) {
        Some(Value::Int(v)) => Ok(*v),
        Some(Value::Real(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(*f as i64),
        other => Err(StoreError(format!(
            "column {i}: expected integer, got {other:?}"
        ))),
    }
}

/// Column `i` of `row` as an optional small integer.
pub fn opt_int(row: &[Value], i: usize) -> Result<Option<i64>, StoreError> {
    match row.get(i) {
        Some(Value::Null) => Ok(None),
        _ => int(row, i).map(Some),
    }
}

/// Column `i` of `row` as a number (for approximate statistics).
pub fn real(row: &[Value], i: usize) -> Result<f64, StoreError> {
    match row.get(i) {
        Some(Value::Real(f)) => Ok(*f),
        Some(Value::Int(v)) => Ok(*v as f64),
        Some(Value::Null) => Ok(0.0),
        other => Err(StoreError(format!(
            "column {i}: expected number, got {other:?}"
        ))),
    }
}

/// Column `i` of `row` as optional text.
pub fn opt_text(row: &[Value], i: usize) -> Result<Option<&str>, StoreError> {
    match row.get(i) {
        Some(Value::Null) => Ok(None),
        _ => text(row, i).map(Some),
    }
}

/// The stored namespace row: its state and its counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamespaceRow {
    /// The committed allocation state.
    pub state: NamespaceState,
    /// When the namespace was created (ms since the epoch).
    pub created_at: i64,
    /// When it last granted a new range (ms), if ever.
    pub last_grant_at: Option<i64>,
    /// How many ranges it granted.
    pub ranges_granted: u64,
    /// How many IDs it granted (floors excluded), up to 2^64.
    pub ids_granted: u128,
}

/// Selects the namespace row in [`NamespaceRow::decode`]'s column order.
pub const SELECT_NAMESPACE: &str = "SELECT name, first, max, max_count, next, status, created_at, \
     last_grant_at, ranges_granted, ids_granted FROM namespace WHERE id = 1";

/// Inserts the namespace row with [`NamespaceRow::params`].
pub const INSERT_NAMESPACE: &str = "INSERT INTO namespace (id, name, first, max, max_count, next, \
     status, created_at, last_grant_at, ranges_granted, ids_granted) \
     VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/// Moves the mutable columns from the expected `next` (last parameter) to
/// new values; returns the row only when `next` was the expected one.
pub const UPDATE_NAMESPACE: &str = "UPDATE namespace SET next = ?, status = ?, last_grant_at = ?, \
     ranges_granted = ?, ids_granted = ? WHERE id = 1 AND next = ? RETURNING next";

impl NamespaceRow {
    /// A new namespace's row.
    pub fn create(name: Namespace, config: NamespaceConfig, now: i64) -> NamespaceRow {
        NamespaceRow {
            state: NamespaceState::create(name, config),
            created_at: now,
            last_grant_at: None,
            ranges_granted: 0,
            ids_granted: 0,
        }
    }

    /// Decodes a row selected with [`SELECT_NAMESPACE`], checking every
    /// value against core's invariants.
    pub fn decode(row: &[Value]) -> Result<NamespaceRow, StoreError> {
        let name = Namespace::new(text(row, 0)?)
            .map_err(|e| StoreError(format!("stored namespace name: {e}")))?;
        let config = NamespaceConfig::new(
            Some(unpad_u64(text(row, 1)?)?),
            Some(unpad_u64(text(row, 2)?)?),
            Some(unpad_u64(text(row, 3)?)?),
        )
        .map_err(|e| StoreError(format!("stored configuration: {e}")))?;
        let next = unpad(text(row, 4)?)?;
        let status = NamespaceStatus::parse(text(row, 5)?)
            .ok_or_else(|| StoreError("stored status is invalid".into()))?;
        let state = NamespaceState::load(name, config, next, status)
            .map_err(|e| StoreError(format!("stored state: {e:?}")))?;
        Ok(NamespaceRow {
            state,
            created_at: int(row, 6)?,
            last_grant_at: opt_int(row, 7)?,
            ranges_granted: unpad_u64(text(row, 8)?)?,
            ids_granted: unpad(text(row, 9)?)?,
        })
    }

    /// The parameters of [`INSERT_NAMESPACE`].
    pub fn insert_params(&self) -> Vec<Value> {
        let c = self.state.config();
        vec![
            self.state.name().as_str().into(),
            pad(c.first().into()).into(),
            pad(c.max().into()).into(),
            pad(c.max_count().into()).into(),
            pad(self.state.next()).into(),
            self.state.status().as_str().into(),
            Value::Int(self.created_at),
            self.last_grant_at.map_or(Value::Null, Value::Int),
            pad(self.ranges_granted.into()).into(),
            pad(self.ids_granted).into(),
        ]
    }

    /// The parameters of [`UPDATE_NAMESPACE`] moving from `expected_next`
    /// to this row.
    pub fn update_params(&self, expected_next: u128) -> Vec<Value> {
        vec![
            pad(self.state.next()).into(),
            self.state.status().as_str().into(),
            self.last_grant_at.map_or(Value::Null, Value::Int),
            pad(self.ranges_granted.into()).into(),
            pad(self.ids_granted).into(),
            pad(expected_next).into(),
        ]
    }
}

/// Selects one grant by key, in [`decode_grant`]'s column order.
pub const SELECT_GRANT: &str =
    "SELECT incarnation, request_id, start, end, at FROM grants WHERE incarnation = ? AND request_id = ?";

/// Inserts a grant: incarnation, request_id, start, end, at.
pub const INSERT_GRANT: &str =
    "INSERT INTO grants (incarnation, request_id, start, end, at) VALUES (?, ?, ?, ?, ?)";

/// A stored grant row and when it was committed (ms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrantRow {
    /// The grant.
    pub grant: Grant,
    /// When it was committed (ms since the epoch).
    pub at: i64,
}

/// Decodes a grants row (incarnation, request_id, start, end, at) of
/// namespace `ns`.
pub fn decode_grant(ns: Namespace, row: &[Value]) -> Result<GrantRow, StoreError> {
    let incarnation = Incarnation::new(text(row, 0)?)
        .map_err(|e| StoreError(format!("stored incarnation: {e}")))?;
    let request_id =
        RequestId::new(text(row, 1)?).map_err(|e| StoreError(format!("stored request id: {e}")))?;
    let start = unpad_u64(text(row, 2)?)?;
    let end = unpad(text(row, 3)?)?;
    let range = Range::new(start, end).map_err(|e| StoreError(format!("stored range: {e}")))?;
    Ok(GrantRow {
        grant: Grant {
            namespace: ns,
            incarnation,
            request_id,
            range,
        },
        at: int(row, 4)?,
    })
}

/// The parameters of [`INSERT_GRANT`].
pub fn grant_params(g: &Grant, at: i64) -> Vec<Value> {
    vec![
        g.incarnation.as_str().into(),
        g.request_id.as_str().into(),
        pad(g.range.start().into()).into(),
        pad(g.range.end()).into(),
        Value::Int(at),
    ]
}

#[cfg(test)]
pub(crate) mod mem {
    //! An in-memory SQLite standing in for Durable Object storage.

    use super::*;
    use rusqlite::types::{Value as Sv, ValueRef};

    /// One database connection.
    pub struct MemSql(pub rusqlite::Connection);

    impl MemSql {
        pub fn new() -> MemSql {
            MemSql(rusqlite::Connection::open_in_memory().expect("open sqlite"))
        }
    }

    impl Sql for MemSql {
        fn exec(&self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, StoreError> {
            let err = |e: rusqlite::Error| StoreError(e.to_string());
            let mut stmt = self.0.prepare(sql).map_err(err)?;
            let mut bound: Vec<Sv> = Vec::with_capacity(params.len());
            for p in params {
                bound.push(match p {
                    Value::Null => Sv::Null,
                    // Like the runtime's try_from_i64: integers cross as
                    // f64, so anything unsafe is refused.
                    Value::Int(i) if i.unsigned_abs() > (1 << 53) - 1 => {
                        return Err(StoreError(format!("{i} is outside the safe integer range")))
                    }
                    Value::Int(i) => Sv::Integer(*i),
                    Value::Real(f) => Sv::Real(*f),
                    Value::Text(s) => Sv::Text(s.clone()),
                });
            }
            let n = stmt.column_count();
            let mut rows = stmt.query(rusqlite::params_from_iter(bound)).map_err(err)?;
            let mut out = Vec::new();
            while let Some(row) = rows.next().map_err(err)? {
                let mut cols = Vec::with_capacity(n);
                for i in 0..n {
                    cols.push(match row.get_ref(i).map_err(err)? {
                        ValueRef::Null => Value::Null,
                        // The runtime passes integers through an f64;
                        // mimic its loss so tests catch any ID stored as
                        // INTEGER.
                        ValueRef::Integer(v) => {
                            let f = v as f64;
                            if f.abs() < 9_007_199_254_740_992.0 {
                                Value::Int(v)
                            } else {
                                Value::Real(f)
                            }
                        }
                        ValueRef::Real(f) => Value::Real(f),
                        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                        ValueRef::Blob(_) => Value::Null,
                    });
                }
                out.push(cols);
            }
            Ok(out)
        }

        fn atomically(
            &self,
            body: &mut dyn FnMut() -> Result<(), StoreError>,
        ) -> Result<(), StoreError> {
            let batch = |q: &str| {
                self.0
                    .execute_batch(q)
                    .map_err(|e| StoreError(e.to_string()))
            };
            batch("SAVEPOINT atomically")?;
            match body() {
                Ok(()) => batch("RELEASE atomically"),
                Err(e) => {
                    batch("ROLLBACK TO atomically")?;
                    batch("RELEASE atomically")?;
                    Err(e)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::mem::MemSql;
    use super::*;

    #[test]
    fn padding_round_trips_and_sorts() {
        let values = [
            0u128,
            1,
            9,
            10,
            (1 << 53) - 1,
            1 << 53,
            (1 << 53) + 1,
            1 << 63,
            u64::MAX.into(),
            1 << 64,
        ];
        for w in values.windows(2) {
            assert!(pad(w[0]) < pad(w[1]));
        }
        for v in values {
            assert_eq!(pad(v).len(), 20);
            assert_eq!(unpad(&pad(v)), Ok(v));
        }
        for bad in [
            "",
            "1",
            "0000000000000000000x",
            "18446744073709551617",
            "+0000000000000000001",
            "000000000000000000001",
        ] {
            assert!(unpad(bad).is_err(), "{bad}");
        }
        assert!(unpad_u64(&pad(1 << 64)).is_err());
    }

    #[test]
    fn a_namespace_near_two_to_the_64_round_trips_exactly() {
        let db = MemSql::new();
        migrate(&db, NAMESPACE_SCHEMA).unwrap();
        migrate(&db, NAMESPACE_SCHEMA).unwrap();
        let config =
            NamespaceConfig::new(Some(u64::MAX - 2), Some(u64::MAX), Some(u64::MAX)).unwrap();
        let mut row =
            NamespaceRow::create(Namespace::new("top").unwrap(), config, 1_700_000_000_000);
        row.ids_granted = u64::MAX.into();
        row.ranges_granted = (1 << 53) + 1;
        db.exec(INSERT_NAMESPACE, &row.insert_params()).unwrap();
        let read = db.exec(SELECT_NAMESPACE, &[]).unwrap();
        assert_eq!(NamespaceRow::decode(&read[0]), Ok(row));

        // Advance next to 2^64 exactly, through the compare-and-set update.
        let exhausted =
            NamespaceState::load(*row.state.name(), config, 1 << 64, row.state.status()).unwrap();
        let moved = NamespaceRow {
            state: exhausted,
            ids_granted: 1 << 64,
            ..row
        };
        let stale = db.exec(UPDATE_NAMESPACE, &moved.update_params(5)).unwrap();
        assert!(stale.is_empty(), "a wrong expected next must not update");
        let done = db
            .exec(UPDATE_NAMESPACE, &moved.update_params(row.state.next()))
            .unwrap();
        assert_eq!(done.len(), 1);
        let read = db.exec(SELECT_NAMESPACE, &[]).unwrap();
        let back = NamespaceRow::decode(&read[0]).unwrap();
        assert_eq!(back.state.next(), 1 << 64);
        assert_eq!(back.state.remaining(), 0);
        assert_eq!(back.ids_granted, 1 << 64);
    }

    #[test]
    fn a_grant_at_the_top_round_trips() {
        let db = MemSql::new();
        migrate(&db, NAMESPACE_SCHEMA).unwrap();
        let ns = Namespace::new("top").unwrap();
        let g = Grant {
            namespace: ns,
            incarnation: Incarnation::new("A9").unwrap(),
            request_id: RequestId::new("r1").unwrap(),
            range: Range::new(u64::MAX - 1, 1 << 64).unwrap(),
        };
        db.exec(INSERT_GRANT, &grant_params(&g, 5)).unwrap();
        let rows = db.exec(SELECT_GRANT, &["A9".into(), "r1".into()]).unwrap();
        assert_eq!(decode_grant(ns, &rows[0]), Ok(GrantRow { grant: g, at: 5 }));
    }

    #[test]
    fn corrupt_rows_are_refused() {
        let good: Vec<Value> = vec![
            "orders".into(),
            pad(1).into(),
            pad(100).into(),
            pad(10).into(),
            pad(50).into(),
            "active".into(),
            Value::Int(1),
            Value::Null,
            pad(0).into(),
            pad(0).into(),
        ];
        assert!(NamespaceRow::decode(&good).is_ok());
        let mut next_past_max = good.clone();
        next_past_max[4] = pad(102).into();
        let mut as_integer = good.clone();
        as_integer[4] = Value::Int(50);
        let mut bad_status = good.clone();
        bad_status[5] = "paused".into();
        let mut short = good.clone();
        short.truncate(5);
        for bad in [next_past_max, as_integer, bad_status, short] {
            assert!(NamespaceRow::decode(&bad).is_err(), "{bad:?}");
        }
    }
}
