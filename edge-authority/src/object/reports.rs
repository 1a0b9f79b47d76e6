//! Relays' reports (docs/relays.md §6): the sub-grants a relay handed to
//! generators, sent in batches off the grant path and kept in the
//! namespace object's ledger, so that "who got ID N" names the generator.
//!
//! - [`keep`]: one batch in one transaction. A sub-grant is kept only when
//!   it lies inside a retained grant of that relay's incarnation
//!   ([`SubGrant::lies_in`]); one already kept is known (a batch sent
//!   twice keeps nothing twice). Kept rows count in the ledger's budget
//!   and the generator's (its `sub` in `subs`), as its grant would have
//!   from the object, and never fill more than three quarters of either
//!   ([`rangeid_core::ledger::Limits::report_room`]): the last quarter
//!   stays for grants, and one generator's sub-grants cannot crowd out
//!   another's reports. Past that room a sub-grant is dropped and
//!   counted.
//! - [`holding`]: the kept sub-grant holding an ID, for the lookup.
//! - [`prune`]: reports go with the retention, as grants do.
//! - [`by_relay`]: what each relay's reports brought, for the summary.
//!
//! Reports are not needed for uniqueness: every sub-range lies inside a
//! grant the object committed to the relay before the relay handed it
//! out. A report's sub-grant is not a grant of this object: a retry of it
//! that reaches the object directly (its relay restarted, or relays were
//! turned off) is a new request here, answered with a new range, and the
//! generator's install-once makes the sub-range it never got a gap.

use std::collections::BTreeMap;

use rangeid_core::authority::Owner;
use rangeid_core::ledger::Span;
use rangeid_core::relay::SubGrant;
use rangeid_core::wire::{DecBound, DecU64};
use rangeid_core::{Grant, Incarnation, Namespace, Range, RequestId};
use serde::{Deserialize, Serialize};

use super::spans::{self, SPAN_COLUMNS};
use super::store::{int, opt_int, pad, text, unpad, unpad_u64, Sql, StoreError, Value};
use super::{load, relay, relays, unavailable};
use crate::api::Region;
use crate::shared::response::{ApiError, HttpReply};
pub use crate::shared::summary::RelayRefused;
use crate::shared::summary::{rfc3339, RelayReports};

/// At most this many relays are shown in a summary (those reported to
/// most recently).
pub const RELAYS_SHOWN: u32 = 16;

/// Reports pruned at a time (see [`spans::PRUNE_BATCH`]).
const PRUNE_BATCH: i64 = 20_000;

/// One sub-grant as a relay sends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reported {
    /// The generator's token `sub`.
    pub sub: String,
    /// The generator's incarnation.
    pub incarnation: Incarnation,
    /// The generator's request.
    pub request_id: RequestId,
    /// The sub-range's first ID.
    pub start: DecU64,
    /// The sub-range's end (exclusive, up to 2^64).
    pub end: DecBound,
    /// The relay incarnation whose grant the sub-range came from.
    pub relay: Incarnation,
}

impl Reported {
    /// The wire form of core's sub-grant.
    pub fn from_sub_grant(g: &SubGrant) -> Reported {
        Reported {
            sub: g.owner.as_str().to_owned(),
            incarnation: g.grant.incarnation,
            request_id: g.grant.request_id,
            start: DecU64(g.grant.range.start()),
            end: DecBound(g.grant.range.end()),
            relay: g.relay,
        }
    }

    /// Core's sub-grant in `ns`, or `None` when its range is empty or
    /// inverted.
    fn sub_grant(&self, ns: Namespace) -> Option<SubGrant> {
        Some(SubGrant {
            owner: Owner::new(&self.sub),
            grant: Grant {
                namespace: ns,
                incarnation: self.incarnation,
                request_id: self.request_id,
                range: Range::new(self.start.0, self.end.0).ok()?,
            },
            relay: self.relay,
        })
    }
}

