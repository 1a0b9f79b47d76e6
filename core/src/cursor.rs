//! Lock-free issuing for native threads: [`AtomicCursor`] over one
//! installed range, and [`CursorSlot`], a cursor its owner refills in place.
//!
//! Guaranteed under any interleaving: each ID of a range is returned at
//! most once and nothing past its end is ever returned. An `AtomicCursor`
//! stays used up once used up; installing the next range is the owner's
//! job (swap in a new cursor, which needs a way to free the old one while
//! other threads may still read it). A `CursorSlot` is refilled in place by
//! its owner instead, so readers never follow a pointer that could dangle.

#[cfg(not(loom))]
use core::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
use loom::sync::atomic::{AtomicU64, Ordering};

use crate::range::Range;

/// Ranges up to this many IDs issue through one `fetch_add`; larger ones
/// through a compare-and-swap loop.
///
/// Bound proof for the fetch-add path: a thread adds 1 only once per call,
/// and a thread that finds the range used up stores `count` back before it
/// returns. The counter therefore never exceeds `count` plus the number of
/// threads inside `next_id` at once. With `count <= 2^63` that stays below
/// 2^64 for any number of threads a machine can hold, so it never wraps
/// back into issued offsets.
pub const FETCH_ADD_LIMIT: u64 = 1 << 63;

/// A lock-free cursor over one range.
#[derive(Debug)]
pub struct AtomicCursor {
    start: u64,
    count: u64,
    taken: AtomicU64,
}

impl AtomicCursor {
    /// A cursor at the start of `range`.
    pub fn new(range: Range) -> AtomicCursor {
        AtomicCursor {
            start: range.start(),
            count: range.count(),
            taken: AtomicU64::new(0),
        }
    }

    /// The range this cursor issues from.
    pub fn range(&self) -> Range {
        // start and count came from a valid Range.
        match Range::with_count(self.start, self.count) {
            Ok(r) => r,
            Err(_) => unreachable!("cursor holds a valid range"),
        }
    }

    /// The next unused ID, or `None` once the range is used up.
    #[inline]
    pub fn next_id(&self) -> Option<u64> {
        if self.count <= FETCH_ADD_LIMIT {
            let offset = self.taken.fetch_add(1, Ordering::Relaxed);
            if offset < self.count {
                return Some(self.start + offset);
            }
            // Pull the overshoot back; see FETCH_ADD_LIMIT.
            self.taken.store(self.count, Ordering::Relaxed);
            None
        } else {
            self.take(1).map(|r| r.start())
        }
    }

    /// Up to `n` contiguous unused IDs: fewer than `n` when the range has
    /// fewer left, `None` when it has none or `n` is 0.
    pub fn take(&self, n: u64) -> Option<Range> {
        let mut offset = self.taken.load(Ordering::Relaxed);
        loop {
            if offset >= self.count || n == 0 {
                return None;
            }
            let grab = n.min(self.count - offset);
            match self.taken.compare_exchange_weak(
                offset,
                offset + grab,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Range::with_count(self.start + offset, grab).ok(),
                Err(seen) => offset = seen,
            }
        }
    }

    /// How many IDs are still unused. A snapshot: other threads may take
    /// some before the caller acts on it.
    pub fn remaining(&self) -> u64 {
        self.count
            .saturating_sub(self.taken.load(Ordering::Relaxed).min(self.count))
    }
}

/// Bits of a [`CursorSlot`]'s word that hold what the block has left; the
/// bits above them are its generation.
const LEFT_BITS: u32 = 34;
const LEFT_MASK: u64 = (1 << LEFT_BITS) - 1;

/// What a [`CursorSlot`]'s left field holds with nothing left: the field is
/// `EMPTY + left`, so the readers that find a block used up (each takes 1
/// once, then pulls the field back up to `EMPTY`) never borrow from the
/// generation bits, and a reader knows from the value its own `fetch_sub`
/// returned whether it took an ID (above `EMPTY`) or nothing.
const EMPTY: u64 = 1 << 33;

/// The most IDs one [`CursorSlot`] block may hold: 2^32 (with `EMPTY`,
/// the left field stays below 2^34).
pub const SLOT_LIMIT: u64 = 1 << 32;

