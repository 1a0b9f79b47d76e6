//! `Reply`: what a client makes of any HTTP answer to a range request, and
//! `Disposition`: what it does about it. Both sides' rules, once.
//!
//! [`Reply::from_http`] (feature `serde`) turns a status, a body and a
//! `Retry-After` into one of four things:
//!
//! - a [`GrantReply`] (200 with a readable grant);
//! - a [`Refused`] answer: a rangeid authority said no, with a code this
//!   version may or may not know;
//! - a [`Foreign`] refusal: a 4xx (but 408 and 429) that no rangeid
//!   authority wrote: a proxy's or a WAF's page, a wrong URL's 404;
//! - a [`Transient`] failure: no usable answer, so the same request is sent
//!   again under the same request id.
//!
//! Parsing is lenient where a newer authority may add things and strict
//! where a value matters: unknown fields are ignored (and fields of an
//! unexpected type, but the code), an unknown error code is kept as text
//! and classified by status (4xx final; 408, 429 and 5xx retried), and an
//! unreadable 200 is retried, because it may carry a committed grant that a
//! replay will return. A non-JSON 4xx (but 408 and 429) is [`Foreign`]: it
//! blocks the engine for a while ([`Disposition::Blocked`]), never for
//! good; a non-JSON 408, 429 or 5xx is retried. ID fields must still be
//! canonical decimal strings and `count` must equal `end - start`. Every
//! answer that is not a readable rangeid answer keeps an [`Excerpt`] of its
//! body, for the error a caller sees.

use core::fmt;

use crate::code::ErrorCode;
use crate::names::CodeText;
use crate::protocol::GrantReply;
pub use crate::text::Text;

/// The longest message kept from an answer, in bytes; longer ones are cut
/// at a character boundary.
pub const MESSAGE_MAX: usize = 240;

/// The authority's message, as a client keeps it.
pub type Message = Text<MESSAGE_MAX>;

/// The most bytes kept of a body that is not a rangeid answer.
pub const EXCERPT_MAX: usize = 160;

/// The first bytes of a body that is not a rangeid answer, as text: at
/// most [`EXCERPT_MAX`] bytes, invalid UTF-8 as U+FFFD, every run of
/// whitespace and control characters as one space, trimmed. What a caller
/// is shown of a proxy's page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Excerpt(Text<EXCERPT_MAX>);

impl Excerpt {
    /// The empty excerpt.
    pub const EMPTY: Excerpt = Excerpt(Text::EMPTY);

    /// The excerpt of `body`.
    pub fn of(body: &[u8]) -> Excerpt {
        let mut out = [0u8; EXCERPT_MAX];
        let mut len = 0;
        // A space is written only before the next visible character, so
        // runs collapse and the end is trimmed.
        let mut space = false;
        let mut push = |c: char| -> bool {
            if c.is_whitespace() || c.is_control() {
                space = len > 0;
                return true;
            }
            let mut buf = [0u8; 4];
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            if len + usize::from(space) + bytes.len() > EXCERPT_MAX {
                return false;
            }
            if space {
                out[len] = b' ';
                len += 1;
                space = false;
            }
            out[len..len + bytes.len()].copy_from_slice(bytes);
            len += bytes.len();
            true
        };
        'chunks: for chunk in body.utf8_chunks() {
            for c in chunk.valid().chars() {
                if !push(c) {
                    break 'chunks;
                }
            }
            if !chunk.invalid().is_empty() && !push(char::REPLACEMENT_CHARACTER) {
                break;
            }
        }
        // Only whole characters were written.
        Excerpt(Text::new(core::str::from_utf8(&out[..len]).unwrap_or("")))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Display for Excerpt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error code as a client reads it: one this version knows, or the text
/// of one it does not (from a newer authority).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyCode {
    /// A code this version knows.
    Known(ErrorCode),
    /// A code this version does not know, as the authority wrote it.
    Unknown(CodeText),
}