/// The relay's view of itself when it sent a batch, counted since its
/// instance started (a restarted relay starts again from 0; what the
/// instance before it held counts as abandoned once it ended:
/// [`by_relay`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelayView {
    /// Its incarnation now.
    pub incarnation: Incarnation,
    /// IDs it holds, ready to hand out.
    pub held: DecU64,
    /// IDs it abandoned: expired, revoked, or arrived too late.
    pub abandoned: DecU64,
    /// Sub-grants it handed out.
    pub sub_grants: u64,
    /// Generators' requests it refused: the namespace frozen, exhausted,
    /// or another count under a request id it remembered (absent from
    /// relays before these were reported: 0).
    #[serde(default)]
    pub refused: RelayRefused,
    /// Sub-grants it dropped from a full report backlog.
    pub dropped: u64,
}

impl RelayView {
    /// The view of core's relay.
    pub fn of(relay: &rangeid_core::relay::Relay) -> RelayView {
        let s = relay.stats();
        RelayView {
            incarnation: *relay.incarnation(),
            held: DecU64(s.held),
            abandoned: DecU64(s.abandoned),
            sub_grants: s.sub_grants,
            dropped: s.reports_dropped,
            refused: RelayRefused {
                frozen: s.frozen,
                exhausted: s.exhausted,
                conflict: s.conflicts,
            },
        }
    }
}

/// What a batch came to, as the object answers the relay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    /// Sub-grants kept now.
    pub kept: u64,
    /// Sub-grants kept before (a batch sent again).
    pub known: u64,
    /// Sub-grants that lie in no retained grant of the relay's
    /// incarnation (its grant was pruned, or the report is wrong).
    pub unmatched: u64,
    /// Sub-grants not kept for lack of room in the budgets.
    pub dropped: u64,
}

/// The retained grant of the ledger holding `id`, if any.
fn span_holding(sql: &impl Sql, id: u64) -> Result<Option<Span>, StoreError> {
    let rows = sql.exec(
        &format!("SELECT {SPAN_COLUMNS} FROM grants WHERE start <= ? ORDER BY start DESC LIMIT 1"),
        &[pad(id.into()).into()],
    )?;
    let span = rows.first().map(|r| spans::decode(r)).transpose()?;
    Ok(span.filter(|s| s.index_holding(id).is_some()))
}