/// A block of IDs that any thread issues from without a lock, and that its
/// owner refills in place with [`CursorSlot::replace`].
///
/// One 64-bit word holds a generation (its upper 30 bits) and what the
/// block has left in this generation (its lower 34, counting down). A
/// reader takes 1 from the word (one `fetch_sub`, as [`AtomicCursor`] adds
/// 1), reads the block's start and count, and checks that the generation
/// did not move meanwhile (a sequence lock whose first read is that same
/// `fetch_sub`): an ID is returned only if the block it was computed from
/// was the block of that generation. An odd generation means the owner is
/// replacing the block (or sealed it): nothing issues. `replace` first
/// makes the generation odd (taking what was left, exactly), then writes
/// the new block, then makes it even. A reader caught between its
/// `fetch_sub` and its check by a replacement loses its ID (a gap) and
/// tries again; since the value its `fetch_sub` returned says whether it
/// took an ID, it counts the loss exactly ([`CursorSlot::lost`]).
///
/// Guaranteed under any interleaving: each ID of each installed block is
/// returned at most once, by a reader or in the tail `replace` hands back,
/// never by both; and every one is returned, handed back, or counted in
/// [`CursorSlot::lost`], exactly one of these (once the readers are done).
/// Readers are lock-free (a reader only retries when the owner replaced
/// the block). The owner's methods (`replace`, `seal`) must not run at the
/// same time as each other: one owner, under its own lock. (Exactly: a
/// reader stalled from its `fetch_sub` to its check across 2^29
/// replacements could see the generation come round again; the block
/// sizes a driver installs make that many replacements take far longer
/// than any stall.)
#[derive(Debug)]
#[repr(align(64))]
pub struct CursorSlot {
    word: AtomicU64,
    start: AtomicU64,
    count: AtomicU64,
    /// IDs taken by readers whose block was replaced before they could
    /// return them. Written only on that path.
    lost: AtomicU64,
}

/// What a reader found on a miss.
enum Miss {
    /// The block was replaced under it: try again.
    Retry,
    /// Nothing to issue.
    Empty,
}

#[inline]
const fn generation(word: u64) -> u64 {
    word >> LEFT_BITS
}

#[inline]
const fn pack(generation: u64, field: u64) -> u64 {
    (generation << LEFT_BITS) | field
}

/// What a left field says the block has left.
#[inline]
const fn left(field: u64) -> u64 {
    field.saturating_sub(EMPTY)
}

impl Default for CursorSlot {
    fn default() -> Self {
        CursorSlot::new()
    }
}

impl CursorSlot {
    /// An empty slot (sealed: it issues nothing until a block is installed).
    #[cfg(not(loom))]
    pub const fn new() -> CursorSlot {
        CursorSlot {
            word: AtomicU64::new(pack(1, EMPTY)),
            start: AtomicU64::new(0),
            count: AtomicU64::new(0),
            lost: AtomicU64::new(0),
        }
    }

    /// An empty slot (sealed: it issues nothing until a block is installed).
    #[cfg(loom)]
    pub fn new() -> CursorSlot {
        CursorSlot {
            word: AtomicU64::new(pack(1, EMPTY)),
            start: AtomicU64::new(0),
            count: AtomicU64::new(0),
            lost: AtomicU64::new(0),
        }
    }

    /// The next unused ID of the installed block, or `None` when it is used
    /// up, sealed, or being replaced. Never waits.
    #[inline]
    pub fn next_id(&self) -> Option<u64> {
        loop {
            let w = self.word.fetch_sub(1, Ordering::Acquire);
            // Acquire: if either load reads a later block, the generation
            // made odd before it was written is seen by the check below.
            let count = self.count.load(Ordering::Acquire);
            let start = self.start.load(Ordering::Acquire);
            let now = self.word.load(Ordering::Relaxed);
            let field = w & LEFT_MASK;
            // Same generation, even (a block installed), and an ID left.
            if (generation(w ^ now) | (generation(w) & 1)) == 0 && field > EMPTY {
                // The block read is this generation's: `field - EMPTY` (what
                // was left before this call) is at most its count.
                return Some(start + (count - (field - EMPTY)));
            }
            match self.miss(w, now) {
                Miss::Retry => continue,
                Miss::Empty => return None,
            }
        }
    }

