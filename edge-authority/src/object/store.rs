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
use rangeid_core::Namespace;

use crate::shared::refusals::{Counted, Refusals};

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

    /// The bytes the whole database takes, where the store can say.
    fn size_bytes(&self) -> Option<u64> {
        None
    }
}

/// The namespace object's schema, as migrations: step `i` takes a store
/// from version `i` to `i + 1`. [`migrate`] runs the steps a store lacks,
/// each in one transaction with its new version.
pub const NAMESPACE_MIGRATIONS: &[&[&str]] = &[
    // 1: the namespace row, the grant ledger, the audit log.
    &[
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
    ],
    // 2: the restore fence (the mark the witness acknowledged, what starts
    // skipped, how often a start found the witness ahead, the largest
    // grant for chunk sizing); each grant's owner (its token `sub`); rates
    // in per-minute buckets of 24 hours with IDs as decimal text.
    &[
        "ALTER TABLE namespace ADD COLUMN fence TEXT",
        "ALTER TABLE namespace ADD COLUMN fence_skipped TEXT",
        "ALTER TABLE namespace ADD COLUMN fence_forwards INTEGER",
        "ALTER TABLE namespace ADD COLUMN largest_grant TEXT",
        "ALTER TABLE grants ADD COLUMN owner TEXT",
        "CREATE TABLE IF NOT EXISTS minutes (
            minute INTEGER PRIMARY KEY,
            ranges INTEGER NOT NULL,
            ids TEXT NOT NULL
        )",
        "DROP TABLE IF EXISTS rate",
        // maxCount is capped at 2^53 - 1 (exact in JS); older rows may hold more.
        "UPDATE namespace SET max_count = '00009007199254740991'
            WHERE max_count > '00009007199254740991'",
    ],
    // 3: refusals counted for operators, by kind (see `refusals`).
    &["CREATE TABLE IF NOT EXISTS refusals (
            kind TEXT PRIMARY KEY,
            count INTEGER NOT NULL
        )"],
    // 4: the restore fence checks its witness both ways: the highest mark
    // the object asked its witness for (written before asking, so a raise
    // whose answer was lost is not taken for a rollback), and how often
    // the witness was found below the object's fence.
    &[
        "ALTER TABLE namespace ADD COLUMN fence_asked TEXT",
        "ALTER TABLE namespace ADD COLUMN witness_behinds INTEGER",
    ],
    // 5: a request's identity includes its owner (the token `sub`): the
    // grants table is rebuilt keyed by (owner, incarnation, request id),
    // each row a span of grants (see `rangeid_core::ledger`). Rows stored
    // before owners were kept get the owner '' that no token has, so they
    // are never replayed to anyone (a retry of one gets a fresh range: a
    // gap). Each sub's rows and grant-rate bucket; the ledger's row count
    // and the namespace's limits (NULL: the default); the largest grant of
    // each minute, for fence chunks that follow recent grants.
    &[
        "CREATE TABLE grants_v5 (
            owner TEXT NOT NULL,
            incarnation TEXT NOT NULL,
            request_id TEXT NOT NULL,
            number TEXT NOT NULL,
            grants INTEGER NOT NULL,
            start TEXT NOT NULL,
            end TEXT NOT NULL,
            at INTEGER NOT NULL,
            last_at INTEGER NOT NULL
        )",
        // `number`: 20 digits of n for a request id r<n> as core numbers
        // them (no leading zero, at most u64::MAX), '' for any other id.
        "INSERT INTO grants_v5 (owner, incarnation, request_id, number, grants, start, end, at,
            last_at)
         SELECT COALESCE(owner, ''), incarnation, request_id,
            CASE WHEN substr(request_id, 1, 1) = 'r'
                  AND length(request_id) BETWEEN 2 AND 21
                  AND substr(request_id, 2) NOT GLOB '*[^0-9]*'
                  AND (substr(request_id, 2, 1) <> '0' OR length(request_id) = 2)
                  AND (length(request_id) < 21 OR substr(request_id, 2) <= '18446744073709551615')
                 THEN substr('00000000000000000000' || substr(request_id, 2), -20)
                 ELSE '' END,
            1, start, end, at, at
         FROM grants",
        "DROP TABLE grants",
        "ALTER TABLE grants_v5 RENAME TO grants",
        "CREATE UNIQUE INDEX grants_by_key ON grants (owner, incarnation, number, request_id)",
        "CREATE UNIQUE INDEX grants_by_start ON grants (start)",
        "CREATE INDEX grants_by_last_at ON grants (last_at)",
        "CREATE TABLE subs (
            sub TEXT PRIMARY KEY,
            rows INTEGER NOT NULL,
            level INTEGER NOT NULL,
            at INTEGER NOT NULL
        )",
        "INSERT INTO subs (sub, rows, level, at) SELECT owner, COUNT(*), 0, 0 FROM grants
            GROUP BY owner",
        "CREATE TABLE budget (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            rows INTEGER NOT NULL,
            grants_per_second INTEGER,
            ledger_rows INTEGER,
            sub_ledger_rows INTEGER
        )",
        "INSERT INTO budget (id, rows) SELECT 1, COUNT(*) FROM grants",
        "ALTER TABLE minutes ADD COLUMN largest TEXT",
    ],
    // 6: the relay setting (docs/relays.md): NULL while relays were never
    // turned on, then 'on' or 'off' (see `object::relays`).
    &["ALTER TABLE namespace ADD COLUMN relays TEXT"],
    // 7: relays' reports of their sub-grants (`object::reports`): one row
    // per sub-grant, keyed by its start, and per relay what its reports
    // brought and its latest view of itself.
    &[
        "CREATE TABLE reports (
            start TEXT PRIMARY KEY,
            end TEXT NOT NULL,
            owner TEXT NOT NULL,
            incarnation TEXT NOT NULL,
            request_id TEXT NOT NULL,
            relay TEXT NOT NULL,
            relay_incarnation TEXT NOT NULL,
            at INTEGER NOT NULL
        )",
        "CREATE INDEX reports_by_at ON reports (at)",
        "CREATE TABLE relay_reports (
            relay TEXT PRIMARY KEY,
            batches INTEGER NOT NULL,
            kept INTEGER NOT NULL,
            dropped INTEGER NOT NULL,
            last_at INTEGER NOT NULL,
            incarnation TEXT NOT NULL,
            held TEXT NOT NULL,
            abandoned TEXT NOT NULL,
            sub_grants INTEGER NOT NULL,
            relay_dropped INTEGER NOT NULL
        )",
    ],
    // 8: the longest lease a relay object ever asked under
    // (`object::relays::record_lease`), NULL before any; and per relay the
    // sub-grants reported that lay in none of its retained grants.
    &[
        "ALTER TABLE namespace ADD COLUMN relay_lease_ms INTEGER",
        "ALTER TABLE relay_reports ADD COLUMN unmatched INTEGER NOT NULL DEFAULT 0",
    ],
    // 9: each relay instance's latest view of itself, so that two live
    // instances of one relay (a split) do not overwrite each other and
    // what an ended instance held counts as abandoned
    // (`object::reports::by_relay`).
    &[
        "CREATE TABLE relay_instances (
            relay TEXT NOT NULL,
            incarnation TEXT NOT NULL,
            last_at INTEGER NOT NULL,
            held TEXT NOT NULL,
            abandoned TEXT NOT NULL,
            sub_grants INTEGER NOT NULL,
            relay_dropped INTEGER NOT NULL,
            PRIMARY KEY (relay, incarnation)
        )",
        "INSERT INTO relay_instances (relay, incarnation, last_at, held, abandoned, sub_grants, \
         relay_dropped) SELECT relay, incarnation, last_at, held, abandoned, sub_grants, \
         relay_dropped FROM relay_reports",
    ],
    // 10: what each relay instance refused generators, by code.
    &[
        "ALTER TABLE relay_instances ADD COLUMN frozen INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE relay_instances ADD COLUMN exhausted INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE relay_instances ADD COLUMN conflicts INTEGER NOT NULL DEFAULT 0",
    ],
];