/// Keeps relay `region`'s batch of sub-grants, and its view of itself, at
/// `now`, in one transaction: see the module documentation.
pub fn keep(
    sql: &impl Sql,
    ns: &Namespace,
    region: &Region,
    grants: &[Reported],
    view: &RelayView,
    now: i64,
) -> Result<HttpReply, ApiError> {
    load(sql, ns)?;
    let relay_owner = Owner::new(&relay::relay_owner(region));
    let mut result = Kept::default();
    sql.atomically(&mut || {
        result = Kept::default();
        let mut matched = Vec::new();
        // A relay cuts many sub-grants from one root grant, reported in
        // order: the root found for one usually holds the next, read once.
        let mut root: Option<Span> = None;
        for r in grants {
            let ok = match r.sub_grant(*ns) {
                Some(g) => {
                    let start = g.grant.range.start();
                    if root.is_none_or(|s| s.index_holding(start).is_none()) {
                        root = span_holding(sql, start)?;
                    }
                    root.is_some_and(|root| g.lies_in(&root, &relay_owner))
                }
                None => false,
            };
            if ok {
                matched.push(r);
            } else {
                result.unmatched += 1;
            }
        }
        // Each kept row counts in the ledger's rows and the generator's, as
        // the grant would had it taken it from the object: reports stay out
        // of the last quarter of each.
        let (mut rows, limits) = spans::budget(sql)?;
        let mut by_sub: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for r in matched {
            let sub = Owner::new(&r.sub).as_str().to_owned();
            let held = match by_sub.get(&sub) {
                Some((held, _)) => *held,
                None => spans::rows_of(sql, &sub)?,
            };
            if limits.report_room(rows, held, 1) == 0 {
                // No room: one kept before (a batch sent again) is known.
                let known = sql.exec(
                    "SELECT 1 FROM reports WHERE start = ?",
                    &[pad(r.start.0.into()).into()],
                )?;
                if known.is_empty() {
                    result.dropped += 1;
                } else {
                    result.known += 1;
                }
                continue;
            }
            let inserted = sql.exec(
                "INSERT INTO reports (start, end, owner, incarnation, request_id, relay, \
                 relay_incarnation, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) \
                 ON CONFLICT (start) DO NOTHING RETURNING start",
                &[
                    pad(r.start.0.into()).into(),
                    pad(r.end.0).into(),
                    sub.as_str().into(),
                    r.incarnation.as_str().into(),
                    r.request_id.as_str().into(),
                    relay_owner.as_str().into(),
                    r.relay.as_str().into(),
                    Value::Int(now),
                ],
            )?;
            if inserted.is_empty() {
                result.known += 1;
            } else {
                result.kept += 1;
                rows += 1;
                let entry = by_sub.entry(sub).or_insert((held, 0));
                *entry = (entry.0 + 1, entry.1 + 1);
            }
        }
        for (sub, (_, added)) in &by_sub {
            spans::add_rows(sql, sub, *added, now)?;
        }
        spans::add_ledger_rows(sql, result.kept)?;
        sql.exec(
            "INSERT INTO relay_reports (relay, batches, kept, dropped, last_at, incarnation, \
             held, abandoned, sub_grants, relay_dropped, unmatched) \
             VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (relay) DO UPDATE SET batches = batches + 1, \
             kept = kept + excluded.kept, dropped = dropped + excluded.dropped, \
             unmatched = unmatched + excluded.unmatched, \
             last_at = excluded.last_at, incarnation = excluded.incarnation, \
             held = excluded.held, abandoned = excluded.abandoned, \
             sub_grants = excluded.sub_grants, relay_dropped = excluded.relay_dropped",
            &[
                relay_owner.as_str().into(),
                count(result.kept)?,
                count(result.dropped)?,
                Value::Int(now),
                view.incarnation.as_str().into(),
                pad(view.held.0.into()).into(),
                pad(view.abandoned.0.into()).into(),
                count(view.sub_grants)?,
                count(view.dropped)?,
                count(result.unmatched)?,
            ],
        )?;
        // The instance's own latest view, apart from its relay's other
        // instances (a split's twin, or the one before a restart).
        sql.exec(
            "INSERT INTO relay_instances (relay, incarnation, last_at, held, abandoned, \
             sub_grants, relay_dropped, frozen, exhausted, conflicts) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT (relay, incarnation) DO UPDATE SET last_at = excluded.last_at, \
             held = excluded.held, abandoned = excluded.abandoned, \
             sub_grants = excluded.sub_grants, relay_dropped = excluded.relay_dropped, \
             frozen = excluded.frozen, exhausted = excluded.exhausted, \
             conflicts = excluded.conflicts",
            &[
                relay_owner.as_str().into(),
                view.incarnation.as_str().into(),
                Value::Int(now),
                pad(view.held.0.into()).into(),
                pad(view.abandoned.0.into()).into(),
                count(view.sub_grants)?,
                count(view.dropped)?,
                count(view.refused.frozen)?,
                count(view.refused.exhausted)?,
                count(view.refused.conflict)?,
            ],
        )?;
        Ok(())
    })
    .map_err(unavailable)?;
    Ok(HttpReply::json(200, &result))
}

/// A kept sub-grant: what the generator got, and when it was reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holding {
    /// The generator's grant.
    pub grant: Grant,
    /// The generator's `sub`.
    pub sub: String,
    /// When the report was kept (ms).
    pub reported_at: i64,
}