    #[cold]
    fn miss(&self, w: u64, now: u64) -> Miss {
        let g = generation(w);
        if generation(now) != g {
            if g & 1 == 0 && (w & LEFT_MASK) > EMPTY {
                // This call took an ID of a block since replaced (or sealed):
                // not returned, not in the tail the owner got. A gap.
                self.lost.fetch_add(1, Ordering::Relaxed);
            }
            // Replaced since the `fetch_sub`: a newer block may have IDs.
            return if generation(now) & 1 == 0 {
                Miss::Retry
            } else {
                Miss::Empty
            };
        }
        // Used up (or sealed): pull the overshoot back up, within this
        // generation only, so the field never falls below `EMPTY` by more
        // than the threads inside this call.
        let mut cur = now;
        while generation(cur) == g && (cur & LEFT_MASK) < EMPTY {
            match self.word.compare_exchange_weak(
                cur,
                pack(g, EMPTY),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    break;
                }
                Err(seen) => cur = seen,
            }
        }
        Miss::Empty
    }

    /// Exactly `n` contiguous unused IDs, or `None` (taking nothing) when
    /// the block has fewer left, is sealed or being replaced, or `n` is 0.
    pub fn take(&self, n: u64) -> Option<Range> {
        if n == 0 || n > SLOT_LIMIT {
            return None;
        }
        let mut w = self.word.load(Ordering::Acquire);
        loop {
            if generation(w) & 1 == 1 {
                return None;
            }
            // A block read here that is newer than `w` makes the exchange
            // below fail (its replacement changed the word first).
            let count = self.count.load(Ordering::Acquire);
            let start = self.start.load(Ordering::Acquire);
            let have = left(w & LEFT_MASK);
            if have > count {
                // The count read is not this generation's: read again.
                w = self.word.load(Ordering::Acquire);
                continue;
            }
            if have < n {
                return None;
            }
            match self
                .word
                .compare_exchange_weak(w, w - n, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => return Range::with_count(start + (count - have), n).ok(),
                Err(seen) => w = seen,
            }
        }
    }

    /// How many IDs the block has left: a snapshot (0 while sealed).
    pub fn remaining(&self) -> u64 {
        let w = self.word.load(Ordering::Acquire);
        if generation(w) & 1 == 1 {
            return 0;
        }
        left(w & LEFT_MASK).min(self.count.load(Ordering::Relaxed))
    }

    /// IDs taken by readers whose block was replaced or sealed before they
    /// could return them: gaps, neither returned nor in any tail the owner
    /// got. Only grows. With every reader done, each ID of every block
    /// installed is returned, handed back, or counted here, exactly once.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// The owner's: stops issuing and hands back the unused tail of the
    /// block, exactly (no reader returns any ID of it). The slot stays
    /// empty until [`CursorSlot::replace`] installs a block.
    pub fn seal(&self) -> Option<Range> {
        let g = generation(self.word.load(Ordering::Relaxed));
        if g & 1 == 1 {
            return None;
        }
        let before = self.word.fetch_add(1 << LEFT_BITS, Ordering::Acquire);
        // The block's fields are the owner's own writes.
        let count = self.count.load(Ordering::Relaxed);
        let start = self.start.load(Ordering::Relaxed);
        let rest = left(before & LEFT_MASK).min(count);
        if rest == 0 {
            // Nothing left (and a block ending at 2^64 has no first unused
            // ID to name).
            return None;
        }
        Range::with_count(start + (count - rest), rest).ok()
    }

    /// The owner's: seals the slot (see [`CursorSlot::seal`]), installs
    /// `block` and returns the old block's unused tail. A block of more
    /// than [`SLOT_LIMIT`] IDs is refused with itself, changing nothing.
    pub fn replace(&self, block: Range) -> Result<Option<Range>, Range> {
        if block.count() > SLOT_LIMIT {
            return Err(block);
        }
        let tail = self.seal();
        let g = generation(self.word.load(Ordering::Relaxed));
        // Release: a reader that reads either field then sees the odd
        // generation (or a later one) when it checks the word.
        self.start.store(block.start(), Ordering::Release);
        self.count.store(block.count(), Ordering::Release);
        // A swap, not a store: readers' `fetch_sub`s must land wholly before
        // or after it. (Both are so in the memory model; loom 0.7 lets a
        // plain store fall between an RMW's read and write, tokio-rs/loom#254,
        // and would report duplicates this code cannot make.)
        self.word
            .swap(pack(g + 1, EMPTY + block.count()), Ordering::Release);
        Ok(tail)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn issues_every_id_once_then_stops() {
        let c = AtomicCursor::new(Range::new(10, 13).unwrap());
        assert_eq!(
            [c.next_id(), c.next_id(), c.next_id()],
            [Some(10), Some(11), Some(12)]
        );
        for _ in 0..5 {
            assert_eq!(c.next_id(), None);
        }
        assert_eq!(c.remaining(), 0);
    }

    #[test]
    fn take_is_contiguous_and_short_at_the_end() {
        let c = AtomicCursor::new(Range::new(1, 11).unwrap());
        assert_eq!(c.take(4), Range::new(1, 5).ok());
        assert_eq!(c.next_id(), Some(5));
        assert_eq!(c.take(100), Range::new(6, 11).ok());
        assert_eq!(c.take(1), None);
        assert_eq!(c.take(0), None);
    }

    #[test]
    fn last_id_of_u64_is_issued_once() {
        let c = AtomicCursor::new(Range::with_count(u64::MAX - 1, 2).unwrap());
        assert_eq!(c.next_id(), Some(u64::MAX - 1));
        assert_eq!(c.next_id(), Some(u64::MAX));
        assert_eq!(c.next_id(), None);
    }

    #[test]
    fn huge_range_uses_the_cas_path() {
        let r = Range::new(1, crate::range::BOUND_LIMIT).unwrap();
        let c = AtomicCursor::new(r);
        assert!(r.count() > FETCH_ADD_LIMIT);
        assert_eq!(c.next_id(), Some(1));
        assert_eq!(
            c.take(u64::MAX).map(|r| (r.start(), r.last())),
            Some((2, u64::MAX))
        );
        assert_eq!(c.next_id(), None);
    }

    #[test]
    fn slot_issues_its_block_then_the_next() {
        let s = CursorSlot::new();
        assert_eq!(s.next_id(), None);
        assert_eq!(s.remaining(), 0);
        assert_eq!(s.replace(Range::with_count(10, 2).unwrap()), Ok(None));
        assert_eq!(
            [s.next_id(), s.next_id(), s.next_id()],
            [Some(10), Some(11), None]
        );
        for _ in 0..5 {
            assert_eq!(s.next_id(), None);
        }
        assert_eq!(s.replace(Range::with_count(100, 5).unwrap()), Ok(None));
        assert_eq!(s.take(3), Range::with_count(100, 3).ok());
        assert_eq!(s.take(3), None, "all or nothing");
        assert_eq!(s.remaining(), 2);
        assert_eq!(s.seal(), Range::with_count(103, 2).ok());
        assert_eq!(s.next_id(), None);
        assert_eq!(s.take(1), None);
        assert_eq!(s.seal(), None);
        let big = Range::with_count(1, SLOT_LIMIT + 1).unwrap();
        assert_eq!(s.replace(big), Err(big));
        let top = Range::with_count(u64::MAX - 1, 2).unwrap();
        assert_eq!(s.replace(top), Ok(None));
        assert_eq!(
            [s.next_id(), s.next_id(), s.next_id()],
            [Some(u64::MAX - 1), Some(u64::MAX), None]
        );
        // Used up at the top of the space: sealing it hands back nothing
        // (and does not overflow computing where its tail would start).
        assert_eq!(s.seal(), None);
        assert_eq!(s.replace(top), Ok(None));
        assert_eq!(s.seal(), Some(top), "unused, it is handed back whole");
    }

    #[test]
    fn slot_overshoot_is_pulled_back() {
        let s = CursorSlot::new();
        for _ in 0..1000 {
            assert_eq!(s.next_id(), None);
        }
        assert_eq!(s.word.load(Ordering::Relaxed) & LEFT_MASK, EMPTY);
        s.replace(Range::with_count(1, 1).unwrap()).unwrap();
        assert_eq!(s.next_id(), Some(1));
        for _ in 0..1000 {
            assert_eq!(s.next_id(), None);
        }
        assert_eq!(s.word.load(Ordering::Relaxed) & LEFT_MASK, EMPTY);
        s.seal();
        for _ in 0..1000 {
            assert_eq!(s.next_id(), None);
        }
        assert_eq!(s.word.load(Ordering::Relaxed) & LEFT_MASK, EMPTY);
        assert_eq!(s.lost(), 0, "no call took an ID it did not return");
    }

    #[test]
    fn slot_threads_and_replacements_never_share_an_id() {
        extern crate std;
        use std::{sync::Arc, thread, vec::Vec};
        let s = Arc::new(CursorSlot::new());
        let stop = Arc::new(core::sync::atomic::AtomicBool::new(false));
        let seen = Arc::new(core::sync::atomic::AtomicU64::new(0));
        let readers: Vec<_> = (0..3)
            .map(|i| {
                let (s, stop, seen) = (Arc::clone(&s), Arc::clone(&stop), Arc::clone(&seen));
                thread::spawn(move || {
                    let mut got = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        if i == 0 {
                            if let Some(r) = s.take(3) {
                                got.extend(r.start()..=r.last());
                            }
                        } else if let Some(id) = s.next_id() {
                            got.push(id);
                        }
                        seen.store(got.len() as u64, Ordering::Relaxed);
                    }
                    got
                })
            })
            .collect();
        let mut tails = Vec::new();
        let mut block = 0u64;
        while block < 20_000 || (seen.load(Ordering::Relaxed) == 0 && block < 1 << 26) {
            block += 1;
            let r = Range::with_count(block * 7, 7).unwrap();
            if let Some(t) = s.replace(r).unwrap() {
                tails.extend(t.start()..=t.last());
            }
        }
        stop.store(true, Ordering::Relaxed);
        let mut all: Vec<u64> = readers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        let issued = all.len();
        all.extend(tails);
        all.sort_unstable();
        let n = all.len();
        all.dedup();
        assert_eq!(all.len(), n, "an ID was issued twice");
        assert!(issued > 0);
        assert!(all.iter().all(|&id| (7..(block + 1) * 7).contains(&id)));
    }

    #[test]
    fn slot_accounts_for_every_id_of_every_block() {
        // Every ID of every block installed is returned by a reader, handed
        // back in a tail, or counted lost (its reader was caught by a
        // replacement), exactly once.
        extern crate std;
        use std::{sync::Arc, thread, vec::Vec};
        let s = Arc::new(CursorSlot::new());
        let stop = Arc::new(core::sync::atomic::AtomicBool::new(false));
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let (s, stop) = (Arc::clone(&s), Arc::clone(&stop));
                thread::spawn(move || {
                    let mut got = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        if let Some(id) = s.next_id() {
                            got.push(id);
                        }
                    }
                    got
                })
            })
            .collect();
        let mut all = Vec::new();
        let blocks = 50_000u64;
        for block in 1..=blocks {
            let r = Range::with_count(block * 7, 7).unwrap();
            if let Some(t) = s.replace(r).unwrap() {
                all.extend(t.start()..=t.last());
            }
            if block % 64 == 0 {
                thread::yield_now();
            }
        }
        if let Some(t) = s.seal() {
            all.extend(t.start()..=t.last());
        }
        stop.store(true, Ordering::Relaxed);
        for h in readers {
            all.extend(h.join().unwrap());
        }
        all.sort_unstable();
        let n = all.len() as u64;
        all.dedup();
        assert_eq!(all.len() as u64, n, "an ID was issued twice");
        assert_eq!(
            n + s.lost(),
            blocks * 7,
            "{} IDs were neither returned, handed back nor counted lost",
            blocks * 7 - n - s.lost()
        );
    }

    #[test]
    fn threads_never_share_an_id() {
        extern crate std;
        use std::{sync::Arc, thread, vec::Vec};
        let c = Arc::new(AtomicCursor::new(Range::with_count(1, 40_000).unwrap()));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let c = Arc::clone(&c);
                thread::spawn(move || {
                    let mut got = Vec::new();
                    while let Some(id) = c.next_id() {
                        got.push(id);
                    }
                    got
                })
            })
            .collect();
        let mut all: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        assert_eq!(all, (1..=40_000).collect::<Vec<_>>());
    }
}
