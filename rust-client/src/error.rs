//! `Error`: every failure the client gives, with the stable code a JS
//! caller would see (core decides the codes) and, when the authority
//! answered, its status, wire code and message.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rangeid_core::lease::IssueError;
use rangeid_core::reply::{Reply, TransientKind};
use rangeid_core::ErrorCode;

/// What kind of failure an [`Error`] is. Match on it; new kinds may come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// No ID is ready: none on hand now ([`crate::Generator::next_id`]), or
    /// none came within the deadline. Not final.
    Unavailable,
    /// The namespace is frozen; the generator keeps asking. Not final.
    Frozen,
    /// Range requests are refused by something other than the authority
    /// (a proxy, a wrong URL), or the token is refused even fresh; the
    /// generator asks again by itself. Not final.
    Blocked,
    /// The namespace has no IDs left. Final.
    Exhausted,
    /// The authority refused this generator for good. Final.
    Refused,
    /// A batch larger than the namespace has left, with what this
    /// generator holds ([`Error::remaining`], [`Error::available`]).
    /// Nothing was taken; a smaller batch may come. Not final.
    TooFew,
    /// A batch larger than one call may ask for ([`Error::limit`]), or of
    /// 0 IDs. Nothing was taken. Not final.
    InvalidRequest,
    /// The generator was closed. Final.
    Closed,
    /// The options are not valid; nothing was started. Final.
    InvalidConfig,
}

#[derive(Clone, Debug)]
struct Inner {
    kind: ErrorKind,
    code: &'static str,
    message: String,
    /// Where in `message` the promise that the generator asks again
    /// begins, when it makes one: cut by [`Error::gave_up_connecting`].
    asks_again_at: Option<usize>,
    is_final: bool,
    status: Option<u16>,
    authority_code: Option<String>,
    authority_message: Option<String>,
    excerpt: Option<String>,
    remaining: Option<u64>,
    available: Option<u64>,
    limit: Option<u64>,
    retry_after: Option<Duration>,
    error_code: Option<ErrorCode>,
    cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// A failure, with a stable [`Error::code`]: the code the npm package's
/// `RangeIdError` carries for the same failure (`unavailable`, `frozen`,
/// `exhausted`, `unauthenticated`, `forbidden`, `namespace_not_found`, ...,
/// `refused` for a code this version does not know, `closed`,
/// `invalid_request`, `invalid_config`). When the authority answered,
/// [`Error::status`], [`Error::authority_code`] and
/// [`Error::authority_message`] say what it said; when something else
/// answered, [`Error::status`] and [`Error::excerpt`] (the body's first
/// bytes). Cheap to clone. `{:?}` (what `main` returning `Result` prints)
/// is the same as its `Display`, `code: message`; `{:#?}` shows every
/// field.
#[derive(Clone)]
pub struct Error(Arc<Inner>);

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.debug_tuple("Error").field(&self.0).finish()
        } else {
            fmt::Display::fmt(self, f)
        }
    }
}

impl Error {
    fn new(kind: ErrorKind, code: &'static str, message: String, is_final: bool) -> Error {
        Error(Arc::new(Inner {
            kind,
            code,
            message,
            asks_again_at: None,
            is_final,
            status: None,
            authority_code: None,
            authority_message: None,
            excerpt: None,
            remaining: None,
            available: None,
            limit: None,
            retry_after: None,
            error_code: None,
            cause: None,
        }))
    }

    fn with(mut self, f: impl FnOnce(&mut Inner)) -> Error {
        f(Arc::make_mut(&mut self.0));
        self
    }

    pub(crate) fn invalid_config(message: impl Into<String>) -> Error {
        Error::new(
            ErrorKind::InvalidConfig,
            "invalid_config",
            message.into(),
            true,
        )
    }

    /// An `invalid_request` error: a request for IDs that cannot be made
    /// (a batch of 0, or too large). Public for bindings whose callers can
    /// write a count the client's `u64` cannot hold (a negative Python
    /// int); nothing was taken.
    pub fn invalid_request(message: impl Into<String>) -> Error {
        Error::new(
            ErrorKind::InvalidRequest,
            "invalid_request",
            message.into(),
            false,
        )
    }

    pub(crate) fn closed() -> Error {
        Error::new(
            ErrorKind::Closed,
            "closed",
            "the generator was closed".into(),
            true,
        )
    }

