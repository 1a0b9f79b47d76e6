//! Request validation: bodies and query strings of API v1.
//!
//! Bodies are at most [`MAX_BODY`] bytes (else `413 payload_too_large`) of
//! strict JSON: one object, no unknown or duplicate fields, every ID-valued
//! field a canonical decimal string, counts JSON integers. Anything else is
//! `400 invalid_request` with a message naming the problem. Validation
//! never touches state.

use rangeid_core::authority::NamespaceConfig;
use rangeid_core::decimal::{parse_bound, parse_u64};
use rangeid_core::ledger::Limits;
use rangeid_core::wire::{DecBound, DecU64, JsonCount, ObjectOnly};
use rangeid_core::{ErrorCode, GrantRequest, Namespace};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use crate::shared::response::ApiError;

/// The largest request body accepted, in bytes.
pub const MAX_BODY: usize = 4096;
/// The longest freeze or unfreeze reason, in characters (so at most 1 KiB
/// of UTF-8).
pub const MAX_REASON: usize = 256;
/// The page size of listings when `limit` is absent.
pub const DEFAULT_LIMIT: u32 = 100;
/// The largest `limit` of a listing.
pub const MAX_LIMIT: u32 = 1000;

/// `413 payload_too_large` unless `len` fits in [`MAX_BODY`].
pub fn check_size(len: usize) -> Result<(), ApiError> {
    if len > MAX_BODY {
        return Err(ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("request body is larger than {MAX_BODY} bytes"),
        ));
    }
    Ok(())
}

/// Parses a whole body as one strict JSON object of type `T`.
pub fn parse_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    check_size(body.len())?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::invalid("request body must be a JSON object"));
    }
    let text =
        std::str::from_utf8(body).map_err(|_| ApiError::invalid("request body is not UTF-8"))?;
    serde_json::from_str::<ObjectOnly<T>>(text)
        .map(|o| o.0)
        .map_err(|e| ApiError::invalid(format!("invalid request body: {e}")))
}

/// An optional field that, when present, must hold a value (not `null`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// Parses `POST /v1/ranges`: `{namespace, incarnation, requestId, count}`.
pub fn grant_request(body: &[u8]) -> Result<GrantRequest, ApiError> {
    parse_json(body)
}

/// A validated `POST /v1/namespaces` body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreateNamespace {
    /// The new namespace's name.
    pub namespace: Namespace,
    /// Its validated bounds (absent fields take core's defaults).
    pub config: NamespaceConfig,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CreateFields {
    namespace: Namespace,
    #[serde(default, deserialize_with = "present")]
    first: Option<DecU64>,
    #[serde(default, deserialize_with = "present")]
    max: Option<DecU64>,
    #[serde(default, deserialize_with = "present")]
    max_count: Option<JsonCount>,
}

