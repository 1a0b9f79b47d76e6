//! Model check of `AtomicCursor` and `CursorSlot` under every interleaving
//! loom explores.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p rangeid-core --test loom`;
//! without `cfg(loom)` this file is empty.
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use rangeid_core::cursor::{AtomicCursor, CursorSlot, FETCH_ADD_LIMIT};
use rangeid_core::range::{Range, BOUND_LIMIT};

/// Runs `threads` threads, each taking `calls` IDs, and checks that every
/// issued ID is in the range, none twice, and all of a fully drained range.
fn check(range: Range, threads: usize, calls: usize) {
    loom::model(move || {
        let cursor = Arc::new(AtomicCursor::new(range));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let c = Arc::clone(&cursor);
                thread::spawn(move || (0..calls).filter_map(|_| c.next_id()).collect::<Vec<_>>())
            })
            .collect();
        let mut all: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        let issued = all.len();
        all.dedup();
        assert_eq!(all.len(), issued, "an ID was issued twice");
        assert!(
            all.iter().all(|&id| range.contains(id)),
            "an ID past the range"
        );
        let wanted = (threads * calls) as u64;
        assert_eq!(issued as u64, wanted.min(range.count()), "an ID was lost");
        assert_eq!(
            cursor.next_id(),
            if wanted >= range.count() {
                None
            } else {
                cursor.range().start().checked_add(wanted)
            }
        );
    });
}

#[test]
fn two_threads_fetch_add_path_overshoot() {
    check(Range::with_count(10, 3).unwrap(), 2, 2);
}

#[test]
fn three_threads_fetch_add_path() {
    check(Range::with_count(u64::MAX - 3, 4).unwrap(), 3, 2);
}

#[test]
fn two_threads_cas_path_at_the_top() {
    let huge = Range::new(2, BOUND_LIMIT).unwrap();
    assert!(huge.count() > FETCH_ADD_LIMIT);
    check(huge, 2, 2);
}

#[test]
fn three_threads_cas_path() {
    let huge = Range::new(1, BOUND_LIMIT).unwrap();
    check(huge, 3, 1);
}

#[test]
fn batches_and_singles_never_overlap() {
    loom::model(|| {
        let cursor = Arc::new(AtomicCursor::new(Range::with_count(100, 5).unwrap()));
        let c = Arc::clone(&cursor);
        let batcher = thread::spawn(move || c.take(3));
        let single = cursor.next_id();
        let other = cursor.next_id();
        let batch = batcher.join().unwrap();
        let mut all: Vec<u64> = batch
            .map(|r| (r.start()..=r.last()).collect())
            .unwrap_or_default();
        all.extend(single);
        all.extend(other);
        all.sort_unstable();
        let n = all.len();
        all.dedup();
        assert_eq!(all.len(), n, "an ID was issued twice");
        assert_eq!(n, 5);
        assert!(all.iter().all(|&id| (100..105).contains(&id)));
    });
}

/// Readers issue from a slot while its owner replaces the block: no ID is
/// issued twice, none is both issued and handed back in the tail, every
/// one is from a block that was installed, and each is issued, handed back
/// or counted lost.
fn slot_check(first_count: u64, reader_calls: [usize; 2], batch: bool) {
    // Three threads with retry loops: bounded to 3 preemptions (loom's
    // advice for models this size), which still covers a replacement
    // landing between every pair of a reader's steps.
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(move || {
        let slot = Arc::new(CursorSlot::new());
        let first = Range::with_count(10, first_count).unwrap();
        let second = Range::with_count(20, 2).unwrap();
        slot.replace(first).unwrap();
        let handles: Vec<_> = reader_calls
            .iter()
            .enumerate()
            .map(|(i, &calls)| {
                let s = Arc::clone(&slot);
                thread::spawn(move || {
                    let mut got = Vec::new();
                    for _ in 0..calls {
                        if batch && i == 0 {
                            if let Some(r) = s.take(2) {
                                got.extend(r.start()..=r.last());
                            }
                        } else if let Some(id) = s.next_id() {
                            got.push(id);
                        }
                    }
                    got
                })
            })
            .collect();
        let mut all: Vec<u64> = slot
            .replace(second)
            .unwrap()
            .map(|t| (t.start()..=t.last()).collect())
            .unwrap_or_default();
        all.extend(slot.seal().into_iter().flat_map(|t| t.start()..=t.last()));
        for h in handles {
            all.extend(h.join().unwrap());
        }
        all.sort_unstable();
        let n = all.len();
        let before = all.clone();
        all.dedup();
        assert_eq!(all.len(), n, "an ID was issued twice: {before:?}");
        assert!(
            all.iter()
                .all(|&id| first.contains(id) || second.contains(id)),
            "an ID outside the blocks: {all:?}"
        );
        // Every ID is returned, handed back, or counted lost: exactly.
        assert_eq!(
            n as u64 + slot.lost(),
            first.count() + second.count(),
            "IDs unaccounted for: {all:?}, lost {}",
            slot.lost()
        );
    });
}

#[test]
fn slot_replaced_under_two_readers() {
    slot_check(2, [1, 1], false);
}

#[test]
fn slot_replaced_under_a_reader_past_the_end() {
    slot_check(1, [2, 0], false);
}

#[test]
fn slot_replaced_under_a_batch_and_a_reader() {
    slot_check(2, [1, 1], true);
}
