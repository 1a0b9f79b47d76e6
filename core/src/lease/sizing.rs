//! How big the next range is and when to ask for it: slow start until the
//! consumption rate can be trusted, then sizing from that rate, always
//! within what the namespace allows.
//!
//! Slow start. A new generator's first range is `min_range_size`. Each further
//! range is at most twice the larger of the IDs returned so far and the
//! previous range, and everything the generator has reserved (installed,
//! lent, in flight, and every range before) stays within
//! `max(2 * min_range_size, 4 * returned)`, plus a batch's own size when a
//! caller asked for one. So a generator that returns N IDs and stops has
//! reserved at most `max(2 * min_range_size, 4 * N)`.
//!
//! Trust. The rate is the lower of the rates over the last two windows of
//! [`WINDOW_MS`], so it is sustained consumption, not a burst: a burst
//! within a millisecond followed by quiet reads as the quiet. It is trusted
//! once two windows ([`TRUST_MS`]) have passed with at least `min_range_size`
//! IDs returned in them. From then on a range lasts `target_lifetime_ms` at
//! that rate, and the refill mark keeps `prefetch_lead_ms` of IDs ahead, so
//! a steady caller never waits.
//!
//! The namespace. Every grant says the namespace's `maxCount` and what
//! remains; no request asks for more than `maxCount`, nor for more than
//! [`REMAINING_SHARE`] of what remains (unless that is below `min_range_size`,
//! or a caller waits for a batch that needs more), so starts and restarts
//! cannot eat a small namespace.

use super::config::LeaseConfig;

/// One measuring window, in ms.
pub const WINDOW_MS: u64 = 500;

/// The shortest time over which a rate is first trusted, in ms.
pub const TRUST_MS: u64 = 2 * WINDOW_MS;

/// No request asks for more than remaining / this (0.1 %), unless that is
/// below `min_range_size`.
pub const REMAINING_SHARE: u64 = 1_000;

/// What the namespace said about itself with its last grant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Namespace {
    pub max_count: Option<u64>,
    pub remaining: Option<u64>,
}

/// The rate and what the sizing remembers.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sizing {
    /// The consumption rate in IDs per second; 0 until trusted.
    pub rate: u64,
    trusted: bool,
    window_at: u64,
    window_issued: u64,
    // The last whole window: its rate and how many IDs it saw.
    previous: Option<(u64, u64)>,
    /// The size of the last range asked for.
    pub last_range: u64,
    /// The largest batch a caller asked for and did not get whole.
    pub batch: u64,
    /// The namespace's limits, from the last grant.
    pub namespace: Namespace,
}

impl Sizing {
    pub fn new(now: u64) -> Sizing {
        Sizing {
            rate: 0,
            trusted: false,
            window_at: now,
            window_issued: 0,
            previous: None,
            last_range: 0,
            batch: 0,
            namespace: Namespace::default(),
        }
    }

    /// Samples the rate from `issued` (IDs returned so far) at `now`.
    pub fn sample(&mut self, now: u64, issued: u64, min_range_size: u64) {
        let elapsed = now.saturating_sub(self.window_at);
        if elapsed < WINDOW_MS {
            return;
        }
        let delta = issued.saturating_sub(self.window_issued);
        let current = delta.saturating_mul(1000) / elapsed;
        if let Some((previous, seen)) = self.previous {
            if self.trusted || seen.saturating_add(delta) >= min_range_size {
                self.trusted = true;
                self.rate = previous.min(current);
            }
        }
        self.previous = Some((current, delta));
        self.window_at = now;
        self.window_issued = issued;
    }

    /// IDs to keep on hand or on their way: the prefetch lead's worth at the
    /// measured rate, and never less than half the last range asked for.
    pub fn low_water(&self, config: &LeaseConfig) -> u64 {
        let by_rate = self.rate.saturating_mul(config.prefetch_lead_ms) / 1000;
        by_rate.max(self.last_range / 2).max(1)
    }

    /// The next request's size, or `None` when slow start allows none yet.
    ///
    /// `returned` is what callers got so far, `reserved` what this engine
    /// asked for in all (granted or on its way), `exhausted_remaining` what
    /// an exhaustion refusal said is left; a `starved` engine (nothing on
    /// hand or on its way) always gets at least `min_range_size`.
    pub fn next_count(
        &self,
        config: &LeaseConfig,
        returned: u64,
        reserved: u64,
        exhausted_remaining: Option<u64>,
        starved: bool,
    ) -> Option<u64> {
        let base = if self.trusted {
            self.rate.saturating_mul(config.target_lifetime_ms) / 1000
        } else if self.last_range == 0 {
            config.min_range_size
        } else {
            returned.max(self.last_range).saturating_mul(2)
        };
        let mut count = base.clamp(config.min_range_size, config.max_range_size);
        if !self.trusted {
            let budget = config
                .min_range_size
                .saturating_mul(2)
                .max(returned.saturating_mul(4))
                .saturating_sub(reserved);
            count = count.min(budget);
            if starved {
                count = count.max(config.min_range_size);
            }
        }
        // A caller who asked for a batch gets a range that holds it.
        count = count.max(self.batch.min(config.max_range_size));
        let limit = self.namespace_limit(config, exhausted_remaining);
        count = count.min(limit);
        (count > 0).then_some(count)
    }

    /// The most one request may ask for in this namespace now.
    fn namespace_limit(&self, config: &LeaseConfig, exhausted_remaining: Option<u64>) -> u64 {
        let mut limit = u64::MAX;
        if let Some(max_count) = self.namespace.max_count {
            limit = limit.min(max_count);
        }
        if let Some(remaining) = self.namespace.remaining {
            // A caller waiting for a batch may take more than a start's
            // share: those IDs are used, not hoarded.
            let share = (remaining / REMAINING_SHARE)
                .max(config.min_range_size)
                .max(self.batch);
            limit = limit.min(share);
            limit = limit.min(remaining.max(1));
        }
        if let Some(r) = exhausted_remaining.filter(|&r| r > 0) {
            limit = limit.min(r);
        }
        limit
    }
}
