//! Validated names: `Namespace`, `Incarnation`, `RequestId` and `Region`,
//! and `CodeText`, an unknown error code's text as a client keeps it.
//!
//! Each is checked once, where it enters the system, and is then carried as
//! a type that cannot hold an invalid value. They live on the stack.

use core::fmt;

/// Why a string is not a valid name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// The string is empty.
    Empty,
    /// Longer than the name allows.
    TooLong {
        /// The most bytes allowed.
        max: usize,
    },
    /// A byte outside the allowed set, at this byte offset.
    BadChar {
        /// Byte offset of the first offending byte.
        at: usize,
    },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Empty => f.write_str("empty"),
            NameError::TooLong { max } => write!(f, "longer than {max} characters"),
            NameError::BadChar { at } => write!(f, "character not allowed at byte {at}"),
        }
    }
}

impl core::error::Error for NameError {}

/// A short ASCII string of at most `N` bytes, already validated.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Label<const N: usize> {
    len: u8,
    bytes: [u8; N],
}

impl<const N: usize> Label<N> {
    fn checked(
        s: &str,
        first_ok: fn(u8) -> bool,
        rest_ok: fn(u8) -> bool,
    ) -> Result<Self, NameError> {
        let b = s.as_bytes();
        if b.is_empty() {
            return Err(NameError::Empty);
        }
        if b.len() > N {
            return Err(NameError::TooLong { max: N });
        }
        if !first_ok(b[0]) {
            return Err(NameError::BadChar { at: 0 });
        }
        if let Some(at) = b.iter().skip(1).position(|&c| !rest_ok(c)) {
            return Err(NameError::BadChar { at: at + 1 });
        }
        let mut bytes = [0u8; N];
        bytes[..b.len()].copy_from_slice(b);
        Ok(Label {
            len: b.len() as u8,
            bytes,
        })
    }

    fn as_str(&self) -> &str {
        // Only validated ASCII is ever stored.
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

fn namespace_first(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn namespace_rest(c: u8) -> bool {
    namespace_first(c) || matches!(c, b'.' | b'_' | b'-')
}

fn code_first(c: u8) -> bool {
    c.is_ascii_lowercase()
}

fn code_rest(c: u8) -> bool {
    code_first(c) || c.is_ascii_digit() || c == b'_'
}

fn region_char(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-'
}

fn token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b':' | b'-')
}

macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident, $max:expr, $first:expr, $rest:expr, $pattern:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(Label<$max>);

        impl $name {
            /// The most bytes a value may have.
            pub const MAX_LEN: usize = $max;

            /// The rule [`Self::new`] checks, as an anchored regular expression
            /// that means the same in JSON Schema (ECMA-262), JavaScript and the
            /// `regex` crate. The OpenAPI document, the admin page and the CLI
            /// take or are checked against this one text; a test proves it
            /// accepts exactly what [`Self::new`] accepts.
            pub const PATTERN: &'static str = $pattern;

            /// Validates `s`.
            pub fn new(s: &str) -> Result<Self, NameError> {
                Label::checked(s, $first, $rest).map($name)
            }

