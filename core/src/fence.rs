//! The restore fence: the classic "persist the limit ahead, skip to it on
//! restart" (TiDB's ID service, WeChat's seqsvr), as pure decisions.
//!
//! A witness outside the namespace object durably keeps a high-water mark.
//! The namespace object grants only ranges that end at or below the mark it
//! holds from the witness ([`crate::authority::decide`] answers
//! `RaiseFence` otherwise), and records a new mark only after the witness
//! acknowledged it. Each copy checks the other: whenever the object hears
//! from its witness (on every start, on every answer to a raise, and on a
//! periodic check) it applies [`observe`]:
//!
//! - a witness above every mark the object recorded or asked for means the
//!   object's storage went back (a restore): it moves `next` up to the mark,
//!   so it never grants again what was granted after its copy
//!   ([`Reading::forward`], audited `fence_forward`);
//! - a witness below the object's recorded fence means the witness went
//!   back or was wiped: the object raises it back to its own fence before
//!   any grant ([`Reading::raise_back`], audited `witness_behind`), so a
//!   later restore of the object alone still finds every grant covered.
//!
//! What it protects: a rollback of one of the two objects, and of one and
//! later the other, once the object has heard from its witness in between.
//! A rollback of both to copies from before the same grants, with no check
//! in between, is a whole-namespace rollback: no copy is left that remembers
//! those grants, and the operator must raise the floor past every ID in use.
//!
//! What it costs: a witness round trip per chunk, per start and per check,
//! one small write before each raise (the mark asked for, so a raise whose
//! answer was lost is not mistaken for a rollback), and on an ordinary
//! restart the rest of the current chunk is skipped (a gap).

use crate::authority::NamespaceState;

/// A chunk is at most this fraction of what remains (1 / 100), unless one
/// grant needs more.
pub const CHUNK_SHARE: u64 = 100;

/// What the witness said: its mark now, and its mark before the request
/// (the same for a read; for a raise, what it held before raising).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Witnessed {
    /// The mark the witness holds now.
    pub mark: u128,
    /// The mark it held before this request, when it said so (a witness
    /// from an older build does not): only then can a raise's answer show
    /// that the witness had gone back.
    pub was: Option<u128>,
}

impl Witnessed {
    /// The answer to a read: the mark, unchanged by it.
    pub const fn read(mark: u128) -> Witnessed {
        Witnessed {
            mark,
            was: Some(mark),
        }
    }
}

/// When the object hears from its witness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Before its first grant since it (re)started: its storage may be an
    /// older copy, so `next` skips to the highest mark known.
    Starting,
    /// While serving (an answer to a raise, a periodic check): its state is
    /// current unless the witness shows otherwise.
    Running,
}

/// What the object makes of an answer from its witness ([`observe`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    /// The state to commit before any grant: `next` and the fence moved up
    /// to the witness's mark.
    pub state: NamespaceState,
    /// IDs skipped: from the old `next` to the mark (the rest of a chunk on
    /// an ordinary restart, or what a rolled-back copy forgot).
    pub skipped: u128,
    /// The witness's mark was above every mark this object recorded or
    /// asked for: its storage was rolled back. Audited `fence_forward`.
    pub forward: bool,
    /// The witness had been below the object's recorded fence: it was
    /// rolled back or wiped. Audited `witness_behind`.
    pub behind: bool,
    /// When the witness is still below the fence: the mark to raise it back
    /// to before any grant.
    pub raise_back: Option<u128>,
}

