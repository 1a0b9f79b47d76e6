//! Strict decimal codec for ID-valued fields.
//!
//! IDs cross every JSON and JS boundary as decimal strings, because a JS
//! number is exact only up to 2^53 - 1. Formatting never allocates. Parsing
//! accepts exactly what formatting produces: ASCII digits, no sign, no
//! spaces, no leading zeros (except the single digit `0`), no overflow.

use core::fmt;

/// Why a string is not a canonical decimal value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecimalError {
    /// The string is empty.
    Empty,
    /// A byte other than an ASCII digit, at this byte offset.
    NotADigit {
        /// Byte offset of the first offending byte.
        at: usize,
    },
    /// More than one digit and the first is `0`.
    LeadingZero,
    /// The value is larger than the field allows.
    Overflow,
}

impl DecimalError {
    /// A short, stable description for error messages.
    pub const fn describe(self) -> &'static str {
        match self {
            DecimalError::Empty => "empty string",
            DecimalError::NotADigit { .. } => "not a decimal digit",
            DecimalError::LeadingZero => "leading zero",
            DecimalError::Overflow => "value too large",
        }
    }
}

impl fmt::Display for DecimalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecimalError::NotADigit { at } => write!(f, "not a decimal digit at byte {at}"),
            other => f.write_str(other.describe()),
        }
    }
}

impl core::error::Error for DecimalError {}

/// Parses a canonical decimal string no greater than `max`.
pub fn parse_bounded(s: &str, max: u128) -> Result<u128, DecimalError> {
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return Err(DecimalError::Empty);
    }
    if let Some(at) = bytes.iter().position(|b| !b.is_ascii_digit()) {
        return Err(DecimalError::NotADigit { at });
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return Err(DecimalError::LeadingZero);
    }
    let mut value: u128 = 0;
    for &b in bytes {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u128::from(b - b'0')))
            .ok_or(DecimalError::Overflow)?;
        if value > max {
            return Err(DecimalError::Overflow);
        }
    }
    Ok(value)
}

/// Parses a canonical decimal `u64` (an ID, a count or a remaining amount).
pub fn parse_u64(s: &str) -> Result<u64, DecimalError> {
    // The bound makes the narrowing exact.
    parse_bounded(s, u128::from(u64::MAX)).map(|v| v as u64)
}

/// Parses an exclusive upper bound: a canonical decimal in `0..=2^64`.
///
/// Exclusive bounds (`end`, `next`) reach 2^64 when a range holds the last
/// ID, `u64::MAX`.
pub fn parse_bound(s: &str) -> Result<u128, DecimalError> {
    parse_bounded(s, crate::range::BOUND_LIMIT)
}

/// A formatted decimal number held on the stack.
///
/// Holds any `u128`, so both IDs and exclusive bounds format without
/// allocation.
#[derive(Clone, Copy)]
pub struct Decimal {
    buf: [u8; 39],
    from: u8,
}

impl Decimal {
    /// Formats `value` in canonical decimal.
    pub fn new(value: impl Into<u128>) -> Self {
        let value: u128 = value.into();
        let mut buf = [0u8; 39];
        let mut from = buf.len();
        // Values that fit a u64 (every ID) are formatted with u64 division:
        // cheaper, and a client that formats only those carries no 128-bit
        // division at all.
        match u64::try_from(value) {
            Ok(mut v) => loop {
                from -= 1;
                buf[from] = b'0' + (v % 10) as u8;
                v /= 10;
                if v == 0 {
                    break;
                }
            },
            Err(_) => {
                let mut v = value;
                loop {
                    from -= 1;
                    buf[from] = b'0' + (v % 10) as u8;
                    v /= 10;
                    if v == 0 {
                        break;
                    }
                }
            }
        }
        Decimal {
            buf,
            from: from as u8,
        }
    }

    /// The digits.
    pub fn as_str(&self) -> &str {
        let digits = &self.buf[usize::from(self.from)..];
        // Only ASCII digits are ever written.
        core::str::from_utf8(digits).unwrap_or("")
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_53: u64 = 1 << 53;

    #[test]
    fn formats_edges() {
        assert_eq!(Decimal::new(0u64).as_str(), "0");
        assert_eq!(Decimal::new(TWO_53 - 1).as_str(), "9007199254740991");
        assert_eq!(Decimal::new(TWO_53).as_str(), "9007199254740992");
        assert_eq!(Decimal::new(1u64 << 63).as_str(), "9223372036854775808");
        assert_eq!(Decimal::new(u64::MAX).as_str(), "18446744073709551615");
        assert_eq!(Decimal::new(1u128 << 64).as_str(), "18446744073709551616");
        assert_eq!(
            Decimal::new(u128::MAX).as_str(),
            "340282366920938463463374607431768211455"
        );
    }

    #[test]
    fn parses_edges() {
        for v in [0, 1, TWO_53 - 1, TWO_53, TWO_53 + 1, 1 << 63, u64::MAX] {
            assert_eq!(parse_u64(Decimal::new(v).as_str()), Ok(v));
        }
        assert_eq!(parse_bound("18446744073709551616"), Ok(1u128 << 64));
    }

    #[test]
    fn rejects_non_canonical() {
        assert_eq!(parse_u64(""), Err(DecimalError::Empty));
        assert_eq!(parse_u64("01"), Err(DecimalError::LeadingZero));
        assert_eq!(parse_u64("00"), Err(DecimalError::LeadingZero));
        assert_eq!(parse_u64("+1"), Err(DecimalError::NotADigit { at: 0 }));
        assert_eq!(parse_u64("-1"), Err(DecimalError::NotADigit { at: 0 }));
        assert_eq!(parse_u64(" 1"), Err(DecimalError::NotADigit { at: 0 }));
        assert_eq!(parse_u64("1 "), Err(DecimalError::NotADigit { at: 1 }));
        assert_eq!(parse_u64("1e3"), Err(DecimalError::NotADigit { at: 1 }));
        assert_eq!(parse_u64("1.0"), Err(DecimalError::NotADigit { at: 1 }));
        assert_eq!(parse_u64("١"), Err(DecimalError::NotADigit { at: 0 }));
        assert_eq!(
            parse_u64("18446744073709551616"),
            Err(DecimalError::Overflow)
        );
        assert_eq!(
            parse_bound("18446744073709551617"),
            Err(DecimalError::Overflow)
        );
        assert_eq!(
            parse_u64("99999999999999999999999999999999999999999999"),
            Err(DecimalError::Overflow)
        );
    }

    #[test]
    fn round_trips_every_power_of_ten_neighbour() {
        let mut p: u64 = 1;
        loop {
            for v in [p - 1, p, p + 1] {
                assert_eq!(parse_u64(Decimal::new(v).as_str()), Ok(v));
            }
            match p.checked_mul(10) {
                Some(next) => p = next,
                None => break,
            }
        }
    }
}
