//! Grants, and the namespace object's side of the restore fence: what a
//! start does with the witness's mark, recording a mark the witness
//! acknowledged, and when to raise it ahead of need. Every decision is
//! core's ([`rangeid_core::decide`], [`rangeid_core::fence`]); this stores
//! it.

use rangeid_core::authority::Owner;
use rangeid_core::fence::{self, Phase, Witnessed};
use rangeid_core::ledger::{LedgerView, Record};
use rangeid_core::protocol::{Capacity, GrantReply};
use rangeid_core::wire::{DecBound, HttpAnswer};
use rangeid_core::{decide, Decision, Grant, GrantRequest, NamespaceState};
use serde_json::json;

use super::{admin, load, load_any, spans, unavailable, Granted, Outcome, Step};
use crate::object::store::{self, NamespaceRow, Sql, StoreError};
use crate::shared::refusals::Counted;
use crate::shared::response::ApiError;
use crate::shared::summary::MINUTE_MS;

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
            granted: None,
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
        // A decision this object cannot carry out: nothing is written, and
        // the client is told to ask again (503 `unavailable`).
        Ok(_) => Step::Reply(
            ApiError::unavailable("the authority cannot carry out this decision").into(),
        ),
    }
}

fn answer(
    grant: Grant,
    replayed: bool,
    state: &NamespaceState,
    granted: Option<Granted>,
) -> Outcome {
    Outcome {
        reply: HttpAnswer::grant(&GrantReply {
            grant,
            replayed,
            capacity: capacity(state),
        })
        .into(),
        granted,
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
    // overlap. The minute buckets the fence is sized by are read once,
    // before: the one this grant adds to is written from them, and the
    // refill check reads them as written.
    let mut recent = match store::minutes_since(sql, fence::recent_from(now)) {
        Ok(recent) => recent,
        Err(e) => return unavailable(e).into(),
    };
    let written = sql.atomically(&mut || {
        admin::update(sql, row, &advanced)?;
        spans::write(sql, view, record)?;
        store::add_to_read_minute(sql, &mut recent, now.div_euclid(MINUTE_MS), count)
    });
    match written {
        Ok(()) => {
            let granted = Granted {
                at: now,
                refill: refill(&advanced.state, &recent, now),
            };
            answer(grant, false, &advanced.state, Some(granted))
        }
        Err(e) => unavailable(e).into(),
    }
}

/// The mark to raise the witness to ahead of need, if the fence is near
/// in `state`: less than half a chunk (sized from `minutes`, the buckets
/// [`fence::recent_from`] `now` on, for a grant as large as the last
/// minute's largest) is left below it.
pub fn refill(state: &NamespaceState, minutes: &[store::Minute], now: i64) -> Option<u128> {
    let chunk = fence::recent_chunk(&fence_minutes(minutes), now, 1, 0, state.remaining());
    fence::ahead(state, chunk)
}

/// The minute buckets as core's fence sizing reads them.
fn fence_minutes(minutes: &[store::Minute]) -> Vec<fence::Minute> {
    minutes
        .iter()
        .map(|m| fence::Minute {
            minute: m.minute,
            ids: m.ids,
            largest: m.largest,
        })
        .collect()
}

/// How far ahead of a grant of `count` to raise the mark, as core sizes it
/// from the minute buckets of the last 60 s ([`fence::recent_chunk`]): a
/// minute of grants, at least twice the largest recent grant, bounded by a
/// share of what remains. The largest grant decays with its minute, so a
/// start skips at most a chunk of recent grants.
fn chunk_for(
    sql: &impl Sql,
    row: &NamespaceRow,
    count: u64,
    waiting: u64,
    now: i64,
) -> Result<u64, StoreError> {
    let minutes = store::minutes_since(sql, fence::recent_from(now))?;
    Ok(fence::recent_chunk(
        &fence_minutes(&minutes),
        now,
        count,
        waiting,
        row.state.remaining(),
    ))
}

/// Records, before a raise to `mark` is sent, that this object asked its
/// witness for it (the output gate holds the request until this write is
/// durable). A start that later finds the witness at `mark` then knows the
/// raise was its own, acknowledged after it stopped or with its answer
/// lost, and does not report a rollback. Returns the fence recorded now
/// (what the witness has acknowledged, as far as this object knows: pass it
/// to [`witnessed`] with the answer), or `None` when the namespace does not
/// exist.
pub fn record_asked(sql: &impl Sql, mark: u128) -> Result<Option<u128>, StoreError> {
    let Some(row) = load_any(sql)? else {
        return Ok(None);
    };
    if mark > row.fence_asked {
        let after = NamespaceRow {
            fence_asked: mark.min(1 << 64),
            ..row
        };
        sql.atomically(&mut || admin::update(sql, &row, &after))?;
    }
    Ok(Some(row.state.fence()))
}

/// What the object did with an answer from its witness ([`witnessed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Heard {
    /// IDs skipped to reach the witness's mark.
    pub skipped: u128,
    /// The witness was above every mark this object recorded or asked
    /// for: its storage was rolled back (audited `fence_forward`).
    pub forward: bool,
    /// The witness had gone below this object's fence and is now back up
    /// (audited `witness_behind`).
    pub behind_mended: bool,
    /// The witness is below this object's fence: raise it to this mark
    /// (with [`record_asked`] first) before any grant.
    pub raise_back: Option<u128>,
}

/// Applies an answer from the witness to a request sent when this object's
/// fence was `sent_at_fence`, heard in `phase`, as core decides
/// ([`fence::observe`]): moves `next` and the fence up to its mark, counts
/// what was skipped, and in the same commit audits (actor `system`) a
/// rollback of this object (`fence_forward`) or a witness found below the
/// fence once it is back up (`witness_behind`). `None` when the namespace
/// does not exist yet.
pub fn witnessed(
    sql: &impl Sql,
    sent_at_fence: u128,
    witness: Witnessed,
    phase: Phase,
    now: i64,
) -> Result<Option<Heard>, StoreError> {
    let Some(row) = load_any(sql)? else {
        return Ok(None);
    };
    let r = fence::observe(&row.state, row.fence_asked, sent_at_fence, witness, phase);
    let behind_mended = r.behind && r.raise_back.is_none();
    let after = NamespaceRow {
        state: r.state,
        fence_skipped: row.fence_skipped.saturating_add(r.skipped),
        fence_forwards: row.fence_forwards + u64::from(r.forward),
        witness_behinds: row.witness_behinds + u64::from(behind_mended),
        ..row
    };
    let marks = |state: &NamespaceState| json!({ "next": DecBound(state.next()), "fence": DecBound(state.fence()) });
    if after != row {
        sql.atomically(&mut || {
            admin::update(sql, &row, &after)?;
            if r.forward {
                admin::audit(
                    sql,
                    now,
                    "system",
                    "fence_forward",
                    Some(marks(&row.state)),
                    Some(marks(&after.state)),
                    Some("the witness's mark was above this object's: its storage was rolled back"),
                )?;
            }
            if behind_mended {
                admin::audit(
                    sql,
                    now,
                    "system",
                    "witness_behind",
                    Some(json!({ "witness": witness.was.map(DecBound), "fence": DecBound(sent_at_fence) })),
                    Some(json!({ "witness": DecBound(witness.mark) })),
                    Some("the witness's mark was below this object's fence (restored or wiped): raised back"),
                )?;
            }
            Ok(())
        })?;
    }
    Ok(Some(Heard {
        skipped: r.skipped,
        forward: r.forward,
        behind_mended,
        raise_back: r.raise_back,
    }))
}
