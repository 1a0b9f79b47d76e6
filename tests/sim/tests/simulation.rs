//! The deterministic simulation: at least 1,000 seeds and 10 million checked
//! IDs by default, under every fault the world injects.
//!
//! `RANGEID_SIM_SEEDS` (default 1000) and `RANGEID_SIM_IDS` (IDs per seed,
//! default 12000) scale it; `RANGEID_SIM_SEED=n` replays one seed. A
//! failure names its seed and the command that replays it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;

use rangeid_sim::{
    run_seed, Bug, DriverBug, Faults, Report, Scenario, Violation, World, RECOVERY_MS,
};

fn env(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a whole number, got {v:?}")),
        Err(_) => default,
    }
}

/// Runs `seeds` in parallel; returns the summed report and the seeds that
/// failed, lowest first.
fn run_many(
    seeds: Vec<u64>,
    make: impl Fn(u64) -> Scenario + Sync,
) -> (Report, u64, Vec<(u64, Violation)>) {
    let next = AtomicU64::new(0);
    let total = Mutex::new((Report::default(), 0u64));
    let failures = Mutex::new(Vec::new());
    let workers = thread::available_parallelism().map_or(2, |n| n.get());
    thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                let Some(&seed) = seeds.get(i) else { break };
                match World::new(make(seed)).run() {
                    Ok(r) => {
                        let mut t = total.lock().unwrap();
                        add(&mut t.0, &r);
                        t.1 += u64::from(r.exhausted);
                    }
                    Err(v) => failures.lock().unwrap().push((seed, v)),
                }
            });
        }
    });
    let (report, exhausted) = total.into_inner().unwrap();
    let mut failures = failures.into_inner().unwrap();
    failures.sort_by_key(|(seed, _)| *seed);
    (report, exhausted, failures)
}

fn add(t: &mut Report, r: &Report) {
    t.ids += r.ids;
    t.grants += r.grants;
    t.millis += r.millis;
    t.requests += r.requests;
    t.retries += r.retries;
    t.max_attempt = t.max_attempt.max(r.max_attempt);
    t.cancelled += r.cancelled;
    t.stale_ignored += r.stale_ignored;
    t.mangled += r.mangled;
    t.replays_installed += r.replays_installed;
    t.duplicates_ignored += r.duplicates_ignored;
    t.grants_refused += r.grants_refused;
    t.dropped += r.dropped;
    t.duplicated += r.duplicated;
    t.restarts += r.restarts;
    t.pauses += r.pauses;
    t.authority_restarts += r.authority_restarts;
    t.restores += r.restores;
    t.fence_raises += r.fence_raises;
    t.fence_forwards += r.fence_forwards;
    t.fence_skipped += r.fence_skipped;
    t.witness_refusals += r.witness_refusals;
    t.witness_restores += r.witness_restores;
    t.witness_behinds += r.witness_behinds;
    t.restores_deferred += r.restores_deferred;
    t.witness_replies_lost += r.witness_replies_lost;
    t.abandoned += r.abandoned;
    t.failed_generators += r.failed_generators;
    t.exact_batches += r.exact_batches;
    t.exact_batches_waited += r.exact_batches_waited;
    t.proxy_refusals += r.proxy_refusals;
    t.token_refusals += r.token_refusals;
    t.blocks += r.blocks;
    t.unblocks += r.unblocks;
    t.stuck_blocked += r.stuck_blocked;
    t.preclaims += r.preclaims;
    t.insider_grants += r.insider_grants;
    t.throttled += r.throttled;
    t.ledger_grants += r.ledger_grants;
    t.ledger_rows += r.ledger_rows;
    t.sub_grants += r.sub_grants;
    t.sub_replays += r.sub_replays;
    t.relay_restarts += r.relay_restarts;
    t.relay_evictions += r.relay_evictions;
    t.relay_splits += r.relay_splits;
    t.revocations += r.revocations;
    t.revocations_lost += r.revocations_lost;
    t.acts_acked += r.acts_acked;
    t.relays_turned_off += r.relays_turned_off;
    t.relay_refusals += r.relay_refusals;
    t.act_wait_max = t.act_wait_max.max(r.act_wait_max);
    t.relay_abandoned += r.relay_abandoned;
    t.relay_exhausted += r.relay_exhausted;
    t.relay_frozen += r.relay_frozen;
    t.relay_unavailable += r.relay_unavailable;
    t.report_batches += r.report_batches;
    t.reported += r.reported;
    t.shelf_ids += r.shelf_ids;
    t.standby_swaps += r.standby_swaps;
    t.kept_lends += r.kept_lends;
    t.tail_ids += r.tail_ids;
    t.shelf_waits += r.shelf_waits;
}

