//! The binding under a real JS engine (wasm-bindgen-test): Node by default,
//! headless Chromium with `WASM_BINDGEN_USE_BROWSER=1`. The engine's logic
//! is core's and tested there; these check what crosses the boundary.
#![cfg(target_arch = "wasm32")]

use js_sys::{Array, Object, Reflect};
use rangeid_wasm::Engine;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

fn options(pairs: &[(&str, JsValue)]) -> Object {
    let o = Object::new();
    for (k, v) in pairs {
        Reflect::set(&o, &JsValue::from_str(k), v).unwrap();
    }
    o
}

fn engine(range_size: f64) -> Engine {
    let o = options(&[
        ("namespace", "orders".into()),
        ("rangeSize", range_size.into()),
    ]);
    Engine::new(&o, 0.0).unwrap()
}

fn get(v: &JsValue, i: u32) -> JsValue {
    v.clone().unchecked_into::<Array>().get(i)
}

/// Polls for the next send: (request, attempt, body).
fn send(e: &mut Engine, now: f64) -> (f64, f64, String) {
    loop {
        let a = e.poll(now);
        assert!(!a.is_undefined(), "nothing to send");
        if get(&a, 0).as_string().as_deref() == Some("send") {
            return (
                get(&a, 1).as_f64().unwrap(),
                get(&a, 2).as_f64().unwrap(),
                get(&a, 3).as_string().unwrap(),
            );
        }
    }
}

fn grant(e: &Engine, request: f64, start: u64, count: u64) -> String {
    format!(
        r#"{{"namespace":"orders","incarnation":"{}","requestId":"r{request}","start":"{start}","end":"{}","count":{count},"replayed":false,"fromTheFuture":[1]}}"#,
        e.incarnation(),
        u128::from(start) + u128::from(count)
    )
}

fn field(o: &JsValue, key: &str) -> JsValue {
    Reflect::get(o, &JsValue::from_str(key)).unwrap()
}

