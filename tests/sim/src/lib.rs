//! rangeid-sim: a deterministic simulation of rangeid.
//!
//! Many [`rangeid_core::Lease`] engines and one authority (the core decision
//! over an in-memory committed store) exchange messages over a seeded,
//! faulty network. A [`checker::Checker`] records every committed grant and
//! every issued ID and fails on any duplicate, any ID outside a range
//! committed to its incarnation, or any cursor reset. A seed replays a run
//! exactly.
//!
//! - [`rng`]: the seeded random source.
//! - [`authority`]: the simulated authority (committed and staged writes).
//! - [`checker`]: the uniqueness checker.
//! - [`shelf`]: the Rust client's two blocks, for generators that issue
//!   as it does.
//! - [`world`]: generators, network, faults and the run loop.
//! - [`capacity`]: the seed's workload (500 generators at 20,000 IDs/s)
//!   under rangeid's sizing and two others, for `make bench`.

pub mod authority;
pub mod capacity;
pub mod chart;
pub mod checker;
pub mod relays;
pub mod rng;
pub mod shelf;
pub mod world;

pub use authority::Bug;
pub use checker::Violation;
pub use relays::RelayBug;
pub use shelf::DriverBug;
pub use world::{Faults, Report, Scenario, World, RECOVERY_MS};

/// Runs the scenario for `seed` with `target_ids` IDs.
pub fn run_seed(seed: u64, target_ids: u64) -> Result<Report, Violation> {
    World::new(Scenario::from_seed(seed, target_ids)).run()
}