/// The kept sub-grant holding `id` that came from `root` (a relay's
/// retained grant), if reported.
pub fn holding(
    sql: &impl Sql,
    ns: Namespace,
    root: &Span,
    id: u64,
) -> Result<Option<Holding>, StoreError> {
    let rows = sql.exec(
        "SELECT start, end, owner, incarnation, request_id, relay, relay_incarnation, at \
         FROM reports WHERE start <= ? ORDER BY start DESC LIMIT 1",
        &[pad(id.into()).into()],
    )?;
    let Some(r) = rows.first() else {
        return Ok(None);
    };
    let bad = |e: rangeid_core::names::NameError| StoreError(format!("stored report: {e}"));
    let range = Range::new(unpad_u64(text(r, 0)?)?, unpad(text(r, 1)?)?)
        .map_err(|e| StoreError(format!("stored report: {e}")))?;
    let sub = SubGrant {
        owner: Owner::new(text(r, 2)?),
        grant: Grant {
            namespace: ns,
            incarnation: Incarnation::new(text(r, 3)?).map_err(bad)?,
            request_id: RequestId::new(text(r, 4)?).map_err(bad)?,
            range,
        },
        relay: Incarnation::new(text(r, 6)?).map_err(bad)?,
    };
    if !range.contains(id) || !sub.lies_in(root, &Owner::new(text(r, 5)?)) {
        return Ok(None);
    }
    Ok(Some(Holding {
        grant: sub.grant,
        sub: sub.owner.as_str().to_owned(),
        reported_at: int(r, 7)?,
    }))
}

/// Deletes at most [`PRUNE_BATCH`] reports kept before `cutoff`, taking
/// them off their generators' and the ledger's row counts in the same
/// transaction, and forgets relays that reported nothing since then.
/// Returns when the oldest report left was kept, if any.
pub fn prune(sql: &impl Sql, cutoff: i64) -> Result<Option<i64>, StoreError> {
    sql.atomically(&mut || {
        const BATCH: &str = "SELECT rowid FROM reports WHERE at < ? ORDER BY at, rowid LIMIT ?";
        let params = [Value::Int(cutoff), Value::Int(PRUNE_BATCH)];
        let by_owner = sql.exec(
            &format!("SELECT owner, COUNT(*) FROM reports WHERE rowid IN ({BATCH}) GROUP BY owner"),
            &params,
        )?;
        let mut pruned = 0;
        for r in &by_owner {
            let n = u64::try_from(int(r, 1)?).unwrap_or(0);
            spans::remove_rows(sql, text(r, 0)?, n)?;
            pruned += n;
        }
        spans::remove_ledger_rows(sql, pruned)?;
        if pruned > 0 {
            sql.exec(
                &format!("DELETE FROM reports WHERE rowid IN ({BATCH})"),
                &params,
            )?;
        }
        Ok(())
    })?;
    sql.exec(
        "DELETE FROM relay_reports WHERE last_at < ?",
        &[Value::Int(cutoff)],
    )?;
    sql.exec(
        "DELETE FROM relay_instances WHERE last_at < ?",
        &[Value::Int(cutoff)],
    )?;
    let rows = sql.exec("SELECT MIN(at) FROM reports", &[])?;
    Ok(match rows.first() {
        Some(r) => opt_int(r, 0)?,
        None => None,
    })
}

