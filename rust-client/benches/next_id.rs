//! ns per ID for `Generator::next_id` from 1 and 2 threads, beside a bare
//! `AtomicU64::fetch_add` and `uuid::Uuid::now_v7()` measured in the same
//! run, printed as ratios.
//!
//! Goals: 1 thread within 1.2x of the bare fetch_add, 2 threads within
//! 1.5x. The generator runs against an in-process fake authority (the
//! tests' own) granting one range larger than a run can use, so what is
//! measured is the hot path: the shelf's lock-free cursor. A call that
//! gets no ID (a miss) is not counted as one: ns per ID is over the IDs
//! got, and the misses are printed. The harness (totals, ratios, threads)
//! is core's bench's, `core/benches/support/ratios.rs`. Run: `cargo bench
//! -p rangeid-client --bench next_id`.

#[path = "../tests/fake/mod.rs"]
#[allow(dead_code)]
mod fake;

#[path = "../../core/benches/support/ratios.rs"]
mod ratios;

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use criterion::Criterion;
use rangeid_client::{Generator, Options};
use ratios::{ns_per_id, record, run};

/// Calls of `next_id` in the measured routines that got no ID (not
/// counted as IDs).
static MISSES: AtomicU64 = AtomicU64::new(0);

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
            // Only IDs count: the calls that got none (counted by the
            // generator, outside the timed loop) are taken off.
            let before = ids.stats().misses;
            let handle = ids.clone();
            let e = run(threads, iters, move || {
                let _ = black_box(handle.next_id());
            });
            let missed = ids.stats().misses - before;
            MISSES.fetch_add(missed, Ordering::Relaxed);
            record(gen, e, iters.saturating_sub(missed));
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
        "misses in the measured next_id routines (calls that got no ID, not counted as IDs): {}",
        MISSES.load(Ordering::Relaxed)
    );
    println!(
        "generator: misses {} (warm-up included), issued {}, lost {}",
        s.misses, s.lease.issued, s.lost
    );
}