    /// The error for `why` (core's account of why no ID was issued), with
    /// what the last failed attempt said. `context` describes where the
    /// caller stands (the endpoint, a deadline that passed).
    pub(crate) fn from_issue(
        why: IssueError,
        last: Option<&Reply>,
        cause: Option<&Arc<dyn std::error::Error + Send + Sync>>,
        endpoint: &str,
        prefix: Option<&str>,
    ) -> Error {
        let kind = match why {
            IssueError::Unavailable => ErrorKind::Unavailable,
            IssueError::Frozen => ErrorKind::Frozen,
            IssueError::Blocked(_) => ErrorKind::Blocked,
            IssueError::Exhausted => ErrorKind::Exhausted,
            IssueError::Failed(_) => ErrorKind::Refused,
            IssueError::Closed => ErrorKind::Closed,
            IssueError::TooFew { .. } => ErrorKind::TooFew,
            IssueError::EmptyBatch | IssueError::BatchTooLarge { .. } => ErrorKind::InvalidRequest,
            _ => ErrorKind::Unavailable,
        };
        if kind == ErrorKind::Closed {
            return Error::closed();
        }
        let mut said = None;
        let (mut status, mut authority_code, mut authority_message, mut excerpt) =
            (None, None, None, None);
        let mut retry_after_ms = None;
        let mut error_code = None;
        let mut remaining = why.remaining();
        match last {
            Some(Reply::Refused(r)) => {
                status = Some(r.status);
                authority_code = Some(r.code.as_str().to_owned());
                let message = unescape(r.message.as_str());
                // The wire code only where it says more than this error's code.
                let code = if r.code.as_str() == why.client_code() {
                    String::new()
                } else {
                    format!(" {}", r.code)
                };
                said = Some(if message.is_empty() {
                    format!("POST {endpoint} answered {}{code}", r.status)
                } else {
                    format!("POST {endpoint} answered {}{code}: {message}", r.status)
                });
                authority_message = Some(message);
                retry_after_ms = r.retry_after_ms;
                if let rangeid_core::reply::ReplyCode::Known(c) = r.code {
                    error_code = Some(c);
                }
                remaining = remaining.or(r.remaining);
            }
            Some(Reply::Foreign(f)) => {
                status = Some(f.status);
                let body = f.excerpt.as_str();
                excerpt = (!body.is_empty()).then(|| body.to_owned());
                said = Some(format!(
                    "POST {endpoint} answered {}, not a rangeid authority's answer (is the url right? a proxy or firewall in the way?){}",
                    f.status,
                    if body.is_empty() { " (empty body)".to_owned() } else { format!(": {body:?}") }
                ));
                retry_after_ms = f.retry_after_ms;
                error_code = Some(f.code());
            }
            Some(Reply::Transient(t)) => {
                status = t.status;
                let body = t.excerpt.as_str();
                excerpt = (!body.is_empty()).then(|| body.to_owned());
                retry_after_ms = t.retry_after_ms;
                said = Some(match (t.kind, t.status) {
                    (TransientKind::NoAnswer, _) => match cause {
                        Some(c) => format!("POST {endpoint} got no answer: {}", chain(&**c)),
                        None => format!("POST {endpoint} got no answer"),
                    },
                    (_, Some(s)) => format!(
                        "POST {endpoint} answered {s}, not a usable answer{}",
                        if body.is_empty() {
                            String::new()
                        } else {
                            format!(": {body:?}")
                        }
                    ),
                    _ => format!("POST {endpoint} gave no usable answer"),
                });
            }
            _ => {}
        }
        if let IssueError::Failed(rangeid_core::reply::ReplyCode::Known(c))
        | IssueError::Blocked(rangeid_core::reply::ReplyCode::Known(c)) = why
        {
            error_code = error_code.or(Some(c));
        }
        // The code is this error's own (Display puts it first): the head
        // repeats it only when nothing the authority said follows.
        let head = match (prefix, why) {
            (Some(p), _) => p.to_owned(),
            (None, IssueError::Unavailable) => "no ID is ready".to_owned(),
            (None, IssueError::Blocked(_)) if said.is_some() => "blocked".to_owned(),
            (None, IssueError::Blocked(code)) => format!("blocked ({code})"),
            (None, IssueError::Failed(_)) if said.is_some() => {
                "the authority refused this generator".to_owned()
            }
            (None, IssueError::Exhausted) => format!(
                "the namespace is exhausted ({} IDs left)",
                remaining.unwrap_or(0)
            ),
            (None, other) => other.to_string(),
        };
        let mut asks_again_at = None;
        let message = match said {
            Some(s) if kind == ErrorKind::Blocked => {
                let m = format!("{head}: {s}");
                asks_again_at = Some(m.len());
                format!("{m}; the generator asks again by itself")
            }
            Some(s) => format!("{head}: {s}"),
            None => head,
        };
        let (available, limit) = match why {
            IssueError::TooFew { available, .. } => (Some(available), None),
            IssueError::BatchTooLarge { limit } => (None, Some(limit)),
            _ => (None, None),
        };
        let cause = match last {
            Some(Reply::Transient(t)) if t.kind == TransientKind::NoAnswer => cause.cloned(),
            _ => None,
        };
        Error::new(kind, why.client_code(), message, why.is_final()).with(|e| {
            e.status = status;
            e.authority_code = authority_code;
            e.authority_message = authority_message;
            e.excerpt = excerpt;
            e.remaining = remaining;
            e.available = available;
            e.limit = limit;
            e.retry_after = retry_after_ms.map(Duration::from_millis);
            e.error_code = error_code;
            e.cause = cause;
            e.asks_again_at = asks_again_at;
        })
    }

