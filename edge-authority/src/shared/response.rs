//! HTTP answers: [`HttpReply`], errors as `{"error":{code,message,...}}`,
//! and the CORS policy.
//!
//! Every answer is JSON (or empty; `/v1/metrics` sets its own text content
//! type) with `cache-control: no-store`. An error's status is
//! its code's ([`ErrorCode::http_status`]); `401` carries
//! `WWW-Authenticate: Bearer`, `405` `Allow` and `503` `Retry-After`.
//! Cross-origin requests are refused (403 `forbidden`) unless their `Origin`
//! is in the allow-list; none is by default.

use rangeid_core::wire::{DecBound, DecU64, ErrorReply, HttpAnswer};
use rangeid_core::ErrorCode;
use serde::Serialize;

/// Seconds a client should wait before retrying a `503 unavailable`.
pub use rangeid_core::wire::RETRY_AFTER_SECS;

/// A complete HTTP answer, independent of the runtime.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpReply {
    /// The status code.
    pub status: u16,
    /// Header names (lower-case) and values, in order.
    pub headers: Vec<(String, String)>,
    /// The body (JSON, or empty).
    pub body: String,
}

impl HttpReply {
    /// A JSON answer with `status` and the serialized `value`.
    pub fn json<T: Serialize + ?Sized>(status: u16, value: &T) -> HttpReply {
        match serde_json::to_string(value) {
            Ok(body) => HttpReply::json_text(status, body),
            Err(e) => ApiError::unavailable(format!("could not encode the answer: {e}")).reply(),
        }
    }

    /// A JSON answer whose body is already serialized JSON text.
    pub fn json_text(status: u16, body: String) -> HttpReply {
        HttpReply {
            status,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("cache-control".into(), "no-store".into()),
            ],
            body,
        }
    }

    /// An answer with no body.
    pub fn empty(status: u16) -> HttpReply {
        HttpReply {
            status,
            headers: vec![("cache-control".into(), "no-store".into())],
            body: String::new(),
        }
    }

    /// Sets header `name` (lower-case) to `value`, replacing any earlier one.
    pub fn set_header(&mut self, name: &str, value: impl Into<String>) {
        self.headers.retain(|(n, _)| n != name);
        self.headers.push((name.to_owned(), value.into()));
    }

    /// The value of header `name` (lower-case), if set.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An error answer in the making.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The stable code; decides the status.
    pub code: ErrorCode,
    /// A human-readable explanation.
    pub message: String,
    /// For `namespace_exhausted`: how many IDs remain.
    pub remaining: Option<u64>,
    /// For `floor_below_next`: the namespace's next value.
    pub next: Option<u128>,
    /// For `method_not_allowed`: the `Allow` header.
    pub allow: Option<&'static str>,
}

impl ApiError {
    /// An error with `code` and `message` and no details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
            remaining: None,
            next: None,
            allow: None,
        }
    }

    /// `400 invalid_request`.
    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorCode::InvalidRequest, message)
    }

    /// `503 unavailable`: the authority cannot answer safely now.
    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorCode::Unavailable, message)
    }

    /// `404 namespace_not_found` for `ns`.
    pub fn namespace_not_found(ns: &str) -> ApiError {
        ApiError::new(
            ErrorCode::NamespaceNotFound,
            format!("namespace {ns:?} does not exist"),
        )
    }

    /// The answer: the code's status and `{"error":{...}}`, with `Allow` or
    /// `Retry-After` where they apply.
    pub fn reply(&self) -> HttpReply {
        let mut body = ErrorReply::new(self.code, self.message.clone());
        body.error.remaining = self.remaining.map(DecU64);
        body.error.next = self.next.map(DecBound);
        let mut reply = HttpReply::from(HttpAnswer::error(&body));
        if let Some(allow) = self.allow {
            reply.set_header("allow", allow);
        }
        if self.code == ErrorCode::Unauthenticated {
            reply.set_header("www-authenticate", "Bearer");
        }
        reply
    }
}

/// Core's encoding of an answer (the one the simulation also runs), as a
/// reply: its status, JSON body and `Retry-After`.
impl From<HttpAnswer> for HttpReply {
    fn from(a: HttpAnswer) -> HttpReply {
        let body = String::from_utf8(a.body).unwrap_or_else(|_| {
            r#"{"error":{"code":"unavailable","message":"bad encoding"}}"#.into()
        });
        let mut reply = HttpReply::json_text(a.status, body);
        if let Some(secs) = a.retry_after_secs {
            reply.set_header("retry-after", secs.to_string());
        }
        reply
    }
}

impl From<ApiError> for HttpReply {
    fn from(e: ApiError) -> HttpReply {
        e.reply()
    }
}

/// Which browser origins may call the API.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cors {
    origins: Vec<String>,
}

/// What the CORS layer decided about a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CorsCheck {
    /// No `Origin` header: not a cross-origin browser call.
    NoOrigin,
    /// An allowed origin; echo it back.
    Allowed(String),
    /// A refused origin.
    Refused,
}