/// The relays' part of a summed report, as one line.
fn relay_line(t: &Report) -> String {
    format!(
        "{} sub-grants ({} replayed), {} relay restarts, {} evictions, {} split instances, \
         {} revocations obeyed ({} lost), {} freezes, floors and relays off acknowledged (longest wait {} ms), \
         relays turned off {} times ({} relay requests refused), \
         {} IDs relays abandoned, relay answers: {} exhausted, {} frozen, {} unavailable; \
         {} report batches of {} sub-grants",
        t.sub_grants,
        t.sub_replays,
        t.relay_restarts,
        t.relay_evictions,
        t.relay_splits,
        t.revocations,
        t.revocations_lost,
        t.acts_acked,
        t.act_wait_max,
        t.relays_turned_off,
        t.relay_refusals,
        t.relay_abandoned,
        t.relay_exhausted,
        t.relay_frozen,
        t.relay_unavailable,
        t.report_batches,
        t.reported
    )
}

#[test]
fn no_id_is_issued_twice_under_faults() {
    let ids = env("RANGEID_SIM_IDS", 12_000);
    let seeds: Vec<u64> = match std::env::var("RANGEID_SIM_SEED") {
        Ok(one) => vec![one
            .parse()
            .expect("RANGEID_SIM_SEED must be a whole number")],
        Err(_) => (0..env("RANGEID_SIM_SEEDS", 1_000)).collect(),
    };
    let n = seeds.len() as u64;
    let started = std::time::Instant::now();
    let (t, exhausted, failures) = run_many(seeds, |seed| Scenario::from_seed(seed, ids));
    println!(
        "simulation: {n} seeds, {} IDs checked, {} grants, {} requests ({} retries), \
         {} dropped, {} duplicated, {} mangled, {} attempts cancelled, {} stale failures ignored, \
         {} generator restarts, {} pauses, {} authority restarts, {} restores to an older copy \
         ({} found the witness ahead), {} restores of the witness ({} found behind and raised back), \
         {} restores held back a check-in, {} witness answers lost after the write, \
         {} fence raises, {} IDs skipped by starts, {} answers 503 for want of the witness, \
         {} replays installed, {} duplicate grants ignored, {} foreign grants refused, \
         {} exact batches ({} waited for a range), \
         {} requests refused by a blocking proxy, {} by a late token renewal, {} generator blocks ({} ended), \
         {} namespaces exhausted, {} IDs abandoned, {} next requests an insider posted first, \
         {} insider grants, {} answers 429, {} grants kept in {} ledger rows, in {:.1?}",
        t.ids,
        t.grants,
        t.requests,
        t.retries,
        t.dropped,
        t.duplicated,
        t.mangled,
        t.cancelled,
        t.stale_ignored,
        t.restarts,
        t.pauses,
        t.authority_restarts,
        t.restores,
        t.fence_forwards,
        t.witness_restores,
        t.witness_behinds,
        t.restores_deferred,
        t.witness_replies_lost,
        t.fence_raises,
        t.fence_skipped,
        t.witness_refusals,
        t.replays_installed,
        t.duplicates_ignored,
        t.grants_refused,
        t.exact_batches,
        t.exact_batches_waited,
        t.proxy_refusals,
        t.token_refusals,
        t.blocks,
        t.unblocks,
        exhausted,
        t.abandoned,
        t.preclaims,
        t.insider_grants,
        t.throttled,
        t.ledger_grants,
        t.ledger_rows,
        started.elapsed()
    );
    println!("relays: {}", relay_line(&t));
    println!(
        "as the Rust client: {} IDs issued from two blocks and in batches, {} moves to the standby block, \
         {} blocks lent while the other held IDs (lend_keeping), {} IDs of sealed tails handed to batches, \
         {} callers served after waiting",
        t.shelf_ids, t.standby_swaps, t.kept_lends, t.tail_ids, t.shelf_waits
    );
    if let Some((seed, violation)) = failures.first() {
        panic!(
            "{} seed(s) failed; first: seed {seed}: {violation}\n\
             replay with: RANGEID_SIM_SEED={seed} RANGEID_SIM_IDS={ids} cargo test -p rangeid-sim --test simulation",
            failures.len()
        );
    }
    assert_eq!(
        t.failed_generators, 0,
        "a correct system never refuses a generator for good"
    );
    assert_eq!(
        t.stuck_blocked, 0,
        "every blocked generator recovers by itself once the fault is gone"
    );
    if n >= 1_000 && ids >= 12_000 {
        assert!(
            t.ids >= 10_000_000,
            "the default run must check 10 million IDs, checked {}",
            t.ids
        );
        // The faults really happened, so the verdict means something.
        for (what, count) in [
            ("dropped messages", t.dropped),
            ("duplicated replies", t.duplicated),
            ("mangled replies", t.mangled),
            ("cancelled attempts", t.cancelled),
            ("stale failures ignored", t.stale_ignored),
            ("generator restarts", t.restarts),
            ("pauses", t.pauses),
            ("authority restarts", t.authority_restarts),
            ("restores", t.restores),
            ("starts behind the witness", t.fence_forwards),
            ("restores of the witness", t.witness_restores),
            ("witnesses raised back", t.witness_behinds),
            (
                "witness answers lost after the write",
                t.witness_replies_lost,
            ),
            ("fence raises", t.fence_raises),
            ("answers for want of the witness", t.witness_refusals),
            ("retries", t.retries),
            ("replays installed", t.replays_installed),
            ("duplicate grants ignored", t.duplicates_ignored),
            ("foreign grants refused", t.grants_refused),
            ("exact batches that waited", t.exact_batches_waited),
            ("refusals by a blocking proxy", t.proxy_refusals),
            ("tokens refused even fresh", t.token_refusals),
            ("generator blocks", t.blocks),
            ("ended blocks", t.unblocks),
            ("exhausted namespaces", exhausted),
            ("next requests posted first by an insider", t.preclaims),
            ("insider grants", t.insider_grants),
            ("answers 429", t.throttled),
            ("sub-grants", t.sub_grants),
            ("sub-grant replays", t.sub_replays),
            ("relay restarts", t.relay_restarts),
            ("relay evictions", t.relay_evictions),
            ("split relay instances", t.relay_splits),
            ("revocations obeyed", t.revocations),
            ("acts acknowledged while relays ran", t.acts_acked),
            ("IDs issued as the Rust client does", t.shelf_ids),
            ("moves to the standby block", t.standby_swaps),
            ("blocks lent while the other held IDs", t.kept_lends),
            ("IDs of sealed tails handed to batches", t.tail_ids),
            ("shelf callers served after waiting", t.shelf_waits),
        ] {
            assert!(count > 0, "no {what} in the default run");
        }
        assert!(
            t.ledger_rows < t.ledger_grants,
            "spans kept {} grants in {} rows",
            t.ledger_grants,
            t.ledger_rows
        );
    }
}

