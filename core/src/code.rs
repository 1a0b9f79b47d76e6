//! `ErrorCode`: the stable error codes every layer shares.
//!
//! The authority answers with them as they are; the JS package shows each
//! as its [`ErrorCode::client_code`] (the wire code, but `exhausted` and
//! `frozen` for the two a generator meets in normal operation; still one
//! text per code). The strings never change once published.

use core::fmt;

macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal, $status:literal;)*) => {
        /// A stable, machine-readable error code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The wire string, e.g. `"namespace_exhausted"`.
            pub const fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $text,)* }
            }

            /// The HTTP status the authority answers with.
            pub const fn http_status(self) -> u16 {
                match self { $(ErrorCode::$variant => $status,)* }
            }

            /// The code for a wire string, if it is one.
            pub fn parse(s: &str) -> Option<ErrorCode> {
                match s { $($text => Some(ErrorCode::$variant),)* _ => None }
            }
        }
    };
}

error_codes! {
    /// The request is malformed or out of bounds; nothing changed.
    InvalidRequest = "invalid_request", 400;
    /// No valid credentials.
    Unauthenticated = "unauthenticated", 401;
    /// Valid credentials, but not for this role or namespace.
    Forbidden = "forbidden", 403;
    /// No such route.
    NotFound = "not_found", 404;
    /// The namespace does not exist.
    NamespaceNotFound = "namespace_not_found", 404;
    /// No retained grant contains the ID.
    GrantNotFound = "grant_not_found", 404;
    /// The route exists but not for this method.
    MethodNotAllowed = "method_not_allowed", 405;
    /// The request id was already used with a different count or namespace.
    RequestConflict = "request_conflict", 409;
    /// The request id was granted to another caller (another token `sub`).
    /// Sent only by authorities from before a request's identity included
    /// its `sub` (now another `sub`'s request is simply another request);
    /// kept so their answers still read, and final.
    RequestOwnerMismatch = "request_owner_mismatch", 403;
    /// Not enough IDs remain for the request; nothing was granted.
    NamespaceExhausted = "namespace_exhausted", 409;
    /// A namespace of that name already exists.
    NamespaceExists = "namespace_exists", 409;
    /// The floor is below the namespace's next value; floors never lower it.
    FloorBelowNext = "floor_below_next", 409;
    /// The namespace was exported to move it to another authority: it is
    /// retired here and stays frozen (import its document to use it).
    NamespaceExported = "namespace_exported", 409;
    /// An export document that is cut, edited or breaks core's rules.
    ExportInvalid = "export_invalid", 400;
    /// A document that is not a rangeid namespace export, or of a format
    /// version this authority does not read.
    ExportUnsupported = "export_unsupported", 400;
    /// An export document of another namespace than the one it was sent for.
    ExportNamespaceMismatch = "export_namespace_mismatch", 400;
    /// This very export document was imported here already.
    AlreadyImported = "already_imported", 409;
    /// The request body is too large.
    PayloadTooLarge = "payload_too_large", 413;
    /// The namespace is frozen and grants nothing new.
    NamespaceFrozen = "namespace_frozen", 423;
    /// The caller (its token `sub`) took its grants of the last second;
    /// retry after `Retry-After`.
    RateLimited = "rate_limited", 429;
    /// The grant would need a ledger row past the caller's or the
    /// namespace's row budget; retry after `Retry-After`.
    LedgerFull = "ledger_full", 429;
    /// The authority cannot answer safely now; retry later.
    Unavailable = "unavailable", 503;
}

impl ErrorCode {
    /// The code a JS caller sees for this authority code: the wire code,
    /// except `exhausted` for `namespace_exhausted` and `frozen` for
    /// `namespace_frozen`. One-to-one: no two codes map to the same text.
    pub const fn client_code(self) -> &'static str {
        match self {
            ErrorCode::NamespaceExhausted => "exhausted",
            ErrorCode::NamespaceFrozen => "frozen",
            other => other.as_str(),
        }
    }

    /// The code a client gives an answer that carries no rangeid error body,
    /// from its 4xx status: 401 `unauthenticated`, 403 `forbidden`, 404
    /// `not_found`, 405 `method_not_allowed`, 413 `payload_too_large`, and
    /// `invalid_request` for any other.
    pub const fn for_client_status(status: u16) -> ErrorCode {
        match status {
            401 => ErrorCode::Unauthenticated,
            403 => ErrorCode::Forbidden,
            404 => ErrorCode::NotFound,
            405 => ErrorCode::MethodNotAllowed,
            413 => ErrorCode::PayloadTooLarge,
            _ => ErrorCode::InvalidRequest,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = ErrorCode;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a rangeid error code")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ErrorCode, E> {
                ErrorCode::parse(v).ok_or_else(|| E::custom("unknown error code"))
            }
        }
        d.deserialize_str(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_distinct() {
        for (i, a) in ErrorCode::ALL.iter().enumerate() {
            assert_eq!(ErrorCode::parse(a.as_str()), Some(*a));
            for b in &ErrorCode::ALL[i + 1..] {
                assert_ne!(a.as_str(), b.as_str());
            }
        }
        assert_eq!(ErrorCode::parse("nope"), None);
        assert_eq!(ErrorCode::NamespaceFrozen.http_status(), 423);
    }

    #[test]
    fn client_codes_are_one_to_one() {
        for (i, a) in ErrorCode::ALL.iter().enumerate() {
            for b in &ErrorCode::ALL[i + 1..] {
                assert_ne!(a.client_code(), b.client_code(), "{a} and {b}");
            }
        }
        assert_eq!(ErrorCode::NamespaceExhausted.client_code(), "exhausted");
        assert_eq!(ErrorCode::Unavailable.client_code(), "unavailable");
    }

    #[test]
    fn statuses_without_a_body_get_the_matching_code() {
        for code in [
            ErrorCode::Unauthenticated,
            ErrorCode::Forbidden,
            ErrorCode::NotFound,
            ErrorCode::MethodNotAllowed,
            ErrorCode::PayloadTooLarge,
        ] {
            assert_eq!(ErrorCode::for_client_status(code.http_status()), code);
        }
        assert_eq!(ErrorCode::for_client_status(418), ErrorCode::InvalidRequest);
    }
}
