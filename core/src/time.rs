//! Time in core: [`Instant`], a point on the clock a generator's driver
//! reads, in milliseconds.
//!
//! Core reads no clock; every input that depends on time carries `now`.
//! The client's engine ([`crate::lease::Lease`]) takes and gives instants
//! as `Instant` (`now`, its next deadline, the end of a block), so an
//! instant is never mistaken for a duration. Durations stay `u64`
//! milliseconds, always named `*_ms` (`request_timeout_ms`,
//! `retry_after_ms`, ...). The driver's clock need only be monotonic and
//! start anywhere: the JS package's `performance.now()`, the simulation's
//! virtual clock. A binding converts once where a JS number becomes an
//! `Instant` ([`Instant::from_ms`]) and back ([`Instant::as_ms`]); JS and
//! the simulation keep plain numbers.
//!
//! The authority's decisions take `now: i64`, another clock: wall-clock
//! milliseconds since the Unix epoch (spans' commit times, per-minute
//! buckets), which are stored and shown as dates.

/// A point on a driver's monotonic clock, in milliseconds from wherever
/// that clock starts. Only ever compared with instants of the same clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Instant {
    /// The clock's start.
    pub const ZERO: Instant = Instant(0);

    /// The instant `ms` milliseconds after the clock's start.
    pub const fn from_ms(ms: u64) -> Instant {
        Instant(ms)
    }

    /// Milliseconds since the clock's start.
    pub const fn as_ms(self) -> u64 {
        self.0
    }

    /// `ms` milliseconds later, stopping at the clock's end.
    pub const fn saturating_add_ms(self, ms: u64) -> Instant {
        Instant(self.0.saturating_add(ms))
    }

    /// Milliseconds from `earlier` to this instant; 0 if `earlier` is
    /// later.
    pub const fn ms_since(self, earlier: Instant) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}
