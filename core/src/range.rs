//! `Range`: a non-empty half-open interval `[start, end)` of positive IDs.
//!
//! IDs are `u64` values from 1 to `u64::MAX`; 0 is never issued. An
//! exclusive bound can therefore be 2^64, so bounds are `u128` wherever they
//! appear (`end`, a namespace's `next`). All arithmetic is checked.

use core::fmt;

/// The largest exclusive bound: one past `u64::MAX`.
pub const BOUND_LIMIT: u128 = 1 << 64;

/// Why a pair of bounds is not a `Range`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RangeError {
    /// `start` is 0, which is never an ID.
    ZeroStart,
    /// `end <= start`: the interval would be empty or inverted.
    Empty,
    /// `end` is past 2^64, or `start + count` overflows it.
    PastLimit,
}

impl RangeError {
    /// A short, stable description for error messages.
    pub const fn describe(self) -> &'static str {
        match self {
            RangeError::ZeroStart => "a range cannot start at 0",
            RangeError::Empty => "a range must have end > start",
            RangeError::PastLimit => "a range cannot end past 2^64",
        }
    }
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

impl core::error::Error for RangeError {}

/// A non-empty half-open interval of IDs, `[start, end)`.
///
/// Guaranteed: `1 <= start < end <= 2^64`, so `count()` is at least 1 and
/// every value in it is a valid `u64` ID.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Range {
    start: u64,
    last: u64,
}

impl Range {
    /// The range `[start, end)`.
    pub const fn new(start: u64, end: u128) -> Result<Range, RangeError> {
        if start == 0 {
            return Err(RangeError::ZeroStart);
        }
        if end > BOUND_LIMIT {
            return Err(RangeError::PastLimit);
        }
        if end <= start as u128 {
            return Err(RangeError::Empty);
        }
        Ok(Range {
            start,
            last: (end - 1) as u64,
        })
    }

    /// The range of `count` IDs beginning at `start`.
    pub const fn with_count(start: u64, count: u64) -> Result<Range, RangeError> {
        Range::new(start, start as u128 + count as u128)
    }

    /// The first ID in the range.
    pub const fn start(&self) -> u64 {
        self.start
    }

    /// The last ID in the range (inclusive).
    pub const fn last(&self) -> u64 {
        self.last
    }

    /// The exclusive end: one past `last()`, at most 2^64.
    pub const fn end(&self) -> u128 {
        self.last as u128 + 1
    }

    /// How many IDs the range holds; at least 1.
    pub const fn count(&self) -> u64 {
        // start >= 1, so last - start + 1 <= u64::MAX.
        self.last - self.start + 1
    }

    /// Whether `id` lies in the range.
    pub const fn contains(&self, id: u64) -> bool {
        self.start <= id && id <= self.last
    }

    /// Whether the two ranges share any ID.
    pub const fn overlaps(&self, other: &Range) -> bool {
        self.start <= other.last && other.start <= self.last
    }
}

impl fmt::Debug for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}, {})", self.start, self.end())
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_zero_empty_inverted_and_oversized() {
        assert_eq!(Range::new(0, 5), Err(RangeError::ZeroStart));
        assert_eq!(Range::new(5, 5), Err(RangeError::Empty));
        assert_eq!(Range::new(5, 4), Err(RangeError::Empty));
        assert_eq!(Range::new(5, BOUND_LIMIT + 1), Err(RangeError::PastLimit));
        assert_eq!(Range::with_count(5, 0), Err(RangeError::Empty));
        assert_eq!(Range::with_count(u64::MAX, 2), Err(RangeError::PastLimit));
    }

    #[test]
    fn holds_the_last_id() {
        let r = Range::with_count(u64::MAX, 1).unwrap();
        assert_eq!(
            (r.start(), r.last(), r.end(), r.count()),
            (u64::MAX, u64::MAX, BOUND_LIMIT, 1)
        );
        let all = Range::new(1, BOUND_LIMIT).unwrap();
        assert_eq!(all.count(), u64::MAX);
        assert!(all.contains(u64::MAX) && all.contains(1) && !all.contains(0));
    }

    #[test]
    fn seed_example() {
        let r = Range::new(1001, 11001).unwrap();
        assert_eq!((r.start(), r.last(), r.count()), (1001, 11000, 10000));
        let next = Range::new(11001, 21001).unwrap();
        assert!(!r.overlaps(&next));
        assert!(r.overlaps(&Range::new(11000, 11002).unwrap()));
    }

    #[test]
    fn at_two_to_the_53() {
        let edge = 1u64 << 53;
        let r = Range::new(edge - 1, u128::from(edge) + 1).unwrap();
        assert_eq!(r.count(), 2);
        assert!(r.contains(edge - 1) && r.contains(edge) && !r.contains(edge + 1));
    }
}