impl ReplyCode {
    /// The wire text: `namespace_exhausted`, or the unknown code's text.
    pub fn as_str(&self) -> &str {
        match self {
            ReplyCode::Known(c) => c.as_str(),
            ReplyCode::Unknown(t) => t.as_str(),
        }
    }

    /// The code a JS caller sees: the wire code, except `exhausted`,
    /// `frozen` and `unavailable` for the three a generator meets in normal
    /// operation, and `refused` for a code this version does not know (its
    /// text stays in [`ReplyCode::as_str`]).
    pub fn client_code(&self) -> &'static str {
        match self {
            ReplyCode::Known(c) => c.client_code(),
            ReplyCode::Unknown(_) => "refused",
        }
    }
}

impl fmt::Display for ReplyCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The authority refused the request and said why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The code.
    pub code: ReplyCode,
    /// The HTTP status it came with.
    pub status: u16,
    /// The authority's message (empty when it sent none), as it stands
    /// between the quotes of its JSON string: escape sequences such as
    /// `\"` are not decoded (a display decodes them).
    pub message: Message,
    /// For `namespace_exhausted`: exactly how many IDs remain.
    pub remaining: Option<u64>,
    /// For `invalid_request` refusing the request's count: the namespace's
    /// `maxCount`.
    pub max_count: Option<u64>,
    /// `Retry-After`, in milliseconds.
    pub retry_after_ms: Option<u64>,
}

/// A 4xx (but 408 and 429) that is not a rangeid error: something other
/// than a rangeid authority refused the request (a proxy, a WAF, a server
/// at a wrong URL). Nothing was committed for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Foreign {
    /// The HTTP status.
    pub status: u16,
    /// `Retry-After`, in milliseconds.
    pub retry_after_ms: Option<u64>,
    /// The first bytes of its body.
    pub excerpt: Excerpt,
}

impl Foreign {
    /// The code its status stands for: 401 `unauthenticated`, 403
    /// `forbidden`, 404 `not_found`, ... (see
    /// [`ErrorCode::for_client_status`]).
    pub const fn code(&self) -> ErrorCode {
        ErrorCode::for_client_status(self.status)
    }

    /// What to do about it: a 401 is retried once with fresh credentials
    /// (then blocks); any other status blocks the engine for a while.
    pub const fn disposition(&self) -> Disposition {
        match self.status {
            401 => Disposition::Reauthenticate,
            _ => Disposition::Blocked,
        }
    }
}

/// Why an answer could not be used; the request is sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransientKind {
    /// No answer: the connection failed, the attempt was cancelled, or the
    /// driver's own time limit passed.
    NoAnswer,
    /// A 200 whose body is not a readable grant (it may carry a committed
    /// one; the replay will return it).
    UnreadableGrant,
    /// A 429 or 5xx that is not a rangeid error (a proxy's page, say).
    NotJson,
    /// An HTTP status no rangeid authority answers a range request with
    /// (1xx, 2xx other than 200, 3xx).
    UnexpectedStatus,
}

/// An answer that could not be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transient {
    /// Why.
    pub kind: TransientKind,
    /// The HTTP status, when there was an answer.
    pub status: Option<u16>,
    /// `Retry-After`, in milliseconds.
    pub retry_after_ms: Option<u64>,
    /// The first bytes of the body, when there was an answer that is not
    /// a readable rangeid one (empty otherwise).
    pub excerpt: Excerpt,
}

/// Everything a client can make of one attempt's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // Short-lived; boxing would need a heap.
#[non_exhaustive]
pub enum Reply {
    /// A readable grant.
    Grant(GrantReply),
    /// A rangeid authority's refusal, with a code.
    Refused(Refused),
    /// A 4xx that no rangeid authority wrote.
    Foreign(Foreign),
    /// No usable answer.
    Transient(Transient),
}

