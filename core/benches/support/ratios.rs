//! The ratio harness of the `next_id` benches (core's and the Rust
//! client's, which includes this file with `#[path]`): each routine's time
//! and IDs, summed over every sample criterion measures, so a bench prints
//! ns per ID and ratios to a baseline measured in the same run; and a
//! runner that spreads a routine's calls over threads.
//!
//! A folder without `main.rs` under `benches/` is not a bench target of
//! its own.

use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Time and IDs each routine was measured over, for the ratios.
static TOTALS: Mutex<Vec<(&'static str, Duration, u64)>> = Mutex::new(Vec::new());

/// Adds one sample of `name`: `elapsed` to get `ids` IDs (calls that got
/// none are not counted).
pub fn record(name: &'static str, elapsed: Duration, ids: u64) {
    let mut totals = TOTALS.lock().unwrap();
    match totals.iter_mut().find(|(n, _, _)| *n == name) {
        Some(entry) => {
            entry.1 += elapsed;
            entry.2 += ids;
        }
        None => totals.push((name, elapsed, ids)),
    }
}

/// Mean ns per ID of `name` over every sample recorded.
pub fn ns_per_id(name: &str) -> f64 {
    let totals = TOTALS.lock().unwrap();
    let (_, t, n) = totals
        .iter()
        .find(|(n, _, _)| *n == name)
        .expect("measured");
    t.as_nanos() as f64 / *n as f64
}

/// Runs `op` exactly `iters` times in all over `threads` threads; the time
/// from the start barrier to the last join (one thread: just the loop).
pub fn run(threads: usize, iters: u64, op: impl Fn() + Send + Sync + Clone + 'static) -> Duration {
    if threads <= 1 {
        let t = Instant::now();
        for _ in 0..iters {
            op();
        }
        return t.elapsed();
    }
    let barrier = Arc::new(Barrier::new(threads + 1));
    let share = iters / threads as u64;
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let (op, barrier) = (op.clone(), Arc::clone(&barrier));
            // The first thread also makes the calls that do not divide.
            let calls = if i == 0 {
                share + iters % threads as u64
            } else {
                share
            };
            thread::spawn(move || {
                barrier.wait();
                for _ in 0..calls {
                    op();
                }
            })
        })
        .collect();
    barrier.wait();
    let t = Instant::now();
    for h in handles {
        h.join().unwrap();
    }
    t.elapsed()
}