#[test]
fn a_seed_replays_exactly() {
    for seed in [3, 4, 5, 6] {
        assert_eq!(run_seed(seed, 5_000), run_seed(seed, 5_000));
    }
}

/// The checker must be able to fail: an authority that replies before its
/// grant is durable loses grants in restarts and hands them out again.
#[test]
fn catches_an_authority_that_replies_before_commit() {
    let (_, _, failures) = run_many((0..200).collect(), |seed| {
        let mut s = Scenario::from_seed(seed, 5_000);
        s.bug = Bug::ReplyBeforeCommit;
        s.faults.authority_restart = 20_000;
        s
    });
    assert!(
        !failures.is_empty(),
        "200 seeds with the bug and no violation found"
    );
    println!(
        "reply-before-commit: {} of 200 seeds caught, e.g. seed {}: {}",
        failures.len(),
        failures[0].0,
        failures[0].1
    );
}

/// And without the fence, an authority restored to an older copy grants
/// again what it granted after the copy.
#[test]
fn catches_a_restore_without_the_fence() {
    let (_, _, failures) = run_many((0..200).collect(), |seed| {
        let mut s = Scenario::from_seed(seed, 5_000);
        s.bug = Bug::NoFence;
        s.faults.authority_restore = 20_000;
        s
    });
    assert!(
        failures.len() >= 100,
        "200 seeds restored without the fence and only {} violations found",
        failures.len()
    );
    println!(
        "restore without the fence: {} of 200 seeds caught, e.g. seed {}: {}",
        failures.len(),
        failures[0].0,
        failures[0].1
    );
}

