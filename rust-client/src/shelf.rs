//! `Shelf`: the blocks of IDs that any thread issues from without a lock:
//! one issuing, one ready behind it, each a core [`CursorSlot`].
//!
//! The driver (under its lock) refills a slot once it is used up, with a
//! block lent by the engine; a reader that finds the issuing slot used up
//! moves to the other one and asks the driver for a refill. So a steady
//! caller never finds both empty while the engine has IDs installed.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rangeid_core::cursor::{CursorSlot, SLOT_LIMIT};
use rangeid_core::Range;
use tokio::sync::Notify;

/// The two blocks, and which one issues.
#[derive(Debug, Default)]
pub(crate) struct Shelf {
    slots: [CursorSlot; 2],
    issuing: AtomicUsize,
    /// A reader moved to the standby block since the driver last looked
    /// (it woke the driver; later ones need not).
    pub refill_wanted: AtomicBool,
    /// Wakes the driver: a reader moved off a used-up block, a caller
    /// waits, a token or a close wants it.
    pub wake: Notify,
}

impl Shelf {
    /// The next ID, or `None` when both blocks are used up (or being
    /// refilled). Lock-free.
    #[inline]
    pub fn next_id(&self) -> Option<u64> {
        let i = self.issuing.load(Ordering::Relaxed) & 1;
        match self.slots[i].next_id() {
            Some(id) => Some(id),
            None => self.next_id_other(i),
        }
    }

    #[cold]
    fn next_id_other(&self, used_up: usize) -> Option<u64> {
        let other = used_up ^ 1;
        let id = self.slots[other].next_id();
        // The first reader to move to the standby block (since the driver
        // last looked) wakes the driver to refill the used-up one, and let
        // the engine prefetch, before the standby runs out too. With both
        // used up there is nothing to move to: the caller's miss wakes the
        // driver then, never the driver's own pass, which would wake itself
        // for ever.
        if id.is_some() {
            let _ =
                self.issuing
                    .compare_exchange(used_up, other, Ordering::Relaxed, Ordering::Relaxed);
            if !self.refill_wanted.swap(true, Ordering::AcqRel) {
                self.wake.notify_one();
            }
        }
        id
    }

    /// Exactly `n` contiguous IDs from the issuing block, or `None`.
    /// Lock-free.
    pub fn take(&self, n: u64) -> Option<Range> {
        let i = self.issuing.load(Ordering::Relaxed) & 1;
        self.slots[i].take(n)
    }

    /// IDs its readers took and lost to a block swap (see
    /// [`CursorSlot::lost`]): gaps, never returned.
    pub fn lost(&self) -> u64 {
        self.slots[0].lost().saturating_add(self.slots[1].lost())
    }

    /// IDs left in both blocks (a snapshot).
    pub fn unused(&self) -> u64 {
        self.slots[0].remaining() + self.slots[1].remaining()
    }

    /// The driver's: refills each used-up slot with a block from `lend`
    /// (given what the other holds), the issuing one first; stops at the
    /// first `None`. Makes a slot with IDs the issuing one.
    pub fn refill(&self, mut lend: impl FnMut(u64) -> Option<Range>) {
        let mut i = self.issuing.load(Ordering::Relaxed) & 1;
        if self.slots[i].remaining() == 0 && self.slots[i ^ 1].remaining() > 0 {
            i ^= 1;
            self.issuing.store(i, Ordering::Relaxed);
        }
        for slot in [i, i ^ 1] {
            if self.slots[slot].remaining() > 0 {
                continue;
            }
            let held = self.slots[slot ^ 1].remaining();
            let Some(block) = lend(held) else {
                return;
            };
            // A used-up slot has no tail; the block is within SLOT_LIMIT.
            let _ = self.slots[slot].replace(block);
        }
    }

    /// The driver's: stops both blocks and hands back what they had left,
    /// exactly (issuing block first); they stay empty until `put_back` or
    /// `refill`.
    pub fn seal(&self) -> [Option<Range>; 2] {
        let i = self.issuing.load(Ordering::Relaxed) & 1;
        [self.slots[i].seal(), self.slots[i ^ 1].seal()]
    }

    /// The driver's: puts sealed tails back (in the order `seal` gave
    /// them) to issue again.
    pub fn put_back(&self, tails: [Option<Range>; 2]) {
        let i = self.issuing.load(Ordering::Relaxed) & 1;
        for (slot, tail) in [i, i ^ 1].into_iter().zip(tails) {
            if let Some(t) = tail {
                let _ = self.slots[slot].replace(t);
            }
        }
    }
}

/// The largest block the driver asks the engine to lend.
pub(crate) const BLOCK: u64 = SLOT_LIMIT;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn moving_to_the_other_block_wakes_the_driver() {
        let shelf = Shelf::default();
        let mut blocks = [Range::new(1, 3), Range::new(10, 12)].into_iter().flatten();
        shelf.refill(|_| blocks.next());
        let ids: Vec<_> = (0..3).map(|_| shelf.next_id()).collect();
        assert_eq!(ids, [Some(1), Some(2), Some(10)]);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let woken = rt.block_on(async {
            tokio::time::timeout(Duration::from_millis(50), shelf.wake.notified())
                .await
                .is_ok()
        });
        assert!(woken, "the driver must hear that a block was used up");
    }
}