/// The registry object's schema, as migrations (see
/// [`NAMESPACE_MIGRATIONS`]).
pub const REGISTRY_MIGRATIONS: &[&[&str]] = &[
    // 1: the names.
    &["CREATE TABLE IF NOT EXISTS namespaces (
        name TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL
    )"],
    // 2: each namespace's latest summary, pushed by its object, and when.
    &[
        "ALTER TABLE namespaces ADD COLUMN summary TEXT",
        "ALTER TABLE namespaces ADD COLUMN updated_at INTEGER",
    ],
];

/// The fence object's schema, as migrations: one row, the witness's mark.
pub const FENCE_MIGRATIONS: &[&[&str]] = &[&["CREATE TABLE IF NOT EXISTS fence (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        mark TEXT NOT NULL
    )"]];

/// Brings a store's schema up to date: runs each migration step it has not
/// had, each atomically with the version it reaches. Idempotent.
pub fn migrate(sql: &impl Sql, migrations: &[&[&str]]) -> Result<(), StoreError> {
    sql.exec(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        &[],
    )?;
    let rows = sql.exec("SELECT value FROM meta WHERE key = 'schema'", &[])?;
    let version = match rows.first() {
        Some(r) => text(r, 0)?
            .parse::<usize>()
            .map_err(|_| StoreError("stored schema version is not a number".into()))?,
        None => 0,
    };
    if version > migrations.len() {
        return Err(StoreError(format!(
            "the store's schema version {version} is newer than this build's {}",
            migrations.len()
        )));
    }
    for (i, step) in migrations.iter().enumerate().skip(version) {
        sql.atomically(&mut || {
            for statement in step.iter() {
                sql.exec(statement, &[])?;
            }
            sql.exec(
                "INSERT INTO meta (key, value) VALUES ('schema', ?) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[(i + 1).to_string().into()],
            )?;
            Ok(())
        })?;
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
    /// The committed allocation state, the fence included.
    pub state: NamespaceState,
    /// When the namespace was created (ms since the epoch).
    pub created_at: i64,
    /// When it last granted a new range (ms), if ever.
    pub last_grant_at: Option<i64>,
    /// How many ranges it granted.
    pub ranges_granted: u64,
    /// How many IDs it granted (floors excluded), up to 2^64.
    pub ids_granted: u128,
    /// The largest grant ever (a statistic: fence chunks follow the
    /// largest grant of the last minute, from the minute buckets).
    pub largest_grant: u64,
    /// IDs starts skipped to reach the witness's mark, in all.
    pub fence_skipped: u128,
    /// Starts that found the witness's mark above the recorded one.
    pub fence_forwards: u64,
    /// The highest mark this object asked its witness for (at least the
    /// fence; recorded before each raise is sent).
    pub fence_asked: u128,
    /// Times the witness was found below this object's fence (and raised
    /// back).
    pub witness_behinds: u64,
}

/// Selects the namespace row in [`NamespaceRow::decode`]'s column order.
pub const SELECT_NAMESPACE: &str = "SELECT name, first, max, max_count, next, status, created_at, \
     last_grant_at, ranges_granted, ids_granted, fence, largest_grant, fence_skipped, \
     fence_forwards, fence_asked, witness_behinds FROM namespace WHERE id = 1";

/// Inserts the namespace row with [`NamespaceRow::insert_params`].
pub const INSERT_NAMESPACE: &str = "INSERT INTO namespace (id, name, first, max, max_count, next, \
     status, created_at, last_grant_at, ranges_granted, ids_granted, fence, largest_grant, \
     fence_skipped, fence_forwards, fence_asked, witness_behinds) \
     VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/// Moves the mutable columns from the expected `next` (last parameter) to
/// new values; returns the row only when `next` was the expected one.
pub const UPDATE_NAMESPACE: &str = "UPDATE namespace SET next = ?, status = ?, last_grant_at = ?, \
     ranges_granted = ?, ids_granted = ?, fence = ?, largest_grant = ?, fence_skipped = ?, \
     fence_forwards = ?, fence_asked = ?, witness_behinds = ? WHERE id = 1 AND next = ? \
     RETURNING next";

impl NamespaceRow {
    /// A new namespace's row, fenced at its first ID.
    pub fn create(name: Namespace, config: NamespaceConfig, now: i64) -> NamespaceRow {
        NamespaceRow {
            state: NamespaceState::create(name, config),
            created_at: now,
            last_grant_at: None,
            ranges_granted: 0,
            ids_granted: 0,
            largest_grant: 0,
            fence_skipped: 0,
            fence_forwards: 0,
            fence_asked: 0,
            witness_behinds: 0,
        }
    }

    /// Decodes a row selected with [`SELECT_NAMESPACE`], checking every
    /// value against core's invariants. A row from before the fence (its
    /// columns `NULL`) is fenced at its `next`.
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
        let fence = opt_text(row, 10)?.map(unpad).transpose()?.unwrap_or(next);
        let state = NamespaceState::load(name, config, next, status, fence)
            .map_err(|e| StoreError(format!("stored state: {e:?}")))?;
        Ok(NamespaceRow {
            state,
            created_at: int(row, 6)?,
            last_grant_at: opt_int(row, 7)?,
            ranges_granted: unpad_u64(text(row, 8)?)?,
            ids_granted: unpad(text(row, 9)?)?,
            largest_grant: opt_text(row, 11)?.map(unpad_u64).transpose()?.unwrap_or(0),
            fence_skipped: opt_text(row, 12)?.map(unpad).transpose()?.unwrap_or(0),
            fence_forwards: opt_int(row, 13)?.map_or(0, |v| v.max(0) as u64),
            fence_asked: opt_text(row, 14)?.map(unpad).transpose()?.unwrap_or(0),
            witness_behinds: opt_int(row, 15)?.map_or(0, |v| v.max(0) as u64),
        })
    }

    fn mutable_params(&self) -> Vec<Value> {
        vec![
            pad(self.state.next()).into(),
            self.state.status().as_str().into(),
            self.last_grant_at.map_or(Value::Null, Value::Int),
            pad(self.ranges_granted.into()).into(),
            pad(self.ids_granted).into(),
            pad(self.state.fence()).into(),
            pad(self.largest_grant.into()).into(),
            pad(self.fence_skipped).into(),
            // Counts of starts and checks: small.
            Value::Int(self.fence_forwards.min(1 << 52) as i64),
            pad(self.fence_asked).into(),
            Value::Int(self.witness_behinds.min(1 << 52) as i64),
        ]
    }

    /// The parameters of [`INSERT_NAMESPACE`].
    pub fn insert_params(&self) -> Vec<Value> {
        let c = self.state.config();
        let mut p = vec![
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
        ];
        p.extend(self.mutable_params().into_iter().skip(5));
        p
    }

    /// The parameters of [`UPDATE_NAMESPACE`] moving from `expected_next`
    /// to this row.
    pub fn update_params(&self, expected_next: u128) -> Vec<Value> {
        let mut p = self.mutable_params();
        p.push(pad(expected_next).into());
        p
    }
}

/// Adds a grant of `ids` to the minute bucket `minute` (ms / 60,000),
/// counting IDs exactly as decimal text and keeping the minute's largest
/// grant. Run it in the grant's own transaction.
pub fn add_to_minute(sql: &impl Sql, minute: i64, ids: u64) -> Result<(), StoreError> {
    let mut stored = minutes_since(sql, minute)?;
    add_to_read_minute(sql, &mut stored, minute, ids)
}

/// As [`add_to_minute`], with the bucket already read: `read` holds what
/// [`minutes_since`] read from `minute` or earlier (the bucket of `minute`
/// among them if it is stored), and is updated to what is stored after.
pub fn add_to_read_minute(
    sql: &impl Sql,
    read: &mut Vec<Minute>,
    minute: i64,
    ids: u64,
) -> Result<(), StoreError> {
    let at = match read.iter().position(|m| m.minute == minute) {
        Some(at) => at,
        None => {
            read.push(Minute {
                minute,
                ranges: 0,
                ids: 0,
                largest: 0,
            });
            read.sort_by_key(|m| m.minute);
            read.iter().position(|m| m.minute == minute).unwrap_or(0)
        }
    };
    let Some(bucket) = read.get_mut(at) else {
        return Err(StoreError("minute bucket missing".to_owned()));
    };
    bucket.ranges = bucket.ranges.saturating_add(1);
    bucket.ids = (bucket.ids + u128::from(ids)).min(1 << 64);
    bucket.largest = bucket.largest.max(ids);
    sql.exec(
        "INSERT INTO minutes (minute, ranges, ids, largest) VALUES (?, ?, ?, ?) \
         ON CONFLICT (minute) DO UPDATE SET ranges = excluded.ranges, ids = excluded.ids, \
         largest = excluded.largest",
        &[
            Value::Int(minute),
            Value::Int(bucket.ranges),
            pad(bucket.ids).into(),
            pad(bucket.largest.into()).into(),
        ],
    )?;
    Ok(())
}

/// Adds `more` to the stored refusal counts (in one transaction with
/// whatever else the caller writes).
pub fn add_refusals(sql: &impl Sql, more: &Refusals) -> Result<(), StoreError> {
    for kind in Counted::ALL {
        let n = more.get(kind);
        if n == 0 {
            continue;
        }
        // Counts stay far below 2^53, where the runtime's integers are exact.
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        sql.exec(
            "INSERT INTO refusals (kind, count) VALUES (?, ?) \
             ON CONFLICT (kind) DO UPDATE SET count = count + excluded.count",
            &[kind.as_str().into(), Value::Int(n)],
        )?;
    }
    Ok(())
}

/// The stored refusal counts.
pub fn refusals(sql: &impl Sql) -> Result<Refusals, StoreError> {
    let mut counts = Refusals::default();
    for r in sql.exec("SELECT kind, count FROM refusals", &[])? {
        let kind = text(&r, 0)?;
        let count = int(&r, 1)?.max(0) as u64;
        match Counted::ALL.into_iter().find(|k| k.as_str() == kind) {
            Some(k) => counts.add_n(k, count),
            None if Counted::RETIRED.contains(&kind) => {}
            None => {
                return Err(StoreError(format!(
                    "stored refusal kind {kind:?} is unknown"
                )))
            }
        }
    }
    Ok(counts)
}

/// One minute of grants: its index (ms / 60,000), ranges, IDs and its
/// largest grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Minute {
    /// The minute's index since the epoch.
    pub minute: i64,
    /// Ranges granted in it.
    pub ranges: i64,
    /// IDs granted in it, exactly.
    pub ids: u128,
    /// Its largest grant (0 for a minute stored before this was kept).
    pub largest: u64,
}

