//! JSON wire types shared by the authority and the client (feature `serde`).
//!
//! Every ID-valued field is a decimal string, because JS numbers are exact
//! only to 2^53 - 1; `count` is a JSON integer. Unknown fields are
//! rejected, and parsing accepts nothing that formatting would not produce:
//! an ID field given as a number, with a sign, a leading zero or as `null`
//! is an error.
//!
//! - request: [`GrantRequest`]
//!   `{"namespace":"orders","incarnation":"A9","requestId":"r17","count":10000}`
//! - grant: [`GrantReply`]
//!   `{"namespace":"orders","incarnation":"A9","requestId":"r17","start":"1001","end":"11001","count":10000,"replayed":false}`
//! - error: [`ErrorReply`]
//!   `{"error":{"code":"namespace_exhausted","message":"...","remaining":"12"}}`

use alloc::string::String;
use core::fmt;

use core::marker::PhantomData;

use serde::de::{self, value::MapAccessDeserializer, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::authority::{Grant, GrantRequest};
use crate::code::ErrorCode;
use crate::decimal::{parse_bound, parse_u64, Decimal};
use crate::names::{Incarnation, Namespace, RequestId};
use crate::range::Range;

/// An ID-valued `u64` carried as a decimal string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DecU64(pub u64);

/// An exclusive bound (`0..=2^64`) carried as a decimal string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DecBound(pub u128);

impl Serialize for DecU64 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(Decimal::new(self.0).as_str())
    }
}

impl Serialize for DecBound {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(Decimal::new(self.0).as_str())
    }
}

struct DecimalVisitor<T>(fn(&str) -> Result<T, crate::decimal::DecimalError>);

impl<T> Visitor<'_> for DecimalVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a canonical decimal string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.0)(v).map_err(|e| E::custom(format_args!("invalid decimal string: {e}")))
    }
}

impl<'de> Deserialize<'de> for DecU64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(DecimalVisitor(parse_u64)).map(DecU64)
    }
}

impl<'de> Deserialize<'de> for DecBound {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(DecimalVisitor(parse_bound)).map(DecBound)
    }
}

/// Deserializes `T` from a JSON object only; serde's derive would also take
/// an array of the fields in order, which formatting never produces.
fn map_only<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    struct ObjectVisitor<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_map(ObjectVisitor(PhantomData))
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct GrantRequestFields {
    namespace: Namespace,
    incarnation: Incarnation,
    request_id: RequestId,
    count: u64,
}

impl Serialize for GrantRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        GrantRequestFields {
            namespace: self.namespace,
            incarnation: self.incarnation,
            request_id: self.request_id,
            count: self.count,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for GrantRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f: GrantRequestFields = map_only(d)?;
        Ok(GrantRequest {
            namespace: f.namespace,
            incarnation: f.incarnation,
            request_id: f.request_id,
            count: f.count,
        })
    }
}

/// A grant as it crosses the wire: the committed [`Grant`] and whether this
/// answer is a replay of an earlier one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(into = "GrantReplyFields")]
pub struct GrantReply {
    /// The committed grant.
    pub grant: Grant,
    /// `true` when the authority answered an already committed request.
    pub replayed: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct GrantReplyFields {
    namespace: Namespace,
    incarnation: Incarnation,
    request_id: RequestId,
    start: DecU64,
    end: DecBound,
    count: u64,
    replayed: bool,
}

impl From<GrantReply> for GrantReplyFields {
    fn from(r: GrantReply) -> Self {
        GrantReplyFields {
            namespace: r.grant.namespace,
            incarnation: r.grant.incarnation,
            request_id: r.grant.request_id,
            start: DecU64(r.grant.range.start()),
            end: DecBound(r.grant.range.end()),
            count: r.grant.range.count(),
            replayed: r.replayed,
        }
    }
}

impl<'de> Deserialize<'de> for GrantReply {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f: GrantReplyFields = map_only(d)?;
        GrantReply::try_from(f).map_err(de::Error::custom)
    }
}

impl TryFrom<GrantReplyFields> for GrantReply {
    type Error = &'static str;
    fn try_from(f: GrantReplyFields) -> Result<Self, Self::Error> {
        let range = Range::new(f.start.0, f.end.0).map_err(|e| e.describe())?;
        if range.count() != f.count {
            return Err("count does not equal end - start");
        }
        Ok(GrantReply {
            grant: Grant {
                namespace: f.namespace,
                incarnation: f.incarnation,
                request_id: f.request_id,
                range,
            },
            replayed: f.replayed,
        })
    }
}

/// An error answer: `{"error":{...}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ErrorReply {
    /// The error.
    pub error: ErrorDetail,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorReplyFields {
    error: ErrorDetail,
}

impl<'de> Deserialize<'de> for ErrorReply {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f: ErrorReplyFields = map_only(d)?;
        Ok(ErrorReply { error: f.error })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorDetailFields {
    code: ErrorCode,
    message: String,
    #[serde(default, deserialize_with = "present")]
    remaining: Option<DecU64>,
    #[serde(default, deserialize_with = "present")]
    next: Option<DecBound>,
}

impl<'de> Deserialize<'de> for ErrorDetail {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f: ErrorDetailFields = map_only(d)?;
        Ok(ErrorDetail {
            code: f.code,
            message: f.message,
            remaining: f.remaining,
            next: f.next,
        })
    }
}

/// The body of an error answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ErrorDetail {
    /// The stable code.
    pub code: ErrorCode,
    /// A human-readable explanation; not stable.
    pub message: String,
    /// For `namespace_exhausted`: exactly how many IDs remain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remaining: Option<DecU64>,
    /// For `floor_below_next`: the namespace's next value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<DecBound>,
}

