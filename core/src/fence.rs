//! The restore fence: the classic "persist the limit ahead, skip to it on
//! restart" (TiDB's ID service, WeChat's seqsvr), as pure decisions.
//!
//! A witness outside the namespace object durably keeps a high-water mark.
//! The namespace object grants only ranges that end at or below the mark it
//! holds from the witness ([`crate::authority::decide`] answers
//! `RaiseFence` otherwise), and records a new mark only after the witness
//! acknowledged it. On every start it reads the witness's mark and moves
//! `next` up to it ([`start`]), so a copy of the object rolled back to an
//! older state can never grant again what was granted after the copy: every
//! such grant ended at or below a mark the witness still holds.
//!
//! What it protects: a rollback of the namespace object alone. A rollback
//! of object and witness to one earlier point is a whole-system rollback;
//! the operator must then raise the floor past every ID in use.
//!
//! What it costs: a witness round trip per chunk and per start, and on an
//! ordinary restart the rest of the current chunk is skipped (a gap).

use crate::authority::NamespaceState;

/// A chunk is at most this fraction of what remains (1 / 100), unless one
/// grant needs more.
pub const CHUNK_SHARE: u64 = 100;

/// What a start did with the witness's mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Start {
    /// The state to commit before the first grant: `next` and the fence
    /// moved up to the witness's mark.
    pub state: NamespaceState,
    /// IDs skipped: from the old `next` to the mark (the rest of a chunk on
    /// an ordinary restart).
    pub skipped: u128,
    /// Whether the witness's mark was above the mark this object had
    /// recorded: its storage was rolled back (or it stopped between the
    /// witness's acknowledgement and its own write). Audited.
    pub behind: bool,
}

/// The state a starting object must commit, before any grant, once the
/// witness says its mark is `witness`.
pub fn start(state: &NamespaceState, witness: u128) -> Start {
    let moved = state.skip_to(witness).with_fence(witness);
    Start {
        skipped: moved.next() - state.next(),
        behind: witness > state.fence(),
        state: moved,
    }
}

/// How far ahead to raise the mark: a minute of grants (`ids_last_minute`),
/// and at least twice the larger of the largest grant and this request's
/// `count`, plus what other requests waiting for a raise asked for
/// (`waiting`); but no more than 1 / [`CHUNK_SHARE`] of what remains,
/// unless the waiting requests themselves need more. So a burst of
/// concurrent grants past the mark is covered by one raise.
pub fn chunk(
    ids_last_minute: u128,
    largest_grant: u64,
    count: u64,
    waiting: u64,
    remaining: u64,
) -> u64 {
    let floor = u128::from(largest_grant.max(count)) * 2;
    let wanted = ids_last_minute
        .max(floor)
        .saturating_add(u128::from(waiting));
    let need = count.saturating_add(waiting);
    let cap = u128::from((remaining / CHUNK_SHARE).max(need));
    // The cap fits a u64.
    wanted.min(cap) as u64
}

/// The mark to ask the witness for when a range must end at `at_least`:
/// a chunk beyond it, capped at `max + 1`.
pub fn target(state: &NamespaceState, at_least: u128, chunk: u64) -> u128 {
    let end = u128::from(state.config().max()) + 1;
    at_least.saturating_add(u128::from(chunk)).min(end)
}

/// The mark to ask for ahead of need, or `None`: once less than half a
/// chunk is left below the fence, a chunk beyond where grants now start.
pub fn ahead(state: &NamespaceState, chunk: u64) -> Option<u128> {
    let end = u128::from(state.config().max()) + 1;
    let from = state.next().max(state.fence());
    let headroom = state.fence().saturating_sub(state.next());
    if state.fence() >= end || headroom >= u128::from(chunk) / 2 {
        return None;
    }
    Some(from.saturating_add(u128::from(chunk)).min(end))
}

/// The witness's side: the stored mark after a request to raise it to
/// `asked`. Marks only ever rise.
pub const fn witness_raise(stored: u128, asked: u128) -> u128 {
    if asked > stored {
        asked
    } else {
        stored
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authority::NamespaceConfig;
    use crate::names::Namespace;

    fn state(first: u64, max: u64) -> NamespaceState {
        let c = NamespaceConfig::new(Some(first), Some(max), None).unwrap();
        NamespaceState::create(Namespace::new("n").unwrap(), c)
    }

    #[test]
    fn an_ordinary_restart_skips_the_rest_of_its_chunk() {
        let s = state(1, 1_000).with_fence(500).skip_to(300);
        let st = start(&s, 500);
        assert_eq!(
            (st.state.next(), st.state.fence(), st.skipped, st.behind),
            (500, 500, 200, false)
        );
    }

    #[test]
    fn a_rolled_back_object_moves_forward_to_the_witness() {
        // The copy was taken at next 300, fence 500; the witness since went
        // to 900 while the live object granted up to 850.
        let copy = state(1, 1_000).with_fence(500).skip_to(300);
        let st = start(&copy, 900);
        assert_eq!(
            (st.state.next(), st.state.fence(), st.skipped, st.behind),
            (900, 900, 600, true)
        );
        // A witness below the object changes nothing (a stale read cannot
        // move anything down).
        let st = start(&copy, 100);
        assert_eq!((st.state, st.skipped, st.behind), (copy, 0, false));
        // The witness never asks past the end.
        let st = start(&copy, 5_000);
        assert_eq!((st.state.next(), st.state.fence()), (1_001, 1_001));
    }

    #[test]
    fn chunks_follow_the_rate_within_a_share_of_what_remains() {
        assert_eq!(
            chunk(0, 0, 1_000, 0, u64::MAX),
            2_000,
            "twice the grant at least"
        );
        assert_eq!(
            chunk(60_000_000, 1_000_000, 1_000, 0, u64::MAX),
            60_000_000,
            "a minute of grants"
        );
        assert_eq!(
            chunk(60_000_000, 0, 1_000, 0, 1_000_000),
            10_000,
            "1 % of what remains"
        );
        assert_eq!(
            chunk(0, 0, 5_000, 0, 10_000),
            5_000,
            "but never less than the grant"
        );
        assert_eq!(
            chunk(0, 0, 1_000, 30_000, u64::MAX),
            32_000,
            "what waiting requests asked for comes on top"
        );
        assert_eq!(
            chunk(0, 0, 1_000, 30_000, 1_000_000),
            31_000,
            "and is covered even past the share"
        );
        assert_eq!(
            chunk(u128::MAX, u64::MAX, u64::MAX, u64::MAX, u64::MAX),
            u64::MAX
        );
    }

    #[test]
    fn targets_and_refills_stop_at_the_end() {
        let s = state(1, 1_000).with_fence(100).skip_to(90);
        assert_eq!(target(&s, 120, 50), 170);
        assert_eq!(target(&s, 990, 50), 1_001);
        assert_eq!(ahead(&s, 50), Some(150), "10 left below the fence: refill");
        assert_eq!(ahead(&s, 10), None, "half a chunk is still there");
        assert_eq!(ahead(&s.with_fence(2_000), 10), None);
        let floored = s.raise_floor(500).unwrap();
        assert_eq!(
            ahead(&floored, 50),
            Some(550),
            "from where grants now start"
        );
        assert_eq!(witness_raise(10, 5), 10);
        assert_eq!(witness_raise(10, 50), 50);
    }
}