/// What each relay's reports brought, those reported to most recently
/// first (at most [`RELAYS_SHOWN`]), with its instances' views at `now`
/// summed ([`Instances`]): an instance whose last report is more than a
/// relay lease (the widest one asked under) old while another instance of
/// the relay reported since has ended, and what it held then counts as
/// abandoned (whatever it did not hand out expired with its lease).
pub fn by_relay(sql: &impl Sql, now: i64) -> Result<Vec<RelayReports>, StoreError> {
    let lease = relays::widest_lease(sql)?.unwrap_or(rangeid_core::relay::RELAY_LEASE_MS);
    let lease = i64::try_from(lease).unwrap_or(i64::MAX);
    sql.exec(
        "SELECT relay, batches, kept, dropped, last_at, incarnation, unmatched \
         FROM relay_reports ORDER BY last_at DESC, relay LIMIT ?",
        &[Value::Int(RELAYS_SHOWN.into())],
    )?
    .iter()
    .map(|r| {
        let n = |i| -> Result<u64, StoreError> { Ok(u64::try_from(int(r, i)?).unwrap_or(0)) };
        let relay = text(r, 0)?;
        let latest = int(r, 4)?;
        let mut all = Instances::default();
        for i in sql.exec(
            "SELECT last_at, held, abandoned, sub_grants, relay_dropped, frozen, exhausted, \
             conflicts FROM relay_instances WHERE relay = ?",
            &[relay.into()],
        )? {
            all.add(
                Instance {
                    last_at: int(&i, 0)?,
                    held: unpad_u64(text(&i, 1)?)?,
                    abandoned: unpad_u64(text(&i, 2)?)?,
                    sub_grants: u64::try_from(int(&i, 3)?).unwrap_or(0),
                    dropped: u64::try_from(int(&i, 4)?).unwrap_or(0),
                    refused: RelayRefused {
                        frozen: u64::try_from(int(&i, 5)?).unwrap_or(0),
                        exhausted: u64::try_from(int(&i, 6)?).unwrap_or(0),
                        conflict: u64::try_from(int(&i, 7)?).unwrap_or(0),
                    },
                },
                latest,
                now.saturating_sub(lease),
            );
        }
        Ok(RelayReports {
            sub: relay.to_owned(),
            batches: n(1)?,
            kept: n(2)?,
            dropped: n(3)?,
            backlog_dropped: all.dropped,
            unmatched: n(6)?,
            last_at: rfc3339(latest),
            incarnation: text(r, 5)?.to_owned(),
            held: DecU64(all.held),
            abandoned: DecU64(all.abandoned),
            sub_grants: all.sub_grants,
            instances: all.instances,
            live: all.live,
            refused: all.refused,
        })
    })
    .collect()
}

/// One relay instance's latest view of itself, as kept.
#[derive(Clone, Copy, Debug)]
struct Instance {
    last_at: i64,
    held: u64,
    abandoned: u64,
    sub_grants: u64,
    dropped: u64,
    refused: RelayRefused,
}

/// A relay's instances summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Instances {
    instances: u64,
    live: u64,
    held: u64,
    abandoned: u64,
    sub_grants: u64,
    dropped: u64,
    refused: RelayRefused,
}

impl Instances {
    /// Adds `i`, given when the relay's latest batch came (`latest`) and
    /// the time before which a report is older than a lease
    /// (`lease_ago`): an instance is live if it sent the latest batch or
    /// reported within the lease; otherwise it ended, and what it held
    /// then is abandoned.
    fn add(&mut self, i: Instance, latest: i64, lease_ago: i64) {
        self.instances += 1;
        self.abandoned = self.abandoned.saturating_add(i.abandoned);
        self.sub_grants = self.sub_grants.saturating_add(i.sub_grants);
        self.dropped = self.dropped.saturating_add(i.dropped);
        self.refused.frozen = self.refused.frozen.saturating_add(i.refused.frozen);
        self.refused.exhausted = self.refused.exhausted.saturating_add(i.refused.exhausted);
        self.refused.conflict = self.refused.conflict.saturating_add(i.refused.conflict);
        if i.last_at >= latest || i.last_at >= lease_ago {
            self.live += 1;
            self.held = self.held.saturating_add(i.held);
        } else {
            self.abandoned = self.abandoned.saturating_add(i.held);
        }
    }
}

fn count(v: u64) -> Result<Value, StoreError> {
    i64::try_from(v)
        .ok()
        .filter(|v| *v < 1 << 53)
        .map(Value::Int)
        .ok_or_else(|| StoreError(format!("{v} is too large to store as an integer")))
}

#[cfg(test)]
mod tests;
