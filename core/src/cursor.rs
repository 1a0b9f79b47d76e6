//! `AtomicCursor`: lock-free issuing from one installed range, for native
//! threads.
//!
//! Guaranteed under any interleaving: each ID of the range is returned at
//! most once and nothing past its end is ever returned. Once used up it
//! stays used up; installing the next range is the owner's job (swap in a
//! new cursor).

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
