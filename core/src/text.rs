//! `Text<N>`: a short string of at most `N` bytes kept without allocating
//! (an authority's message, a token's subject, an unknown option's name).

use core::fmt;

/// A short text of at most `N` bytes kept without allocating, cut at a
/// character boundary.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text<const N: usize> {
    len: u8,
    bytes: [u8; N],
}

impl<const N: usize> Text<N> {
    /// The empty text.
    pub const EMPTY: Text<N> = Text {
        len: 0,
        bytes: [0; N],
    };

    /// `text`, cut to at most `N` (and 255) bytes at a character boundary.
    pub fn new(text: &str) -> Text<N> {
        let mut end = text.len().min(N).min(255);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0u8; N];
        bytes[..end].copy_from_slice(&text.as_bytes()[..end]);
        Text {
            len: end as u8,
            bytes,
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // Only whole characters of a `str` are ever stored.
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl<const N: usize> Default for Text<N> {
    fn default() -> Text<N> {
        Text::EMPTY
    }
}

impl<const N: usize> fmt::Debug for Text<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl<const N: usize> fmt::Display for Text<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