/// What a client does about a refusal. Decided here, once, for every
/// driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Disposition {
    /// Send the same request again after a backoff (at least `Retry-After`).
    Retry,
    /// The namespace is frozen: keep asking; what is installed still issues.
    Frozen,
    /// Fewer IDs remain than asked for: ask for exactly `remaining`, or stop
    /// for good when it is 0.
    Exhausted {
        /// What the authority said remains.
        remaining: u64,
    },
    /// The request asked for more than the namespace's `maxCount` (which
    /// the engine cannot know before its first grant): ask again for at
    /// most `max_count`.
    CountAbove {
        /// The namespace's `maxCount`, as the authority said.
        max_count: u64,
    },
    /// The credentials were refused: ask once more with fresh ones, then
    /// block (see [`Disposition::Blocked`]).
    Reauthenticate,
    /// Something other than a rangeid authority refused the request, or the
    /// credentials were refused even fresh. Callers waiting for an ID are
    /// failed at once; the engine asks again by itself after a backoff
    /// that grows per blocked answer (`crate::lease::BLOCKED_BACKOFF_FACTOR`),
    /// and carries on once an answer comes from the authority.
    Blocked,
    /// Stop asking for good; what is installed still issues.
    Final,
}

impl Refused {
    /// What to do about this refusal. `unavailable`, `rate_limited`,
    /// `ledger_full`, and an unknown code that came with 408, 429 or a 5xx,
    /// are retried (after at least `Retry-After`); `namespace_frozen` is
    /// retried while it lasts; `namespace_exhausted` asks for what remains;
    /// `unauthenticated` is retried once with fresh credentials (then
    /// blocks); `invalid_request` with the namespace's `maxCount` is
    /// [`Disposition::CountAbove`]; everything else (including an unknown
    /// code with another 4xx) is final.
    pub fn disposition(&self) -> Disposition {
        match self.code {
            ReplyCode::Known(
                ErrorCode::Unavailable | ErrorCode::RateLimited | ErrorCode::LedgerFull,
            ) => Disposition::Retry,
            ReplyCode::Known(ErrorCode::NamespaceFrozen) => Disposition::Frozen,
            ReplyCode::Known(ErrorCode::NamespaceExhausted) => match self.remaining {
                Some(remaining) => Disposition::Exhausted { remaining },
                // The authority always says how much remains; without it the
                // answer cannot be trusted to be final.
                None => Disposition::Retry,
            },
            ReplyCode::Known(ErrorCode::Unauthenticated) => Disposition::Reauthenticate,
            ReplyCode::Known(ErrorCode::InvalidRequest) => match self.max_count {
                Some(max_count) if max_count > 0 => Disposition::CountAbove { max_count },
                _ => Disposition::Final,
            },
            ReplyCode::Known(_) => Disposition::Final,
            ReplyCode::Unknown(_) if retried_status(self.status) => Disposition::Retry,
            ReplyCode::Unknown(_) => Disposition::Final,
        }
    }
}

/// 408, 429 and every 5xx: statuses that say "later", whatever the body.
const fn retried_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500..=599)
}

impl Reply {
    /// The outcome of an attempt that got no answer at all.
    pub const fn no_answer() -> Reply {
        Reply::Transient(Transient {
            kind: TransientKind::NoAnswer,
            status: None,
            retry_after_ms: None,
            excerpt: Excerpt::EMPTY,
        })
    }

    /// The outcome of an answer whose body is not JSON a rangeid authority
    /// writes: [`Foreign`] for a 4xx other than 408 and 429, retried
    /// otherwise. Keeps an [`Excerpt`] of `body`.
    pub fn not_rangeid(status: u16, body: &[u8], retry_after_ms: Option<u64>) -> Reply {
        let excerpt = Excerpt::of(body);
        let transient = |kind| {
            Reply::Transient(Transient {
                kind,
                status: Some(status),
                retry_after_ms,
                excerpt,
            })
        };
        match status {
            200 => transient(TransientKind::UnreadableGrant),
            400..=499 if !retried_status(status) => Reply::Foreign(Foreign {
                status,
                retry_after_ms,
                excerpt,
            }),
            s if retried_status(s) => transient(TransientKind::NotJson),
            _ => transient(TransientKind::UnexpectedStatus),
        }
    }

