//! Relays in the simulation (issue 18 §4): every seed here runs 2 or 3
//! relays, with restarts, evictions and split instances, lost, duplicated
//! and late replies on both hops, restores of the namespace object, and
//! freezes and floors while relays hold leases. The checker holds every
//! sub-range to lie inside a range committed to that relay incarnation,
//! no two sub-ranges to overlap, no ID to be issued twice, and no relay to
//! hand out a range granted before a freeze or floor once it was
//! acknowledged. Three planted relay bugs must be caught.
//!
//! `RANGEID_SIM_RELAY_SEEDS` (default 120) scales the correct run; the
//! longer run is `RANGEID_SIM_RELAY_SEEDS=5000 cargo test -p rangeid-sim
//! --release --test relays`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;

use rangeid_sim::{RelayBug, Report, Scenario, Violation, World};

fn env(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a whole number, got {v:?}")),
        Err(_) => default,
    }
}

/// What a batch of seeds did, summed, and its failures, lowest seed first.
struct Outcome {
    ids: u64,
    runs: Vec<Report>,
    failures: Vec<(u64, Violation)>,
}

impl Outcome {
    fn sum(&self, f: impl Fn(&Report) -> u64) -> u64 {
        self.runs.iter().map(f).sum()
    }

    fn max(&self, f: impl Fn(&Report) -> u64) -> u64 {
        self.runs.iter().map(f).max().unwrap_or(0)
    }
}

fn run_many(seeds: Vec<u64>, make: impl Fn(u64) -> Scenario + Sync) -> Outcome {
    let next = AtomicU64::new(0);
    let runs = Mutex::new(Vec::new());
    let failures = Mutex::new(Vec::new());
    let workers = thread::available_parallelism().map_or(2, |n| n.get());
    thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                let Some(&seed) = seeds.get(i) else { break };
                match World::new(make(seed)).run() {
                    Ok(r) => runs.lock().unwrap().push(r),
                    Err(v) => failures.lock().unwrap().push((seed, v)),
                }
            });
        }
    });
    let runs = runs.into_inner().unwrap();
    let mut failures = failures.into_inner().unwrap();
    failures.sort_by_key(|(seed, _)| *seed);
    Outcome {
        ids: runs.iter().map(|r| r.ids).sum(),
        runs,
        failures,
    }
}

/// A seed's scenario with relays and the relay faults turned up.
fn relayed(seed: u64, ids: u64) -> Scenario {
    let mut s = Scenario::from_seed(seed, ids);
    s.relays = 2 + (seed % 2) as usize;
    s.faults.relay_restart = 1_500;
    s.faults.relay_evict = 1_000;
    s.faults.relay_split = 1_500;
    s.faults.freeze = 1_500;
    s.faults.floor = 2_000;
    s.faults.authority_restore = 1_000;
    s.faults.relays_off = 500;
    s
}

#[test]
fn relays_never_duplicate_and_admin_acts_reach_them() {
    let seeds = env("RANGEID_SIM_RELAY_SEEDS", 120);
    let started = std::time::Instant::now();
    let o = run_many((0..seeds).collect(), |seed| relayed(seed, 8_000));
    println!(
        "relays: {seeds} seeds, {} IDs checked, {} sub-grants ({} replayed), {} relay restarts, {} evictions, \
         {} split instances, {} restores of the namespace object, {} revocations obeyed ({} lost), \
         {} freezes, floors and relays off acknowledged (longest wait {} ms), relays turned off {} times \
         ({} relay requests refused), {} IDs relays abandoned, \
         relay answers {} exhausted / {} frozen / {} unavailable, {} report batches, in {:.1?}",
        o.ids,
        o.sum(|r| r.sub_grants),
        o.sum(|r| r.sub_replays),
        o.sum(|r| r.relay_restarts),
        o.sum(|r| r.relay_evictions),
        o.sum(|r| r.relay_splits),
        o.sum(|r| r.restores),
        o.sum(|r| r.revocations),
        o.sum(|r| r.revocations_lost),
        o.sum(|r| r.acts_acked),
        o.max(|r| r.act_wait_max),
        o.sum(|r| r.relays_turned_off),
        o.sum(|r| r.relay_refusals),
        o.sum(|r| r.relay_abandoned),
        o.sum(|r| r.relay_exhausted),
        o.sum(|r| r.relay_frozen),
        o.sum(|r| r.relay_unavailable),
        o.sum(|r| r.report_batches),
        started.elapsed()
    );
    if let Some((seed, v)) = o.failures.first() {
        panic!(
            "{} seed(s) failed; first: seed {seed}: {v}",
            o.failures.len()
        );
    }
    for (what, n) in [
        ("sub-grants", o.sum(|r| r.sub_grants)),
        ("sub-grant replays", o.sum(|r| r.sub_replays)),
        ("relay restarts", o.sum(|r| r.relay_restarts)),
        ("relay evictions", o.sum(|r| r.relay_evictions)),
        ("split instances", o.sum(|r| r.relay_splits)),
        ("restores", o.sum(|r| r.restores)),
        ("revocations", o.sum(|r| r.revocations)),
        ("lost revocations", o.sum(|r| r.revocations_lost)),
        ("acknowledged acts", o.sum(|r| r.acts_acked)),
        ("relays turned off", o.sum(|r| r.relays_turned_off)),
        ("relay requests refused", o.sum(|r| r.relay_refusals)),
        ("relay answers exhausted", o.sum(|r| r.relay_exhausted)),
        ("relay answers frozen", o.sum(|r| r.relay_frozen)),
        ("duplicated replies", o.sum(|r| r.duplicated)),
        ("dropped messages", o.sum(|r| r.dropped)),
    ] {
        assert!(n > 0, "no {what}: the run proves nothing about them");
    }
}

