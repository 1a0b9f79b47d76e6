//! ns per ID for `Generator::next_id` from 1 and 2 threads, beside a bare
//! `AtomicU64::fetch_add` and `uuid::Uuid::now_v7()` measured in the same
//! run, printed as ratios.
//!
//! Goals: 1 thread within 1.2x of the bare fetch_add, 2 threads within
//! 1.5x. The generator runs against an in-process fake authority (the
//! tests' own) granting one range larger than a run can use, so what is
//! measured is the hot path: the shelf's lock-free cursor. Run: `cargo
//! bench -p rangeid-client --bench next_id`.

#[path = "../tests/fake/mod.rs"]
#[allow(dead_code)]
mod fake;

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use criterion::Criterion;
use rangeid_client::{Generator, Options};

/// Time and iterations each routine was measured over, for the ratios.
static TOTALS: Mutex<Vec<(&'static str, Duration, u64)>> = Mutex::new(Vec::new());

fn record(name: &'static str, elapsed: Duration, iters: u64) {
    let mut totals = TOTALS.lock().unwrap();
    match totals.iter_mut().find(|(n, _, _)| *n == name) {
        Some(entry) => {
            entry.1 += elapsed;
            entry.2 += iters;
        }
        None => totals.push((name, elapsed, iters)),
    }
}

fn ns_per_id(name: &str) -> f64 {
    let totals = TOTALS.lock().unwrap();
    let (_, t, n) = totals
        .iter()
        .find(|(n, _, _)| *n == name)
        .expect("measured");
    t.as_nanos() as f64 / *n as f64
}

fn measure(c: &mut Criterion, group: &str, threads: usize, ids: &Generator) {
    let mut g = c.benchmark_group(group);
    let (fa, gen, uuid) = if threads == 1 {
        ("fetch_add", "next_id", "now_v7")
    } else {
        ("fetch_add x2", "next_id x2", "now_v7 x2")
    };
    g.bench_function("bare AtomicU64::fetch_add", |b| {
        b.iter_custom(|iters| {
            let counter = Arc::new(AtomicU64::new(1));
            let e = run(threads, iters, move || {
                black_box(counter.fetch_add(1, Ordering::Relaxed));
            });
            record(fa, e, iters);
            e
        })
    });
    g.bench_function("Generator::next_id", |b| {
        b.iter_custom(|iters| {
            let ids = ids.clone();
            let e = run(threads, iters, move || {
                let _ = black_box(ids.next_id());
            });
            record(gen, e, iters);
            e
        })
    });
    g.bench_function("uuid::Uuid::now_v7", |b| {
        b.iter_custom(|iters| {
            let e = run(threads, iters, || {
                black_box(uuid::Uuid::now_v7());
            });
            record(uuid, e, iters);
            e
        })
    });
    g.finish();
}

/// Runs `op` `iters` times in all over `threads` threads; the time from
/// the start barrier to the last join.
fn run(threads: usize, iters: u64, op: impl Fn() + Send + Sync + Clone + 'static) -> Duration {
    if threads == 1 {
        let t = Instant::now();
        for _ in 0..iters {
            op();
        }
        return t.elapsed();
    }
    let barrier = Arc::new(Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (op, barrier) = (op.clone(), Arc::clone(&barrier));
            thread::spawn(move || {
                barrier.wait();
                for _ in 0..iters / threads as u64 {
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

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(fake::Fake::start());
    // One range of 2^40 IDs: blocks of 2^32 on the shelf, more than a run
    // takes.
    let ids = Generator::connect_blocking(
        Options::new(&fake.url, "bench", "t")
            .range_size(1 << 40)
            .runtime(rt.handle().clone()),
    )
    .expect("the fake authority grants");
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    measure(&mut c, "next_id, 1 thread", 1, &ids);
    measure(&mut c, "next_id, 2 threads", 2, &ids);
    c.final_summary();

    println!("\nns per ID (mean over every measured iteration) and ratios, same run:");
    for (label, fa, gen, uuid) in [
        ("1 thread", "fetch_add", "next_id", "now_v7"),
        ("2 threads", "fetch_add x2", "next_id x2", "now_v7 x2"),
    ] {
        let (f, g, u) = (ns_per_id(fa), ns_per_id(gen), ns_per_id(uuid));
        println!(
            "  {label:<9}  fetch_add {f:>6.2} ns  next_id {g:>6.2} ns  now_v7 {u:>6.2} ns   next_id/fetch_add {:>5.2}x   next_id/now_v7 {:>5.2}x",
            g / f,
            g / u
        );
    }
    println!("goal: next_id within 1.2x of the bare fetch_add on 1 thread, 1.5x on 2 threads");
    let s = ids.stats();
    println!(
        "misses (calls that found no ID on hand): {}; issued {}",
        s.misses, s.lease.issued
    );
}