/// The minute buckets from `from` (a minute index, inclusive) on, oldest
/// first.
pub fn minutes_since(sql: &impl Sql, from: i64) -> Result<Vec<Minute>, StoreError> {
    sql.exec(
        "SELECT minute, ranges, ids, largest FROM minutes WHERE minute >= ? ORDER BY minute",
        &[Value::Int(from)],
    )?
    .iter()
    .map(|r| {
        Ok(Minute {
            minute: int(r, 0)?,
            ranges: int(r, 1)?,
            ids: unpad(text(r, 2)?)?,
            largest: opt_text(r, 3)?.map(unpad_u64).transpose()?.unwrap_or(0),
        })
    })
    .collect()
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

        fn size_bytes(&self) -> Option<u64> {
            self.0
                .query_row(
                    "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
                    [],
                    |r| r.get::<_, i64>(0),
                )
                .ok()
                .and_then(|v| u64::try_from(v).ok())
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
        migrate(&db, NAMESPACE_MIGRATIONS).unwrap();
        migrate(&db, NAMESPACE_MIGRATIONS).unwrap();
        let config = NamespaceConfig::new(Some(u64::MAX - 2), Some(u64::MAX), Some(3)).unwrap();
        let mut row =
            NamespaceRow::create(Namespace::new("top").unwrap(), config, 1_700_000_000_000);
        row.ids_granted = u64::MAX.into();
        row.ranges_granted = (1 << 53) + 1;
        db.exec(INSERT_NAMESPACE, &row.insert_params()).unwrap();
        let read = db.exec(SELECT_NAMESPACE, &[]).unwrap();
        assert_eq!(NamespaceRow::decode(&read[0]), Ok(row));

        // Advance next to 2^64 exactly, through the compare-and-set update.
        let exhausted = NamespaceState::load(
            *row.state.name(),
            config,
            1 << 64,
            row.state.status(),
            1 << 64,
        )
        .unwrap();
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
    fn a_relays_view_from_before_instances_moves_into_relay_instances() {
        let db = MemSql::new();
        migrate(&db, &NAMESPACE_MIGRATIONS[..8]).unwrap();
        db.exec(
            "INSERT INTO relay_reports (relay, batches, kept, dropped, last_at, incarnation, \
             held, abandoned, sub_grants, relay_dropped) \
             VALUES ('relay@eu', 3, 5, 0, 77, 'abc', ?, ?, 9, 1)",
            &[pad(400).into(), pad(6).into()],
        )
        .unwrap();
        migrate(&db, NAMESPACE_MIGRATIONS).unwrap();
        let rows = db
            .exec(
                "SELECT relay, incarnation, last_at, held, abandoned, sub_grants, relay_dropped \
                 FROM relay_instances",
                &[],
            )
            .unwrap();
        assert_eq!(
            rows,
            vec![vec![
                Value::Text("relay@eu".into()),
                Value::Text("abc".into()),
                Value::Int(77),
                Value::Text(pad(400)),
                Value::Text(pad(6)),
                Value::Int(9),
                Value::Int(1),
            ]]
        );
    }

    #[test]
    fn migrations_bring_an_old_store_up_to_date_once() {
        let db = MemSql::new();
        // A store as the first release wrote it: version 1, no meta table.
        for statement in NAMESPACE_MIGRATIONS[0] {
            db.exec(statement, &[]).unwrap();
        }
        let config = NamespaceConfig::new(None, None, None).unwrap();
        let row = NamespaceRow::create(Namespace::new("old").unwrap(), config, 1);
        let mut v1 = row.insert_params()[..10].to_vec();
        // The first release let maxCount reach 2^64 - 1.
        v1[3] = Value::Text(pad(u64::MAX.into()));
        db.exec(
            "INSERT INTO namespace (id, name, first, max, max_count, next, status, created_at, \
             last_grant_at, ranges_granted, ids_granted) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &v1,
        )
        .unwrap();
        migrate(&db, NAMESPACE_MIGRATIONS).unwrap();
        migrate(&db, NAMESPACE_MIGRATIONS).unwrap();
        let read = db.exec(SELECT_NAMESPACE, &[]).unwrap();
        let migrated = NamespaceRow::decode(&read[0]).unwrap();
        assert_eq!(migrated.state.fence(), 1);
        assert_eq!(migrated.state.config().max_count(), (1 << 53) - 1);
        let version = db
            .exec("SELECT value FROM meta WHERE key = 'schema'", &[])
            .unwrap();
        assert_eq!(
            version[0][0],
            Value::Text(NAMESPACE_MIGRATIONS.len().to_string())
        );
        let mut counted = Refusals::default();
        counted.add(Counted::Frozen);
        counted.add_n(Counted::Fenced, 2);
        add_refusals(&db, &counted).unwrap();
        add_refusals(&db, &counted).unwrap();
        assert_eq!(
            (refusals(&db).unwrap().frozen, refusals(&db).unwrap().fenced),
            (2, 4)
        );
        add_to_minute(&db, 7, u64::MAX).unwrap();
        add_to_minute(&db, 7, 2).unwrap();
        assert_eq!(
            minutes_since(&db, 0).unwrap(),
            vec![Minute {
                minute: 7,
                ranges: 2,
                ids: 1 << 64,
                largest: u64::MAX,
            }],
            "sums stay exact past 2^64 - 1 (capped at 2^64)"
        );
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
            pad(60).into(),
            pad(10).into(),
            pad(0).into(),
            Value::Int(0),
            pad(60).into(),
            Value::Int(0),
        ];
        assert!(NamespaceRow::decode(&good).is_ok());
        let mut legacy = good.clone();
        for v in &mut legacy[10..] {
            *v = Value::Null;
        }
        let old = NamespaceRow::decode(&legacy).unwrap();
        assert_eq!(
            old.state.fence(),
            50,
            "a row from before the fence is fenced at next"
        );
        let mut next_past_max = good.clone();
        next_past_max[4] = pad(102).into();
        let mut as_integer = good.clone();
        as_integer[4] = Value::Int(50);
        let mut bad_status = good.clone();
        bad_status[5] = "paused".into();
        let mut short = good.clone();
        short.truncate(5);
        let mut fence_past_max = good.clone();
        fence_past_max[10] = pad(102).into();
        for bad in [next_past_max, as_integer, bad_status, short, fence_past_max] {
            assert!(NamespaceRow::decode(&bad).is_err(), "{bad:?}");
        }
    }
}
