use super::*;

fn engine(options: &str) -> Engine {
    Engine::create(options, [3; 16], 0.0).unwrap()
}

fn grant_body(e: &Engine, request: &str, start: u64, replayed: bool) -> String {
    let req: serde_json::Value = serde_json::from_str(request).unwrap();
    let count = req["count"].as_u64().unwrap();
    format!(
        r#"{{"namespace":"orders","incarnation":"{}","requestId":"{}","start":"{start}","end":"{}","count":{count},"replayed":{replayed}}}"#,
        e.incarnation(),
        req["requestId"].as_str().unwrap(),
        u128::from(start) + u128::from(count)
    )
}

#[test]
fn a_grant_becomes_blocks_of_ids() {
    let mut e = engine(r#"{"namespace":"orders","rangeSize":100}"#);
    assert_eq!(e.take(10), 0);
    assert_eq!(e.why(), "unavailable");
    let body = e.poll_request(1.0).unwrap();
    assert_eq!(
        body,
        format!(
            r#"{{"namespace":"orders","incarnation":"{}","requestId":"r1","count":100}}"#,
            e.incarnation()
        )
    );
    assert_eq!(e.last_request_id(), "r1");
    let reply = grant_body(&e, &body, 1001, false);
    assert_eq!(e.handle_response("r1", 200, &reply, -1.0, 3.0), "installed");
    assert_eq!(e.take(10), 10);
    assert_eq!(
        (
            e.block_start_string(),
            e.block_is_safe(),
            e.block_start_number()
        ),
        ("1001".to_owned(), true, 1001.0)
    );
    assert_eq!(e.handle_response("r1", 200, &reply, -1.0, 4.0), "duplicate");
    assert_eq!(e.take(1000), 90, "the rest of the range, not a reset");
    assert_eq!(e.block_start_string(), "1011");
}

#[test]
fn blocks_past_two_to_the_53_are_not_safe_numbers() {
    let mut e = engine(r#"{"namespace":"orders","rangeSize":10}"#);
    let body = e.poll_request(0.0).unwrap();
    let start = (1u64 << 53) - 5;
    e.handle_response("r1", 200, &grant_body(&e, &body, start, false), -1.0, 1.0);
    assert_eq!(e.take(5), 5);
    assert!(e.block_is_safe(), "ends exactly at 2^53");
    assert_eq!(e.take(5), 5);
    assert!(!e.block_is_safe());
    assert_eq!(e.block_start_string(), "9007199254740992");
}

#[test]
fn errors_map_to_codes_and_garbage_is_a_transport_failure() {
    let mut e = engine(r#"{"namespace":"orders","rangeSize":10}"#);
    e.poll_request(0.0).unwrap();
    let exhausted = r#"{"error":{"code":"namespace_exhausted","message":"none","remaining":"0"}}"#;
    assert_eq!(
        e.handle_response("r1", 409, exhausted, -1.0, 1.0),
        "error:exhausted"
    );
    assert_eq!(e.take(1), 0);
    assert_eq!(e.why(), "exhausted");

    let mut e = engine(r#"{"namespace":"orders","rangeSize":10}"#);
    e.poll_request(0.0).unwrap();
    assert_eq!(
        e.handle_response("r1", 502, "<html>bad gateway</html>", -1.0, 1.0),
        "transport"
    );
    assert_eq!(
        e.handle_response("r1", 503, "", 3000.0, 2.0),
        "error:unavailable"
    );
    assert_eq!(e.next_deadline(), 3002.0);
    assert_eq!(
        e.handle_response("r1", 200, r#"{"start":1}"#, -1.0, 3.0),
        "transport"
    );
    let denied = r#"{"error":{"code":"unauthenticated","message":"expired"}}"#;
    assert_eq!(
        e.handle_response("r1", 401, denied, -1.0, 4.0),
        "error:unauthenticated"
    );
    assert_eq!(e.take(1), 0);
    assert_eq!(e.why(), "unauthenticated");
    assert_eq!(e.next_deadline(), -1.0);
}

#[test]
fn options_are_checked() {
    assert!(Engine::create(r#"{"namespace":"orders","rangeSize":0}"#, [0; 16], 0.0).is_err());
    assert!(Engine::create(r#"{"namespace":"orders","maxOutstanding":9}"#, [0; 16], 0.0).is_err());
    assert!(Engine::create(r#"{"namespace":"orders","extra":1}"#, [0; 16], 0.0).is_err());
}

#[test]
fn stats_and_close() {
    let mut e = engine(r#"{"namespace":"orders","rangeSize":10}"#);
    let body = e.poll_request(0.0).unwrap();
    e.handle_response(
        "r1",
        200,
        &grant_body(&e, &body, u64::MAX - 9, true),
        -1.0,
        1.0,
    );
    assert_eq!(e.take(3), 3);
    let stats: serde_json::Value = serde_json::from_str(&e.stats()).unwrap();
    assert_eq!(stats["issued"], 3);
    assert_eq!(stats["replaysInstalled"], 1);
    assert_eq!(stats["available"], "7");
    assert_eq!(e.close(), "7");
    assert_eq!(e.take(1), 0);
    assert_eq!(e.why(), "closed");
}
