//! `RelayTerms`: how long a root grant is on loan to a relay, on each
//! side's own clock.
//!
//! No two machines' clocks need agree. Each side measures a duration on its
//! own monotonic clock, and each clock's rate may be off true time by at
//! most [`CLOCK_DRIFT_PPM`]. A relay serves from a root grant only for
//! [`RelayTerms::serve_ms`] after it first sent the request behind it (so
//! before the root decided it); the root acknowledges an admin act only
//! [`RelayTerms::wait_ms`] after the last relay grant it decided before the
//! act (and after its own start). Both also allow [`CLOCK_STEP_MS`] for a
//! reading that lags or is coarse. With a lease of `L` ms in true time:
//! the relay stops by `send + serve_ms / (1 - drift) <= send + L`, and the
//! root acknowledges no sooner than `decided + wait_ms / (1 + drift) >=
//! decided + L`, and `send <= decided`.

use core::fmt;

/// The most a clock's rate may be off true time, in parts per million:
/// 1 %, a hundred times what an ordinary quartz clock drifts.
pub const CLOCK_DRIFT_PPM: u64 = 10_000;

/// A relay's lease when a namespace sets none: 10 s. An admin act waits at
/// most about this long for a relay it cannot reach.
pub const RELAY_LEASE_MS: u64 = 10_000;

/// How far a clock reading may lag true time when it is taken, or be
/// coarse: 10 ms. Both margins below allow for it once more.
pub const CLOCK_STEP_MS: u64 = 10;

/// The shortest lease: 100 ms, so the margins below leave most of it.
pub const MIN_RELAY_LEASE_MS: u64 = 100;

/// The longest lease: 10 minutes, the longest a client retries one
/// request ([`crate::lease::MAX_REQUEST_AGE_MS`]).
pub const MAX_RELAY_LEASE_MS: u64 = crate::lease::MAX_REQUEST_AGE_MS;

/// Why a lease is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TermsError {
    /// Outside [`MIN_RELAY_LEASE_MS`]..=[`MAX_RELAY_LEASE_MS`].
    LeaseOutOfBounds,
}

impl fmt::Display for TermsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a relay lease must be between {MIN_RELAY_LEASE_MS} and {MAX_RELAY_LEASE_MS} ms"
        )
    }
}

impl core::error::Error for TermsError {}

/// A relay lease of `lease_ms` (true time), as both sides measure it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelayTerms {
    lease_ms: u64,
}

impl RelayTerms {
    /// The default lease, [`RELAY_LEASE_MS`].
    pub const DEFAULT: RelayTerms = RelayTerms {
        lease_ms: RELAY_LEASE_MS,
    };

    /// A lease of `lease_ms`, checked.
    pub const fn new(lease_ms: u64) -> Result<RelayTerms, TermsError> {
        if lease_ms < MIN_RELAY_LEASE_MS || lease_ms > MAX_RELAY_LEASE_MS {
            return Err(TermsError::LeaseOutOfBounds);
        }
        Ok(RelayTerms { lease_ms })
    }

    /// The lease in true time.
    pub const fn lease_ms(&self) -> u64 {
        self.lease_ms
    }

    /// How long a relay serves from a root grant, on its own clock, from
    /// the first send of the request behind it: the lease less the drift
    /// (rounded down) and less [`CLOCK_STEP_MS`].
    pub const fn serve_ms(&self) -> u64 {
        self.lease_ms * (1_000_000 - CLOCK_DRIFT_PPM) / 1_000_000 - CLOCK_STEP_MS
    }

    /// How long the root waits, on its own clock, after the last relay
    /// grant it decided (or its own start) before it acknowledges an admin
    /// act: the lease plus the drift (rounded up) and [`CLOCK_STEP_MS`].
    pub const fn wait_ms(&self) -> u64 {
        (self.lease_ms * (1_000_000 + CLOCK_DRIFT_PPM)).div_ceil(1_000_000) + CLOCK_STEP_MS
    }
}

impl Default for RelayTerms {
    fn default() -> RelayTerms {
        RelayTerms::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_relay_stops_before_the_root_acknowledges_at_any_allowed_drift() {
        for lease in [MIN_RELAY_LEASE_MS, 200, RELAY_LEASE_MS, MAX_RELAY_LEASE_MS] {
            let t = RelayTerms::new(lease).unwrap();
            // Worst case: the relay's clock slow by the bound (its serve
            // window lasts longest in true time), the root's fast (its
            // wait is shortest), both measured in true ns.
            let relay_true =
                t.serve_ms() as u128 * 1_000_000_000 / (1_000_000 - CLOCK_DRIFT_PPM) as u128;
            let root_true =
                t.wait_ms() as u128 * 1_000_000_000 / (1_000_000 + CLOCK_DRIFT_PPM) as u128;
            assert!(
                relay_true <= root_true,
                "lease {lease}: {relay_true} > {root_true}"
            );
            assert!(t.serve_ms() < lease && t.wait_ms() > lease);
        }
        assert_eq!(RelayTerms::new(99), Err(TermsError::LeaseOutOfBounds));
        assert_eq!(
            RelayTerms::new(MAX_RELAY_LEASE_MS + 1),
            Err(TermsError::LeaseOutOfBounds)
        );
        assert_eq!(
            (
                RelayTerms::DEFAULT.serve_ms(),
                RelayTerms::DEFAULT.wait_ms()
            ),
            (9_890, 10_110)
        );
    }
}
