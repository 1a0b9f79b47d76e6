//! The demo: one traced simulation run, then many seeds, printing what the
//! lease engines and the authority did and what the checker verified.
//!
//! `cargo run -p rangeid-sim --release -- [--seed N] [--seeds N] [--ids N]`

use std::process::ExitCode;

use rangeid_sim::{Scenario, World};

fn main() -> ExitCode {
    let mut seed = 7u64;
    let mut seeds = 1_000u64;
    let mut ids = 12_000u64;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().and_then(|v| v.parse::<u64>().ok());
        match (flag.as_str(), value) {
            ("--seed", Some(v)) => seed = v,
            ("--seeds", Some(v)) => seeds = v,
            ("--ids", Some(v)) if v > 0 => ids = v,
            _ => {
                eprintln!("usage: rangeid-sim [--seed N] [--seeds N] [--ids N]");
                return ExitCode::from(2);
            }
        }
    }

    let scenario = Scenario::from_seed(seed, ids);
    println!("rangeid simulation demo (the local authority and npm client come with later issues)");
    println!(
        "seed {seed}: {} generators, namespace [{}, {}], lost/duplicated/reordered messages, crashes, pauses, authority restarts\n",
        scenario.generators, scenario.first, scenario.max
    );
    let (outcome, trace) = World::new(scenario).run_traced();
    let head = std::env::var("RANGEID_SIM_TRACE_ALL")
        .map_or(40, |_| trace.len())
        .min(trace.len());
    for line in &trace[..head] {
        println!("{line}");
    }
    if trace.len() > head {
        println!("   ... {} more events ...", trace.len() - head);
    }
    match outcome {
        Ok(r) => println!(
            "\nseed {seed}: {} IDs issued and checked unique, {} grants, {} requests ({} retries), {} replays installed once, \
             {} duplicate grants ignored, {} foreign grants refused, {} IDs abandoned, {} ms simulated{}",
            r.ids, r.grants, r.requests, r.retries, r.replays_installed, r.duplicates_ignored, r.grants_refused,
            r.abandoned, r.millis, if r.exhausted { ", namespace exhausted (no wrap)" } else { "" }
        ),
        Err(v) => {
            println!("\nseed {seed}: VIOLATION: {v}");
            return ExitCode::FAILURE;
        }
    }

    let started = std::time::Instant::now();
    let mut total = 0u64;
    let mut grants = 0u64;
    for s in 0..seeds {
        match rangeid_sim::run_seed(s, ids) {
            Ok(r) => {
                total += r.ids;
                grants += r.grants;
            }
            Err(v) => {
                println!("seed {s}: VIOLATION: {v}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!(
        "{seeds} more seeds: {total} IDs from {grants} grants, no duplicate, none outside its incarnation's ranges, no cursor reset ({:.1?})",
        started.elapsed()
    );
    ExitCode::SUCCESS
}