    /// What to do about this outcome when it is a failure: a refusal's or
    /// a foreign answer's [`Disposition`], `Retry` for a transient failure;
    /// `None` for a grant.
    pub fn disposition(&self) -> Option<Disposition> {
        match self {
            Reply::Grant(_) => None,
            Reply::Refused(r) => Some(r.disposition()),
            Reply::Foreign(f) => Some(f.disposition()),
            Reply::Transient(_) => Some(Disposition::Retry),
        }
    }

    /// `Retry-After` in milliseconds, when the answer had one.
    pub const fn retry_after_ms(&self) -> Option<u64> {
        match self {
            Reply::Grant(_) => None,
            Reply::Refused(r) => r.retry_after_ms,
            Reply::Foreign(f) => f.retry_after_ms,
            Reply::Transient(t) => t.retry_after_ms,
        }
    }

    /// The code a failure stands for, as a client reads it: a refusal's,
    /// or the code a foreign answer's status stands for; `None` for a grant
    /// or a transient failure.
    pub const fn code(&self) -> Option<ReplyCode> {
        match self {
            Reply::Refused(r) => Some(r.code),
            Reply::Foreign(f) => Some(ReplyCode::Known(f.code())),
            _ => None,
        }
    }

    /// Classifies an HTTP answer to a range request: `status`, the body's
    /// bytes and `Retry-After` in milliseconds (when present). See the
    /// module documentation for the rules.
    #[cfg(feature = "serde")]
    pub fn from_http(status: u16, body: &[u8], retry_after_ms: Option<u64>) -> Reply {
        if status == 200 {
            return match parse::grant(body) {
                Some(g) => Reply::Grant(g),
                None => Reply::not_rangeid(status, body, retry_after_ms),
            };
        }
        if !(400..=599).contains(&status) {
            return Reply::not_rangeid(status, body, retry_after_ms);
        }
        match parse::error(body) {
            Some((code, message, remaining, max_count)) => Reply::Refused(Refused {
                code,
                status,
                message,
                remaining,
                max_count,
                retry_after_ms,
            }),
            None => Reply::not_rangeid(status, body, retry_after_ms),
        }
    }
}

#[cfg(feature = "serde")]
mod parse {
    //! The lenient JSON readers behind [`Reply::from_http`].

    use core::fmt;

    use serde::de::{self, Deserializer, Visitor};
    use serde::Deserialize;

