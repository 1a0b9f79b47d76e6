//! The capacity workload runs (it is otherwise only run by `make bench`),
//! rangeid's steady state stays within the goal of 100 grants/s, and the
//! chart is drawn.

use rangeid_sim::capacity::{run, Policy, Workload};
use rangeid_sim::chart;

#[test]
fn the_seed_workload_needs_under_100_grants_per_second_and_draws() {
    let w = Workload::seed();
    let rangeid = run(&w, Policy::RangeId);
    let steady = rangeid.mean_grants(30, 60);
    assert!(
        steady <= 100.0,
        "rangeid asks {steady} grants/s in steady state"
    );
    assert!(rangeid.issued > 0 && rangeid.granted >= rangeid.issued);
    let fixed = run(&w, Policy::Fixed(10_000));
    assert!(
        fixed.mean_grants(30, 60) > steady * 10.0,
        "the baseline asks far more"
    );
    let path = std::env::temp_dir().join(format!("rangeid-capacity-{}.svg", std::process::id()));
    chart::write_svg(
        &path,
        &w,
        &[(Policy::RangeId, rangeid), (Policy::Fixed(10_000), fixed)],
    )
    .unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).ok();
    assert!(svg.contains("<svg") && svg.contains("rangeid") && svg.contains("fixed 10000"));
}
