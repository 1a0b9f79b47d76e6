//! The OpenAPI 3.1 document of API v1, served at `GET /v1/openapi.json`.
//!
//! Schemas use only `type`, `required`, `properties`,
//! `additionalProperties`, `enum`, `pattern`, `items`, `minimum` and
//! `$ref`, so the integration tests can check real answers against them
//! with a small validator.

use rangeid_core::ErrorCode;
use serde_json::{json, Value};

/// A canonical decimal string (no sign, no leading zero).
const DECIMAL: &str = "^(0|[1-9][0-9]*)$";

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
            if status == 503 {
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

fn ns_param() -> Value {
    json!({"name": "ns", "in": "path", "required": true,
           "schema": {"type": "string", "pattern": "^[a-z0-9][a-z0-9._-]{0,62}$"}})
}

fn page_params() -> Value {
    json!([
        ns_param(),
        {"name": "limit", "in": "query", "required": false,
         "schema": {"type": "string", "pattern": DECIMAL}, "description": "1 to 1000, default 100"},
        {"name": "before", "in": "query", "required": false,
         "schema": {"type": "string", "pattern": DECIMAL}, "description": "the previous page's nextBefore"}
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

fn schemas() -> Value {
    let name = json!({"type": "string", "pattern": "^[a-z0-9][a-z0-9._-]{0,62}$"});
    let token = json!({"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,64}$"});
    let time = json!({"type": "string", "description": "RFC 3339 UTC"});
    let rate = json!({"type": "object", "required": ["ranges", "idsPerSecond"], "additionalProperties": false,
        "properties": {"ranges": {"type": "integer", "minimum": 0}, "idsPerSecond": {"type": "number", "minimum": 0}}});
    let grant_entry_props = json!({
        "start": dec("first ID"), "end": dec("exclusive end"),
        "count": {"type": "integer", "minimum": 1},
        "incarnation": token, "requestId": token, "at": time,
    });
    let mut lookup_props = grant_entry_props.clone();
    lookup_props["namespace"] = name.clone();
    lookup_props["id"] = dec("the ID looked up");
    json!({
        "Error": {"type": "object", "required": ["error"], "additionalProperties": false,
            "properties": {"error": {"type": "object", "required": ["code", "message"], "additionalProperties": false,
                "properties": {
                    "code": {"type": "string", "enum": ErrorCode::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>()},
                    "message": {"type": "string"},
                    "remaining": dec("namespace_exhausted: IDs left"),
                    "next": dec("floor_below_next: the namespace's next")}}}},
        "GrantRequest": {"type": "object", "required": ["namespace", "incarnation", "requestId", "count"],
            "additionalProperties": false,
            "properties": {"namespace": name, "incarnation": token, "requestId": token,
                "count": {"type": "integer", "minimum": 1}}},
        "Grant": {"type": "object",
            "description": "Clients ignore fields they do not know, so later versions may add some.",
            "required": ["namespace", "incarnation", "requestId", "start", "end", "count", "replayed", "maxCount", "remaining"],
            "additionalProperties": false,
            "properties": {"namespace": name, "incarnation": token, "requestId": token,
                "start": dec("first ID of the range"), "end": dec("exclusive end, up to 2^64"),
                "count": {"type": "integer", "minimum": 1}, "replayed": {"type": "boolean"},
                "maxCount": {"type": "integer", "minimum": 1, "description": "the namespace's largest request"},
                "remaining": dec("IDs left in the namespace after this grant (now, on a replay)")}},
        "CreateNamespace": {"type": "object", "required": ["namespace"], "additionalProperties": false,
            "properties": {"namespace": name, "first": dec("default 1"), "max": dec("inclusive, default 2^53-1"),
                "maxCount": {"type": "integer", "minimum": 1, "description": "default 10000000"}}},
        "Floor": {"type": "object", "required": ["floor"], "additionalProperties": false,
            "properties": {"floor": dec("the new next; never below the current one")}},
        "Reason": {"type": "object", "required": ["reason"], "additionalProperties": false,
            "properties": {"reason": {"type": "string"}}},
        "Summary": {"type": "object", "additionalProperties": false,
            "required": ["namespace", "first", "next", "max", "remaining", "maxCount", "state", "rangesGranted",
                "idsGranted", "createdAt", "lastGrantAt", "grantRate", "exhaustion"],
            "properties": {"namespace": name, "first": dec("first ID"), "next": dec("next grant's start"),
                "max": dec("last ID"), "remaining": dec("IDs left"), "maxCount": {"type": "integer", "minimum": 1},
                "state": {"type": "string", "enum": ["active", "frozen"]},
                "rangesGranted": {"type": "integer", "minimum": 0}, "idsGranted": dec("IDs granted"),
                "createdAt": time, "lastGrantAt": {"type": ["string", "null"]},
                "grantRate": {"type": "object", "required": ["lastMinute", "lastHour"], "additionalProperties": false,
                    "properties": {"lastMinute": rate, "lastHour": rate}},
                "exhaustion": {"type": ["object", "null"], "required": ["seconds", "at"], "additionalProperties": false,
                    "properties": {"seconds": {"type": "number"}, "at": {"type": ["string", "null"]}}}}},
        "NamespaceList": {"type": "object", "required": ["namespaces"], "additionalProperties": false,
            "properties": {"namespaces": {"type": "array", "items": reference("Summary")}}},
        "GrantEntry": {"type": "object", "additionalProperties": false,
            "required": ["start", "end", "count", "incarnation", "requestId", "at"], "properties": grant_entry_props},
        "GrantList": {"type": "object", "required": ["grants", "nextBefore"], "additionalProperties": false,
            "properties": {"grants": {"type": "array", "items": reference("GrantEntry")},
                "nextBefore": {"type": ["string", "null"], "pattern": DECIMAL}}},
        "Lookup": {"type": "object", "additionalProperties": false,
            "required": ["namespace", "id", "start", "end", "count", "incarnation", "requestId", "at"],
            "properties": lookup_props},
        "AuditEntry": {"type": "object", "additionalProperties": false,
            "required": ["id", "at", "actor", "action", "before", "after", "reason"],
            "properties": {"id": dec("entry id"), "at": time, "actor": {"type": "string"},
                "action": {"type": "string", "enum": ["create", "floor", "freeze", "unfreeze"]},
                "before": {"type": ["object", "null"]}, "after": {"type": ["object", "null"]},
                "reason": {"type": ["string", "null"]}}},
        "AuditList": {"type": "object", "required": ["audit", "nextBefore"], "additionalProperties": false,
            "properties": {"audit": {"type": "array", "items": reference("AuditEntry")},
                "nextBefore": {"type": ["string", "null"], "pattern": DECIMAL}}},
        "Health": {"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}},
    })
}

/// The document as JSON text, built once per process.
pub fn document_text() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| document().to_string())
}

/// The document. Every path, method, status and error code the Worker
/// answers with is listed.
pub fn document() -> Value {
    let admin_ns = [E::InvalidRequest, E::NamespaceNotFound, E::PayloadTooLarge];
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "rangeid authority",
            "version": "1.0.0",
            "description": "Grants disjoint ID ranges per namespace. Every ID-valued field is a decimal string; \
                counts are integers. Grants are retained at least 24 hours (configurable); a replay after that \
                gets a fresh range.",
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT (HS256, kid)"}},
            "schemas": schemas(),
        },
        "paths": {
            "/healthz": {"get": operation("Liveness", None, None, json!([]),
                vec![ok("200", "alive", "Health")])},
            "/v1/openapi.json": {"get": operation("This document", None, None, json!([]),
                vec![("200".into(), json!({"description": "OpenAPI 3.1", "content": {"application/json": {}}}))])},
            "/v1/ranges": {"post": operation("Take a range", Some("generator"), Some("GrantRequest"), json!([]),
                with(with(vec![ok("200", "granted (replayed: true on a replay)", "Grant")], &AUTH),
                    &[E::InvalidRequest, E::NamespaceNotFound, E::RequestConflict, E::NamespaceExhausted,
                      E::PayloadTooLarge, E::NamespaceFrozen]))},
            "/v1/namespaces": {
                "get": operation("List namespaces the token may read", Some("reader"), None, json!([]),
                    with(vec![ok("200", "summaries", "NamespaceList")], &AUTH)),
                "post": operation("Create a namespace", Some("admin"), Some("CreateNamespace"), json!([]),
                    with(with(vec![ok("201", "created", "Summary")], &AUTH),
                        &[E::InvalidRequest, E::NamespaceExists, E::PayloadTooLarge])),
            },
            "/v1/namespaces/{ns}": {"get": operation("Namespace summary", Some("reader"), None, json!([ns_param()]),
                with(with(vec![ok("200", "summary", "Summary")], &AUTH), &[E::NamespaceNotFound]))},
            "/v1/namespaces/{ns}/grants": {"get": operation("Retained grants, newest first", Some("reader"), None,
                page_params(),
                with(with(vec![ok("200", "grants", "GrantList")], &AUTH), &[E::InvalidRequest, E::NamespaceNotFound]))},
            "/v1/namespaces/{ns}/lookup": {"get": operation("The retained grant holding an ID", Some("reader"), None,
                json!([ns_param(), {"name": "id", "in": "query", "required": true,
                    "schema": {"type": "string", "pattern": DECIMAL}}]),
                with(with(vec![ok("200", "grant", "Lookup")], &AUTH),
                    &[E::InvalidRequest, E::NamespaceNotFound, E::GrantNotFound]))},
            "/v1/namespaces/{ns}/floor": {"post": operation("Raise next to a floor", Some("admin"), Some("Floor"),
                json!([ns_param()]),
                with(with(vec![ok("200", "summary after", "Summary")], &AUTH), &[E::InvalidRequest,
                    E::NamespaceNotFound, E::FloorBelowNext, E::PayloadTooLarge]))},
            "/v1/namespaces/{ns}/freeze": {"post": operation("Freeze: refuse new grants", Some("admin"), Some("Reason"),
                json!([ns_param()]),
                with(with(vec![ok("200", "summary after", "Summary")], &AUTH), &admin_ns))},
            "/v1/namespaces/{ns}/unfreeze": {"post": operation("Unfreeze", Some("admin"), Some("Reason"),
                json!([ns_param()]),
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
            "/v1/namespaces/{ns}/audit",
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
            "200", "400", "401", "403", "404", "409", "413", "423", "503",
        ] {
            assert!(ranges.get(s).is_some(), "{s}");
        }
    }

    #[test]
    fn summaries_match_the_schema_fields() {
        use crate::store::NamespaceRow;
        use rangeid_core::authority::NamespaceConfig;
        let row = NamespaceRow::create(
            rangeid_core::Namespace::new("x").unwrap(),
            NamespaceConfig::new(None, None, None).unwrap(),
            0,
        );
        let v = serde_json::to_value(crate::summary::summarize(&row, &[], 1)).unwrap();
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
