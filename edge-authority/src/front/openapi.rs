//! The OpenAPI 3.1 document of API v1, served at `GET /v1/openapi.json`.
//!
//! Written here, next to the parsers whose rules it states (limits come
//! from the same constants). Schemathesis checks the running Worker
//! against it (`tests/authority/fuzz.test.mjs`, settings in
//! `tests/authority/schemathesis.toml`) and the integration tests validate
//! real answers with Ajv (`tests/authority/harness.mjs`). The admin page's
//! TypeScript types are generated from it: `edge-authority/openapi.json` is
//! this document (a test here fails when it is stale) and
//! `www/src/api/schema.gen.ts` is openapi-typescript's reading of that file
//! (`tests/www/lib.test.mjs` fails when it is stale); `node
//! www/scripts/api-types.mjs` writes both.

use rangeid_core::authority::NamespaceConfig;
use rangeid_core::ledger::Limits;
use rangeid_core::{ErrorCode, Namespace, RequestId};
use serde_json::{json, Value};

use crate::api::{DEFAULT_LIMIT, MAX_LIMIT, MAX_REASON};

/// The largest count anywhere on the wire.
const MAX_COUNT: u64 = NamespaceConfig::MAX_COUNT_LIMIT;

/// A reason: no control characters, something besides spaces (as
/// [`crate::api::reason`] checks).
const REASON: &str =
    r"^[^\u0000-\u001f\u007f-\u009f]*[^\u0000-\u0020\u007f-\u009f][^\u0000-\u001f\u007f-\u009f]*$";

/// A canonical decimal string (no sign, no leading zero), in answers.
const DECIMAL: &str = "^(0|[1-9][0-9]*)$";

/// A pattern matching exactly the canonical decimals from `lowest` (0 or 1)
/// to `highest`, so the document states the parsers' bounds (an ID up to
/// 2^64 - 1, a cursor up to 2^64) rather than "20 digits".
pub fn decimal_range(lowest: u8, highest: u128) -> String {
    let digits: Vec<u8> = highest.to_string().bytes().map(|b| b - b'0').collect();
    let k = digits.len();
    let mut alternatives = Vec::new();
    if lowest == 0 {
        alternatives.push("0".to_owned());
    }
    // Every length below k: a nonzero digit, then any digits.
    if k > 1 {
        alternatives.push(format!("[1-9][0-9]{{0,{}}}", k - 2));
    }
    // Length k: the prefix of `highest`, one smaller digit, then any digits.
    for (i, &d) in digits.iter().enumerate() {
        let low = u8::from(i == 0);
        if d > low {
            let mut alt: String = digits[..i].iter().map(|d| char::from(b'0' + d)).collect();
            alt.push_str(&format!("[{}-{}]", low, d - 1));
            if k - i - 1 > 0 {
                alt.push_str(&format!("[0-9]{{{}}}", k - i - 1));
            }
            alternatives.push(alt);
        }
    }
    alternatives.push(highest.to_string());
    format!("^({})$", alternatives.join("|"))
}

/// The export formats an import reads, oldest first (core's versions).
fn transfer_formats() -> Vec<String> {
    use rangeid_core::transfer::{FORMAT_PREFIX, OLDEST_VERSION, VERSION};
    (OLDEST_VERSION..=VERSION)
        .map(|v| format!("{FORMAT_PREFIX}{v}"))
        .collect()
}

