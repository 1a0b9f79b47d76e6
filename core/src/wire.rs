//! JSON wire types shared by the authority and the client (feature `serde`),
//! and the authority's encoder of answers ([`HttpAnswer`]).
//!
//! Every ID-valued field is a decimal string, because JS numbers are exact
//! only to 2^53 - 1; `count` is a JSON integer ([`JsonCount`]: any JSON
//! number whose value is a whole number up to 2^53 - 1, so `169.0` and
//! `1.69e2` read as 169, as JSON Schema's `integer` says). The authority
//! parses requests strictly: unknown fields are rejected, and an ID field
//! given as a number, with a sign, a leading zero or as `null` is an
//! error. Clients read answers leniently, through
//! [`crate::reply::Reply::from_http`].
//!
//! - request: [`GrantRequest`]
//!   `{"namespace":"orders","incarnation":"A9","requestId":"r17","count":10000}`
//! - grant: [`GrantReply`]
//!   `{"namespace":"orders","incarnation":"A9","requestId":"r17","start":"1001","end":"11001","count":10000,"replayed":false,"maxCount":10000000,"remaining":"9007199254729990"}`
//! - error: [`ErrorReply`]
//!   `{"error":{"code":"namespace_exhausted","message":"...","remaining":"12"}}`

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use core::marker::PhantomData;

use serde::de::{self, value::MapAccessDeserializer, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::authority::Refusal;
use crate::code::ErrorCode;
use crate::decimal::{parse_bound, parse_u64, Decimal};
use crate::names::{Incarnation, Namespace, RequestId};
use crate::protocol::{GrantReply, GrantRequest};

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

/// `T` read from a JSON object only: serde's derive would also take an
/// array of the fields in order, which no client writes. The authority reads
/// every request body through it, and [`GrantRequest`] reads its fields so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectOnly<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
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
            .map(ObjectOnly)
    }
}

/// A count in a request: a JSON number whose value is a whole number from
/// 0 to 2^53 - 1 (`169`, `169.0`, `1.69e2`); a fraction, a negative value,
/// a value past 2^53 - 1 given with a fraction or exponent (not exact as a
/// JSON number), or any other type is an error. Written as an integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct JsonCount(pub u64);