/// Parses `{namespace, first?, max?, maxCount?}`: `first` and `max` decimal
/// strings, `maxCount` a JSON integer; the bounds must satisfy core's
/// [`NamespaceConfig::new`].
pub fn create_namespace(body: &[u8]) -> Result<CreateNamespace, ApiError> {
    let f: CreateFields = parse_json(body)?;
    let config = NamespaceConfig::new(
        f.first.map(|d| d.0),
        f.max.map(|d| d.0),
        f.max_count.map(|c| c.0),
    )
    .map_err(|e| ApiError::invalid(e.to_string()))?;
    Ok(CreateNamespace {
        namespace: f.namespace,
        config,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FloorFields {
    floor: DecU64,
}

/// Parses `{floor}` (a decimal string).
pub fn floor(body: &[u8]) -> Result<u64, ApiError> {
    parse_json::<FloorFields>(body).map(|f| f.floor.0)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReasonFields {
    reason: String,
}

/// Parses `{reason}`: 1 to [`MAX_REASON`] characters, no control
/// characters, not only spaces (the OpenAPI document's pattern says the
/// same).
pub fn reason(body: &[u8]) -> Result<String, ApiError> {
    let f: ReasonFields = parse_json(body)?;
    valid_reason(f.reason)
}

fn valid_reason(reason: String) -> Result<String, ApiError> {
    if reason.chars().all(|c| c == ' ')
        || reason.chars().count() > MAX_REASON
        || reason.chars().any(char::is_control)
    {
        return Err(ApiError::invalid(format!(
            "reason must be 1 to {MAX_REASON} characters of printable text, not only spaces"
        )));
    }
    Ok(reason)
}

/// The namespace's relay setting (docs/relays.md): `off` (the default) or
/// `on`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RelaysSetting {
    /// Relays may take ranges for the namespace's generators.
    On,
    /// Only generators take ranges; a relay's request is refused.
    Off,
}

impl RelaysSetting {
    /// Its text: `on` or `off`.
    pub const fn as_str(self) -> &'static str {
        match self {
            RelaysSetting::On => "on",
            RelaysSetting::Off => "off",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RelaysFields {
    relays: RelaysSetting,
    reason: String,
}

/// Parses `{relays: "on" | "off", reason}` (the reason as [`reason`]
/// checks it).
pub fn relays(body: &[u8]) -> Result<(RelaysSetting, String), ApiError> {
    let f: RelaysFields = parse_json(body)?;
    Ok((f.relays, valid_reason(f.reason)?))
}

/// Parses an import's body for the namespace `ns` of the path: the
/// document read ([`crate::object::transfer::read`]) and checked as core
/// checks it, so a refused document is never forwarded.
pub fn import_document(
    body: &[u8],
    ns: &Namespace,
) -> Result<rangeid_core::transfer::ExportDocument, ApiError> {
    let doc = crate::object::transfer::read(body)?;
    doc.handover(ns).map_err(crate::object::transfer::refusal)?;
    Ok(doc)
}

/// One limit in a change: kept as it is, put back to the default, or set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Setting {
    /// Keep the current value.
    #[default]
    Keep,
    /// Back to the default (and to later releases' defaults).
    Default,
    /// This value.
    To(u64),
}

impl Setting {
    /// The stored value after this change to `current` (`None`: the
    /// default).
    pub fn apply(self, current: Option<u64>) -> Option<u64> {
        match self {
            Setting::Keep => current,
            Setting::Default => None,
            Setting::To(v) => Some(v),
        }
    }
}

/// A validated `POST /v1/namespaces/{ns}/limits` body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitsChange {
    /// New grants per second one caller may take.
    pub grants_per_second: Setting,
    /// Rows the whole ledger may hold.
    pub ledger_rows: Setting,
    /// Rows one caller may hold.
    pub sub_ledger_rows: Setting,
}

/// A field that, when present, is a whole number or `null`.
fn setting<'de, D: Deserializer<'de>>(d: D) -> Result<Setting, D::Error> {
    Ok(match Option::<JsonCount>::deserialize(d)? {
        None => Setting::Default,
        Some(c) => Setting::To(c.0),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct LimitsFields {
    #[serde(default, deserialize_with = "setting")]
    grants_per_second: Setting,
    #[serde(default, deserialize_with = "setting")]
    ledger_rows: Setting,
    #[serde(default, deserialize_with = "setting")]
    sub_ledger_rows: Setting,
}

/// Parses `{grantsPerSecond?, ledgerRows?, subLedgerRows?}`: at least one
/// field; each a whole number within its bounds, or `null` for the default.
/// Whether `subLedgerRows` stays within `ledgerRows` depends on the stored
/// values, so the namespace object checks that.
pub fn limits(body: &[u8]) -> Result<LimitsChange, ApiError> {
    let f: LimitsFields = parse_json(body)?;
    let change = LimitsChange {
        grants_per_second: f.grants_per_second,
        ledger_rows: f.ledger_rows,
        sub_ledger_rows: f.sub_ledger_rows,
    };
    if change == LimitsChange::default() {
        return Err(ApiError::invalid(
            "give at least one of grantsPerSecond, ledgerRows and subLedgerRows",
        ));
    }
    let within = |s: Setting, max: u64| !matches!(s, Setting::To(v) if v == 0 || v > max);
    if !within(change.grants_per_second, Limits::MAX_GRANTS_PER_SECOND) {
        return Err(ApiError::invalid(format!(
            "grantsPerSecond must be from 1 to {}, or null for the default",
            Limits::MAX_GRANTS_PER_SECOND
        )));
    }
    if !within(change.ledger_rows, Limits::MAX_LEDGER_ROWS)
        || !within(change.sub_ledger_rows, Limits::MAX_LEDGER_ROWS)
    {
        return Err(ApiError::invalid(format!(
            "ledgerRows and subLedgerRows must be from 1 to {}, or null for the default",
            Limits::MAX_LEDGER_ROWS
        )));
    }
    Ok(change)
}

/// A namespace name from a path segment; an invalid name cannot exist, so
/// it is `404 namespace_not_found`.
pub fn path_namespace(segment: &str) -> Result<Namespace, ApiError> {
    Namespace::new(segment).map_err(|_| ApiError::namespace_not_found(segment))
}

/// The query parameters `(name, value)`; no percent-decoding (no valid
/// value needs it). Empty, duplicate or unknown names are refused.
fn query_pairs<'a>(query: &'a str, known: &[&str]) -> Result<Vec<(&'a str, &'a str)>, ApiError> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        if !known.contains(&k) {
            return Err(ApiError::invalid(format!(
                "unknown query parameter {k:?}; expected one of {known:?}"
            )));
        }
        if pairs.iter().any(|(seen, _)| *seen == k) {
            return Err(ApiError::invalid(format!(
                "query parameter {k:?} given twice"
            )));
        }
        pairs.push((k, v));
    }
    Ok(pairs)
}

/// A listing's `limit`: 1 to [`MAX_LIMIT`].
fn limit(v: &str) -> Result<u32, ApiError> {
    parse_u64(v)
        .ok()
        .filter(|n| (1..=u64::from(MAX_LIMIT)).contains(n))
        .map(|n| n as u32)
        .ok_or_else(|| ApiError::invalid(format!("limit must be an integer from 1 to {MAX_LIMIT}")))
}

/// A listing's cursor: the query parameter that carries it and how its value
/// is read. Grants and audit entries page by `before` (newest first), the
/// namespace listing by `after` (ascending names).
pub trait Cursor: Sized {
    /// The query parameter's name.
    const PARAM: &'static str;
    /// The value, or what it must be (for the error message).
    fn parse(v: &str) -> Result<Self, String>;
}

/// `before`: a decimal string up to 2^64 (a grant's start for grants, an
/// entry id for audit); only entries strictly below it.
impl Cursor for DecBound {
    const PARAM: &'static str = "before";
    fn parse(v: &str) -> Result<Self, String> {
        parse_bound(v)
            .map(DecBound)
            .map_err(|e| format!("a decimal string: {e}"))
    }
}

/// `after`: a namespace name; only names after it.
impl Cursor for Namespace {
    const PARAM: &'static str = "after";
    fn parse(v: &str) -> Result<Self, String> {
        Namespace::new(v).map_err(|e| format!("a namespace name: {e}"))
    }
}

/// A page request of a listing: `limit` and an exclusive cursor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page<C> {
    /// At most this many entries (1 to [`MAX_LIMIT`]).
    pub limit: u32,
    /// Only entries past this cursor, if given.
    pub cursor: Option<C>,
}

/// Parses `?limit=&before=` or `?limit=&after=`, as the cursor `C` says.
pub fn page<C: Cursor>(query: &str) -> Result<Page<C>, ApiError> {
    let mut page = Page {
        limit: DEFAULT_LIMIT,
        cursor: None,
    };
    for (k, v) in query_pairs(query, &["limit", C::PARAM])? {
        if k == "limit" {
            page.limit = limit(v)?;
        } else {
            let cursor = C::parse(v)
                .map_err(|what| ApiError::invalid(format!("{} must be {what}", C::PARAM)))?;
            page.cursor = Some(cursor);
        }
    }
    Ok(page)
}

/// Refuses any query parameter (a route that takes none).
pub fn no_query(query: &str) -> Result<(), ApiError> {
    query_pairs(query, &[]).map(|_| ())
}

/// A relay region ([`rangeid_core::Region`], whose rule it checks): which
/// of a namespace's relays (one per namespace and region, docs/relays.md)
/// serves a generator. By default the region a request arrives in (its
/// continent); a generator may name one with `POST /v1/ranges?region=...`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Region(String);

impl Region {
    /// The longest region name.
    pub const MAX_LEN: usize = rangeid_core::Region::MAX_LEN;
    /// The rule, as the OpenAPI document states it.
    pub const PATTERN: &'static str = rangeid_core::Region::PATTERN;

    /// Checks `text` (core's rule); a bad one is `invalid_request`.
    pub fn new(text: &str) -> Result<Region, ApiError> {
        match rangeid_core::Region::new(text) {
            Ok(r) => Ok(Region(r.as_str().to_owned())),
            Err(_) => Err(ApiError::invalid(format!(
                "region must be 1 to {} characters of a-z, 0-9 and -",
                Region::MAX_LEN
            ))),
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Region {
    type Error = String;
    fn try_from(s: String) -> Result<Region, String> {
        Region::new(&s).map_err(|e| e.message)
    }
}

impl From<Region> for String {
    fn from(r: Region) -> String {
        r.0
    }
}

/// Parses `POST /v1/ranges`'s query: `?region=NAME` (optional, see
/// [`Region`]); nothing else.
pub fn grant_region(query: &str) -> Result<Option<Region>, ApiError> {
    let pairs = query_pairs(query, &["region"])?;
    pairs.first().map(|(_, v)| Region::new(v)).transpose()
}

/// Parses `?window=1h|24h` for rates (default `1h`).
pub fn window(query: &str) -> Result<crate::object::Window, ApiError> {
    let pairs = query_pairs(query, &["window"])?;
    match pairs.first() {
        None => Ok(crate::object::Window::Hour),
        Some((_, v)) => crate::object::Window::parse(v)
            .ok_or_else(|| ApiError::invalid("window must be 1h or 24h")),
    }
}

/// Parses `?id=N` for lookup: a decimal ID from 1 to 2^64 - 1.
pub fn lookup_id(query: &str) -> Result<u64, ApiError> {
    let pairs = query_pairs(query, &["id"])?;
    let (_, v) = pairs
        .first()
        .ok_or_else(|| ApiError::invalid("query parameter id is required"))?;
    match parse_u64(v) {
        Ok(0) => Err(ApiError::invalid("id must be at least 1")),
        Ok(id) => Ok(id),
        Err(e) => Err(ApiError::invalid(format!(
            "id must be a decimal string: {e}"
        ))),
    }
}

#[cfg(test)]
mod region_tests {
    use super::*;

    #[test]
    fn a_region_is_short_lowercase_letters_digits_and_dashes() {
        assert_eq!(grant_region("").unwrap(), None);
        assert_eq!(
            grant_region("region=weur").unwrap().unwrap().as_str(),
            "weur"
        );
        assert_eq!(
            grant_region("region=eu-2").unwrap().unwrap().as_str(),
            "eu-2"
        );
        let long = "a".repeat(Region::MAX_LEN);
        assert!(grant_region(&format!("region={long}")).is_ok());
        for bad in [
            "region=",
            "region=EU",
            "region=e%20u",
            "region=a/b",
            "region=x&region=y",
            "other=1",
        ] {
            let e = grant_region(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidRequest, "{bad}");
        }
        assert!(grant_region(&format!("region={long}a")).is_err());
        let re = regex::Regex::new(Region::PATTERN).unwrap();
        assert!(re.is_match("eu-2") && !re.is_match("EU"));
        // Through serde the same rule holds.
        assert!(serde_json::from_str::<Region>("\"Eu\"").is_err());
        assert_eq!(
            serde_json::to_string(&Region::new("eu").unwrap()).unwrap(),
            "\"eu\""
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt;

    #[test]
    fn relays_take_on_or_off_and_a_reason() {
        assert_eq!(
            relays(br#"{"relays":"on","reason":"edge"}"#).unwrap(),
            (RelaysSetting::On, "edge".into())
        );
        assert_eq!(
            relays(br#"{"relays":"off","reason":"x"}"#).unwrap().0,
            RelaysSetting::Off
        );
        for bad in [
            &br#"{"relays":"on"}"#[..],
            br#"{"relays":true,"reason":"x"}"#,
            br#"{"relays":"ON","reason":"x"}"#,
            br#"{"relays":"on","reason":" "}"#,
            br#"{"relays":"on","reason":"x","lease":1}"#,
        ] {
            let e = relays(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidRequest, "{bad:?}");
        }
    }

    fn code(r: Result<impl fmt::Debug, ApiError>) -> ErrorCode {
        match r {
            Ok(v) => panic!("accepted: {v:?}"),
            Err(e) => e.code,
        }
    }

    #[test]
    fn grant_requests() {
        let ok = br#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":10000}"#;
        let r = grant_request(ok).unwrap();
        assert_eq!((r.namespace.as_str(), r.count), ("orders", 10_000));
        for bad in [
            &b""[..],
            b"   ",
            b"null",
            b"[]",
            b"{}",
            b"\xff\xfe",
            br#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":"1"}"#,
            br#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":1,"x":1}"#,
            br#"{"namespace":"orders","incarnation":"A9","requestId":"r17","count":1} {}"#,
            br#"["orders","A9","r17",1]"#,
        ] {
            assert_eq!(code(grant_request(bad)), ErrorCode::InvalidRequest);
        }
        let mut big = ok.to_vec();
        big.extend(vec![b' '; MAX_BODY]);
        assert_eq!(code(grant_request(&big)), ErrorCode::PayloadTooLarge);
        let e = grant_request(
            br#"{"namespace":"Orders","incarnation":"A9","requestId":"r","count":1}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("Namespace"), "{}", e.message);
    }

    #[test]
    fn create_bodies() {
        let c = create_namespace(br#"{"namespace":"orders"}"#).unwrap();
        assert_eq!(c.config, NamespaceConfig::new(None, None, None).unwrap());
        let c = create_namespace(
            br#"{"namespace":"top","first":"18446744073709551610","max":"18446744073709551615","maxCount":5}"#,
        )
        .unwrap();
        assert_eq!(
            (c.config.first(), c.config.max(), c.config.max_count()),
            (u64::MAX - 5, u64::MAX, 5)
        );
        for bad in [
            &br#"{"namespace":"orders","first":1}"#[..],
            br#"{"namespace":"orders","first":"01"}"#,
            br#"{"namespace":"orders","first":"0"}"#,
            br#"{"namespace":"orders","first":null}"#,
            br#"{"namespace":"orders","max":"18446744073709551616"}"#,
            br#"{"namespace":"orders","first":"10","max":"9"}"#,
            br#"{"namespace":"orders","maxCount":"5"}"#,
            br#"{"namespace":"orders","maxCount":0}"#,
            br#"{"namespace":"orders","maxCount":1.5}"#,
            br#"{"namespace":"orders","namespace":"orders"}"#,
            br#"{"namespace":"orders","extra":true}"#,
            br#"{"first":"1"}"#,
            br#"{"namespace":"bad name"}"#,
        ] {
            assert_eq!(
                code(create_namespace(bad)),
                ErrorCode::InvalidRequest,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn floor_and_reason_bodies() {
        assert_eq!(
            floor(br#"{"floor":"18446744073709551615"}"#).unwrap(),
            u64::MAX
        );
        for bad in [
            &br#"{"floor":5}"#[..],
            br#"{"floor":"-5"}"#,
            br#"{}"#,
            br#"{"floor":"5","x":1}"#,
        ] {
            assert_eq!(code(floor(bad)), ErrorCode::InvalidRequest);
        }
        assert_eq!(
            reason(br#"{"reason":"incident 42"}"#).unwrap(),
            "incident 42"
        );
        for bad in [
            &br#"{"reason":""}"#[..],
            br#"{"reason":"  "}"#,
            br#"{"reason":"a\nb"}"#,
            br#"{}"#,
            br#"{"reason":1}"#,
        ] {
            assert_eq!(code(reason(bad)), ErrorCode::InvalidRequest);
        }
        let long = format!(r#"{{"reason":"{}"}}"#, "x".repeat(MAX_REASON + 1));
        assert_eq!(code(reason(long.as_bytes())), ErrorCode::InvalidRequest);
    }

    #[test]
    fn queries() {
        assert_eq!(
            page::<DecBound>("").unwrap(),
            Page {
                limit: DEFAULT_LIMIT,
                cursor: None
            }
        );
        assert_eq!(
            page::<DecBound>("limit=5&before=18446744073709551616").unwrap(),
            Page {
                limit: 5,
                cursor: Some(DecBound(1 << 64))
            }
        );
        assert_eq!(
            page::<Namespace>("after=orders&limit=1000").unwrap(),
            Page {
                limit: 1000,
                cursor: Some(Namespace::new("orders").unwrap())
            }
        );
        for bad in ["after=Orders", "after=", "before=1", "limit=0"] {
            assert_eq!(
                code(page::<Namespace>(bad)),
                ErrorCode::InvalidRequest,
                "{bad}"
            );
        }
        for bad in [
            "limit=0",
            "limit=1001",
            "limit=x",
            "limit=",
            "before=-1",
            "before=01",
            "limit=1&limit=2",
            "cursor=1",
        ] {
            assert_eq!(
                code(page::<DecBound>(bad)),
                ErrorCode::InvalidRequest,
                "{bad}"
            );
        }
        assert_eq!(lookup_id("id=18446744073709551615").unwrap(), u64::MAX);
        for bad in [
            "",
            "id=0",
            "id=",
            "id=1e3",
            "id=18446744073709551616",
            "id=1&x=2",
            "id=1&id=1",
        ] {
            assert_eq!(code(lookup_id(bad)), ErrorCode::InvalidRequest, "{bad}");
        }
    }

    #[test]
    fn limits_bodies() {
        assert_eq!(
            limits(br#"{"grantsPerSecond":10,"ledgerRows":null}"#).unwrap(),
            LimitsChange {
                grants_per_second: Setting::To(10),
                ledger_rows: Setting::Default,
                sub_ledger_rows: Setting::Keep,
            }
        );
        assert_eq!(
            limits(br#"{"subLedgerRows":1000000000}"#)
                .unwrap()
                .sub_ledger_rows,
            Setting::To(1_000_000_000)
        );
        for bad in [
            &b"{}"[..],
            br#"{"grantsPerSecond":0}"#,
            br#"{"grantsPerSecond":1000001}"#,
            br#"{"ledgerRows":1000000001}"#,
            br#"{"ledgerRows":-1}"#,
            br#"{"ledgerRows":1.5}"#,
            br#"{"ledgerRows":"5"}"#,
            br#"{"ledgerRows":5,"ledgerRows":6}"#,
            br#"{"rows":5}"#,
            br#"[5]"#,
        ] {
            assert_eq!(
                code(limits(bad)),
                ErrorCode::InvalidRequest,
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(Setting::Keep.apply(Some(3)), Some(3));
        assert_eq!(Setting::Default.apply(Some(3)), None);
        assert_eq!(Setting::To(4).apply(None), Some(4));
    }

    #[test]
    fn path_namespaces() {
        assert!(path_namespace("orders").is_ok());
        assert_eq!(code(path_namespace("Orders")), ErrorCode::NamespaceNotFound);
        assert_eq!(code(path_namespace("a%20b")), ErrorCode::NamespaceNotFound);
    }
}