fn dec(description: &str) -> Value {
    json!({"type": "string", "pattern": DECIMAL, "description": description})
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn content(name: &str) -> Value {
    json!({"application/json": {"schema": reference(name)}})
}

fn ok(status: &str, description: &str, schema: &str) -> (String, Value) {
    (
        status.to_owned(),
        json!({"description": description, "content": content(schema)}),
    )
}

fn errors(codes: &[ErrorCode]) -> Vec<(String, Value)> {
    let mut by_status: Vec<(u16, Vec<&str>)> = Vec::new();
    for c in codes {
        match by_status.iter_mut().find(|(s, _)| *s == c.http_status()) {
            Some((_, names)) => names.push(c.as_str()),
            None => by_status.push((c.http_status(), vec![c.as_str()])),
        }
    }
    by_status
        .into_iter()
        .map(|(status, names)| {
            let mut v = json!({
                "description": format!("error: {}", names.join(", ")),
                "content": content("Error"),
            });
            if status == 503 || status == 429 {
                v["headers"] = json!({"Retry-After": {"schema": {"type": "integer"}}});
            }
            if status == 401 {
                v["headers"] = json!({"WWW-Authenticate": {"schema": {"type": "string"}}});
            }
            if status == 405 {
                v["headers"] = json!({"Allow": {"schema": {"type": "string"}}});
            }
            (status.to_string(), v)
        })
        .collect()
}

fn operation(
    summary: &str,
    role: Option<&str>,
    body: Option<&str>,
    params: Value,
    responses: Vec<(String, Value)>,
) -> Value {
    let mut op = json!({"summary": summary, "parameters": params});
    let mut r = serde_json::Map::new();
    for (status, v) in responses {
        r.insert(status, v);
    }
    op["responses"] = Value::Object(r);
    if let Some(schema) = body {
        op["requestBody"] = json!({"required": true, "content": content(schema)});
    }
    match role {
        Some(role) => {
            op["security"] = json!([{"bearer": []}]);
            op["x-role"] = json!(role);
        }
        None => op["security"] = json!([]),
    }
    op
}

/// A namespace name: core's rule, the one source of it.
const NAME: &str = Namespace::PATTERN;

fn ns_param() -> Value {
    json!({"name": "ns", "in": "path", "required": true,
           "schema": {"type": "string", "pattern": NAME}})
}

fn limit_param() -> Value {
    json!({"name": "limit", "in": "query", "required": false,
           "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT}})
}

fn page_params() -> Value {
    json!([
        ns_param(),
        limit_param(),
        {"name": "before", "in": "query", "required": false,
         "schema": {"type": "string", "pattern": decimal_range(0, 1 << 64), "maxLength": 20},
         "description": "the previous page's nextBefore"}
    ])
}

fn with(mut base: Vec<(String, Value)>, more: &[ErrorCode]) -> Vec<(String, Value)> {
    base.extend(errors(more));
    base
}

use ErrorCode as E;

const AUTH: [ErrorCode; 4] = [
    E::Unauthenticated,
    E::Forbidden,
    E::MethodNotAllowed,
    E::Unavailable,
];

/// A positive decimal ID up to 2^64 - 1 as a request field.
fn id_in(description: &str) -> Value {
    json!({"type": "string", "pattern": decimal_range(1, u64::MAX.into()), "maxLength": 20,
        "description": description})
}

fn count0() -> Value {
    json!({"type": "integer", "minimum": 0})
}

fn schemas() -> Value {
    let name = json!({"type": "string", "pattern": NAME});
    let token = json!({"type": "string", "pattern": RequestId::PATTERN});
    let time = json!({"type": "string", "format": "date-time", "description": "RFC 3339 UTC"});
    let reason = json!({"type": "string", "minLength": 1, "maxLength": MAX_REASON,
        "pattern": REASON, "description": "printable text, not only spaces"});
    let bound = |description: &str| json!({"type": "string", "pattern": decimal_range(0, 1 << 64), "maxLength": 20, "description": description});
    let count = json!({"type": "integer", "minimum": 1, "maximum": MAX_COUNT});
    let rate = json!({"type": "object", "required": ["ranges", "idsPerSecond"], "additionalProperties": false,
        "properties": {"ranges": {"type": "integer", "minimum": 0}, "idsPerSecond": {"type": "number", "minimum": 0}}});
    let grant_entry_props = json!({
        "start": dec("first ID"), "end": dec("exclusive end"),
        "count": count, "incarnation": token, "requestId": token,
        "sub": {"type": ["string", "null"], "description": "the token subject that took it (null for grants stored before owners were kept)"},
        "at": {"type": "string", "format": "date-time",
            "description": "RFC 3339 UTC: when it was committed; for a grant kept in a span of several, when the span's first was (it was committed between at and span.lastAt)"},
        "span": {"type": "object", "required": ["firstRequestId", "grants", "lastAt"], "additionalProperties": false,
            "description": "present when the grant is kept in a span: consecutive grants of one sub and incarnation under numbered request ids, of one count, with contiguous ranges, committed within a minute; each derived exactly",
            "properties": {"firstRequestId": token, "grants": {"type": "integer", "minimum": 2},
                "lastAt": time}},
    });
    let mut lookup_props = grant_entry_props.clone();
    lookup_props["namespace"] = name.clone();
    lookup_props["id"] = dec("the ID looked up");
    let mut relay_props = grant_entry_props.clone();
    relay_props["reported"] = json!({"type": "boolean",
        "description": "whether the relay's report of this sub-grant was kept: then the lookup names the generator, else the relay"});
    relay_props["reportedAt"] =
        json!({"type": "string", "format": "date-time", "description": "when the report was kept"});
    let entry = [
        "start",
        "end",
        "count",
        "incarnation",
        "requestId",
        "sub",
        "at",
    ];
    let limits_schema = json!({"type": "object", "required": ["grantsPerSecond", "ledgerRows", "subLedgerRows"],
            "additionalProperties": false,
            "description": "what callers may add: each token sub at most grantsPerSecond new grants a second and subLedgerRows ledger rows; the ledger at most ledgerRows rows. Past one, a grant is refused 429 (rate_limited, ledger_full) with Retry-After",
            "properties": {
                "grantsPerSecond": {"type": "integer", "minimum": 1, "maximum": Limits::MAX_GRANTS_PER_SECOND,
                    "description": format!("default {}", Limits::DEFAULT_GRANTS_PER_SECOND)},
                "ledgerRows": {"type": "integer", "minimum": 1, "maximum": Limits::MAX_LEDGER_ROWS,
                    "description": format!("default {}", Limits::DEFAULT_LEDGER_ROWS)},
                "subLedgerRows": {"type": "integer", "minimum": 1, "maximum": Limits::MAX_LEDGER_ROWS,
                    "description": format!("default {}; at most ledgerRows", Limits::DEFAULT_SUB_LEDGER_ROWS)}}});
    let set_limits_schema = json!({"type": "object", "additionalProperties": false, "minProperties": 1,
            "description": "the limits to change: a number sets one, null puts it back to the default, an absent one is kept",
            "properties": {
                "grantsPerSecond": {"type": ["integer", "null"], "minimum": 1, "maximum": Limits::MAX_GRANTS_PER_SECOND},
                "ledgerRows": {"type": ["integer", "null"], "minimum": 1, "maximum": Limits::MAX_LEDGER_ROWS},
                "subLedgerRows": {"type": ["integer", "null"], "minimum": 1, "maximum": Limits::MAX_LEDGER_ROWS}}});
    let ledger_schema = json!({"type": "object", "required": ["rows", "bytes", "topSubs"], "additionalProperties": false,
                    "description": "the grant ledger: rows (spans of grants, and relays' reported sub-grants), the object's storage in bytes (null where the runtime does not say) and the subs holding the most rows",
                    "properties": {"rows": count0(), "bytes": {"type": ["integer", "null"], "minimum": 0},
                        "topSubs": {"type": "array", "maxItems": 3, "items": {"type": "object",
                            "required": ["sub", "rows"], "additionalProperties": false,
                            "properties": {"sub": {"type": ["string", "null"]}, "rows": count0()}}},
                        "relays": {"type": "array", "maxItems": crate::object::reports::RELAYS_SHOWN,
                            "description": "what relays reported of their sub-grants (docs/relays.md §6), the latest first; absent from authorities before reports",
                            "items": {"type": "object", "additionalProperties": false,
                                "required": ["sub", "batches", "kept", "dropped", "backlogDropped", "unmatched", "lastAt", "incarnation", "held", "abandoned", "subGrants", "instances", "live", "refused"],
                                "properties": {"sub": {"type": "string", "description": "relay@REGION"},
                                    "batches": count0(), "kept": count0(),
                                    "dropped": {"type": "integer", "minimum": 0, "description": "sub-grants not kept for lack of room in the ledger's budgets (reports never fill more than three quarters of the ledger's or the generator's rows)"},
                                    "backlogDropped": {"type": "integer", "minimum": 0, "description": "sub-grants the relay's instances dropped from their full report backlogs"},
                                    "unmatched": {"type": "integer", "minimum": 0, "description": "sub-grants reported that lay in none of the relay's retained grants (their grant pruned first, or a wrong report): not kept"},
                                    "lastAt": time,
                                    "incarnation": token,
                                    "held": dec("IDs the relay's live instances held at their latest reports"),
                                    "abandoned": dec("IDs the relay's instances abandoned (expired, revoked, late), and what each ended instance held at its last report (lost at its restart; an upper bound)"),
                                    "subGrants": {"type": "integer", "minimum": 0, "description": "sub-grants the relay's instances handed out, by their latest reports"},
                                    "instances": {"type": "integer", "minimum": 1, "description": "the relay's instances that reported within the retention (each restart, eviction or deploy starts one)"},
                                    "live": {"type": "integer", "minimum": 1, "description": "of those, the latest to report and any that reported within a relay lease (2 or more at once: a split)"},
                                    "refused": {"type": "object", "additionalProperties": false, "required": ["frozen", "exhausted", "conflict"],
                                        "description": "generators' requests the relay's instances refused, by code (not in the namespace's refusals, which count the namespace object's own)",
                                        "properties": {"frozen": count0(), "exhausted": count0(), "conflict": count0()}}}}}}});
    let entry_required = json!(entry);
    let lookup_required: Vec<&str> = entry.iter().chain(&["namespace", "id"]).copied().collect();
    let relay_required: Vec<&str> = entry.iter().chain(&["reported"]).copied().collect();
    lookup_props["relay"] = json!({"type": "object", "additionalProperties": false,
        "required": relay_required, "properties": relay_props,
        "description": "present for an ID a relay handed out (docs/relays.md §6): the relay's own grant that held it. The lookup's other fields name the generator once the relay's report was kept, else they repeat the relay's grant"});
    json!({
        "Error": {"type": "object", "required": ["error"], "additionalProperties": false,
            "properties": {"error": {"type": "object", "required": ["code", "message"], "additionalProperties": false,
                "properties": {
                    "code": {"type": "string", "enum": ErrorCode::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>()},
                    "message": {"type": "string"},
                    "remaining": dec("namespace_exhausted: IDs left"),
                    "next": dec("floor_below_next: the namespace's next"),
                    "maxCount": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT,
                        "description": "invalid_request for a range request's count: the namespace's maxCount; ask again for at most this"}}}}},
        "GrantRequest": {"type": "object", "required": ["namespace", "incarnation", "requestId", "count"],
            "additionalProperties": false,
            "properties": {"namespace": name, "incarnation": token, "requestId": token,
                "count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT,
                    "description": "at most the namespace's maxCount"}}},
        "Grant": {"type": "object",
            "description": "Clients ignore fields they do not know, so later versions may add some.",
            "required": ["namespace", "incarnation", "requestId", "start", "end", "count", "replayed", "maxCount", "remaining"],
            "additionalProperties": false,
            "properties": {"namespace": name, "incarnation": token, "requestId": token,
                "start": dec("first ID of the range"), "end": dec("exclusive end, up to 2^64"),
                "count": count, "replayed": {"type": "boolean"},
                "maxCount": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT, "description": "the namespace's largest request"},
                "remaining": dec("IDs left in the namespace after this grant (now, on a replay)")}},
        "CreateNamespace": {"type": "object", "required": ["namespace"], "additionalProperties": false,
            "properties": {"namespace": name, "first": id_in("default 1"),
                "max": id_in("inclusive, at least first; default 2^53-1"),
                "maxCount": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT, "description": "default 10000000"}}},
        "Floor": {"type": "object", "required": ["floor"], "additionalProperties": false,
            "properties": {"floor": id_in("the new next; never below the current one")}},
        "Reason": {"type": "object", "required": ["reason"], "additionalProperties": false,
            "properties": {"reason": reason}},
        "SetRelays": {"type": "object", "required": ["relays", "reason"], "additionalProperties": false,
            "properties": {"relays": {"type": "string", "enum": ["off", "on"]}, "reason": reason}},
        "ExportDocument": {"type": "object", "additionalProperties": false,
            "description": "A namespace as its source handed it over (POST .../export), and what POST .../import takes, unchanged. \
                check covers every other field; start is the highest of next, fence and witness, where the destination's first grant starts.",
            "required": ["format", "namespace", "first", "max", "maxCount", "next", "fence", "witness", "start",
                "source", "exportedAt", "exportedBy", "reason", "check"],
            "properties": {"format": {"type": "string", "enum": transfer_formats()}, "namespace": name,
                "first": id_in("first ID"), "max": id_in("last ID"),
                "maxCount": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT},
                "next": bound("the source's next when it froze"),
                "fence": bound("the fence the source had recorded"),
                "witness": bound("the mark the source's witness held, read just before the freeze"),
                "start": bound("where the destination's first grant starts: the highest of next, fence and witness (at most max + 1)"),
                "source": {"type": "string", "description": "the exporting authority's origin (at most 512 bytes)"},
                "exportedAt": time.clone(),
                "exportedBy": {"type": "string", "description": "the sub of the admin token that exported (at most 512 bytes)"},
                "reason": {"type": "string", "description": "the export's reason (at most 512 bytes)"},
                "settings": {"type": "object", "additionalProperties": false,
                    "required": ["relays", "grantsPerSecond", "ledgerRows", "subLedgerRows"],
                    "description": "format 2 (absent in 1): the namespace's settings at the source; an import applies the limits, and relays start off",
                    "properties": {"relays": {"type": "boolean", "description": "whether relays were on at the source"},
                        "grantsPerSecond": {"type": ["integer", "null"], "minimum": 1, "description": "null: the default"},
                        "ledgerRows": {"type": ["integer", "null"], "minimum": 1, "description": "null: the default"},
                        "subLedgerRows": {"type": ["integer", "null"], "minimum": 1, "description": "null: the default"}}},
                "check": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$",
                    "description": "SHA-256 over every other field, each written as its byte length, ':', its value (decimals as digits) and a newline, in the order listed here; a setting left at its default as 'default'"}}},
        "Summary": {"type": "object", "additionalProperties": false,
            "required": ["namespace", "first", "next", "max", "remaining", "maxCount", "state", "rangesGranted",
                "idsGranted", "createdAt", "lastGrantAt", "grantRate", "exhaustion", "fence", "refusals", "limits",
                "relays", "ledger"],
            "properties": {"namespace": name, "first": dec("first ID"), "next": dec("next grant's start"),
                "max": dec("last ID"), "remaining": dec("IDs left"),
                "maxCount": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT},
                "state": {"type": "string", "enum": ["active", "frozen"]},
                "rangesGranted": {"type": "integer", "minimum": 0}, "idsGranted": dec("IDs granted"),
                "createdAt": time, "lastGrantAt": {"type": ["string", "null"], "format": "date-time"},
                "grantRate": {"type": "object", "required": ["lastMinute", "lastHour"], "additionalProperties": false,
                    "properties": {"lastMinute": rate, "lastHour": rate}},
                "exhaustion": {"type": ["object", "null"], "required": ["seconds", "at"], "additionalProperties": false,
                    "properties": {"seconds": {"type": "number"}, "at": {"type": ["string", "null"]}}},
                "fence": {"type": "object", "required": ["mark", "skipped", "rollbacks", "witnessBehind"], "additionalProperties": false,
                    "description": "the restore fence: no grant ends above mark, which a separate witness holds",
                    "properties": {"mark": dec("the acknowledged mark"), "skipped": dec("IDs starts skipped, in all"),
                        "rollbacks": {"type": "integer", "minimum": 0,
                            "description": "times the witness was found ahead of this object's storage (the object was restored)"},
                        "witnessBehind": {"type": "integer", "minimum": 0,
                            "description": "times the witness was found below this object's fence (the witness was restored or wiped) and raised back"}}},
                "refusals": {"type": "object", "additionalProperties": false,
                    "required": ["exhausted", "frozen", "conflict", "rateLimited", "ledgerFull", "fenced"],
                    "description": "grant requests this namespace refused, by kind, since its creation (counted in memory, stored with the summary within seconds)",
                    "properties": {"exhausted": count0(), "frozen": count0(), "conflict": count0(),
                        "rateLimited": count0(), "ledgerFull": count0(), "fenced": count0()}},
                "limits": reference("Limits"),
                "relays": {"type": "string", "enum": ["off", "on"],
                    "description": "whether relays may take ranges for this namespace's generators (off by default; docs/relays.md)"},
                "ledger": ledger_schema}},
        "Limits": limits_schema,
        "SetLimits": set_limits_schema,
        "NamespaceList": {"type": "object", "required": ["namespaces", "nextAfter"], "additionalProperties": false,
            "properties": {"namespaces": {"type": "array", "items": reference("Summary")},
                "nextAfter": {"type": ["string", "null"], "pattern": NAME,
                    "description": "pass as after for the next page; null on the last"}}},
        "GrantEntry": {"type": "object", "additionalProperties": false,
            "required": entry_required, "properties": grant_entry_props},
        "GrantList": {"type": "object", "required": ["grants", "nextBefore"], "additionalProperties": false,
            "properties": {"grants": {"type": "array", "items": reference("GrantEntry")},
                "nextBefore": {"type": ["string", "null"], "pattern": DECIMAL}}},
        "Lookup": {"type": "object", "additionalProperties": false,
            "required": lookup_required, "properties": lookup_props},
        "AuditEntry": {"type": "object", "additionalProperties": false,
            "required": ["id", "at", "actor", "action", "before", "after", "reason"],
            "properties": {"id": dec("entry id"), "at": time,
                "actor": {"type": "string", "description": "the token's sub; system for the authority itself"},
                "action": {"type": "string", "enum": ["create", "floor", "freeze", "unfreeze", "limits", "relays", "fence_forward", "witness_behind", "export", "import"]},
                "before": {"type": ["object", "null"]}, "after": {"type": ["object", "null"]},
                "reason": {"type": ["string", "null"]}}},
        "AuditList": {"type": "object", "required": ["audit", "nextBefore"], "additionalProperties": false,
            "properties": {"audit": {"type": "array", "items": reference("AuditEntry")},
                "nextBefore": {"type": ["string", "null"], "pattern": DECIMAL}}},
        "Session": {"type": "object", "required": ["sub", "role", "ns", "exp"], "additionalProperties": false,
            "properties": {"sub": {"type": "string"},
                "role": {"type": "string", "enum": crate::front::token::Role::ALL.map(|r| r.as_str())},
                "ns": {"type": "array", "items": {"type": "string"}, "description": "names, or [\"*\"] for all"},
                "exp": {"type": "integer", "description": "expiry, seconds since the epoch"}}},
        "Rates": {"type": "object", "required": ["namespace", "window", "bucketSeconds", "from", "to", "buckets"],
            "additionalProperties": false,
            "properties": {"namespace": name, "window": {"type": "string", "enum": ["1h", "24h"]},
                "bucketSeconds": {"type": "integer", "enum": [60]}, "from": time, "to": time,
                "buckets": {"type": "array", "description": "minutes with grants only, oldest first",
                    "items": {"type": "object", "required": ["minute", "ranges", "ids"], "additionalProperties": false,
                        "properties": {"minute": time, "ranges": {"type": "integer", "minimum": 1},
                            "ids": dec("IDs granted in the minute")}}}}},
        "Health": {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}},
    })
}

