//! How big the next range is and when to ask for it: the consumption rate
//! and the refill mark.

use super::config::LeaseConfig;

/// The shortest interval over which the consumption rate is sampled.
const RATE_SAMPLE_MS: u64 = 50;

/// The rate and what the sizing remembers.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sizing {
    /// The consumption rate in IDs per second.
    pub rate: u64,
    sampled_at: u64,
    sampled_issued: u64,
    /// The size of the last range asked for.
    pub last_range: u64,
}

impl Sizing {
    pub fn new(now: u64) -> Sizing {
        Sizing {
            rate: 0,
            sampled_at: now,
            sampled_issued: 0,
            last_range: 0,
        }
    }

    /// Samples the rate from `issued` (IDs returned so far) at `now`.
    pub fn sample(&mut self, now: u64, issued: u64) {
        let elapsed = now.saturating_sub(self.sampled_at);
        let delta = issued.saturating_sub(self.sampled_issued);
        // Sample every RATE_SAMPLE_MS, or sooner when a whole range went by.
        let burst = elapsed > 0 && self.last_range > 0 && delta >= self.last_range;
        if elapsed < RATE_SAMPLE_MS && !burst {
            return;
        }
        let sample = delta.saturating_mul(1000) / elapsed.max(1);
        // Rise at once to a higher rate so a burst is served; decay gently.
        self.rate = if sample >= self.rate {
            sample
        } else {
            (self.rate / 4).saturating_mul(3).saturating_add(sample / 4)
        };
        self.sampled_at = now;
        self.sampled_issued = issued;
    }

    /// IDs to keep on hand or on their way: the prefetch lead's worth at the
    /// measured rate, and never less than half the last range asked for.
    pub fn low_water(&self, config: &LeaseConfig) -> u64 {
        let by_rate = self.rate.saturating_mul(config.prefetch_lead_ms) / 1000;
        by_rate.max(self.last_range / 2).max(1)
    }

    /// The next request's size: enough to last the target lifetime at the
    /// measured rate, within the configured bounds and what remains.
    pub fn next_count(&self, config: &LeaseConfig, known_remaining: Option<u64>) -> u64 {
        let wanted = if self.rate == 0 {
            config.min_count
        } else {
            self.rate.saturating_mul(config.target_lifetime_ms) / 1000
        };
        let count = wanted.clamp(config.min_count, config.max_count);
        match known_remaining {
            Some(r) if r > 0 => count.min(r),
            _ => count,
        }
    }
}