impl<'de> Deserialize<'de> for JsonCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = JsonCount;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a whole number")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<JsonCount, E> {
                Ok(JsonCount(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<JsonCount, E> {
                u64::try_from(v)
                    .map(JsonCount)
                    .map_err(|_| E::custom("a count must not be negative"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<JsonCount, E> {
                // Exact below 2^53: a whole f64 there is the integer written.
                const EXACT: f64 = 9_007_199_254_740_991.0;
                if (0.0..=EXACT).contains(&v) && v == (v as u64) as f64 {
                    Ok(JsonCount(v as u64))
                } else {
                    Err(E::custom(
                        "a count must be a whole number from 0 to 2^53 - 1",
                    ))
                }
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct GrantRequestFields {
    namespace: Namespace,
    incarnation: Incarnation,
    request_id: RequestId,
    count: JsonCount,
}

impl Serialize for GrantRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        GrantRequestFields {
            namespace: self.namespace,
            incarnation: self.incarnation,
            request_id: self.request_id,
            count: JsonCount(self.count),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for GrantRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let ObjectOnly(f) = ObjectOnly::<GrantRequestFields>::deserialize(d)?;
        Ok(GrantRequest {
            namespace: f.namespace,
            incarnation: f.incarnation,
            request_id: f.request_id,
            count: f.count.0,
        })
    }
}

/// The exclusive `Retry-After` the authority sends with `503 unavailable`,
/// in seconds.
pub const RETRY_AFTER_SECS: u32 = 1;

impl Serialize for GrantReply {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        GrantReplyFields {
            namespace: self.grant.namespace,
            incarnation: self.grant.incarnation,
            request_id: self.grant.request_id,
            start: DecU64(self.grant.range.start()),
            end: DecBound(self.grant.range.end()),
            count: self.grant.range.count(),
            replayed: self.replayed,
            max_count: self.capacity.max_count,
            remaining: self.capacity.remaining.map(DecU64),
        }
        .serialize(s)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GrantReplyFields {
    namespace: Namespace,
    incarnation: Incarnation,
    request_id: RequestId,
    start: DecU64,
    end: DecBound,
    count: u64,
    replayed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    remaining: Option<DecU64>,
}

/// An error answer: `{"error":{...}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ErrorReply {
    /// The error.
    pub error: ErrorDetail,
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
    /// For `invalid_request` refusing a range request's `count`: the
    /// namespace's `maxCount` (a JSON integer, as in a grant), so a client
    /// that asked for more can ask again for at most this.
    #[serde(rename = "maxCount", skip_serializing_if = "Option::is_none")]
    pub max_count: Option<u64>,
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
                max_count: None,
            },
        }
    }

    /// The answer to a refused range request: its code, its message and,
    /// for an exhaustion, exactly what remains; for a count out of bounds,
    /// the namespace's `maxCount`.
    pub fn refusal(refusal: &Refusal) -> ErrorReply {
        let mut e = ErrorReply::new(refusal.code(), alloc::format!("{refusal}"));
        match *refusal {
            Refusal::Exhausted { remaining } => e.error.remaining = Some(DecU64(remaining)),
            Refusal::BadCount { max_count } => e.error.max_count = Some(max_count),
            _ => {}
        }
        e
    }
}

/// An HTTP answer as the authority sends it: a JSON body, its status and,
/// for `503 unavailable` and the `429` refusals, `Retry-After`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpAnswer {
    /// The status.
    pub status: u16,
    /// `Retry-After`, in seconds.
    pub retry_after_secs: Option<u32>,
    /// The JSON body.
    pub body: Vec<u8>,
}

impl HttpAnswer {
    /// The answer to a grant, new or replayed: 200.
    pub fn grant(reply: &GrantReply) -> HttpAnswer {
        HttpAnswer {
            status: 200,
            retry_after_secs: None,
            body: to_json(reply),
        }
    }

    /// The answer to an error: its code's status, with `Retry-After` for
    /// `unavailable`.
    pub fn error(error: &ErrorReply) -> HttpAnswer {
        let code = error.error.code;
        HttpAnswer {
            status: code.http_status(),
            retry_after_secs: (code == ErrorCode::Unavailable).then_some(RETRY_AFTER_SECS),
            body: to_json(error),
        }
    }

    /// The answer to a refused range request, with `Retry-After` (whole
    /// seconds, rounded up) when the refusal says how long to wait.
    pub fn refusal(refusal: &Refusal) -> HttpAnswer {
        let mut answer = HttpAnswer::error(&ErrorReply::refusal(refusal));
        if let Some(ms) = refusal.retry_after_ms() {
            let secs = ms.div_ceil(1_000).clamp(1, u64::from(u32::MAX));
            answer.retry_after_secs = Some(secs as u32);
        }
        answer
    }
}

/// Encodes `value` as compact JSON, as every rangeid answer is written.
pub fn to_json<T: Serialize>(value: &T) -> Vec<u8> {
    let mut size = 512;
    loop {
        let mut buffer = vec![0u8; size];
        match serde_json_core::to_slice(value, &mut buffer) {
            Ok(n) => {
                buffer.truncate(n);
                return buffer;
            }
            Err(serde_json_core::ser::Error::BufferFull) if size < 1 << 20 => size *= 8,
            // Our types serialize without error into a large enough buffer.
            Err(_) => return b"{}".to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Capacity, Grant};
    use crate::range::Range;
    use crate::reply::Reply;
    use alloc::string::ToString;

    const REQUEST: &str =
        r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":10000}"#;
    const GRANT: &str = r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","start":"1001","end":"11001","count":10000,"replayed":false}"#;
    const ERROR: &str = r#"{"error":{"code":"namespace_exhausted","message":"only 12 IDs remain in the namespace","remaining":"12"}}"#;

    fn grant(start: u64, end: u128) -> GrantReply {
        GrantReply {
            grant: Grant {
                namespace: Namespace::new("orders").unwrap(),
                incarnation: Incarnation::new("A9").unwrap(),
                request_id: RequestId::new("r17").unwrap(),
                range: Range::new(start, end).unwrap(),
            },
            replayed: false,
            capacity: Capacity::default(),
        }
    }

    #[test]
    fn request_is_exact() {
        let r: GrantRequest = serde_json::from_str(REQUEST).unwrap();
        assert_eq!((r.namespace.as_str(), r.count), ("orders", 10_000));
        assert_eq!(serde_json::to_string(&r).unwrap(), REQUEST);
        assert_eq!(to_json(&r), REQUEST.as_bytes());
    }

    #[test]
    fn grant_is_exact_and_reads_back() {
        let g = grant(1001, 11001);
        let answer = HttpAnswer::grant(&g);
        assert_eq!((answer.status, answer.retry_after_secs), (200, None));
        assert_eq!(core::str::from_utf8(&answer.body).unwrap(), GRANT);
        assert_eq!(serde_json::to_string(&g).unwrap(), GRANT);
        assert_eq!(Reply::from_http(200, &answer.body, None), Reply::Grant(g));
        let mut with = g;
        with.capacity = Capacity {
            max_count: Some(10_000_000),
            remaining: Some((1 << 53) - 11001),
        };
        let text = String::from_utf8(HttpAnswer::grant(&with).body).unwrap();
        assert!(
            text.ends_with(r#","maxCount":10000000,"remaining":"9007199254729991"}"#),
            "{text}"
        );
        assert_eq!(
            Reply::from_http(200, text.as_bytes(), None),
            Reply::Grant(with)
        );
    }

    #[test]
    fn errors_are_exact_with_their_status() {
        let e = HttpAnswer::refusal(&Refusal::Exhausted { remaining: 12 });
        assert_eq!((e.status, e.retry_after_secs), (409, None));
        assert_eq!(core::str::from_utf8(&e.body).unwrap(), ERROR);
        let plain = HttpAnswer::error(&ErrorReply::new(ErrorCode::Forbidden, "no \"x\""));
        assert_eq!(
            core::str::from_utf8(&plain.body).unwrap(),
            r#"{"error":{"code":"forbidden","message":"no \"x\""}}"#
        );
        let busy = HttpAnswer::error(&ErrorReply::new(ErrorCode::Unavailable, "later"));
        assert_eq!((busy.status, busy.retry_after_secs), (503, Some(1)));
        let too_many = HttpAnswer::refusal(&Refusal::BadCount { max_count: 100 });
        assert_eq!(
            (
                too_many.status,
                core::str::from_utf8(&too_many.body).unwrap()
            ),
            (
                400,
                r#"{"error":{"code":"invalid_request","message":"count must be between 1 and 100","maxCount":100}}"#
            )
        );
        let long = "é".repeat(2000);
        let big = HttpAnswer::error(&ErrorReply::new(ErrorCode::InvalidRequest, long.clone()));
        let v: serde_json::Value = serde_json::from_slice(&big.body).unwrap();
        assert_eq!(v["error"]["message"], long.as_str());
    }

    #[test]
    fn ids_at_the_edges_round_trip() {
        for (start, end) in [
            ((1u64 << 53) - 1, (1u128 << 53) + 1),
            (1 << 63, (1 << 63) + 1),
            (u64::MAX, 1 << 64),
        ] {
            let g = grant(start, end);
            let body = HttpAnswer::grant(&g).body;
            let text = core::str::from_utf8(&body).unwrap();
            assert!(
                text.contains(&alloc::format!("\"start\":\"{start}\"")),
                "{text}"
            );
            assert!(
                text.contains(&alloc::format!("\"end\":\"{end}\"")),
                "{text}"
            );
            assert_eq!(Reply::from_http(200, &body, None), Reply::Grant(g));
        }
    }

    fn rejects<T: for<'de> Deserialize<'de> + fmt::Debug>(text: &str) -> String {
        match serde_json::from_str::<T>(text) {
            Ok(v) => panic!("accepted {text}: {v:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn counts_are_json_integers_however_written() {
        for (text, count) in [
            ("10000", 10_000),
            ("10000.0", 10_000),
            ("1e4", 10_000),
            ("1.0E4", 10_000),
            ("9007199254740991", (1 << 53) - 1),
            ("9007199254740991.0", (1 << 53) - 1),
            ("18446744073709551615", u64::MAX),
        ] {
            let body = alloc::format!(
                r#"{{"namespace":"orders","incarnation":"A9","requestId":"r17","count":{text}}}"#
            );
            let r: GrantRequest = serde_json::from_str(&body).unwrap();
            assert_eq!(r.count, count, "{text}");
        }
        // Written as an integer.
        let r: GrantRequest = serde_json::from_str(
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":1e4}"#,
        )
        .unwrap();
        assert!(serde_json::to_string(&r)
            .unwrap()
            .contains(r#""count":10000}"#));
    }

    #[test]
    fn requests_reject_what_formatting_never_makes() {
        let bad = [
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":10000,"x":1}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":"10000"}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":1.5}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":1e16}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":-1}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":-1.0}"#,
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":null}"#,
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
}