    /// This error as [`crate::Generator::connect`] gives it: the generator
    /// it was waiting for is closed, so nothing asks again; the message
    /// says so instead of promising a retry.
    pub(crate) fn gave_up_connecting(self) -> Error {
        let Some(at) = self.0.asks_again_at else {
            return self;
        };
        self.with(|e| {
            e.message.truncate(at);
            e.message
                .push_str("; the generator closed before its first range, so nothing asks again: fix this and start a new one");
            e.asks_again_at = None;
        })
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The stable code, as the npm package's `RangeIdError.code`.
    pub fn code(&self) -> &'static str {
        self.0.code
    }

    /// The code as core's [`ErrorCode`], when it is one this version
    /// knows: the authority's, or the one a foreign answer's status stands
    /// for (401 `unauthenticated`, 404 `not_found`, ...).
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.0.error_code
    }

    /// The message: what failed, and what answered.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// Whether this generator will never issue again.
    pub fn is_final(&self) -> bool {
        self.0.is_final
    }

    /// The HTTP status of the answer that explains this error, if any.
    pub fn status(&self) -> Option<u16> {
        self.0.status
    }

    /// The authority's wire code (`namespace_exhausted`, or the text of a
    /// code this version does not know), when the authority refused.
    pub fn authority_code(&self) -> Option<&str> {
        self.0.authority_code.as_deref()
    }

    /// The authority's message, when it refused with one.
    pub fn authority_message(&self) -> Option<&str> {
        self.0.authority_message.as_deref()
    }

    /// The first bytes of an answer that was not a rangeid one.
    pub fn excerpt(&self) -> Option<&str> {
        self.0.excerpt.as_deref()
    }

    /// How many IDs the namespace has left, where the error says.
    pub fn remaining(&self) -> Option<u64> {
        self.0.remaining
    }

    /// For [`ErrorKind::TooFew`]: the IDs this generator holds.
    pub fn available(&self) -> Option<u64> {
        self.0.available
    }

    /// For a batch too large: the largest batch one call may ask for.
    pub fn limit(&self) -> Option<u64> {
        self.0.limit
    }

    /// `Retry-After` of the answer, when it had one.
    pub fn retry_after(&self) -> Option<Duration> {
        self.0.retry_after
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.code, self.0.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// `error`'s message and its sources', joined with ": " (a network
/// error's root cause, such as "Connection refused", is often only in its
/// sources), without a source that repeats what came before it.
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut next = error.source();
    while let Some(e) = next {
        let text = e.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = e.source();
    }
    out
}

/// The authority's message as core keeps it (JSON escapes as written),
/// decoded; as written when it does not decode.
fn unescape(text: &str) -> String {
    serde_json_unescape(text).unwrap_or_else(|| text.to_owned())
}

fn serde_json_unescape(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            '"' => out.push('"'),
            '\\' => out.push('\\'),
            '/' => out.push('/'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'u' => {
                let hex: String = chars.by_ref().take(4).collect();
                let unit = u16::from_str_radix(&hex, 16).ok()?;
                out.push(char::from_u32(u32::from(unit)).unwrap_or('\u{fffd}'));
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_unescaped() {
        assert_eq!(unescape(r#"a \"b\" \u00e9"#), "a \"b\" é");
        assert_eq!(unescape(r"bad \x"), r"bad \x");
    }

    #[test]
    fn debug_reads_like_display_and_the_alternate_shows_every_field() {
        let e = Error::from_issue(IssueError::Exhausted, None, None, "u", None);
        assert_eq!(format!("{e:?}"), e.to_string());
        assert_eq!(
            format!("{e:?}"),
            "exhausted: the namespace is exhausted (0 IDs left)"
        );
        assert!(format!("{e:#?}").contains("is_final: true"));
    }

    #[test]
    fn codes_follow_core() {
        let e = Error::from_issue(IssueError::Exhausted, None, None, "u", None);
        assert_eq!(
            (e.kind(), e.code(), e.is_final(), e.remaining()),
            (ErrorKind::Exhausted, "exhausted", true, Some(0))
        );
        let e = Error::from_issue(IssueError::Unavailable, None, None, "u", None);
        assert_eq!((e.code(), e.is_final()), ("unavailable", false));
    }
}