impl ErrorReply {
    /// An error with a code and message and no details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ErrorReply {
        ErrorReply {
            error: ErrorDetail {
                code,
                message: message.into(),
                remaining: None,
                next: None,
            },
        }
    }
}

/// An optional field that, when present, must hold a value (not `null`).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authority::GrantRequest;
    use alloc::string::ToString;

    const REQUEST: &str =
        r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":10000}"#;
    const GRANT: &str = r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","start":"1001","end":"11001","count":10000,"replayed":false}"#;
    const ERROR: &str = r#"{"error":{"code":"namespace_exhausted","message":"only 12 IDs remain","remaining":"12"}}"#;

    #[test]
    fn request_is_exact() {
        let r: GrantRequest = serde_json::from_str(REQUEST).unwrap();
        assert_eq!((r.namespace.as_str(), r.count), ("orders", 10_000));
        assert_eq!(serde_json::to_string(&r).unwrap(), REQUEST);
    }

    #[test]
    fn grant_is_exact() {
        let g: GrantReply = serde_json::from_str(GRANT).unwrap();
        assert_eq!((g.grant.range.start(), g.grant.range.end()), (1001, 11001));
        assert_eq!(serde_json::to_string(&g).unwrap(), GRANT);
    }

    #[test]
    fn error_is_exact() {
        let e: ErrorReply = serde_json::from_str(ERROR).unwrap();
        assert_eq!(e.error.code, ErrorCode::NamespaceExhausted);
        assert_eq!(e.error.remaining, Some(DecU64(12)));
        assert_eq!(serde_json::to_string(&e).unwrap(), ERROR);
        let plain = ErrorReply::new(ErrorCode::Forbidden, "no");
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            r#"{"error":{"code":"forbidden","message":"no"}}"#
        );
    }

    #[test]
    fn ids_at_the_edges_round_trip() {
        for (start, end) in [
            ((1u64 << 53) - 1, (1u128 << 53) + 1),
            (1 << 63, (1 << 63) + 1),
            (u64::MAX, 1 << 64),
        ] {
            let range = Range::new(start, end).unwrap();
            let g = GrantReply {
                grant: Grant {
                    namespace: Namespace::new("n").unwrap(),
                    incarnation: Incarnation::new("i").unwrap(),
                    request_id: RequestId::new("r1").unwrap(),
                    range,
                },
                replayed: true,
            };
            let text = serde_json::to_string(&g).unwrap();
            assert!(
                text.contains(&alloc::format!("\"start\":\"{start}\"")),
                "{text}"
            );
            assert!(
                text.contains(&alloc::format!("\"end\":\"{end}\"")),
                "{text}"
            );
            assert_eq!(serde_json::from_str::<GrantReply>(&text).unwrap(), g);
        }
    }

    fn rejects<T: for<'de> Deserialize<'de> + fmt::Debug>(text: &str) -> String {
        match serde_json::from_str::<T>(text) {
            Ok(v) => panic!("accepted {text}: {v:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn requests_reject_what_formatting_never_makes() {
        let bad = [
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":10000,"x":1}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":"10000"}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":1e4}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":10000.0}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":-1}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17"}"#,
            r#"{"namespace":"Orders","incarnation":"A9","requestId":"r17","count":1}"#,
            r#"{"namespace":"orders","incarnation":"A 9","requestId":"r17","count":1}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"","count":1}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":1,"count":2}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":18446744073709551616}"#,
            r#"["orders","A9","r17",1]"#,
        ];
        for text in bad {
            rejects::<GrantRequest>(text);
        }
    }

    #[test]
    fn grants_reject_what_formatting_never_makes() {
        let bad = [
            GRANT.replace(r#""start":"1001""#, r#""start":1001"#),
            GRANT.replace(r#""start":"1001""#, r#""start":"01001""#),
            GRANT.replace(r#""start":"1001""#, r#""start":"+1001""#),
            GRANT.replace(r#""start":"1001""#, r#""start":null"#),
            GRANT.replace(r#""start":"1001""#, r#""start":"0""#),
            GRANT.replace(r#""end":"11001""#, r#""end":"1001""#),
            GRANT.replace(r#""end":"11001""#, r#""end":"1000""#),
            GRANT.replace(r#""end":"11001""#, r#""end":"18446744073709551617""#),
            GRANT.replace(r#""count":10000"#, r#""count":9999"#),
            GRANT.replace(r#""replayed":false"#, r#""replayed":false,"extra":true"#),
            GRANT.replace(r#","replayed":false"#, ""),
            r#"["orders","A9","r17","1001","11001",10000,false]"#.into(),
        ];
        for text in &bad {
            rejects::<GrantReply>(text);
        }
    }

    #[test]
    fn errors_reject_what_formatting_never_makes() {
        let bad = [
            ERROR.replace(r#""remaining":"12""#, r#""remaining":12"#),
            ERROR.replace(r#""remaining":"12""#, r#""remaining":null"#),
            ERROR.replace(r#""code":"namespace_exhausted""#, r#""code":"exhausted""#),
            ERROR.replace(r#""remaining":"12""#, r#""remaining":"12","hint":"x""#),
            r#"{"error":["namespace_exhausted","m"]}"#.into(),
            r#"[{"code":"forbidden","message":"m"}]"#.into(),
        ];
        for text in &bad {
            rejects::<ErrorReply>(text);
        }
    }
}
