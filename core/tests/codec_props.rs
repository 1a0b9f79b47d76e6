//! Property tests of the parsers at rangeid's boundaries.
//!
//! - The decimal codec: formatting then parsing gives every `u64` and every
//!   bound up to 2^64 back; any string is accepted exactly when it is the
//!   canonical form of a value in range (checked against a reference written
//!   here, with a different algorithm), and the error is the documented one.
//! - The JSON wire (feature `serde`; run with `--features serde`): no byte
//!   string makes any public parser panic; a request is read strictly
//!   (exactly its four fields, each of its type and canonical) and
//!   re-serializes to equivalent JSON; a grant reply reads back whatever an
//!   authority may add, and is unreadable (retried) whenever a value that
//!   matters is off; an error body keeps its code whatever the scalar types
//!   of its other fields; answers that are not rangeid JSON are classified
//!   by status alone.

use proptest::prelude::*;
use rangeid_core::decimal::{parse_bound, parse_bounded, parse_u64, Decimal, DecimalError};
use rangeid_core::range::BOUND_LIMIT;

/// The decimal rules, written independently of `decimal.rs`: the first
/// non-digit byte, then a leading zero, then the value compared with `max`
/// as digit strings (longer is larger; same length compares as text).
fn reference(s: &str, max: u128) -> Result<u128, DecimalError> {
    let b = s.as_bytes();
    if b.is_empty() {
        return Err(DecimalError::Empty);
    }
    for (at, c) in b.iter().enumerate() {
        if !c.is_ascii_digit() {
            return Err(DecimalError::NotADigit { at });
        }
    }
    if b.len() > 1 && b[0] == b'0' {
        return Err(DecimalError::LeadingZero);
    }
    let max = max.to_string();
    if b.len() > max.len() || (b.len() == max.len() && s > max.as_str()) {
        return Err(DecimalError::Overflow);
    }
    Ok(s.parse::<u128>().expect("checked digits within u128"))
}

/// Values near the places where decimal handling goes wrong: 0, 2^53,
/// 2^63, u64::MAX, 2^64, powers of ten and u128::MAX.
fn edge_u128() -> impl Strategy<Value = u128> {
    let pivots: Vec<u128> = [
        0,
        1 << 53,
        1 << 63,
        u128::from(u64::MAX),
        BOUND_LIMIT,
        u128::MAX,
    ]
    .into_iter()
    .chain((0..39).map(|e| 10u128.pow(e)))
    .collect();
    (prop::sample::select(pivots), -3i8..=3)
        .prop_map(|(p, d)| p.saturating_add_signed(i128::from(d)))
}

/// Bounds `0..=2^64`, a quarter of them at the edges.
fn bound() -> impl Strategy<Value = u128> {
    prop_oneof![
        3 => 0..=BOUND_LIMIT,
        1 => edge_u128().prop_map(|v| v.min(BOUND_LIMIT)),
    ]
}

/// Strings that are, or nearly are, decimal numbers, and arbitrary text.
fn decimal_ish() -> impl Strategy<Value = String> {
    prop_oneof![
        // Canonical and leading-zero digit strings of every length.
        "[0-9]{0,42}",
        "0[0-9]{0,21}",
        // Canonical forms of values at the edges, possibly spoilt.
        (edge_u128(), "[0 +.e\\-]{0,1}", "[0 +.e\\-]{0,1}")
            .prop_map(|(v, pre, post)| format!("{pre}{v}{post}")),
        // Signs, spaces, exponents, points and other digits.
        "[0-9 +.eE_\\-\u{660}\u{ff10}]{0,24}",
        any::<String>(),
    ]
}