            /// The validated text.
            pub fn as_str(&self) -> &str {
                self.0.as_str()
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(self.as_str(), f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl core::str::FromStr for $name {
            type Err = NameError;
            fn from_str(s: &str) -> Result<Self, NameError> {
                $name::new(s)
            }
        }

        #[cfg(feature = "serde")]
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        #[cfg(feature = "serde")]
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str(concat!("a valid ", stringify!($name)))
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::new(v).map_err(|e| {
                            E::custom(format_args!(concat!("invalid ", stringify!($name), ": {}"), e))
                        })
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

name_type!(
    /// A namespace name: `^[a-z0-9][a-z0-9._-]{0,62}$`. IDs are unique within
    /// one namespace only; values from different namespaces may repeat.
    Namespace, 63, namespace_first, namespace_rest, "^[a-z0-9][a-z0-9._-]{0,62}$"
);

name_type!(
    /// One start of a generator process: 1 to 64 of `[A-Za-z0-9._:-]`. A
    /// restarted process takes a new incarnation and never reuses the old
    /// one's ranges.
    Incarnation, 64, token_char, token_char, "^[A-Za-z0-9._:-]{1,64}$"
);

name_type!(
    /// Identifies one range request within an incarnation: 1 to 64 of
    /// `[A-Za-z0-9._:-]`. Repeating it repeats the request, never a new one.
    RequestId, 64, token_char, token_char, "^[A-Za-z0-9._:-]{1,64}$"
);

name_type!(
    /// A relay region: which of a namespace's relays (one per namespace and
    /// region) serves a generator, `^[a-z0-9-]{1,32}$`. By default the
    /// region a request arrives in; a generator may name one
    /// (`POST /v1/ranges?region=...`).
    Region, 32, region_char, region_char, "^[a-z0-9-]{1,32}$"
);

name_type!(
    /// An error code's text as an authority wrote it, for codes a client does
    /// not know: `^[a-z][a-z0-9_]{0,47}$`.
    CodeText, 48, code_first, code_rest, "^[a-z][a-z0-9_]{0,47}$"
);

impl CodeText {
    /// `s` if it is a valid code text, else `unknown_code`: a code this
    /// client cannot even hold is still classified by its HTTP status.
    pub fn lossy(s: &str) -> CodeText {
        CodeText::new(s).unwrap_or_else(|_| {
            CodeText(
                Label::checked("unknown_code", code_first, code_rest).unwrap_or(Label {
                    len: 0,
                    bytes: [0; 48],
                }),
            )
        })
    }
}

impl Incarnation {
    /// An incarnation made from 16 random bytes, as 32 lowercase hex digits.
    ///
    /// Uniqueness is only as good as the caller's randomness.
    pub fn from_random(bytes: [u8; 16]) -> Incarnation {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = [0u8; 32];
        for (i, b) in bytes.iter().enumerate() {
            text[2 * i] = HEX[usize::from(b >> 4)];
            text[2 * i + 1] = HEX[usize::from(b & 15)];
        }
        let mut label = [0u8; 64];
        label[..32].copy_from_slice(&text);
        Incarnation(Label {
            len: 32,
            bytes: label,
        })
    }
}

impl RequestId {
    /// The request id the lease engine uses for its `n`-th request: `r<n>`.
    pub fn numbered(n: u64) -> RequestId {
        let digits = crate::decimal::Decimal::new(n);
        let d = digits.as_str().as_bytes();
        let mut bytes = [0u8; 64];
        bytes[0] = b'r';
        bytes[1..=d.len()].copy_from_slice(d);
        RequestId(Label {
            len: (d.len() + 1) as u8,
            bytes,
        })
    }

    /// The `n` of an id made by [`RequestId::numbered`], if it is one.
    pub fn number(&self) -> Option<u64> {
        self.as_str()
            .strip_prefix('r')
            .and_then(|d| crate::decimal::parse_u64(d).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_rules() {
        assert!(Namespace::new("orders").is_ok());
        assert!(Namespace::new("0rders.eu-west_1").is_ok());
        assert_eq!(Namespace::new(""), Err(NameError::Empty));
        assert_eq!(Namespace::new("Orders"), Err(NameError::BadChar { at: 0 }));
        assert_eq!(Namespace::new("-orders"), Err(NameError::BadChar { at: 0 }));
        assert_eq!(Namespace::new("or ders"), Err(NameError::BadChar { at: 2 }));
        assert_eq!(
            Namespace::new("orders/x"),
            Err(NameError::BadChar { at: 6 })
        );
        assert_eq!(Namespace::new("ordérs"), Err(NameError::BadChar { at: 3 }));
        let long = "a".repeat(63);
        assert_eq!(Namespace::new(&long).map(|n| n.as_str().len()), Ok(63));
        assert_eq!(
            Namespace::new(&"a".repeat(64)),
            Err(NameError::TooLong { max: 63 })
        );
    }

    /// Every string up to two characters long over all ASCII and a few
    /// non-ASCII characters, the lengths around the limit, and pseudo-random
    /// strings: `pattern` and the validator agree on each.
    fn pattern_agrees(pattern: &str, accepts: impl Fn(&str) -> bool, max: usize) {
        use std::string::String;
        let re = regex::Regex::new(pattern).expect("the pattern compiles");
        let verdicts = |s: &str| {
            assert_eq!(
                re.is_match(s),
                accepts(s),
                "{pattern} and the validator disagree on {s:?}"
            );
        };
        let mut alphabet: std::vec::Vec<char> = (0u8..128).map(char::from).collect();
        alphabet.extend(['é', 'ß', 'Σ', '\u{1F600}', '\u{FEFF}', '\u{212A}']);
        verdicts("");
        for a in &alphabet {
            verdicts(a.encode_utf8(&mut [0; 4]));
            for b in &alphabet {
                verdicts(&std::format!("{a}{b}"));
            }
        }
        let run = |c: char, n: usize| std::iter::repeat_n(c, n).collect::<String>();
        for len in [max - 1, max, max + 1, max + 2] {
            for c in ['a', 'A', '0', '-', '.', '_', ':'] {
                verdicts(&run(c, len));
                verdicts(&std::format!("a{}", run(c, len - 1)));
                verdicts(&std::format!("{}\n", run('a', len - 1)));
            }
        }
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % (max as u64 + 3)) as usize;
            let s: String = (0..len)
                .map(|i| {
                    let pick = ((state >> (i % 8 * 8)) as usize).wrapping_add(i * 31);
                    alphabet[pick % alphabet.len()]
                })
                .collect();
            verdicts(&s);
        }
    }

    #[test]
    fn patterns_say_what_the_validators_check() {
        pattern_agrees(
            Namespace::PATTERN,
            |s| Namespace::new(s).is_ok(),
            Namespace::MAX_LEN,
        );
        pattern_agrees(
            Incarnation::PATTERN,
            |s| Incarnation::new(s).is_ok(),
            Incarnation::MAX_LEN,
        );
        pattern_agrees(
            RequestId::PATTERN,
            |s| RequestId::new(s).is_ok(),
            RequestId::MAX_LEN,
        );
        pattern_agrees(Region::PATTERN, |s| Region::new(s).is_ok(), Region::MAX_LEN);
        pattern_agrees(
            CodeText::PATTERN,
            |s| CodeText::new(s).is_ok(),
            CodeText::MAX_LEN,
        );
    }

    #[test]
    fn token_rules() {
        assert!(Incarnation::new("A9").is_ok());
        assert!(RequestId::new("r17").is_ok());
        assert!(RequestId::new("a.b_c:d-E").is_ok());
        assert!(RequestId::new(&"x".repeat(64)).is_ok());
        assert_eq!(
            RequestId::new(&"x".repeat(65)),
            Err(NameError::TooLong { max: 64 })
        );
        assert_eq!(Incarnation::new(""), Err(NameError::Empty));
        assert_eq!(Incarnation::new("a b"), Err(NameError::BadChar { at: 1 }));
        assert_eq!(Incarnation::new("a/b"), Err(NameError::BadChar { at: 1 }));
    }

    #[test]
    fn incarnation_from_random_is_hex() {
        let inc = Incarnation::from_random([0xAB; 16]);
        assert_eq!(inc.as_str(), "ab".repeat(16));
        assert_eq!(Incarnation::new(inc.as_str()), Ok(inc));
    }

    #[test]
    fn numbered_request_ids_round_trip() {
        for n in [0, 1, 17, u64::MAX] {
            let id = RequestId::numbered(n);
            assert_eq!(id.number(), Some(n));
            assert_eq!(RequestId::new(id.as_str()), Ok(id));
        }
        assert_eq!(RequestId::new("r017").unwrap().number(), None);
        assert_eq!(RequestId::new("q1").unwrap().number(), None);
    }
}