#[wasm_bindgen_test]
fn incarnations_come_from_the_platform_csprng() {
    let a = engine(10.0);
    let b = engine(10.0);
    assert_eq!(a.incarnation().len(), 32);
    assert!(a.incarnation().bytes().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(a.incarnation(), b.incarnation());
}

#[wasm_bindgen_test]
fn options_are_core_checked_and_named_in_the_error() {
    for (pairs, name) in [
        (vec![("namespace", JsValue::from("Orders"))], "namespace"),
        (
            vec![("namespace", "orders".into()), ("rangeSize", 1.5.into())],
            "rangeSize",
        ),
        (
            vec![("namespace", "orders".into()), ("colour", "red".into())],
            "colour",
        ),
        (
            vec![
                ("namespace", "orders".into()),
                ("retryMaxMs", JsValue::NULL),
            ],
            "retryMaxMs",
        ),
    ] {
        let err = Engine::new(&options(&pairs), 0.0).err().expect("refused");
        let text: String = JsValue::from(err)
            .unchecked_into::<js_sys::Error>()
            .message()
            .into();
        assert!(text.starts_with("invalid_config: "), "{text}");
        assert!(text.contains(name), "{text}");
    }
    let e = Engine::new(
        &options(&[
            ("namespace", "orders".into()),
            ("deadlineMs", 250.0.into()),
            ("retryInitialMs", 5.0.into()),
        ]),
        0.0,
    )
    .unwrap();
    assert_eq!(e.deadline_ms(), 250.0);
}

#[wasm_bindgen_test]
fn requests_grants_and_blocks_cross_the_boundary_exactly() {
    let mut e = engine(10.0);
    let (request, attempt, body) = send(&mut e, 5.0);
    assert_eq!((request, attempt), (1.0, 0.0));
    assert!(body.contains(r#""requestId":"r1","count":10"#), "{body}");
    let top = u64::MAX - 9;
    assert_eq!(
        e.handle_answer(1.0, 0.0, 200, &grant(&e, 1.0, top, 10), -1.0, 6.0),
        "installed"
    );
    let block = e.lend(4.0);
    let start = get(&block, 0);
    assert!(start.is_bigint(), "past 2^53 a block starts as a BigInt");
    assert_eq!(
        js_sys::BigInt::from(start).to_string(10).unwrap(),
        "18446744073709551606"
    );
    assert_eq!(get(&block, 1).as_f64(), Some(4.0));
    assert_eq!(
        e.handle_answer(1.0, 0.0, 200, &grant(&e, 1.0, top, 10), -1.0, 7.0),
        "duplicate"
    );
    // An exact batch: the block's rest (0 here), then the range's rest.
    let more = e.take_exact(6.0, 0.0);
    assert_eq!(get(&more, 0).as_f64(), Some(0.0), "nothing from the block");
    assert_eq!(
        get(&more, 3).as_f64(),
        Some(6.0),
        "the rest of the range, not a reset"
    );
    let too_many = e.take_exact(1.0, 0.0);
    assert_eq!(
        field(&too_many, "code").as_string().as_deref(),
        Some("unavailable")
    );
    assert_eq!(field(&too_many, "wait").as_bool(), Some(true));
    assert_eq!(e.lend(1.0).as_string().as_deref(), Some("unavailable"));
    let stats = e.stats(0.0);
    assert_eq!(field(&stats, "issued").as_f64(), Some(10.0));
    assert_eq!(field(&stats, "available").as_string().as_deref(), Some("0"));
}

#[wasm_bindgen_test]
fn blocks_below_two_to_the_53_are_exact_numbers() {
    let mut e = engine(10.0);
    send(&mut e, 0.0);
    let start = (1u64 << 53) - 5;
    e.handle_answer(1.0, 0.0, 200, &grant(&e, 1.0, start, 10), -1.0, 1.0);
    let a = e.lend(5.0);
    assert_eq!(
        get(&a, 0).as_f64(),
        Some(start as f64),
        "ends exactly at 2^53"
    );
    assert!(get(&e.lend(5.0), 0).is_bigint());
}

#[wasm_bindgen_test]
fn refusals_keep_what_the_authority_said_and_close_frees() {
    let mut e = engine(10.0);
    send(&mut e, 0.0);
    let forbidden = r#"{"error":{"code":"forbidden","message":"not for this namespace"}}"#;
    assert_eq!(
        e.handle_answer(1.0, 0.0, 403, forbidden, -1.0, 1.0),
        "stopped"
    );
    assert_eq!(e.lend(1.0).as_string().as_deref(), Some("forbidden"));
    let f = e.failure();
    assert_eq!(field(&f, "code").as_string().as_deref(), Some("forbidden"));
    assert_eq!(field(&f, "final").as_bool(), Some(true));
    assert_eq!(field(&f, "status").as_f64(), Some(403.0));
    assert_eq!(
        field(&f, "message").as_string().as_deref(),
        Some("not for this namespace")
    );
    assert_eq!(e.close(0.0), "0");
    assert_eq!(e.lend(1.0).as_string().as_deref(), Some("closed"));
}

#[wasm_bindgen_test]
fn a_busy_authority_is_retried_with_its_retry_after() {
    let mut e = engine(10.0);
    send(&mut e, 0.0);
    let html = "<html>502 Bad Gateway</html>";
    assert_eq!(
        e.handle_answer(1.0, 0.0, 503, html, 3000.0, 10.0),
        "will_retry"
    );
    assert!(e.next_deadline() >= 3010.0);
    let f = e.failure();
    assert_eq!(
        field(&f, "code").as_string().as_deref(),
        Some("unavailable")
    );
    assert_eq!(field(&f, "final").as_bool(), Some(false));
    assert_eq!(field(&f, "retryAfterMs").as_f64(), Some(3000.0));
    assert_eq!(e.handle_no_answer(1.0, 7.0, 11.0), "stale");
}

#[wasm_bindgen_test]
fn a_proxys_refusal_blocks_with_its_status_and_first_bytes() {
    let mut e = engine(10.0);
    send(&mut e, 0.0);
    let page = "<html>\n<head><title>403 Forbidden</title></head>\n<body>cloudfront</body></html>";
    assert_eq!(e.handle_answer(1.0, 0.0, 403, page, -1.0, 10.0), "blocked");
    assert_eq!(e.lend(1.0).as_string().as_deref(), Some("forbidden"));
    let f = e.failure();
    assert_eq!(field(&f, "code").as_string().as_deref(), Some("forbidden"));
    assert_eq!(field(&f, "final").as_bool(), Some(false));
    assert_eq!(
        field(&f, "wait").as_bool(),
        Some(false),
        "callers are told at once"
    );
    assert_eq!(field(&f, "status").as_f64(), Some(403.0));
    assert_eq!(
        field(&f, "excerpt").as_string().as_deref(),
        Some("<html> <head><title>403 Forbidden</title></head> <body>cloudfront</body></html>")
    );
    assert!(
        field(&f, "authorityCode").is_undefined(),
        "no rangeid authority said it"
    );
    let until = field(&f, "blockedUntil").as_f64().unwrap();
    assert!(until > 10.0 && e.next_deadline() == until);
    let stats = e.stats(0.0);
    assert_eq!(
        field(&stats, "phase").as_string().as_deref(),
        Some("blocked")
    );
    assert_eq!(field(&stats, "blocks").as_f64(), Some(1.0));
    // The authority answers the probe: the block ends.
    let (request, attempt, _) = send(&mut e, until);
    let g = grant(&e, request, 1, 10);
    assert_eq!(
        e.handle_answer(request, attempt, 200, &g, -1.0, until + 1.0),
        "installed"
    );
    let stats = e.stats(0.0);
    assert_eq!(
        field(&stats, "phase").as_string().as_deref(),
        Some("running")
    );
    assert_eq!(field(&stats, "unblocks").as_f64(), Some(1.0));
}

#[wasm_bindgen_test]
fn exact_batches_cross_ranges_and_say_why_not() {
    let o = options(&[
        ("namespace", "orders".into()),
        ("rangeSize", 10.0.into()),
        ("maxOutstanding", 2.0.into()),
    ]);
    let mut e = Engine::new(&o, 0.0).unwrap();
    let (r1, a1, _) = send(&mut e, 0.0);
    e.handle_answer(r1, a1, 200, &grant(&e, r1, 1, 10), -1.0, 1.0);
    let block = e.lend(3.0);
    assert_eq!(get(&block, 1).as_f64(), Some(3.0));
    // A caller waits for 15 with 3 in the driver's block: the engine asks.
    let short = e.take_exact(15.0, 3.0);
    assert_eq!(field(&short, "wait").as_bool(), Some(true));
    e.set_demand(15.0, 3.0);
    let (r2, a2, body) = send(&mut e, 2.0);
    assert!(body.contains(r#""count":10"#), "{body}");
    e.handle_answer(r2, a2, 200, &grant(&e, r2, 100, 10), -1.0, 3.0);
    let batch = e.take_exact(15.0, 3.0);
    assert_eq!(get(&batch, 0).as_f64(), Some(3.0), "the block's 3 first");
    assert_eq!(
        (get(&batch, 2).as_f64(), get(&batch, 3).as_f64()),
        (Some(4.0), Some(7.0))
    );
    assert_eq!(
        (get(&batch, 4).as_f64(), get(&batch, 5).as_f64()),
        (Some(100.0), Some(5.0))
    );
    // Above 8 ranges of 10: refused with the limit.
    let big = e.take_exact(81.0, 0.0);
    assert_eq!(
        field(&big, "code").as_string().as_deref(),
        Some("invalid_request")
    );
    assert_eq!(field(&big, "limit").as_f64(), Some(80.0));
    assert_eq!(field(&big, "wait").as_bool(), Some(false));
}
