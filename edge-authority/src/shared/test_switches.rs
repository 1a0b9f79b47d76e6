//! Test-only switches, compiled only with the `test-switches` feature (the
//! test build, `scripts/build.sh --test-switches` into `build-test/`). The
//! production Worker has neither this module nor the variables' names, so
//! no stray variable can turn the fence off there.
//!
//! - `RANGEID_TEST_ONLY_GRANT_RETENTION_SECONDS`: a grant retention of any
//!   whole number of seconds (the production setting refuses under an
//!   hour), for the pruning drills.
//! - `RANGEID_TEST_ONLY_WITNESS_DOWN=1`: every fence object fails, for the
//!   drill that grants stop (503) rather than pass the fence.
//! - `RANGEID_TEST_ONLY_WITNESS_RAISES=N`: a fence object acknowledges N
//!   raises, then fails, for the drill that grants straddling the mark
//!   stop there.
//! - `RANGEID_TEST_ONLY_FENCE_OFF=1`: every raise marks the whole
//!   namespace, for the benchmark's baseline without the fence's round
//!   trips.
//! - `RANGEID_TEST_ONLY_BENCH=<variant>`: the grant path with one stage
//!   skipped or repeated ([`Bench`]), for the benchmark's per-stage
//!   breakdown (`scripts/bench.mjs`); no answer of such a Worker is right.
//! - `RANGEID_TEST_ONLY_RELAY_FAULT=down|deaf` ([`RelayFault`]): every
//!   request to a relay object fails (`down`: the front's fallback to the
//!   namespace object), or only the namespace object's revocations do
//!   (`deaf`: an admin act waits the relays' lease out).

use crate::shared::settings;

/// The variables this module reads, every one of them.
pub const NAMES: [&str; 6] = [
    GRANT_RETENTION_SECONDS,
    WITNESS_DOWN,
    WITNESS_RAISES,
    FENCE_OFF,
    BENCH,
    RELAY_FAULT,
];
/// A grant retention in seconds, overriding the production setting.
pub const GRANT_RETENTION_SECONDS: &str = "RANGEID_TEST_ONLY_GRANT_RETENTION_SECONDS";
/// `1`: the witness cannot be reached.
pub const WITNESS_DOWN: &str = "RANGEID_TEST_ONLY_WITNESS_DOWN";
/// How many raises each witness instance acknowledges before failing.
pub const WITNESS_RAISES: &str = "RANGEID_TEST_ONLY_WITNESS_RAISES";
/// `1`: every raise marks the whole namespace.
pub const FENCE_OFF: &str = "RANGEID_TEST_ONLY_FENCE_OFF";
/// A [`Bench`] variant's name.
pub const BENCH: &str = "RANGEID_TEST_ONLY_BENCH";
/// A [`RelayFault`]'s name.
pub const RELAY_FAULT: &str = "RANGEID_TEST_ONLY_RELAY_FAULT";

/// How a relay object fails on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelayFault {
    /// Every request to it fails, as an unreachable object's does.
    Down,
    /// It takes and serves grants, but every revocation fails.
    Deaf,
}

impl RelayFault {
    /// The fault named by `text` (the value of [`RELAY_FAULT`]), if any.
    pub fn parse(text: Option<&str>) -> Option<RelayFault> {
        match text?.trim() {
            "down" => Some(RelayFault::Down),
            "deaf" => Some(RelayFault::Deaf),
            _ => None,
        }
    }
}

/// How many more times a repeated stage runs per grant ([`Bench`]).
pub const REPEATS: usize = 8;

/// A benchmark variant of the grant path: one stage skipped, or repeated
/// [`REPEATS`] more times (a stage that cannot be left out costs the
/// difference divided by [`REPEATS`]). Compared with the unchanged path in
/// the same run, each gives that stage's share of a grant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bench {
    /// One commit per grant: each grant decided and written alone, as
    /// before grants shared commits.
    Unbatched,
    /// The front answers `200 {}` instead of calling the object.
    NoCall,
    /// The object answers `200 {}` once it has read the request: no SQL,
    /// commit, fence or after-grant work.
    NoStorage,
    /// A batch's writes are rolled back instead of committed (all the SQL
    /// work, no commit).
    NoCommit,
    /// No after-grant work (the fence refill check, the alarm check).
    NoAfter,
    /// The token verified [`REPEATS`] more times.
    Token,
    /// The object request encoded and decoded, and the object's reply
    /// decoded, [`REPEATS`] more times.
    Json,
    /// The minute bucket (the grant metrics' counters) written
    /// [`REPEATS`] more times.
    Metrics,
}

impl Bench {
    /// The variant named by `text` (the value of [`BENCH`]), if any.
    pub fn parse(text: Option<&str>) -> Option<Bench> {
        Some(match text?.trim() {
            "unbatched" => Bench::Unbatched,
            "no-call" => Bench::NoCall,
            "no-storage" => Bench::NoStorage,
            "no-commit" => Bench::NoCommit,
            "no-after" => Bench::NoAfter,
            "token" => Bench::Token,
            "json" => Bench::Json,
            "metrics" => Bench::Metrics,
            _ => return None,
        })
    }
}

/// The retention override, when its variable is set and not empty; any
/// whole number of seconds from 1.
pub fn grant_retention(text: Option<&str>) -> Option<Result<u64, String>> {
    text.filter(|v| !v.trim().is_empty())
        .map(|v| settings::seconds(GRANT_RETENTION_SECONDS, v))
}

/// How a fence object (the witness) misbehaves on purpose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Witness {
    /// Every request fails.
    pub down: bool,
    /// Raises acknowledged before every request fails, when limited.
    pub raises_left: Option<u64>,
    /// Every raise marks the whole namespace.
    pub marks_all: bool,
}

impl Witness {
    /// The switches from the environment, `var` reading one variable.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Witness {
        Witness {
            down: var(WITNESS_DOWN).as_deref() == Some("1"),
            raises_left: var(WITNESS_RAISES).and_then(|v| v.trim().parse().ok()),
            marks_all: var(FENCE_OFF).as_deref() == Some("1"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_read_their_variables() {
        assert_eq!(grant_retention(None), None);
        assert_eq!(grant_retention(Some("")), None);
        assert_eq!(grant_retention(Some("2")), Some(Ok(2)));
        assert!(grant_retention(Some("0")).unwrap().is_err());
        assert_eq!(RelayFault::parse(Some("down")), Some(RelayFault::Down));
        assert_eq!(RelayFault::parse(Some(" deaf ")), Some(RelayFault::Deaf));
        assert_eq!(RelayFault::parse(Some("off")), None);
        let none = Witness::from_env(|_| None);
        assert_eq!(none, Witness::default());
        let all =
            Witness::from_env(|name| Some(if name == WITNESS_RAISES { "4" } else { "1" }.into()));
        assert_eq!(
            all,
            Witness {
                down: true,
                raises_left: Some(4),
                marks_all: true
            }
        );
        assert!(NAMES.iter().all(|n| n.starts_with("RANGEID_TEST_ONLY_")));
        assert_eq!(Bench::parse(None), None);
        assert_eq!(Bench::parse(Some("nothing")), None);
        assert_eq!(Bench::parse(Some("no-commit")), Some(Bench::NoCommit));
        assert_eq!(Bench::parse(Some(" unbatched ")), Some(Bench::Unbatched));
    }
}