/// And an authority that keys requests without their owner (as before a
/// request's identity included its `sub`) lets an insider who posts a
/// generator's next request id first stop that generator for good.
#[test]
fn catches_requests_keyed_without_their_owner() {
    let (_, _, failures) = run_many((0..200).collect(), |seed| {
        let mut s = Scenario::from_seed(seed, 5_000);
        s.bug = Bug::KeyWithoutOwner;
        s.insider = true;
        // Generators that post to the authority itself, where the insider is.
        s.relays = 0;
        s
    });
    assert!(
        failures.len() >= 100,
        "200 seeds with an insider and keys without owners, only {} violations found",
        failures.len()
    );
    println!(
        "requests keyed without their owner: {} of 200 seeds caught, e.g. seed {}: {}",
        failures.len(),
        failures[0].0,
        failures[0].1
    );
}

/// And a fence that checks only one way: a witness restored to an older
/// copy stays there, and a later restore of the namespace object alone
/// (a check-in apart, as the docs require) grants again.
#[test]
fn catches_a_witness_left_behind() {
    let (t, _, failures) = run_many((0..200).collect(), |seed| {
        let mut s = Scenario::from_seed(seed, 5_000);
        s.bug = Bug::NoRaiseBack;
        s.faults.witness_restore = 20_000;
        s.faults.authority_restore = 20_000;
        s
    });
    assert!(
        failures.len() >= 20,
        "200 seeds with the witness left behind and only {} violations found ({} witness restores)",
        failures.len(),
        t.witness_restores
    );
    println!(
        "witness left behind: {} of 200 seeds caught, e.g. seed {}: {}",
        failures.len(),
        failures[0].0,
        failures[0].1
    );
    // The same faults with the fence checking both ways: none.
    let (t, _, failures) = run_many((0..200).collect(), |seed| {
        let mut s = Scenario::from_seed(seed, 5_000);
        s.faults.witness_restore = 20_000;
        s.faults.authority_restore = 20_000;
        s
    });
    assert!(failures.is_empty(), "{failures:?}");
    assert!(t.witness_behinds > 0 && t.restores > 0);
}

/// A raise whose answer is lost after the witness wrote it must not read as
/// a rollback at the next start: the object records the mark it asks for
/// first. Without that record, the checker sees false rollbacks.
#[test]
fn catches_a_lost_witness_answer_taken_for_a_rollback() {
    let (_, _, failures) = run_many((0..200).collect(), |seed| {
        let mut s = Scenario::from_seed(seed, 5_000);
        s.bug = Bug::ForgetsWhatItAsked;
        s.faults.witness_reply_lost = 300_000;
        s.faults.authority_restart = 5_000;
        s
    });
    assert!(
        failures
            .iter()
            .any(|(_, v)| matches!(v, Violation::FalseRollback { .. })),
        "no false rollback found: {failures:?}"
    );
    println!(
        "lost witness answer without the asked mark: {} of 200 seeds report a false rollback",
        failures.len()
    );
}