/// What an object whose committed state is `state`, and which durably
/// recorded `asked` as the highest mark it ever asked its witness for, must
/// do with the witness's answer `witness` to a request it sent when its
/// recorded fence was `sent_at_fence`, heard in `phase`.
///
/// Guaranteed: the state only moves up, never past `max + 1`: the fence to
/// the witness's mark; `next` to the highest mark known when `Starting`
/// (the rest of the chunk is skipped: a copy may have granted up to it),
/// and while `Running` only to a witness's mark that shows a rollback;
/// `forward` only when the mark is above both the recorded
/// fence and `asked` (a raise acknowledged after the object stopped, or
/// whose answer was lost, is not a rollback); `behind` only when the
/// witness held less than the fence the object had recorded when it sent
/// the request (a mark the witness had acknowledged, so it went back since;
/// answers applied out of order are never mistaken for that), and that
/// fence was above `first`; `raise_back` is set exactly while the witness
/// holds less than the fence now, and no grant may be made until a raise
/// to it is acknowledged.
pub fn observe(
    state: &NamespaceState,
    asked: u128,
    sent_at_fence: u128,
    witness: Witnessed,
    phase: Phase,
) -> Reading {
    let fence = state.fence();
    let forward = witness.mark > fence.max(asked);
    let skip_to = match phase {
        Phase::Starting => witness.mark.max(fence),
        Phase::Running if forward => witness.mark,
        Phase::Running => state.next(),
    };
    let moved = state.skip_to(skip_to).with_fence(witness.mark);
    let first = u128::from(state.config().first());
    let went_back = sent_at_fence > first && witness.was.is_some_and(|was| was < sent_at_fence);
    let below_now = fence > first && witness.mark < fence;
    Reading {
        skipped: moved.next() - state.next(),
        forward,
        behind: went_back,
        raise_back: below_now.then_some(fence),
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

/// The length of a minute bucket (ms): the object counts its grants per
/// minute, and a chunk is sized by the buckets of the last minute.
pub const MINUTE_MS: i64 = 60_000;

/// One minute's grants as the object counts them: the minute (ms since the
/// epoch / [`MINUTE_MS`]), the IDs granted in it and its largest grant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Minute {
    /// The minute's index.
    pub minute: i64,
    /// IDs granted in it.
    pub ids: u128,
    /// Its largest grant.
    pub largest: u64,
}

/// The first minute a chunk sized at `now` (ms) reads: the buckets that
/// overlap the last 60 s ([`recent_chunk`]).
pub const fn recent_from(now: i64) -> i64 {
    now.saturating_sub(MINUTE_MS).div_euclid(MINUTE_MS)
}

/// The [`chunk`] for a grant of `count` at `now`, sized by the minute
/// buckets that overlap the last 60 s alone: their IDs as the minute of
/// grants, and their largest grant. Older buckets are ignored, so the
/// largest grant decays: after a quiet minute the chunk is sized by the
/// grant at hand, and an object that wakes now and then skips at a restart
/// what its recent grants call for, never what its largest grant ever did.
pub fn recent_chunk(minutes: &[Minute], now: i64, count: u64, waiting: u64, remaining: u64) -> u64 {
    let from = recent_from(now);
    let recent = minutes.iter().filter(|m| m.minute >= from);
    let (ids, largest) = recent.fold((0u128, 0u64), |(ids, largest), m| {
        (ids.saturating_add(m.ids), largest.max(m.largest))
    });
    chunk(ids, largest, count, waiting, remaining)
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

    fn seen(
        s: &NamespaceState,
        asked: u128,
        w: Witnessed,
    ) -> (u128, u128, u128, bool, bool, Option<u128>) {
        let r = observe(s, asked, s.fence(), w, Phase::Starting);
        (
            r.state.next(),
            r.state.fence(),
            r.skipped,
            r.forward,
            r.behind,
            r.raise_back,
        )
    }

    #[test]
    fn an_ordinary_restart_skips_the_rest_of_its_chunk() {
        let s = state(1, 1_000).with_fence(500).skip_to(300);
        assert_eq!(
            seen(&s, 500, Witnessed::read(500)),
            (500, 500, 200, false, false, None)
        );
    }

    #[test]
    fn a_rolled_back_object_moves_forward_to_the_witness() {
        // The copy was taken at next 300, fence 500; the witness since went
        // to 900 while the live object granted up to 850.
        let copy = state(1, 1_000).with_fence(500).skip_to(300);
        assert_eq!(
            seen(&copy, 500, Witnessed::read(900)),
            (900, 900, 600, true, false, None)
        );
        // The witness never asks past the end.
        let r = observe(
            &copy,
            500,
            copy.fence(),
            Witnessed::read(5_000),
            Phase::Starting,
        );
        assert_eq!((r.state.next(), r.state.fence()), (1_001, 1_001));
        // A raise's answer shows it too: the witness held more than asked.
        let asked = 600;
        let answer = Witnessed {
            mark: 900,
            was: Some(900),
        };
        assert_eq!(
            seen(&copy, asked, answer),
            (900, 900, 600, true, false, None)
        );
    }

    #[test]
    fn a_raise_answered_while_running_moves_only_the_fence() {
        let s = state(1, 10_000).with_fence(2_000).skip_to(1_990);
        let answer = Witnessed {
            mark: 4_000,
            was: Some(2_000),
        };
        let r = observe(&s, 4_000, s.fence(), answer, Phase::Running);
        assert_eq!(
            (
                r.state.next(),
                r.state.fence(),
                r.skipped,
                r.forward,
                r.behind
            ),
            (1_990, 4_000, 0, false, false)
        );
        // A witness far above anything asked: this object went back under
        // its own feet (a restore): it skips like a start.
        let r = observe(&s, 2_000, s.fence(), Witnessed::read(9_000), Phase::Running);
        assert_eq!((r.state.next(), r.forward), (9_000, true));
    }

    #[test]
    fn answers_applied_out_of_order_are_not_a_witness_behind() {
        // A raise sent at fence 2000 (to 4000) is answered after a read
        // that already moved the fence to 4000: the witness held 2000 when
        // the raise reached it, which is what the object had acknowledged
        // when it sent it. Nothing went back.
        let s = state(1, 10_000).with_fence(4_000).skip_to(1_990);
        let late = Witnessed {
            mark: 4_000,
            was: Some(2_000),
        };
        let r = observe(&s, 4_000, 2_000, late, Phase::Running);
        assert_eq!((r.behind, r.raise_back, r.state), (false, None, s));
        // A read sent at 2000 answered after a raise moved the fence to 4000:
        // the witness holds 2000 < 4000, so it is raised back (harmless), but
        // it held all the object had acknowledged when asked: not behind.
        let r = observe(&s, 4_000, 2_000, Witnessed::read(2_000), Phase::Running);
        assert_eq!((r.behind, r.raise_back), (false, Some(4_000)));
        // Whereas below what was acknowledged at the time is a restore.
        let r = observe(&s, 4_000, 4_000, Witnessed::read(2_000), Phase::Running);
        assert_eq!((r.behind, r.raise_back), (true, Some(4_000)));
    }

    #[test]
    fn a_raise_acknowledged_but_not_recorded_is_no_rollback() {
        // The object asked for 900 (recorded before asking) and stopped, or
        // lost the answer, before recording it: the witness holds 900.
        let s = state(1, 1_000).with_fence(500).skip_to(450);
        assert_eq!(
            seen(&s, 900, Witnessed::read(900)),
            (900, 900, 450, false, false, None)
        );
    }

    #[test]
    fn a_witness_that_went_back_is_raised_back_before_any_grant() {
        // Object at fence 2000; its witness restored to 1000, or wiped.
        let s = state(1, 10_000).with_fence(2_000).skip_to(1_800);
        for w in [1_000, 0] {
            assert_eq!(
                seen(&s, 2_000, Witnessed::read(w)),
                (2_000, 2_000, 200, false, true, Some(2_000)),
                "nothing moves down, and the witness goes back up first"
            );
            let r = observe(&s, 2_000, s.fence(), Witnessed::read(w), Phase::Running);
            assert_eq!(
                (r.state, r.behind, r.raise_back),
                (s, true, Some(2_000)),
                "a check while running changes nothing but raises the witness back"
            );
        }
        // A raise's answer that says what it held before: behind, already mended.
        let answer = Witnessed {
            mark: 2_500,
            was: Some(1_000),
        };
        assert_eq!(
            seen(&s, 2_500, answer),
            (2_500, 2_500, 700, false, true, None),
            "a start skips to the highest mark known"
        );
        let r = observe(&s, 2_500, s.fence(), answer, Phase::Running);
        assert_eq!(
            (r.state.next(), r.state.fence(), r.behind, r.raise_back),
            (1_800, 2_500, true, None),
            "while running, a raise only moves the fence"
        );
        // A witness from an older build does not say: nothing to learn.
        let answer = Witnessed {
            mark: 2_500,
            was: None,
        };
        assert!(!seen(&s, 2_500, answer).4);
        // A namespace that never fenced anything has nothing to protect.
        let fresh = state(1, 10_000);
        assert_eq!(
            seen(&fresh, 0, Witnessed::read(0)),
            (1, 1, 0, false, false, None)
        );
    }

    #[test]
    fn the_largest_grant_decays_after_a_quiet_minute() {
        let now = 10 * MINUTE_MS + 30_000;
        let big = Minute {
            minute: 9,
            ids: 1_000_000,
            largest: 1_000_000,
        };
        // Within the last 60 s (the bucket of minute 9 overlaps it): a
        // minute of grants, at least twice the largest.
        assert_eq!(recent_chunk(&[big], now, 1_000, 0, u64::MAX), 2_000_000);
        // A minute later the big grant no longer counts: twice this grant.
        assert_eq!(
            recent_chunk(&[big], now + MINUTE_MS, 1_000, 0, u64::MAX),
            2_000
        );
        // Buckets add up; older ones never do.
        let old = Minute {
            minute: 3,
            ids: 1 << 40,
            largest: u64::MAX,
        };
        let small = Minute {
            minute: 10,
            ids: 30_000,
            largest: 100,
        };
        assert_eq!(
            recent_chunk(&[old, big, small], now, 1, 0, u64::MAX),
            2_000_000
        );
        assert_eq!(recent_chunk(&[old, small], now, 1, 0, u64::MAX), 30_000);
        assert_eq!(recent_from(0), -1);
        assert_eq!(recent_from(i64::MIN), i64::MIN.div_euclid(MINUTE_MS));
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
