//! ns per ID for `Lease::next_id` and `AtomicCursor::next_id`, beside a bare
//! `AtomicU64::fetch_add` measured in the same run, printed as ratios.
//!
//! Goal: both within 2x of the bare fetch-add. Run: `cargo bench -p
//! rangeid-core --bench next_id`.

#[path = "support/ratios.rs"]
mod ratios;

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use rangeid_core::authority::{decide, Decision, NamespaceConfig, NamespaceState, Owner};
use rangeid_core::ledger::LedgerView;
use rangeid_core::protocol::{Capacity, GrantReply};
use rangeid_core::{Action, AtomicCursor, Lease, LeaseConfig, Namespace, Range, Reply};
use ratios::{ns_per_id, record};

/// A lease holding one range of 2^40 IDs, more than a run can use.
fn loaded_lease() -> Lease {
    let ns = Namespace::new("bench").unwrap();
    let mut config = LeaseConfig::new(ns);
    config.min_range_size = 1 << 40;
    config.max_range_size = 1 << 40;
    let mut lease = Lease::new(config, [9; 16], rangeid_core::Instant::from_ms(0)).unwrap();
    let space =
        NamespaceConfig::new(None, Some(u64::MAX), Some(NamespaceConfig::MAX_COUNT_LIMIT)).unwrap();
    let Some(Action::Send(out)) = lease.poll(rangeid_core::Instant::from_ms(0)) else {
        panic!("a new engine asks for a range");
    };
    let state = NamespaceState::create(ns, space).unfenced();
    let Ok(Decision::New { grant, .. }) = decide(
        &state,
        &LedgerView::EMPTY,
        &out.request,
        &Owner::new("bench"),
        0,
    ) else {
        panic!("the bench namespace grants");
    };
    let reply = Reply::Grant(GrantReply {
        grant,
        replayed: false,
        capacity: Capacity::default(),
    });
    lease.handle_reply(out.ticket, &reply, rangeid_core::Instant::from_ms(0));
    lease
}

fn single_thread(c: &mut Criterion) {
    let mut g = c.benchmark_group("next_id");
    g.bench_function("bare AtomicU64::fetch_add", |b| {
        let counter = AtomicU64::new(1);
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                black_box(counter.fetch_add(1, Ordering::Relaxed));
            }
            let e = t.elapsed();
            record("fetch_add", e, iters);
            e
        })
    });
    g.bench_function("AtomicCursor::next_id", |b| {
        let cursor = AtomicCursor::new(Range::with_count(1, 1 << 62).unwrap());
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                black_box(cursor.next_id());
            }
            let e = t.elapsed();
            record("cursor", e, iters);
            e
        })
    });
    g.bench_function("Lease::next_id", |b| {
        let mut lease = loaded_lease();
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                let _ = black_box(lease.next_id());
            }
            let e = t.elapsed();
            record("lease", e, iters);
            e
        })
    });
    g.finish();
}

/// Two threads hammering one counter: the contended case.
fn contended(c: &mut Criterion) {
    let mut g = c.benchmark_group("next_id, 2 threads");
    g.bench_function("bare AtomicU64::fetch_add", |b| {
        b.iter_custom(|iters| {
            let counter = Arc::new(AtomicU64::new(1));
            let e = ratios::run(2, iters, move || {
                black_box(counter.fetch_add(1, Ordering::Relaxed));
            });
            record("fetch_add x2", e, iters);
            e
        })
    });
    g.bench_function("AtomicCursor::next_id", |b| {
        b.iter_custom(|iters| {
            let cursor = Arc::new(AtomicCursor::new(Range::with_count(1, 1 << 62).unwrap()));
            let e = ratios::run(2, iters, move || {
                black_box(cursor.next_id());
            });
            record("cursor x2", e, iters);
            e
        })
    });
    g.finish();
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    single_thread(&mut c);
    contended(&mut c);
    c.final_summary();

    let base = ns_per_id("fetch_add");
    println!("\nns per ID (mean over every measured iteration), ratio to bare fetch_add:");
    for (label, name, baseline) in [
        ("bare AtomicU64::fetch_add", "fetch_add", base),
        ("AtomicCursor::next_id", "cursor", base),
        ("Lease::next_id", "lease", base),
        (
            "2 threads: bare fetch_add",
            "fetch_add x2",
            ns_per_id("fetch_add x2"),
        ),
        (
            "2 threads: AtomicCursor::next_id",
            "cursor x2",
            ns_per_id("fetch_add x2"),
        ),
    ] {
        let ns = ns_per_id(name);
        println!("  {label:<34} {ns:>7.2} ns/ID   {:>5.2}x", ns / baseline);
    }
    println!("goal: the cursor and the lease within 2x of the bare fetch_add");
}
