//! Grants, and the namespace object's side of the restore fence: what a
//! start does with the witness's mark, recording a mark the witness
//! acknowledged, and when to raise it ahead of need. Every decision is
//! core's ([`rangeid_core::decide`], [`rangeid_core::fence`]); this stores
//! it.

use rangeid_core::authority::Owner;
use rangeid_core::fence;
use rangeid_core::ledger::{LedgerView, Record};
use rangeid_core::reply::Capacity;
use rangeid_core::wire::{DecBound, GrantReply, HttpAnswer};
use rangeid_core::{decide, Decision, Grant, GrantRequest, NamespaceState};
use serde_json::json;

use super::{admin, load, load_any, spans, unavailable, Outcome, Step};
use crate::refusals::Counted;
use crate::store::{self, NamespaceRow, Sql, StoreError};
use crate::summary::MINUTE_MS;

/// Decides a range request from `owner` and commits what was decided.
/// `waiting` is what other requests of this object, waiting for the fence
/// to rise, asked for in all (so a raise covers them too).
pub fn grant(sql: &impl Sql, request: &GrantRequest, owner: &str, waiting: u64, now: i64) -> Step {
    let owner = Owner::new(owner);
    let row = match load(sql, &request.namespace) {
        Ok(row) => row,
        Err(e) => return Step::Reply(e.into()),
    };
    let view = match spans::view(sql, request, &owner) {
        Ok(v) => v,
        Err(e) => return Step::Reply(unavailable(e).into()),
    };
    match decide(&row.state, &view, request, &owner, now) {
        Err(r) => Step::Reply(Outcome {
            reply: HttpAnswer::refusal(&r).into(),
            granted_at: None,
            refused: Counted::of(&r),
        }),
        Ok(Decision::Replay(g)) => Step::Reply(answer(g, true, &row.state, None)),
        Ok(Decision::RaiseFence { at_least }) => {
            match chunk_for(sql, &row, request.count, waiting, now) {
                Ok(chunk) => Step::RaiseFence {
                    target: fence::target(&row.state, at_least, chunk),
                },
                Err(e) => Step::Reply(unavailable(e).into()),
            }
        }
        Ok(Decision::New {
            grant,
            state,
            record,
        }) => Step::Reply(commit_grant(sql, &row, grant, state, (&view, &record), now)),
    }
}

fn answer(grant: Grant, replayed: bool, state: &NamespaceState, at: Option<i64>) -> Outcome {
    Outcome {
        reply: HttpAnswer::grant(&GrantReply {
            grant,
            replayed,
            capacity: capacity(state),
        })
        .into(),
        granted_at: at,
        refused: None,
    }
}

/// What a grant tells its client about the namespace: its largest request
/// and what remains (so clients of small namespaces ask for little).
fn capacity(state: &NamespaceState) -> Capacity {
    Capacity {
        max_count: Some(state.config().max_count()),
        remaining: Some(state.remaining()),
    }
}

fn commit_grant(
    sql: &impl Sql,
    row: &NamespaceRow,
    grant: Grant,
    state: NamespaceState,
    (view, record): (&LedgerView, &Record),
    now: i64,
) -> Outcome {
    let count = grant.range.count();
    let advanced = NamespaceRow {
        state,
        last_grant_at: Some(now),
        ranges_granted: row.ranges_granted.saturating_add(1),
        ids_granted: row.ids_granted.saturating_add(count.into()),
        largest_grant: row.largest_grant.max(count),
        ..*row
    };
    // One transaction: the boundary advance, the ledger record (a new span
    // row or the caller's span extended, its usage) and the minute bucket
    // commit together or not at all. The boundary still goes first, so a
    // store that lost a later statement alone would leave a gap, never an
    // overlap.
    let written = sql.atomically(&mut || {
        admin::update(sql, row, &advanced)?;
        spans::write(sql, view, record)?;
        store::add_to_minute(sql, now.div_euclid(MINUTE_MS), count)
    });
    match written {
        Ok(()) => answer(grant, false, &advanced.state, Some(now)),
        Err(e) => unavailable(e).into(),
    }
}