/// The document as JSON text, built once per process.
pub fn document_text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| document().to_string())
}

/// The document as pretty-printed JSON text with a final newline: what
/// `edge-authority/openapi.json` holds.
pub fn pretty_text() -> String {
    let mut text = serde_json::to_string_pretty(&document()).unwrap_or_default();
    text.push('\n');
    text
}

/// The document. Every path, method, status and error code the Worker
/// answers with is listed.
pub fn document() -> Value {
    let admin_ns = [E::InvalidRequest, E::NamespaceNotFound, E::PayloadTooLarge];
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "rangeid authority",
            "version": "1.2.0",
            "description": "Grants disjoint ID ranges per namespace. Every ID-valued field is a decimal string; \
                counts are integers up to 2^53 - 1. Grants are retained at least an hour (24 hours by default); \
                a request is (token sub, incarnation, requestId): its replay by the same sub within that time gets \
                the same range, and the same body from another sub is another request.",
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT (HS256 or EdDSA, kid)"}},
            "schemas": schemas(),
        },
        "paths": {
            "/healthz": {"get": operation("Liveness", None, None, json!([]),
                vec![ok("200", "alive", "Health")])},
            "/v1/openapi.json": {"get": operation("This document", None, None, json!([]),
                vec![("200".into(), json!({"description": "OpenAPI 3.1", "content": {"application/json": {}}}))])},
            "/v1/session": {"get": operation("The calling token's claims", Some("any"), None, json!([]),
                with(vec![ok("200", "claims", "Session")], &AUTH))},
            "/v1/metrics": {"get": operation("Every readable namespace's figures in the Prometheus text format", Some("reader"), None,
                json!([]),
                with(with(vec![("200".into(), json!({"description": "Prometheus text exposition format 0.0.4",
                    "content": {"text/plain": {"schema": {"type": "string"}}}}))], &AUTH), &[E::InvalidRequest]))},
            "/v1/ranges": {"post": operation("Take a range", Some("generator"), Some("GrantRequest"),
                json!([{"name": "region", "in": "query", "required": false,
                    "schema": {"type": "string", "pattern": crate::api::Region::PATTERN, "maxLength": crate::api::Region::MAX_LEN},
                    "description": "which relay serves a generator's request when the namespace's relays are on (docs/relays.md): \
                        one relay per namespace and region; by default the continent the request arrives from. Ignored while \
                        relays are off and for a relay token's own requests, which go to the namespace object"}]),
                with(with(vec![ok("200", "granted (replayed: true on a replay)", "Grant")], &AUTH),
                    &[E::InvalidRequest, E::NamespaceNotFound, E::RequestConflict,
                      E::NamespaceExhausted, E::PayloadTooLarge, E::NamespaceFrozen, E::RateLimited,
                      E::LedgerFull]))},
            "/v1/namespaces": {
                "get": operation("List namespaces the token may read, by name", Some("reader"), None,
                    json!([limit_param(), {"name": "after", "in": "query", "required": false,
                        "schema": {"type": "string", "pattern": NAME}, "description": "the previous page's nextAfter"}]),
                    with(with(vec![ok("200", "summaries", "NamespaceList")], &AUTH), &[E::InvalidRequest])),
                "post": operation("Create a namespace (again with the same configuration: 200)", Some("admin"),
                    Some("CreateNamespace"), json!([]),
                    with(with(vec![ok("201", "created", "Summary"), ok("200", "already exists as asked", "Summary")], &AUTH),
                        &[E::InvalidRequest, E::NamespaceExists, E::PayloadTooLarge])),
            },
            "/v1/namespaces/{ns}": {"get": operation("Namespace summary", Some("reader"), None, json!([ns_param()]),
                with(with(vec![ok("200", "summary", "Summary")], &AUTH), &[E::NamespaceNotFound]))},
            "/v1/namespaces/{ns}/rates": {"get": operation("Grants per minute", Some("reader"), None,
                json!([ns_param(), {"name": "window", "in": "query", "required": false,
                    "schema": {"type": "string", "enum": ["1h", "24h"], "default": "1h"}}]),
                with(with(vec![ok("200", "buckets", "Rates")], &AUTH), &[E::InvalidRequest, E::NamespaceNotFound]))},
            "/v1/namespaces/{ns}/grants": {"get": operation("Retained grants, newest first", Some("reader"), None,
                page_params(),
                with(with(vec![ok("200", "grants", "GrantList")], &AUTH), &[E::InvalidRequest, E::NamespaceNotFound]))},
            "/v1/namespaces/{ns}/lookup": {"get": operation("The retained grant holding an ID", Some("reader"), None,
                json!([ns_param(), {"name": "id", "in": "query", "required": true,
                    "schema": {"type": "string", "pattern": decimal_range(1, u64::MAX.into()), "maxLength": 20}}]),
                with(with(vec![ok("200", "grant", "Lookup")], &AUTH),
                    &[E::InvalidRequest, E::NamespaceNotFound, E::GrantNotFound]))},
            "/v1/namespaces/{ns}/floor": {"post": operation("Raise next to a floor", Some("admin"), Some("Floor"),
                json!([ns_param()]),
                with(with(vec![ok("200", "summary after", "Summary")], &AUTH), &[E::InvalidRequest,
                    E::NamespaceNotFound, E::FloorBelowNext, E::PayloadTooLarge]))},
            "/v1/namespaces/{ns}/freeze": {"post": operation("Freeze: refuse new grants", Some("admin"), Some("Reason"),
                json!([ns_param()]),
                with(with(vec![ok("200", "summary after", "Summary")], &AUTH), &admin_ns))},
            "/v1/namespaces/{ns}/unfreeze": {"post": operation("Unfreeze (refused for a namespace exported from here: namespace_exported)", Some("admin"), Some("Reason"),
                json!([ns_param()]),
                with(with(vec![ok("200", "summary after", "Summary")], &AUTH),
                    &[E::InvalidRequest, E::NamespaceNotFound, E::PayloadTooLarge, E::NamespaceExported]))},
            "/v1/namespaces/{ns}/export": {"post": operation(
                "Export to move it to another authority: reads the witness, freezes the namespace (audited), retires it here (its witness raised past max, so no copy of this storage can grant again) and answers its document; it stays frozen, and a second export is refused (namespace_exported)",
                Some("admin"), Some("Reason"), json!([ns_param()]),
                with(with(vec![ok("200", "the document for POST .../import on the destination", "ExportDocument")], &AUTH),
                    &[E::InvalidRequest, E::NamespaceNotFound, E::PayloadTooLarge, E::NamespaceExported]))},
            "/v1/namespaces/{ns}/import": {"post": operation(
                "Create the namespace from an export document, with next at its start (audited; never over an existing namespace)",
                Some("admin"), Some("ExportDocument"), json!([ns_param()]),
                with(with(vec![ok("201", "imported", "Summary")], &AUTH),
                    &[E::InvalidRequest, E::NamespaceNotFound, E::ExportInvalid, E::ExportUnsupported,
                        E::ExportNamespaceMismatch, E::AlreadyImported, E::NamespaceExists, E::PayloadTooLarge]))},
            "/v1/namespaces/{ns}/limits": {"post": operation("Set the limits on what callers add (audited)",
                Some("admin"), Some("SetLimits"), json!([ns_param()]),
                with(with(vec![ok("200", "summary after", "Summary")], &AUTH), &admin_ns))},
            "/v1/namespaces/{ns}/relays": {"post": operation(
                "Turn relays on or off (audited). Turning them off, like a freeze, a floor or an export, is answered only once no relay can serve a range granted before it: at once when relays were never on, otherwise after each relay's lease ran out (RANGEID_RELAY_LEASE_MS) and, after the object's start, one lease",
                Some("admin"), Some("SetRelays"), json!([ns_param()]),
                with(with(vec![ok("200", "summary after", "Summary")], &AUTH), &admin_ns))},
            "/v1/namespaces/{ns}/audit": {"get": operation("Audit entries, newest first", Some("admin"), None,
                page_params(),
                with(with(vec![ok("200", "entries", "AuditList")], &AUTH), &[E::InvalidRequest, E::NamespaceNotFound]))},
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_document_is_this_one() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.json");
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == pretty_text(),
            "edge-authority/openapi.json is stale (the admin page's types are generated from it): \
             run node www/scripts/api-types.mjs"
        );
    }

    #[test]
    fn decimal_ranges_match_exactly_what_the_parsers_accept() {
        use proptest::prelude::*;
        use rangeid_core::decimal::{parse_bound, parse_u64};
        let id = regex::Regex::new(&decimal_range(1, u64::MAX.into())).unwrap();
        let cursor = regex::Regex::new(&decimal_range(0, 1 << 64)).unwrap();
        let small = regex::Regex::new(&decimal_range(1, 7)).unwrap();
        let check = |text: &str| {
            let as_id = parse_u64(text).is_ok_and(|v| v >= 1);
            assert_eq!(id.is_match(text), as_id, "id {text:?}");
            assert_eq!(
                cursor.is_match(text),
                parse_bound(text).is_ok(),
                "cursor {text:?}"
            );
        };
        for text in [
            "0",
            "1",
            "9",
            "10",
            "01",
            "",
            "-1",
            "18446744073709551615",
            "18446744073709551616",
            "18446744073709551617",
            "18446744073709551620",
            "19446744073709551615",
            "99999999999999999999",
            "100000000000000000000",
            "9999999999999999999",
            "18446744073709551605",
            "18446744073709551599",
            "1844674407370955161",
        ] {
            check(text);
        }
        assert!(
            small.is_match("7")
                && small.is_match("1")
                && !small.is_match("8")
                && !small.is_match("0")
        );
        proptest!(ProptestConfig::with_cases(4000), |(v in any::<u128>(), s in "[0-9]{1,21}")| {
            check(&v.to_string());
            check(&(v % (1u128 << 65)).to_string());
            check(&s);
        });
    }

    #[test]
    fn lists_every_route_and_resolves_every_ref() {
        let doc = document();
        assert_eq!(doc["openapi"], "3.1.0");
        let paths = doc["paths"].as_object().unwrap();
        for p in [
            "/healthz",
            "/v1/openapi.json",
            "/v1/ranges",
            "/v1/namespaces",
            "/v1/namespaces/{ns}",
            "/v1/namespaces/{ns}/grants",
            "/v1/namespaces/{ns}/lookup",
            "/v1/namespaces/{ns}/floor",
            "/v1/namespaces/{ns}/freeze",
            "/v1/namespaces/{ns}/unfreeze",
            "/v1/namespaces/{ns}/export",
            "/v1/namespaces/{ns}/import",
            "/v1/namespaces/{ns}/audit",
            "/v1/namespaces/{ns}/limits",
            "/v1/namespaces/{ns}/relays",
            "/v1/namespaces/{ns}/rates",
            "/v1/session",
            "/v1/metrics",
        ] {
            assert!(paths.contains_key(p), "{p}");
        }
        let text = doc.to_string();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for piece in text.split("#/components/schemas/").skip(1) {
            let name: String = piece
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            assert!(schemas.contains_key(&name), "{name}");
        }
        let ranges = &doc["paths"]["/v1/ranges"]["post"]["responses"];
        for s in [
            "200", "400", "401", "403", "404", "409", "413", "423", "429", "503",
        ] {
            assert!(ranges.get(s).is_some(), "{s}");
        }
    }

    #[test]
    fn summaries_match_the_schema_fields() {
        use crate::object::store::NamespaceRow;
        use rangeid_core::authority::NamespaceConfig;
        let row = NamespaceRow::create(
            rangeid_core::Namespace::new("x").unwrap(),
            NamespaceConfig::new(None, None, None).unwrap(),
            0,
        );
        let ledger = crate::shared::summary::LedgerJson {
            rows: 0,
            bytes: None,
            top_subs: Vec::new(),
            relays: Vec::new(),
        };
        let parts = (Default::default(), Limits::DEFAULT, ledger);
        let v =
            serde_json::to_value(crate::shared::summary::summarize(&row, &[], parts, 1)).unwrap();
        let doc = document();
        let required = doc["components"]["schemas"]["Summary"]["required"]
            .as_array()
            .unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(required.len(), keys.len());
        for k in required {
            assert!(v.get(k.as_str().unwrap()).is_some(), "{k}");
        }
    }
}
