//! `make bench`'s capacity picture: the seed's workload (500 generators at
//! 20,000 IDs/s, a 2x burst, a rolling restart) under rangeid's sizing, a
//! fixed 10,000-ID range and Leaf's doubling and halving. Prints grants/s
//! per phase, IDs abandoned and calls that waited; fails if rangeid's steady
//! state needs more than 100 grants/s.
//!
//! `cargo run -p rangeid-sim --release --bin capacity [-- --svg docs/capacity.svg]`
//! (`--svg` also draws the grants per second of each policy over time).

use std::process::ExitCode;

use rangeid_sim::capacity::{run, Policy, Workload};
use rangeid_sim::chart;

fn main() -> ExitCode {
    let w = Workload::seed();
    println!(
        "capacity: {} generators x {} IDs/s in {} ms batches, {} ms round trips, {} s; {}x burst {}-{} s; rolling restart {}-{} s",
        w.generators, w.rate, w.tick_ms, w.rtt_ms, w.seconds, w.burst.2, w.burst.0, w.burst.1, w.deploy.0, w.deploy.1
    );
    println!(
        "{:<26} {:>9} {:>9} {:>9} {:>9} {:>6} {:>14} {:>13} {:>7}",
        "policy",
        "warm 0-10",
        "steady",
        "burst",
        "restart",
        "peak",
        "IDs abandoned",
        "per start",
        "waits"
    );
    let args: Vec<String> = std::env::args().skip(1).collect();
    let svg = match args.as_slice() {
        [] => None,
        [flag, path] if flag == "--svg" => Some(std::path::PathBuf::from(path)),
        _ => {
            eprintln!("usage: capacity [--svg FILE]");
            return ExitCode::from(2);
        }
    };
    let mut rangeid_steady = f64::MAX;
    let mut runs = Vec::new();
    for policy in [Policy::RangeId, Policy::Fixed(10_000), Policy::Leaf(1_000)] {
        let o = run(&w, policy);
        let steady = o.mean_grants(30, 60);
        if policy == Policy::RangeId {
            rangeid_steady = steady;
        }
        println!(
            "{:<26} {:>9.0} {:>9.1} {:>9.1} {:>9.1} {:>6} {:>14} {:>13} {:>7}",
            policy.name(),
            o.mean_grants(0, 10),
            steady,
            o.mean_grants(w.burst.0 + 5, w.burst.1),
            o.mean_grants(w.deploy.0, w.deploy.1),
            o.peak_grants(),
            o.abandoned,
            o.abandoned / u128::from(o.starts),
            o.waits,
        );
        runs.push((policy, o));
    }
    println!("(grants/s: mean over the phase; steady is 30-60 s; waits: generator ticks that got fewer IDs than wanted)");
    if let Some(path) = svg {
        if let Err(e) = chart::write_svg(&path, &w, &runs) {
            eprintln!("capacity: could not draw {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("chart: {}", path.display());
    }
    if rangeid_steady > 100.0 {
        eprintln!("rangeid needs {rangeid_steady:.1} grants/s in steady state: above the 100 goal");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