/// The largest value allowed, for `parse_bounded`.
fn max_bound() -> impl Strategy<Value = u128> {
    prop_oneof![
        Just(u128::from(u64::MAX)),
        Just(BOUND_LIMIT),
        Just(u128::MAX),
        edge_u128(),
        any::<u128>(),
        any::<u64>().prop_map(u128::from),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Every `u64` formats as std does, parses back as an ID and as a bound.
    #[test]
    fn every_u64_round_trips(v in prop_oneof![any::<u64>(), edge_u128().prop_map(|v| v as u64)]) {
        let d = Decimal::new(v);
        prop_assert_eq!(d.as_str(), v.to_string());
        prop_assert_eq!(d.to_string(), v.to_string());
        prop_assert_eq!(parse_u64(d.as_str()), Ok(v));
        prop_assert_eq!(parse_bound(d.as_str()), Ok(u128::from(v)));
    }

    /// Every bound up to 2^64 round trips as a bound; as an ID only up to
    /// `u64::MAX`, and 2^64 is an overflow.
    #[test]
    fn every_bound_round_trips(v in bound()) {
        let d = Decimal::new(v);
        prop_assert_eq!(d.as_str(), v.to_string());
        prop_assert_eq!(parse_bound(d.as_str()), Ok(v));
        let as_id = u64::try_from(v).map_err(|_| DecimalError::Overflow);
        prop_assert_eq!(parse_u64(d.as_str()), as_id);
    }

    /// Any `u128` formats as std does and parses back under `u128::MAX`;
    /// past 2^64 it is not a bound.
    #[test]
    fn every_u128_formats_canonically(v in prop_oneof![any::<u128>(), edge_u128()]) {
        let d = Decimal::new(v);
        prop_assert_eq!(d.as_str(), v.to_string());
        prop_assert_eq!(parse_bounded(d.as_str(), u128::MAX), Ok(v));
        if v > BOUND_LIMIT {
            prop_assert_eq!(parse_bound(d.as_str()), Err(DecimalError::Overflow));
        }
    }

    /// A string is accepted exactly when it is canonical and in range, with
    /// the documented error otherwise; what is accepted formats back to the
    /// very same string.
    #[test]
    fn accepted_exactly_when_canonical(s in decimal_ish(), max in max_bound()) {
        let got = parse_bounded(&s, max);
        prop_assert_eq!(got, reference(&s, max));
        prop_assert_eq!(parse_bound(&s), reference(&s, BOUND_LIMIT));
        prop_assert_eq!(
            parse_u64(&s).map(u128::from),
            reference(&s, u128::from(u64::MAX))
        );
        if let Ok(v) = got {
            let d = Decimal::new(v);
            prop_assert_eq!(d.as_str(), s.as_str());
        }
    }
}

#[cfg(feature = "serde")]
mod wire {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use proptest::sample::Index;
    use rangeid_core::code::ErrorCode;
    use rangeid_core::decimal::{parse_bound, parse_u64, Decimal};
    use rangeid_core::names::CodeText;
    use rangeid_core::protocol::{Capacity, Grant, GrantReply, GrantRequest};
    use rangeid_core::range::{Range, BOUND_LIMIT};
    use rangeid_core::reply::{
        Disposition, Excerpt, Foreign, Message, Refused, Reply, ReplyCode, Transient,
        TransientKind, EXCERPT_MAX,
    };
    use rangeid_core::wire::{to_json, DecBound, DecU64, ErrorReply, HttpAnswer};
    use rangeid_core::{Incarnation, Namespace, RequestId};
    use serde_json::Value;

    const NAMESPACE: &str = "[a-z0-9][a-z0-9._-]{0,62}";
    const TOKEN: &str = "[A-Za-z0-9._:-]{1,64}";
    const STATUSES: &[u16] = &[
        0, 100, 199, 200, 201, 204, 301, 304, 399, 400, 401, 403, 404, 405, 408, 409, 413, 418,
        423, 429, 499, 500, 502, 503, 504, 599, 600, 999, 65535,
    ];

    // ---- references: the documented rules, written out again ----

    fn namespace_ok(s: &str) -> bool {
        let lower_digit = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
        let mut chars = s.chars();
        s.len() <= 63
            && chars.next().is_some_and(lower_digit)
            && chars.all(|c| lower_digit(c) || ".-_".contains(c))
    }

    fn token_ok(s: &str) -> bool {
        (1..=64).contains(&s.len())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._:-".contains(c))
    }

    /// A canonical JSON integer that fits a `u64`.
    fn json_u64(raw: &str) -> Option<u64> {
        let canonical = raw == "0"
            || (raw.starts_with(|c: char| ('1'..='9').contains(&c))
                && raw.bytes().all(|b| b.is_ascii_digit()));
        if canonical {
            raw.parse().ok()
        } else {
            None
        }
    }

    /// A request's `count` as the documented rule reads it: a plain JSON
    /// integer up to 2^64 - 1, or any other JSON number whose value is a
    /// whole number from 0 to 2^53 - 1 (`10000.0`, `1e4`, `-0`).
    fn json_count(raw: &str) -> Option<u64> {
        if let Some(v) = json_u64(raw) {
            return Some(v);
        }
        let (mantissa, exponent) = match raw.find(['e', 'E']) {
            Some(i) => (&raw[..i], Some(&raw[i + 1..])),
            None => (raw, None),
        };
        let unsigned = mantissa.strip_prefix('-').unwrap_or(mantissa);
        let (int, frac) = match unsigned.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (unsigned, None),
        };
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        let int_ok = int == "0" || (digits(int) && !int.starts_with('0'));
        let frac_ok = frac.map_or(true, digits);
        let exp_ok = exponent.map_or(true, |e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
        if !(int_ok && frac_ok && exp_ok) {
            return None;
        }
        let v: f64 = raw.parse().ok()?;
        let exact = 9_007_199_254_740_991.0;
        ((-0.0..=exact).contains(&v) && v.fract() == 0.0).then_some(v as u64)
    }

    /// 408, 429 and every 5xx.
    fn retried(status: u16) -> bool {
        matches!(status, 408 | 429) || status >= 500
    }

    /// The excerpt of a body, from its docs: lossy UTF-8, whitespace and
    /// control runs as one space, trimmed, cut to whole characters.
    fn excerpt(body: &[u8]) -> String {
        let spaced: String = String::from_utf8_lossy(body)
            .chars()
            .map(|c| {
                if c.is_whitespace() || c.is_control() {
                    ' '
                } else {
                    c
                }
            })
            .collect();
        let joined = spaced.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut end = joined.len().min(EXCERPT_MAX);
        while !joined.is_char_boundary(end) {
            end -= 1;
        }
        joined[..end].trim_end().to_owned()
    }

    /// What an answer that is not rangeid JSON means, from the module docs.
    fn not_rangeid(status: u16, body: &[u8], retry_after_ms: Option<u64>) -> Reply {
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
            400..=599 if retried(status) => transient(TransientKind::NotJson),
            400..=499 => Reply::Foreign(Foreign {
                status,
                retry_after_ms,
                excerpt,
            }),
            _ => transient(TransientKind::UnexpectedStatus),
        }
    }

    /// The documented disposition of a refusal.
    fn disposition(r: &Refused) -> Disposition {
        match r.code {
            ReplyCode::Known(
                ErrorCode::Unavailable | ErrorCode::RateLimited | ErrorCode::LedgerFull,
            ) => Disposition::Retry,
            ReplyCode::Known(ErrorCode::NamespaceFrozen) => Disposition::Frozen,
            ReplyCode::Known(ErrorCode::NamespaceExhausted) => match r.remaining {
                Some(remaining) => Disposition::Exhausted { remaining },
                None => Disposition::Retry,
            },
            ReplyCode::Known(ErrorCode::Unauthenticated) => Disposition::Reauthenticate,
            ReplyCode::Known(ErrorCode::InvalidRequest) => match r.max_count {
                Some(m) if m >= 1 => Disposition::CountAbove { max_count: m },
                _ => Disposition::Final,
            },
            ReplyCode::Known(_) => Disposition::Final,
            ReplyCode::Unknown(_) if retried(r.status) => Disposition::Retry,
            ReplyCode::Unknown(_) => Disposition::Final,
        }
    }

    // ---- JSON text ----

    /// A JSON string for `s`; with `escape_all`, every character as `\u`
    /// escapes (surrogate pairs beyond the BMP).
    fn json_str(s: &str, escape_all: bool) -> String {
        if !escape_all {
            return serde_json::to_string(s).unwrap();
        }
        let mut out = String::from("\"");
        for unit in s.encode_utf16() {
            out.push_str(&format!("\\u{unit:04x}"));
        }
        out.push('"');
        out
    }

    /// `{k:v,...}` with the given whitespace around every token.
    fn object(fields: &[(String, String)], ws: &[&str]) -> String {
        let mut w = ws.iter().cycle();
        let mut out = format!("{}{{", w.next().unwrap());
        for (i, (k, v)) in fields.iter().enumerate() {
            if i > 0 {
                out.push_str(w.next().unwrap());
                out.push(',');
            }
            out.push_str(&format!(
                "{}{k}{}:{}{v}",
                w.next().unwrap(),
                w.next().unwrap(),
                w.next().unwrap()
            ));
        }
        out.push_str(&format!("{}}}{}", w.next().unwrap(), w.next().unwrap()));
        out
    }

    fn whitespace() -> impl Strategy<Value = Vec<&'static str>> {
        prop::collection::vec(
            prop::sample::select(&["", "", "", " ", "\n", "\t", "\r\n  "][..]),
            1..6,
        )
    }

    /// Any JSON value, nested a little.
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e30f64..1e30).prop_map(Value::from),
            any::<String>().prop_map(Value::String),
            "[\"\\\\{}\\[\\],: ]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-zA-Z\"\\\\]{0,6}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// A name for a field no version of rangeid writes (or one spelt
    /// differently from a known field).
    fn unknown_key() -> impl Strategy<Value = String> {
        "[a-zA-Z_]{1,10}".prop_filter("not a known field", |k| {
            ![
                "namespace",
                "incarnation",
                "requestId",
                "start",
                "end",
                "count",
                "replayed",
                "maxCount",
                "remaining",
                "error",
                "code",
                "message",
            ]
            .contains(&k.as_str())
        })
    }

    // ---- values ----

    fn request() -> impl Strategy<Value = GrantRequest> {
        (
            NAMESPACE,
            TOKEN,
            TOKEN,
            prop_oneof![any::<u64>(), 0..100u64, Just(u64::MAX)],
        )
            .prop_map(|(ns, inc, rid, count)| GrantRequest {
                namespace: Namespace::new(&ns).unwrap(),
                incarnation: Incarnation::new(&inc).unwrap(),
                request_id: RequestId::new(&rid).unwrap(),
                count,
            })
    }

    fn range() -> impl Strategy<Value = Range> {
        let start = prop_oneof![
            3 => 1..=u64::MAX,
            1 => prop::sample::select(vec![1, (1 << 53) - 1, 1 << 53, 1 << 63, u64::MAX - 1, u64::MAX]),
        ];
        (start, any::<u128>(), any::<bool>()).prop_map(|(start, r, one)| {
            let room = BOUND_LIMIT - u128::from(start);
            let count = if one { 1 } else { 1 + r % room };
            Range::new(start, u128::from(start) + count).unwrap()
        })
    }

    fn grant_reply() -> impl Strategy<Value = GrantReply> {
        (
            NAMESPACE,
            TOKEN,
            TOKEN,
            range(),
            any::<bool>(),
            any::<Option<u64>>(),
            any::<Option<u64>>(),
        )
            .prop_map(
                |(ns, inc, rid, range, replayed, max_count, remaining)| GrantReply {
                    grant: Grant {
                        namespace: Namespace::new(&ns).unwrap(),
                        incarnation: Incarnation::new(&inc).unwrap(),
                        request_id: RequestId::new(&rid).unwrap(),
                        range,
                    },
                    replayed,
                    capacity: Capacity {
                        max_count,
                        remaining,
                    },
                },
            )
    }

    /// A grant reply's fields, as an authority writes them.
    fn grant_fields(g: &GrantReply) -> Vec<(String, String)> {
        let q = |s: &str| json_str(s, false);
        let mut f = vec![
            ("namespace", q(g.grant.namespace.as_str())),
            ("incarnation", q(g.grant.incarnation.as_str())),
            ("requestId", q(g.grant.request_id.as_str())),
            ("start", q(Decimal::new(g.grant.range.start()).as_str())),
            ("end", q(Decimal::new(g.grant.range.end()).as_str())),
            ("count", g.grant.range.count().to_string()),
            ("replayed", g.replayed.to_string()),
        ];
        if let Some(m) = g.capacity.max_count {
            f.push(("maxCount", m.to_string()));
        }
        if let Some(r) = g.capacity.remaining {
            f.push(("remaining", q(Decimal::new(r).as_str())));
        }
        f.into_iter().map(|(k, v)| (q(k), v)).collect()
    }

    /// Bytes that look like JSON some of the time: token soup, damaged real
    /// answers and requests, and noise.
    fn json_ish() -> impl Strategy<Value = Vec<u8>> {
        let token = prop_oneof![
            prop::sample::select(
                &[
                    "{",
                    "}",
                    "[",
                    "]",
                    ",",
                    ":",
                    "\"",
                    "\\",
                    "\\\"",
                    "\\u",
                    "\\ud800",
                    "null",
                    "true",
                    "false",
                    "-",
                    "0",
                    "01",
                    "1e5",
                    "1.5",
                    " ",
                    "\n",
                    "\"namespace\"",
                    "\"incarnation\"",
                    "\"requestId\"",
                    "\"start\"",
                    "\"end\"",
                    "\"count\"",
                    "\"replayed\"",
                    "\"maxCount\"",
                    "\"remaining\"",
                    "\"error\"",
                    "\"code\"",
                    "\"message\"",
                    "\"orders\"",
                    "\"A9\"",
                    "\"1001\"",
                    "\"11001\"",
                    "10000",
                    "\"namespace_exhausted\"",
                    "\"18446744073709551616\"",
                    "\u{e9}",
                    "\u{1f600}",
                ][..]
            )
            .prop_map(|s| s.as_bytes().to_vec()),
            any::<u8>().prop_map(|b| vec![b]),
            "[ -~]{1,6}".prop_map(String::into_bytes),
        ];
        let soup = prop::collection::vec(token, 0..48).prop_map(|t| t.concat());
        let real = prop_oneof![
            grant_reply().prop_map(|g| HttpAnswer::grant(&g).body),
            (
                prop::sample::select(ErrorCode::ALL),
                any::<String>(),
                any::<u64>()
            )
                .prop_map(|(code, msg, rem)| {
                    let mut e = ErrorReply::new(code, msg);
                    e.error.remaining = Some(DecU64(rem));
                    e.error.next = Some(DecBound(u128::from(rem) + 1));
                    HttpAnswer::error(&e).body
                }),
            request().prop_map(|r| to_json(&r)),
        ];
        let damaged = (
            real,
            prop::collection::vec((any::<Index>(), any::<u8>(), 0..4u8), 0..4),
        )
            .prop_map(|(mut body, edits)| {
                for (at, byte, how) in edits {
                    if body.is_empty() {
                        body.push(byte);
                        continue;
                    }
                    let i = at.index(body.len());
                    match how {
                        0 => body[i] = byte,
                        1 => body.insert(i, byte),
                        2 => {
                            body.remove(i);
                        }
                        _ => body.truncate(i),
                    }
                }
                body
            });
        prop_oneof![
            3 => soup,
            3 => damaged,
            1 => prop::collection::vec(any::<u8>(), 0..96),
        ]
    }

    // ---- properties ----

    /// The outcome of `from_http` is one the docs allow for its status, and
    /// carries the status and `Retry-After` it was given.
    fn check_classification(
        status: u16,
        body: &[u8],
        retry: Option<u64>,
        r: &Reply,
    ) -> Result<(), TestCaseError> {
        match r {
            Reply::Grant(g) => {
                prop_assert_eq!(status, 200);
                // A grant read back encodes to an answer that reads back the same.
                let again = Reply::from_http(200, &HttpAnswer::grant(g).body, None);
                prop_assert_eq!(&again, r);
            }
            Reply::Refused(refused) => {
                prop_assert!((400..=599).contains(&status));
                prop_assert_eq!((refused.status, refused.retry_after_ms), (status, retry));
                prop_assert_eq!(refused.disposition(), disposition(refused));
                if let ReplyCode::Unknown(t) = refused.code {
                    prop_assert!(CodeText::new(t.as_str()).is_ok());
                    prop_assert!(ErrorCode::parse(t.as_str()).is_none());
                }
                prop_assert!(refused.message.as_str().len() <= rangeid_core::reply::MESSAGE_MAX);
            }
            Reply::Foreign(f) => {
                prop_assert!((400..=499).contains(&status) && !retried(status));
                prop_assert_eq!((f.status, f.retry_after_ms), (status, retry));
                prop_assert_eq!(r, &not_rangeid(status, body, retry));
                prop_assert_eq!(f.excerpt.as_str(), excerpt(body));
                let blocks = if status == 401 {
                    Disposition::Reauthenticate
                } else {
                    Disposition::Blocked
                };
                prop_assert_eq!(f.disposition(), blocks);
            }
            Reply::Transient(t) => {
                prop_assert_eq!((t.status, t.retry_after_ms), (Some(status), retry));
                prop_assert_eq!(r, &not_rangeid(status, body, retry));
                prop_assert_eq!(t.excerpt.as_str(), excerpt(body));
                prop_assert!(status != 200 || t.kind == TransientKind::UnreadableGrant);
            }
            other => prop_assert!(false, "a reply this test does not know: {:?}", other),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// No byte string makes any public parser panic, and `from_http`
        /// only ever answers what its status allows.
        #[test]
        fn no_bytes_make_a_parser_panic(
            body in json_ish(),
            status in prop_oneof![prop::sample::select(STATUSES), any::<u16>()],
            retry in any::<Option<u64>>(),
        ) {
            for s in [status, 200, 409, 503] {
                let r = Reply::from_http(s, &body, retry);
                check_classification(s, &body, retry, &r)?;
            }
            let _ = serde_json::from_slice::<GrantRequest>(&body);
            let _ = serde_json::from_slice::<DecU64>(&body);
            let _ = serde_json::from_slice::<DecBound>(&body);
            let _ = serde_json::from_slice::<ErrorCode>(&body);
            let _ = serde_json::from_slice::<Namespace>(&body);
            let _ = serde_json::from_slice::<Incarnation>(&body);
            let _ = serde_json::from_slice::<RequestId>(&body);
            let _ = serde_json::from_slice::<CodeText>(&body);
            let _ = serde_json_core::from_slice::<GrantRequest>(&body);
            let _ = serde_json_core::from_slice::<DecU64>(&body);
            let _ = serde_json_core::from_slice::<DecBound>(&body);
            let _ = serde_json_core::from_slice::<ErrorCode>(&body);
            let _ = serde_json_core::from_slice::<Namespace>(&body);
            if let Ok(text) = std::str::from_utf8(&body) {
                let _ = parse_u64(text);
                let _ = parse_bound(text);
                let _ = Namespace::new(text);
                let _ = Incarnation::new(text);
                let _ = RequestId::new(text).map(|r| r.number());
                let _ = CodeText::lossy(text);
                let _ = ErrorCode::parse(text);
                let _ = Message::new(text);
            }
        }

        /// The excerpt of any bytes follows its documented rule and its
        /// bound.
        #[test]
        fn excerpts_follow_their_rule(
            body in prop::collection::vec(prop_oneof![any::<u8>(), Just(b' '), Just(b'\n'), Just(0xC3), Just(0xA9)], 0..400),
        ) {
            let e = Excerpt::of(&body);
            prop_assert!(e.as_str().len() <= EXCERPT_MAX);
            prop_assert_eq!(e.as_str(), excerpt(&body));
        }

        /// Whatever the body, an answer that cannot be rangeid JSON is
        /// classified by its status alone.
        #[test]
        fn non_json_answers_follow_their_status(
            body in "[<a-zA-Z ]{0,40}",
            status in prop_oneof![prop::sample::select(STATUSES), any::<u16>()],
            retry in any::<Option<u64>>(),
        ) {
            prop_assert_eq!(Reply::from_http(status, body.as_bytes(), retry), not_rangeid(status, body.as_bytes(), retry));
        }

        /// A request serializes as its wire form, with both encoders, and
        /// reads back the same, however its fields are ordered, spaced and
        /// escaped.
        #[test]
        fn requests_round_trip(
            r in request(),
            order in Just(vec![0usize, 1, 2, 3]).prop_shuffle(),
            escape in any::<[bool; 4]>(),
            ws in whitespace(),
        ) {
            let text = serde_json::to_string(&r).unwrap();
            prop_assert_eq!(to_json(&r), text.as_bytes());
            let expected = serde_json::json!({
                "namespace": r.namespace.as_str(),
                "incarnation": r.incarnation.as_str(),
                "requestId": r.request_id.as_str(),
                "count": r.count,
            });
            prop_assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected);
            prop_assert_eq!(serde_json::from_str::<GrantRequest>(&text).unwrap(), r);

            let fields = [
                ("namespace", json_str(r.namespace.as_str(), escape[0])),
                ("incarnation", json_str(r.incarnation.as_str(), escape[1])),
                ("requestId", json_str(r.request_id.as_str(), escape[2])),
                ("count", r.count.to_string()),
            ];
            let fields: Vec<_> = order
                .iter()
                .map(|&i| (json_str(fields[i].0, escape[3]), fields[i].1.clone()))
                .collect();
            let input = object(&fields, &ws);
            let back: GrantRequest = serde_json::from_str(&input).unwrap();
            prop_assert_eq!(back, r);
            prop_assert_eq!(
                serde_json::to_value(back).unwrap(),
                serde_json::from_str::<Value>(&input).unwrap()
            );
        }

        /// Requests are strict: accepted exactly when they hold the four
        /// fields once each (no others), the names valid strings and `count`
        /// a JSON integer (however written); then they re-serialize to
        /// JSON equivalent in value to the input.
        #[test]
        fn requests_accept_exactly_the_documented_shape(
            fields in request_fields(),
            ws in whitespace(),
        ) {
            let rendered: Vec<(String, String)> = fields
                .iter()
                .map(|f| (json_str(&f.key, f.escape_key), f.value.render()))
                .collect();
            let input = object(&rendered, &ws);
            let got = serde_json::from_str::<GrantRequest>(&input);
            match (expected_request(&fields), got) {
                (Some(want), Ok(got)) => {
                    prop_assert_eq!(got, want);
                    let mut input_value = serde_json::from_str::<Value>(&input).unwrap();
                    // 1e4 and 10000.0 are the integer 10000, written so.
                    input_value["count"] = Value::from(want.count);
                    prop_assert_eq!(serde_json::to_value(got).unwrap(), input_value);
                }
                (None, Err(_)) => {}
                (want, got) => prop_assert!(false, "{input}: expected {want:?}, got {got:?}"),
            }
        }

        /// A grant answer reads back exactly, with its capacity, and still
        /// does with fields it does not know (any JSON), in any order and
        /// spacing.
        #[test]
        fn grants_read_back_and_tolerate_additions(
            g in grant_reply(),
            extra in prop::collection::vec((unknown_key(), json_value()), 0..4),
            seed in any::<Index>(),
            ws in whitespace(),
            retry in any::<Option<u64>>(),
        ) {
            let body = HttpAnswer::grant(&g).body;
            prop_assert_eq!(Reply::from_http(200, &body, retry), Reply::Grant(g));

            let mut fields = grant_fields(&g);
            prop_assert_eq!(
                serde_json::from_str::<Value>(&object(&fields, &[""])).unwrap(),
                serde_json::from_slice::<Value>(&body).unwrap()
            );
            for (k, v) in extra {
                fields.push((json_str(&k, false), serde_json::to_string(&v).unwrap()));
            }
            rotate_shuffle(&mut fields, seed);
            let input = object(&fields, &ws);
            prop_assert_eq!(
                Reply::from_http(200, input.as_bytes(), retry),
                Reply::Grant(g),
                "{}", input
            );
        }

        /// A grant whose values do not hold together, or are not in their
        /// canonical form and type, is unreadable and retried, never
        /// guessed.
        #[test]
        fn spoilt_grants_are_retried(
            g in grant_reply(),
            damage in damage(),
            retry in any::<Option<u64>>(),
        ) {
            let mut fields = grant_fields(&g);
            damage.apply(&g, &mut fields);
            let input = object(&fields, &[""]);
            prop_assert_eq!(
                Reply::from_http(200, input.as_bytes(), retry),
                Reply::Transient(Transient {
                    kind: TransientKind::UnreadableGrant,
                    status: Some(200),
                    retry_after_ms: retry,
                    excerpt: Excerpt::of(input.as_bytes()),
                }),
                "{}", input
            );
        }

        /// An error body keeps its code (known, or its text when valid),
        /// its message as written, and `remaining` only when it is a
        /// canonical decimal string; scalars of another type and unknown
        /// fields are ignored. The disposition follows the documented table.
        #[test]
        fn errors_keep_their_code(
            e in error_body(),
            status in 400u16..=599,
            retry in any::<Option<u64>>(),
            seed in any::<Index>(),
            ws in whitespace(),
        ) {
            let mut inner = vec![(json_str("code", false), json_str(&e.code, false))];
            if let Some(m) = &e.message {
                inner.push((json_str("message", false), m.render()));
            }
            if let Some(r) = &e.remaining {
                inner.push((json_str("remaining", false), r.render()));
            }
            if let Some(m) = e.max_count {
                inner.push((json_str("maxCount", false), m.to_string()));
            }
            for (k, v) in &e.inner_extra {
                inner.push((json_str(k, false), serde_json::to_string(v).unwrap()));
            }
            rotate_shuffle(&mut inner, seed);
            let mut outer = vec![(json_str("error", false), object(&inner, &ws))];
            for (k, v) in &e.outer_extra {
                outer.push((json_str(k, false), serde_json::to_string(v).unwrap()));
            }
            rotate_shuffle(&mut outer, seed);
            let input = object(&outer, &ws);

            let code = match ErrorCode::parse(&e.code) {
                Some(known) => ReplyCode::Known(known),
                None => ReplyCode::Unknown(CodeText::lossy(&e.code)),
            };
            let message = match &e.message {
                Some(Field::Str(s, escape)) => {
                    let quoted = json_str(s, *escape);
                    Message::new(&quoted[1..quoted.len() - 1])
                }
                _ => Message::EMPTY,
            };
            let remaining = match &e.remaining {
                Some(Field::Str(s, false)) => parse_u64(s).ok(),
                _ => None,
            };
            let want = Refused {
                code,
                status,
                message,
                remaining,
                max_count: e.max_count,
                retry_after_ms: retry,
            };
            let got = Reply::from_http(status, input.as_bytes(), retry);
            prop_assert_eq!(got, Reply::Refused(want), "{}", input);
            prop_assert_eq!(want.disposition(), disposition(&want));
        }
    }

    /// A deterministic reordering of `v` chosen by `seed`.
    fn rotate_shuffle<T>(v: &mut [T], seed: Index) {
        if v.len() > 1 {
            let k = seed.index(v.len());
            v.rotate_left(k);
            if k % 2 == 1 {
                v.reverse();
            }
        }
    }

    // ---- requests as field lists ----

    /// A field value as written in JSON: a string (possibly escaped) or raw
    /// JSON text of another type.
    #[derive(Clone, Debug)]
    enum Field {
        Str(String, bool),
        Raw(String),
    }

    impl Field {
        fn render(&self) -> String {
            match self {
                Field::Str(s, escape) => json_str(s, *escape),
                Field::Raw(r) => r.clone(),
            }
        }
    }

    #[derive(Clone, Debug)]
    struct RequestField {
        key: String,
        escape_key: bool,
        value: Field,
    }

    fn string_value() -> impl Strategy<Value = String> {
        prop_oneof![
            NAMESPACE.prop_map(|s| s),
            TOKEN.prop_map(|s| s),
            // Near misses: capitals, spaces, slashes, empty, too long.
            "[A-Za-z0-9._:/ -]{0,4}",
            "[a-z]{62,66}",
            "[a-z]{63,66}".prop_map(|s| s.to_uppercase()),
            "\\PC{0,6}",
        ]
    }

    fn field_value() -> impl Strategy<Value = Field> {
        prop_oneof![
            4 => (string_value(), any::<bool>()).prop_map(|(s, e)| Field::Str(s, e)),
            2 => any::<u64>().prop_map(|n| Field::Raw(n.to_string())),
            1 => (u128::from(u64::MAX)..).prop_map(|n| Field::Raw((n + 1).to_string())),
            1 => any::<u64>().prop_map(|n| Field::Str(n.to_string(), false)),
            2 => prop::sample::select(
                &[
                    "-0", "-1", "1e4", "1E4", "1.0", "10000.0", "01", "00", "-", "+1", "null",
                    "true", "false", "[]", "[1]", "{}", "{\"count\":1}", "1e400", "1.5",
                    "-1.0", "9007199254740991.0", "9007199254740993.0", "1e16", "1.e4", ".5",
                ][..]
            )
            .prop_map(|s| Field::Raw(s.to_owned())),
        ]
    }

    fn request_key() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => prop::sample::select(&["namespace", "incarnation", "requestId", "count"][..])
                .prop_map(str::to_owned),
            1 => prop::sample::select(
                &["request_id", "Namespace", "requestid", "count ", "", "x", "maxCount"][..]
            )
            .prop_map(str::to_owned),
        ]
    }

    /// A valid request's fields with a few edits (a changed value, a
    /// dropped, duplicated or unknown field), or fields made up wholesale.
    fn request_fields() -> impl Strategy<Value = Vec<RequestField>> {
        let valid = (request(), any::<[bool; 5]>()).prop_map(|(r, esc)| {
            vec![
                RequestField {
                    key: "namespace".into(),
                    escape_key: esc[4],
                    value: Field::Str(r.namespace.as_str().into(), esc[0]),
                },
                RequestField {
                    key: "incarnation".into(),
                    escape_key: false,
                    value: Field::Str(r.incarnation.as_str().into(), esc[1]),
                },
                RequestField {
                    key: "requestId".into(),
                    escape_key: esc[4],
                    value: Field::Str(r.request_id.as_str().into(), esc[2]),
                },
                RequestField {
                    key: "count".into(),
                    escape_key: false,
                    value: Field::Raw(r.count.to_string()),
                },
            ]
        });
        let edit = (
            0..4u8,
            any::<Index>(),
            request_key(),
            field_value(),
            any::<bool>(),
        );
        let edited = (valid, prop::collection::vec(edit, 0..3)).prop_map(|(mut fields, edits)| {
            for (how, at, key, value, escape_key) in edits {
                let i = at.index(fields.len().max(1));
                match how {
                    0 if !fields.is_empty() => fields[i].value = value,
                    1 if !fields.is_empty() => {
                        fields.remove(i);
                    }
                    2 if !fields.is_empty() => {
                        let again = fields[i].clone();
                        fields.push(again);
                    }
                    _ => fields.push(RequestField {
                        key,
                        escape_key,
                        value,
                    }),
                }
            }
            fields
        });
        let made_up = prop::collection::vec(
            (request_key(), any::<bool>(), field_value()).prop_map(|(key, escape_key, value)| {
                RequestField {
                    key,
                    escape_key,
                    value,
                }
            }),
            0..6,
        );
        prop_oneof![3 => edited, 1 => made_up].prop_shuffle()
    }

    /// The documented rules for a request, applied to a field list.
    fn expected_request(fields: &[RequestField]) -> Option<GrantRequest> {
        let mut seen: BTreeMap<&str, &Field> = BTreeMap::new();
        for f in fields {
            if !["namespace", "incarnation", "requestId", "count"].contains(&f.key.as_str()) {
                return None;
            }
            if seen.insert(&f.key, &f.value).is_some() {
                return None;
            }
        }
        let text = |k: &str| match seen.get(k) {
            Some(Field::Str(s, _)) => Some(s.as_str()),
            _ => None,
        };
        let namespace = text("namespace").filter(|s| namespace_ok(s))?;
        let incarnation = text("incarnation").filter(|s| token_ok(s))?;
        let request_id = text("requestId").filter(|s| token_ok(s))?;
        let count = match seen.get("count") {
            Some(Field::Raw(raw)) => json_count(raw)?,
            _ => return None,
        };
        Some(GrantRequest {
            namespace: Namespace::new(namespace).unwrap(),
            incarnation: Incarnation::new(incarnation).unwrap(),
            request_id: RequestId::new(request_id).unwrap(),
            count,
        })
    }

    // ---- spoilt grants ----

    #[derive(Clone, Debug)]
    enum Damage {
        /// Drop a required field.
        Drop(&'static str),
        /// Write an ID field other than canonically: as a number, with a
        /// leading zero or a sign, spaced, empty, `null`.
        Uncanonical(&'static str, u8),
        /// `start` of 0.
        ZeroStart,
        /// `end` at or below `start`, or past 2^64.
        BadEnd(u8, u64),
        /// `count` not `end - start`, or not a JSON integer.
        BadCount(u8),
        /// `replayed` not a boolean.
        BadReplayed(&'static str),
        /// A name that is not valid for its field, or not a string.
        BadName(&'static str, String),
        /// `remaining` present but not a canonical decimal string.
        BadRemaining(u8),
    }

    fn damage() -> impl Strategy<Value = Damage> {
        let required = || {
            prop::sample::select(
                &[
                    "namespace",
                    "incarnation",
                    "requestId",
                    "start",
                    "end",
                    "count",
                    "replayed",
                ][..],
            )
        };
        prop_oneof![
            required().prop_map(Damage::Drop),
            (prop::sample::select(&["start", "end"][..]), 0..7u8)
                .prop_map(|(k, how)| Damage::Uncanonical(k, how)),
            Just(Damage::ZeroStart),
            (0..3u8, any::<u64>()).prop_map(|(how, d)| Damage::BadEnd(how, d)),
            (0..5u8).prop_map(Damage::BadCount),
            prop::sample::select(&["\"false\"", "0", "1", "null", "[]", "{}"][..])
                .prop_map(Damage::BadReplayed),
            (
                prop::sample::select(&["namespace", "incarnation", "requestId"][..]),
                prop_oneof![
                    Just(String::from("\"\"")),
                    Just(String::from("1")),
                    Just(String::from("null")),
                    "[A-Z]{0,3} [A-Z]{0,3}".prop_map(|s| json_str(&s, false)),
                    "[a-z]{65,70}".prop_map(|s| json_str(&s, false)),
                ],
            )
                .prop_map(|(k, v)| Damage::BadName(k, v)),
            (0..6u8).prop_map(Damage::BadRemaining),
        ]
    }

    impl Damage {
        fn apply(&self, g: &GrantReply, fields: &mut Vec<(String, String)>) {
            let set = |fields: &mut Vec<(String, String)>, key: &str, value: String| {
                let k = json_str(key, false);
                match fields.iter_mut().find(|(f, _)| *f == k) {
                    Some(f) => f.1 = value,
                    None => fields.push((k, value)),
                }
            };
            let start = g.grant.range.start();
            let end = g.grant.range.end();
            match self {
                Damage::Drop(key) => {
                    let k = json_str(key, false);
                    fields.retain(|(f, _)| *f != k);
                }
                Damage::Uncanonical(key, how) => {
                    let v = if *key == "start" {
                        u128::from(start)
                    } else {
                        end
                    };
                    let d = Decimal::new(v);
                    let text = match how {
                        0 => d.as_str().to_owned(),
                        1 => format!("\"0{d}\""),
                        2 => format!("\"+{d}\""),
                        3 => format!("\" {d}\""),
                        4 => format!("\"{d}.0\""),
                        5 => "\"\"".to_owned(),
                        _ => "null".to_owned(),
                    };
                    set(fields, key, text);
                }
                Damage::ZeroStart => set(fields, "start", "\"0\"".into()),
                Damage::BadEnd(how, d) => {
                    let bad = match how {
                        0 => u128::from(start),
                        1 => u128::from(start) - u128::from(*d % start),
                        _ => BOUND_LIMIT + 1 + u128::from(*d),
                    };
                    set(fields, "end", json_str(Decimal::new(bad).as_str(), false));
                }
                Damage::BadCount(how) => {
                    let count = g.grant.range.count();
                    let text = match how {
                        0 if count < u64::MAX => (count + 1).to_string(),
                        0 | 1 => (count - 1).to_string(),
                        2 => json_str(&count.to_string(), false),
                        3 => format!("{count}.0"),
                        _ => format!("{count}e0"),
                    };
                    set(fields, "count", text);
                }
                Damage::BadReplayed(v) => set(fields, "replayed", (*v).to_owned()),
                Damage::BadName(key, v) => set(fields, key, v.clone()),
                Damage::BadRemaining(how) => {
                    let r = g.capacity.remaining.unwrap_or(7);
                    let text = match how {
                        0 => r.to_string(),
                        1 => format!("\"0{r}\""),
                        2 => format!("\"-{r}\""),
                        3 => "\"\"".to_owned(),
                        4 => json_str(
                            &(u128::from(u64::MAX) + 1 + u128::from(r)).to_string(),
                            false,
                        ),
                        _ => "[]".to_owned(),
                    };
                    set(fields, "remaining", text);
                }
            }
        }
    }

    // ---- error bodies ----

    #[derive(Clone, Debug)]
    struct ErrorBody {
        code: String,
        message: Option<Field>,
        remaining: Option<Field>,
        max_count: Option<u64>,
        inner_extra: Vec<(String, Value)>,
        outer_extra: Vec<(String, Value)>,
    }

    /// A scalar of a type other than string.
    fn other_scalar() -> impl Strategy<Value = Field> {
        prop_oneof![
            prop::sample::select(&["null", "true", "false", "0", "-1", "1.5e3"][..])
                .prop_map(|s| Field::Raw(s.to_owned())),
            any::<u64>().prop_map(|n| Field::Raw(n.to_string())),
        ]
    }

    fn error_body() -> impl Strategy<Value = ErrorBody> {
        let code = prop_oneof![
            prop::sample::select(ErrorCode::ALL).prop_map(|c| c.as_str().to_owned()),
            "[a-z][a-z0-9_]{0,47}",
            "[a-z][a-z0-9_]{47,50}",
            "\\PC{0,8}",
        ];
        let message = prop::option::of(prop_oneof![
            3 => (any::<String>(), any::<bool>()).prop_map(|(s, e)| Field::Str(s, e)),
            1 => "[a-z\u{e9}]{230,250}".prop_map(|s| Field::Str(s, false)),
            1 => other_scalar(),
        ]);
        let remaining = prop::option::of(prop_oneof![
            3 => any::<u64>().prop_map(|n| Field::Str(n.to_string(), false)),
            2 => decimal_ish_text().prop_map(|s| Field::Str(s, false)),
            2 => other_scalar(),
        ]);
        let max_count = prop::option::of(prop_oneof![Just(0u64), 1..=100_000u64, any::<u64>()]);
        let extra = || prop::collection::vec((unknown_key(), json_value()), 0..3);
        (code, message, remaining, max_count, extra(), extra()).prop_map(
            |(code, message, remaining, max_count, inner_extra, outer_extra)| ErrorBody {
                code,
                message,
                remaining,
                max_count,
                inner_extra,
                outer_extra,
            },
        )
    }

    fn decimal_ish_text() -> impl Strategy<Value = String> {
        prop_oneof!["[0-9]{0,22}", "[0-9 +.e\\-]{0,8}"]
    }

    /// Known mismatch, kept for when it is fixed: the module docs say fields
    /// of an unexpected type are ignored but the code, yet an object or an
    /// array where `remaining` or `message` belongs makes the whole body
    /// unreadable, so the code is lost: `namespace_exhausted` (retried
    /// without a trusted `remaining`) becomes `invalid_request` from the
    /// 409, which is final.
    #[test]
    fn structured_values_of_an_unexpected_type_keep_the_code() {
        for body in [
            r#"{"error":{"code":"namespace_exhausted","remaining":{}}}"#,
            r#"{"error":{"code":"namespace_exhausted","message":["m"]}}"#,
        ] {
            match Reply::from_http(409, body.as_bytes(), None) {
                Reply::Refused(r) => {
                    assert_eq!(
                        r.code,
                        ReplyCode::Known(ErrorCode::NamespaceExhausted),
                        "{body}"
                    );
                    assert_eq!(r.disposition(), Disposition::Retry, "{body}");
                }
                other => panic!("{body}: {other:?}"),
            }
        }
    }
}