/// Runs 200 seeds with `bug` and returns the failures.
fn with_bug(bug: RelayBug, tune: impl Fn(&mut Scenario) + Sync) -> Vec<(u64, Violation)> {
    let o = run_many((0..200).collect(), |seed| {
        let mut s = relayed(seed, 5_000);
        s.relay_bug = bug;
        tune(&mut s);
        s
    });
    let caught = o.failures.len();
    match o.failures.first() {
        Some((seed, v)) => println!("{bug:?}: {caught} of 200 seeds caught, e.g. seed {seed}: {v}"),
        None => println!("{bug:?}: 0 of 200 seeds caught"),
    }
    o.failures
}

#[test]
fn catches_a_relay_that_keeps_its_cursor_across_a_restart() {
    let failures = with_bug(RelayBug::KeepsCursor, |s| s.faults.relay_restart = 5_000);
    assert!(failures.len() >= 50, "only {} seeds caught", failures.len());
    assert!(failures.iter().any(|(_, v)| matches!(
        v,
        Violation::OverlappingSubGrants { .. } | Violation::Duplicate { .. }
    )));
}

#[test]
fn catches_a_relay_that_reuses_its_incarnation() {
    let failures = with_bug(RelayBug::ReusesIncarnation, |s| {
        s.faults.relay_restart = 5_000;
        s.faults.drop_reply = 200_000;
    });
    assert!(failures.len() >= 20, "only {} seeds caught", failures.len());
}

#[test]
fn catches_a_relay_that_ignores_revocations_and_its_lease() {
    let failures = with_bug(RelayBug::IgnoresLease, |s| {
        s.faults.freeze = 6_000;
        s.faults.floor = 10_000;
    });
    assert!(failures.len() >= 20, "only {} seeds caught", failures.len());
    assert!(failures
        .iter()
        .all(|(_, v)| matches!(v, Violation::StaleAfterAct { .. })));
}

/// No relay can be reached to revoke it: every act waits out the leases.
/// Replies are often slow and lost, so a relay's root grants arrive long
/// after their requests were first sent; a relay that timed its lease
/// from a grant's arrival instead of its request's first send would
/// serve past the object's wait.
#[test]
fn acts_wait_out_relays_that_cannot_be_reached() {
    let o = run_many((0..200).collect(), |seed| {
        let mut s = relayed(seed, 60_000);
        s.faults.revoke_lost = 1_000_000;
        s.faults.slow_reply = 300_000;
        s.faults.drop_reply = 200_000;
        s.faults.freeze = 3_000;
        s.faults.floor = 5_000;
        // Relay ranges that outlive their lease, so its end matters.
        s.ns_max_count = 100_000;
        s.relay_min_range = 20_000;
        s
    });
    println!(
        "unreachable relays: 200 seeds, {} IDs, {} acts acknowledged by waiting (longest {} ms), {} revocations lost",
        o.ids,
        o.sum(|r| r.acts_acked),
        o.max(|r| r.act_wait_max),
        o.sum(|r| r.revocations_lost)
    );
    if let Some((seed, v)) = o.failures.first() {
        panic!(
            "{} seed(s) failed; first: seed {seed}: {v}",
            o.failures.len()
        );
    }
    assert_eq!(o.sum(|r| r.revocations), 0);
    assert!(o.sum(|r| r.acts_acked) > 100);
}
