//! `Shelf`: the Rust client's two blocks (`rust-client/src/shelf.rs`),
//! for the simulation: one issuing, one ready behind it (the standby),
//! each a core [`CursorSlot`], refilled from the engine with
//! [`rangeid_core::Lease::lend_keeping`].
//!
//! The same moves as the client's, one thread at a time: a reader that
//! finds the issuing block used up moves to the standby and wakes the
//! driver (the first to move since the driver last looked); the driver
//! refills used-up slots, the issuing one first, telling the engine what
//! the other still holds; a batch or a close seals both and hands their
//! tails to the engine's accounting. Where the client wakes its driver
//! with a `Notify`, this sets `woken`. One thread at a time, no reader is
//! caught by a block swap, so none loses an ID (the client's
//! `CursorSlot::lost` stays 0 here). A change to the client's shelf or to
//! its driver's `refill`, `take_batch` and `serve` belongs here too
//! (`World::shelf_take_batch` and its neighbours).

use rangeid_core::cursor::{CursorSlot, SLOT_LIMIT};
use rangeid_core::Range;

/// The largest block the driver asks the engine to lend (the client's
/// `BLOCK`): the engine lends up to its refill mark.
pub const BLOCK: u64 = SLOT_LIMIT;

/// The two blocks, which one issues, and the driver's wake-up.
#[derive(Debug, Default)]
pub struct Shelf {
    slots: [CursorSlot; 2],
    issuing: usize,
    /// A reader moved to the standby block since the driver last looked.
    pub refill_wanted: bool,
    /// The driver was woken: a reader moved to the standby block or found
    /// none, an answer came, a caller waits.
    pub woken: bool,
    /// Times a reader found the issuing block used up and went on, without
    /// waiting, from the standby block.
    pub swaps: u64,
}

impl Shelf {
    /// The next ID, or `None` when both blocks are used up.
    pub fn next_id(&mut self) -> Option<u64> {
        let i = self.issuing;
        if let Some(id) = self.slots[i].next_id() {
            return Some(id);
        }
        let other = i ^ 1;
        let id = self.slots[other].next_id();
        if id.is_some() {
            self.issuing = other;
            self.swaps += 1;
            if !self.refill_wanted {
                self.refill_wanted = true;
                self.woken = true;
            }
        }
        id
    }

    /// Exactly `n` contiguous IDs from the issuing block, or `None`.
    pub fn take(&mut self, n: u64) -> Option<Range> {
        self.slots[self.issuing].take(n)
    }

    /// IDs left in both blocks.
    pub fn unused(&self) -> u64 {
        self.slots[0].remaining() + self.slots[1].remaining()
    }

    /// The driver's: refills each used-up slot with a block from `lend`
    /// (given what the other holds), the issuing one first; stops at the
    /// first `None`. Makes a slot with IDs the issuing one. Returns how
    /// many blocks were lent while the other slot still held IDs.
    pub fn refill(&mut self, mut lend: impl FnMut(u64) -> Option<Range>) -> u64 {
        let mut i = self.issuing;
        if self.slots[i].remaining() == 0 && self.slots[i ^ 1].remaining() > 0 {
            i ^= 1;
            self.issuing = i;
        }
        let mut kept = 0;
        for slot in [i, i ^ 1] {
            if self.slots[slot].remaining() > 0 {
                continue;
            }
            let held = self.slots[slot ^ 1].remaining();
            let Some(block) = lend(held) else {
                return kept;
            };
            kept += u64::from(held > 0);
            // A used-up slot has no tail; the block is within SLOT_LIMIT.
            let _ = self.slots[slot].replace(block);
        }
        kept
    }

    /// The driver's: stops both blocks and hands back what they had left,
    /// exactly (issuing block first).
    pub fn seal(&mut self) -> [Option<Range>; 2] {
        let i = self.issuing;
        [self.slots[i].seal(), self.slots[i ^ 1].seal()]
    }

    /// The driver's: puts sealed tails back (in the order `seal` gave
    /// them) to issue again.
    pub fn put_back(&mut self, tails: [Option<Range>; 2]) {
        let i = self.issuing;
        for (slot, tail) in [i, i ^ 1].into_iter().zip(tails) {
            if let Some(t) = tail {
                let _ = self.slots[slot].replace(t);
            }
        }
    }
}

/// A deliberate bug in the simulated Rust client's driver, for checking
/// the checker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DriverBug {
    /// None: the driver as the client has it.
    #[default]
    None,
    /// After a batch it puts back the tails it sealed whole, not what the
    /// batch left of them: IDs handed to the batch's caller issue again.
    ReusesTail,
    /// It refills with `lend`, not `lend_keeping`: the engine counts the
    /// standby block as returned to callers while it still issues.
    LendsWithoutKeeping,
}