/// And a restart that keeps its incarnation gets its old ranges replayed.
#[test]
fn catches_a_restart_that_reuses_its_incarnation() {
    let (_, _, failures) = run_many((0..200).collect(), |seed| {
        let mut s = Scenario::from_seed(seed, 5_000);
        s.reuse_incarnation = true;
        s.faults.restart = 5_000;
        s.faults.drop_reply = 200_000;
        s
    });
    assert!(
        !failures.is_empty(),
        "200 seeds with reused incarnations and no violation found"
    );
    println!(
        "reused incarnation: {} of 200 seeds caught, e.g. seed {}: {}",
        failures.len(),
        failures[0].0,
        failures[0].1
    );
}

/// What kinds of violation the failures were, as one line.
fn kinds(failures: &[(u64, Violation)]) -> String {
    let mut counts = std::collections::BTreeMap::new();
    for (_, v) in failures {
        let name = format!("{v:?}");
        let name = name.split([' ', '{']).next().unwrap_or("").to_owned();
        *counts.entry(name).or_insert(0) += 1;
    }
    counts
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Generators that issue as the Rust client does keep a standby block and
/// hand their blocks' tails to a batch: a driver that, after a batch,
/// puts back the tails whole (not what the batch left) issues the IDs it
/// handed to the batch's caller again (the checker sees the cursor go back
/// over them, or the duplicate).
#[test]
fn catches_a_driver_that_reuses_a_tail_it_handed_back() {
    let (_, _, failures) = run_many((0..100).collect(), |seed| {
        let mut s = Scenario::from_seed(seed, 5_000);
        s.driver_bug = DriverBug::ReusesTail;
        s
    });
    let reissued = failures
        .iter()
        .filter(|(_, v)| {
            matches!(
                v,
                Violation::Duplicate { .. } | Violation::CursorReset { .. }
            )
        })
        .count();
    assert!(
        reissued >= 50,
        "100 seeds with a driver that reuses handed-back tails, {reissued} IDs issued again: {}",
        kinds(&failures)
    );
    println!(
        "reused tail: {} of 100 seeds caught ({}), e.g. seed {}: {}",
        failures.len(),
        kinds(&failures),
        failures[0].0,
        failures[0].1
    );
}

/// And a driver that refills with `lend`, not `lend_keeping`: the engine
/// counts the standby block as returned to callers while it still issues,
/// so what it reports as issued is not what callers were given (and a
/// batch takes its tails out of order).
#[test]
fn catches_a_driver_that_lends_without_keeping_its_standby_block() {
    let (_, _, failures) = run_many((0..100).collect(), |seed| {
        let mut s = Scenario::from_seed(seed, 5_000);
        s.driver_bug = DriverBug::LendsWithoutKeeping;
        s
    });
    let miscounted = failures
        .iter()
        .filter(|(_, v)| matches!(v, Violation::Miscounted { .. }))
        .count();
    assert!(
        failures.len() >= 50 && miscounted >= 10,
        "100 seeds with a driver that lends without keeping, {} caught: {}",
        failures.len(),
        kinds(&failures)
    );
    println!(
        "lend without keeping: {} of 100 seeds caught ({}), e.g. seed {}: {}",
        failures.len(),
        kinds(&failures),
        failures[0].0,
        failures[0].1
    );
}

/// A slow authority must not be starved by its own client (the retry storm
/// of issue 7). Every answer takes longer than the first backoffs and
/// usually arrives inside the request timeout; some are `503`s with a
/// `Retry-After`; the driver reports every cancelled attempt's abort as a
/// failure. Failures of superseded attempts must change nothing: were they
/// to reschedule the attempt in flight, a retry would go out while the
/// attempt before it is still running (the world fails the run with
/// `PrematureRetry`), and answers would be cancelled before they arrive.
#[test]
fn a_slow_authority_is_not_starved_by_retries() {
    let (t, _, failures) = run_many((0..200).collect(), |seed| {
        let mut s = Scenario::from_seed(seed, 3_000);
        s.faults = Faults {
            report_cancel: 1_000_000,
            late_after_cancel: 0,
            overload: 50_000,
            ..Faults::none()
        };
        s.reply_delay_ms = (15, 22);
        // Ranges as large as the generators ask for: a namespace with a
        // tiny maxCount multiplies the requests (and so the runs of 503s
        // one request can meet) without bearing on the retry storm.
        s.ns_max_count = 400;
        // The retry storm is the client's, against the authority itself.
        s.relays = 0;
        s
    });
    assert!(failures.is_empty(), "{failures:?}");
    let sends_per_grant = t.requests as f64 / t.grants as f64;
    println!(
        "slow authority: 200 seeds, {} IDs in {} simulated ms, {} grants, {} sends ({sends_per_grant:.2} per grant), \
         {} retries, {} stale failures ignored, most attempts for one request: {}",
        t.ids,
        t.millis,
        t.grants,
        t.requests,
        t.retries,
        t.stale_ignored,
        t.max_attempt + 1
    );
    assert!(
        t.stale_ignored > 0,
        "no superseded attempt failed: the drill proves nothing"
    );
    assert!(
        sends_per_grant < 2.0,
        "{sends_per_grant:.2} sends per grant"
    );
    assert!(
        t.max_attempt < 6,
        "a request was sent {} times",
        t.max_attempt + 1
    );
}

/// Clients outlive a bad moment: a proxy that answers every request with
/// its own 403 page for a while, and tokens the authority refuses even
/// fresh, block generators (never stop them); they back off while blocked
/// and recover by themselves once the fault is gone, with no duplicate.
#[test]
fn blocked_generators_back_off_and_recover_by_themselves() {
    let (t, _, failures) = run_many((0..200).collect(), |seed| {
        let mut s = Scenario::from_seed(seed, 20_000);
        s.faults = Faults {
            proxy_block: 500,
            token_refused: 150,
            drop_reply: 20_000,
            duplicate_reply: 20_000,
            ..Faults::none()
        };
        s.ns_max_count = 400;
        // Long enough that backing off shows: 0.5 to 1.5 s, against
        // ordinary retries 2 to 40 ms apart and a blocked backoff that
        // reaches 640 ms.
        s.bad_moment_ms = (500, 1_500);
        s
    });
    assert!(failures.is_empty(), "{failures:?}");
    println!(
        "bad moments: 200 seeds, {} IDs, {} requests refused by a blocking proxy, {} tokens refused even fresh, \
         {} generator blocks, {} ended, {} requests in all ({} retries), {} simulated ms",
        t.ids, t.proxy_refusals, t.token_refusals, t.blocks, t.unblocks, t.requests, t.retries, t.millis
    );
    assert!(t.blocks > 100 && t.proxy_refusals > 0 && t.token_refusals > 0);
    assert_eq!(
        t.failed_generators, 0,
        "a block never stops a generator for good"
    );
    assert_eq!(
        t.stuck_blocked, 0,
        "a generator still blocked {RECOVERY_MS} ms after the last fault"
    );
    // Backoff: a blocked generator probes a few times per block (about 6
    // in a second: 40, 80, 160, 320 and 640 ms apart, jittered), not at
    // the pace of its ordinary retries (2 to 40 ms apart: 25 or more).
    let refused = t.proxy_refusals + t.token_refusals;
    let per_block = refused as f64 / t.blocks as f64;
    println!("{per_block:.1} refused requests per block");
    assert!(
        per_block < 10.0,
        "{per_block:.1} refused requests per block"
    );
}
