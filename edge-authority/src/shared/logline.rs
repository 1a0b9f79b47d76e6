//! Structured log lines: one JSON object per line, named by `event`, for
//! what operators act on: refused authentication, grants refused by the
//! namespace (exhausted, frozen, conflict, another owner's key, past a
//! limit) and the restore fence (witness unreachable, a start that moved
//! forward), a refused configuration and the details of `503`s callers are
//! not shown. Token
//! contents never appear: authentication failures carry the reason's
//! text only (never the header), grant refusals the token's `sub`.

use rangeid_core::GrantRequest;
use serde_json::json;

use crate::shared::refusals::Counted;
use crate::shared::response::HttpReply;

/// The line for a refusal of authentication or authorization by the front
/// Worker (`unauthenticated` or `forbidden`), or `None` for any other
/// answer. These never reach a namespace object, so they are only in the
/// logs.
pub fn auth_refused(method: &str, path: &str, reply: &HttpReply) -> Option<String> {
    let body: serde_json::Value = serde_json::from_str(&reply.body).unwrap_or_default();
    let code = body["error"]["code"].as_str()?;
    if code != "unauthenticated" && code != "forbidden" {
        return None;
    }
    Some(
        json!({
            "event": "auth_refused",
            "status": reply.status,
            "code": body["error"]["code"],
            "reason": body["error"]["message"],
            "method": method,
            "path": path,
        })
        .to_string(),
    )
}

/// Whether a refusal of `kind` at `now` (ms) gets its `grant_refused`
/// line, when the last line for a `429` refusal went out at `last`: a
/// flood refused `rate_limited` or `ledger_full` thousands of times a
/// second gets one line a second (every refusal is still counted).
pub fn refusal_logged(kind: Counted, last: i64, now: i64) -> bool {
    match kind {
        Counted::RateLimited | Counted::LedgerFull => {
            !(last..last.saturating_add(1_000)).contains(&now)
        }
        _ => true,
    }
}

/// The line for a grant request the namespace object refused.
pub fn grant_refused(request: &GrantRequest, sub: &str, kind: Counted) -> String {
    json!({
        "event": "grant_refused",
        "reason": kind.as_str(),
        "namespace": request.namespace,
        "incarnation": request.incarnation,
        "requestId": request.request_id,
        "count": request.count,
        "sub": sub,
    })
    .to_string()
}

/// The line for a grant stopped at the fence: its witness could not be
/// reached (`detail` says how).
pub fn fence_unreachable(namespace: &str, detail: &str) -> String {
    json!({"event": "fence_unreachable", "namespace": namespace, "detail": detail}).to_string()
}

/// The line for a start that moved `next` up to the witness's mark:
/// `skipped` IDs; `rollback` when the witness was ahead of the object's own
/// mark (its storage was rolled back).
pub fn fence_start(namespace: &str, skipped: u128, rollback: bool) -> String {
    json!({
        "event": if rollback { "fence_forward" } else { "fence_start" },
        "namespace": namespace,
        "skipped": skipped.to_string(),
    })
    .to_string()
}

/// The line for a witness found below the namespace object's fence (its
/// storage was restored or wiped) and raised back.
pub fn witness_behind(namespace: &str) -> String {
    json!({"event": "witness_behind", "namespace": namespace}).to_string()
}

/// The line for a configuration the authority refuses to serve with
/// (callers get a generic `503`): why, for the operator.
pub fn config_refused(reason: &str) -> String {
    json!({"event": "config_refused", "reason": reason}).to_string()
}

/// The line for a `503` whose detail callers are not shown (a store or
/// runtime error): where it came from and what it said.
pub fn unavailable(source: &str, detail: &str) -> String {
    json!({"event": "unavailable", "source": source, "detail": detail}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::response::ApiError;
    use rangeid_core::ErrorCode;

    #[test]
    fn a_flood_of_429s_is_one_line_a_second() {
        let t = 1_800_000_000_000;
        assert!(refusal_logged(Counted::RateLimited, 0, t));
        assert!(!refusal_logged(Counted::RateLimited, t, t + 999));
        assert!(!refusal_logged(Counted::LedgerFull, t, t));
        assert!(refusal_logged(Counted::LedgerFull, t, t + 1_000));
        assert!(
            refusal_logged(Counted::LedgerFull, t, t - 5),
            "a clock that went back"
        );
        assert!(refusal_logged(Counted::Frozen, t, t), "every other refusal");
    }

    #[test]
    fn lines_are_json_without_token_contents() {
        let reply = ApiError::new(
            ErrorCode::Unauthenticated,
            "token signature does not verify with any configured key",
        )
        .reply();
        let line = auth_refused("POST", "/v1/ranges", &reply).unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["event"], "auth_refused");
        assert_eq!(v["code"], "unauthenticated");
        assert!(auth_refused("GET", "/", &HttpReply::empty(200)).is_none());
        // A namespace object's refusal is logged by the object, not here.
        let owner = ApiError::new(ErrorCode::RequestConflict, "m").reply();
        assert!(auth_refused("POST", "/v1/ranges", &owner).is_none());

        let request: GrantRequest = serde_json::from_str(
            r#"{"namespace":"orders","incarnation":"A9","requestId":"r1","count":5}"#,
        )
        .unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&grant_refused(&request, "svc", Counted::Frozen)).unwrap();
        assert_eq!(
            (
                v["reason"].as_str(),
                v["namespace"].as_str(),
                v["count"].as_u64()
            ),
            (Some("frozen"), Some("orders"), Some(5))
        );
        let v: serde_json::Value =
            serde_json::from_str(&fence_start("orders", 1 << 64, true)).unwrap();
        assert_eq!(v["skipped"], "18446744073709551616");
        let v: serde_json::Value = serde_json::from_str(&config_refused(
            "RANGEID_SIGNING_KEYS: kid \"a\" is given twice",
        ))
        .unwrap();
        assert_eq!(v["event"], "config_refused");
        let v: serde_json::Value =
            serde_json::from_str(&unavailable("namespace orders", "SQLITE_FULL")).unwrap();
        assert_eq!(
            (v["event"].as_str(), v["detail"].as_str()),
            (Some("unavailable"), Some("SQLITE_FULL"))
        );
    }
}