    use super::{Message, ReplyCode};
    use crate::code::ErrorCode;
    use crate::decimal::{parse_bound, parse_u64};
    use crate::names::{CodeText, Incarnation, Namespace, RequestId};
    use crate::protocol::{Capacity, Grant, GrantReply};
    use crate::range::Range;

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct GrantFields<'a> {
        namespace: &'a str,
        incarnation: &'a str,
        request_id: &'a str,
        start: &'a str,
        end: &'a str,
        count: u64,
        replayed: bool,
        #[serde(default)]
        max_count: Option<u64>,
        #[serde(default)]
        remaining: Option<&'a str>,
    }

    #[derive(Deserialize)]
    struct ErrorBody<'a> {
        #[serde(borrow)]
        error: ErrorFields<'a>,
    }

    #[derive(Deserialize)]
    struct ErrorFields<'a> {
        code: &'a str,
        #[serde(default)]
        message: Lenient<Message>,
        #[serde(default)]
        remaining: Lenient<Option<u64>>,
        // Strict (a JSON integer, as the authority writes it): a body with a
        // malformed one is unreadable, and a 400 without it is final anyway.
        #[serde(default, rename = "maxCount")]
        max_count: Option<u64>,
    }

    /// A field read whatever its scalar JSON type: a string becomes the
    /// value, any other scalar (a number where a decimal string belongs,
    /// `null`, a boolean) leaves the default.
    #[derive(Default)]
    struct Lenient<T>(T);

    /// How a lenient field is made from a string.
    trait FromText: Default {
        fn from_text(s: &str) -> Self;
    }

    impl FromText for Message {
        fn from_text(s: &str) -> Self {
            Message::new(s)
        }
    }

    impl FromText for Option<u64> {
        fn from_text(s: &str) -> Self {
            parse_u64(s).ok()
        }
    }

    impl<'de, T: FromText> Deserialize<'de> for Lenient<T> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lenient<T>, D::Error> {
            struct V<T>(core::marker::PhantomData<T>);
            impl<'de, T: FromText> Visitor<'de> for V<T> {
                type Value = Lenient<T>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("any value")
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Lenient<T>, E> {
                    Ok(Lenient(T::from_text(v)))
                }
                fn visit_unit<E: de::Error>(self) -> Result<Lenient<T>, E> {
                    Ok(Lenient(T::default()))
                }
                fn visit_seq<A: de::SeqAccess<'de>>(
                    self,
                    mut a: A,
                ) -> Result<Lenient<T>, A::Error> {
                    while a.next_element::<de::IgnoredAny>()?.is_some() {}
                    Ok(Lenient(T::default()))
                }
                fn visit_map<A: de::MapAccess<'de>>(
                    self,
                    mut a: A,
                ) -> Result<Lenient<T>, A::Error> {
                    while a.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
                    Ok(Lenient(T::default()))
                }
            }
            // serde-json-core has no deserialize_any; deserialize_ignored_any
            // hands a string over, any scalar as unit, and an object or an
            // array as one to skip.
            d.deserialize_ignored_any(V(core::marker::PhantomData))
        }
    }

    /// The deepest nesting of arrays and objects read. No authority answer
    /// nests past 3; serde-json-core recurses once per level with no limit
    /// of its own, so deeper bodies are refused before parsing (a small
    /// wasm stack would overflow on a few thousand `[`).
    pub(super) const MAX_DEPTH: usize = 16;

    /// Whether `body` nests arrays and objects at most [`MAX_DEPTH`] deep
    /// (brackets inside strings do not count).
    pub(super) fn shallow(body: &[u8]) -> bool {
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        for &b in body {
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return false;
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        true
    }

    fn read<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Option<T> {
        if !shallow(body) {
            return None;
        }
        serde_json_core::from_slice::<T>(body).ok().map(|(v, _)| v)
    }

    pub(super) fn grant(body: &[u8]) -> Option<GrantReply> {
        let f: GrantFields<'_> = read(body)?;
        let range = Range::new(parse_u64(f.start).ok()?, parse_bound(f.end).ok()?).ok()?;
        if range.count() != f.count {
            return None;
        }
        let remaining = match f.remaining {
            Some(r) => Some(parse_u64(r).ok()?),
            None => None,
        };
        Some(GrantReply {
            grant: Grant {
                namespace: Namespace::new(f.namespace).ok()?,
                incarnation: Incarnation::new(f.incarnation).ok()?,
                request_id: RequestId::new(f.request_id).ok()?,
                range,
            },
            replayed: f.replayed,
            capacity: Capacity {
                max_count: f.max_count,
                remaining,
            },
        })
    }

    pub(super) fn error(body: &[u8]) -> Option<(ReplyCode, Message, Option<u64>, Option<u64>)> {
        let b: ErrorBody<'_> = read(body)?;
        let code = match ErrorCode::parse(b.error.code) {
            Some(known) => ReplyCode::Known(known),
            None => ReplyCode::Unknown(CodeText::lossy(b.error.code)),
        };
        // A malformed `remaining` is dropped: an exhaustion without one is
        // retried rather than taken as final.
        Some((
            code,
            b.error.message.0,
            b.error.remaining.0,
            b.error.max_count,
        ))
    }
}

#[cfg(all(test, feature = "serde"))]
mod tests;