impl Cors {
    /// Parses the allow-list: origins separated by commas or spaces
    /// (`https://a.example, https://b.example`); empty allows none.
    pub fn parse(list: &str) -> Cors {
        Cors {
            origins: list
                .split([',', ' '])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| s.trim_end_matches('/').to_owned())
                .collect(),
        }
    }

    /// Checks a request's `Origin` header against the allow-list.
    pub fn check(&self, origin: Option<&str>) -> CorsCheck {
        match origin {
            None => CorsCheck::NoOrigin,
            Some(o) if self.origins.iter().any(|a| a == o) => CorsCheck::Allowed(o.to_owned()),
            Some(_) => CorsCheck::Refused,
        }
    }

    /// The answer to `OPTIONS path`: a preflight from an allowed origin
    /// gets 204 with the allowed methods and headers; a refused origin 403;
    /// an `OPTIONS` without `Origin` 204 with `Allow`. Unknown paths 404.
    pub fn preflight(&self, origin: Option<&str>, allow: Option<&'static str>) -> HttpReply {
        let Some(allow) = allow else {
            return ApiError::new(ErrorCode::NotFound, "no such path").reply();
        };
        match self.check(origin) {
            CorsCheck::Refused => refused_origin().reply(),
            CorsCheck::NoOrigin => {
                let mut r = HttpReply::empty(204);
                r.set_header("allow", format!("{allow}, OPTIONS"));
                r
            }
            CorsCheck::Allowed(o) => {
                let mut r = HttpReply::empty(204);
                r.set_header("access-control-allow-origin", o);
                r.set_header("access-control-allow-methods", format!("{allow}, OPTIONS"));
                r.set_header(
                    "access-control-allow-headers",
                    "authorization, content-type",
                );
                r.set_header("access-control-max-age", "600");
                r.set_header("vary", "Origin");
                r
            }
        }
    }

    /// Adds the CORS headers an allowed origin's answer needs.
    pub fn decorate(&self, origin: Option<&str>, reply: &mut HttpReply) {
        if let CorsCheck::Allowed(o) = self.check(origin) {
            reply.set_header("access-control-allow-origin", o);
            reply.set_header("access-control-expose-headers", "retry-after");
            reply.set_header("vary", "Origin");
        }
    }
}

/// `403 forbidden` for an origin outside the allow-list.
pub fn refused_origin() -> ApiError {
    ApiError::new(
        ErrorCode::Forbidden,
        "cross-origin requests from this origin are not allowed",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(r: &HttpReply) -> serde_json::Value {
        serde_json::from_str(&r.body).unwrap()
    }

    #[test]
    fn errors_have_their_status_and_shape() {
        for &code in ErrorCode::ALL {
            let r = ApiError::new(code, "m").reply();
            assert_eq!(r.status, code.http_status());
            assert_eq!(body(&r)["error"]["code"], code.as_str());
            assert_eq!(body(&r)["error"]["message"], "m");
            assert_eq!(r.header("content-type"), Some("application/json"));
            assert_eq!(
                r.header("retry-after").is_some(),
                code == ErrorCode::Unavailable
            );
        }
    }

    #[test]
    fn details_are_decimal_strings() {
        let mut e = ApiError::new(ErrorCode::NamespaceExhausted, "x");
        e.remaining = Some(u64::MAX);
        assert_eq!(
            body(&e.reply())["error"]["remaining"],
            "18446744073709551615"
        );
        let mut f = ApiError::new(ErrorCode::FloorBelowNext, "x");
        f.next = Some(1 << 64);
        assert_eq!(body(&f.reply())["error"]["next"], "18446744073709551616");
        let mut m = ApiError::new(ErrorCode::MethodNotAllowed, "x");
        m.allow = Some("POST");
        assert_eq!(m.reply().header("allow"), Some("POST"));
    }

    #[test]
    fn cors_is_closed_by_default() {
        let none = Cors::default();
        assert_eq!(none.check(None), CorsCheck::NoOrigin);
        assert_eq!(none.check(Some("https://a.example")), CorsCheck::Refused);
        assert_eq!(
            none.preflight(Some("https://a.example"), Some("POST"))
                .status,
            403
        );
        let mut r = HttpReply::empty(200);
        none.decorate(Some("https://a.example"), &mut r);
        assert_eq!(r.header("access-control-allow-origin"), None);
    }

    #[test]
    fn cors_allow_list() {
        let cors = Cors::parse(" https://a.example/, https://b.example ");
        assert_eq!(
            cors.check(Some("https://a.example")),
            CorsCheck::Allowed("https://a.example".into())
        );
        assert_eq!(cors.check(Some("https://c.example")), CorsCheck::Refused);
        assert_eq!(
            cors.check(Some("https://a.example.evil")),
            CorsCheck::Refused
        );
        let p = cors.preflight(Some("https://b.example"), Some("POST"));
        assert_eq!(p.status, 204);
        assert_eq!(
            p.header("access-control-allow-origin"),
            Some("https://b.example")
        );
        assert_eq!(
            p.header("access-control-allow-methods"),
            Some("POST, OPTIONS")
        );
        assert_eq!(cors.preflight(Some("https://b.example"), None).status, 404);
        let plain = cors.preflight(None, Some("GET, HEAD"));
        assert_eq!(
            (plain.status, plain.header("allow")),
            (204, Some("GET, HEAD, OPTIONS"))
        );
        let mut r = HttpReply::empty(200);
        cors.decorate(Some("https://b.example"), &mut r);
        assert_eq!(
            r.header("access-control-allow-origin"),
            Some("https://b.example")
        );
    }
}