/// How far ahead of a grant of `count` to raise the mark: a minute of
/// grants at the last minute's rate, at least twice the largest grant of
/// that minute (and of this one), bounded by a share of what remains. Both
/// come from the minute buckets that overlap the last 60 s, so after a
/// quiet minute the chunk is sized by the grant at hand alone: a start
/// skips at most a chunk, and an object that wakes now and then skips
/// what its recent grants call for, not what its largest grant ever did.
fn chunk_for(
    sql: &impl Sql,
    row: &NamespaceRow,
    count: u64,
    waiting: u64,
    now: i64,
) -> Result<u64, StoreError> {
    let from = (now - MINUTE_MS).div_euclid(MINUTE_MS);
    let minutes = store::minutes_since(sql, from)?;
    let last_minute: u128 = minutes.iter().map(|m| m.ids).sum();
    let largest = minutes.iter().map(|m| m.largest).max().unwrap_or(0);
    Ok(fence::chunk(
        last_minute,
        largest,
        count,
        waiting,
        row.state.remaining(),
    ))
}

/// Records `mark`, acknowledged by the witness, as this object's fence
/// (never lowering it). Returns the fence now recorded, or `None` when the
/// namespace does not exist.
pub fn record_fence(sql: &impl Sql, mark: u128) -> Result<Option<u128>, StoreError> {
    let Some(row) = load_any(sql)? else {
        return Ok(None);
    };
    let after = NamespaceRow {
        state: row.state.with_fence(mark),
        ..row
    };
    if after.state != row.state {
        sql.atomically(&mut || admin::update(sql, &row, &after))?;
    }
    Ok(Some(after.state.fence()))
}

/// What a start did against the witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started {
    /// IDs skipped to reach the witness's mark.
    pub skipped: u128,
    /// The witness was above the recorded mark (audited as
    /// `fence_forward`).
    pub behind: bool,
}

/// A start: moves `next` and the fence up to the witness's mark `witness`
/// before any grant, counting what is skipped; when the witness was above
/// the mark this object had recorded, writes a `fence_forward` audit entry
/// (actor `system`) in the same commit. `None` when the namespace does not
/// exist yet.
pub fn start(sql: &impl Sql, witness: u128, now: i64) -> Result<Option<Started>, StoreError> {
    let Some(row) = load_any(sql)? else {
        return Ok(None);
    };
    let st = fence::start(&row.state, witness);
    if st.state == row.state {
        return Ok(Some(Started {
            skipped: 0,
            behind: false,
        }));
    }
    let after = NamespaceRow {
        state: st.state,
        fence_skipped: row.fence_skipped.saturating_add(st.skipped),
        fence_forwards: row.fence_forwards + u64::from(st.behind),
        ..row
    };
    sql.atomically(&mut || {
        admin::update(sql, &row, &after)?;
        if st.behind {
            admin::audit(
                sql,
                now,
                "system",
                "fence_forward",
                Some(json!({ "next": DecBound(row.state.next()), "fence": DecBound(row.state.fence()) })),
                Some(json!({ "next": DecBound(after.state.next()), "fence": DecBound(after.state.fence()) })),
                Some("the witness's mark was above this object's: its storage was rolled back"),
            )?;
        }
        Ok(())
    })?;
    Ok(Some(Started {
        skipped: st.skipped,
        behind: st.behind,
    }))
}

/// The mark to raise the witness to ahead of need, if the fence is near:
/// less than half a chunk (sized for a grant as large as the last minute's
/// largest) is left below it.
pub fn refill_target(sql: &impl Sql, now: i64) -> Result<Option<u128>, StoreError> {
    let Some(row) = load_any(sql)? else {
        return Ok(None);
    };
    // The recent largest grant is chunk_for's to find.
    let chunk = chunk_for(sql, &row, 1, 0, now)?;
    Ok(fence::ahead(&row.state, chunk))
}
