//! The binding under a real JS engine (wasm-bindgen-test): Node by default,
//! headless Chromium with `WASM_BINDGEN_USE_BROWSER=1`.
#![cfg(target_arch = "wasm32")]

use rangeid_wasm::Engine;
use wasm_bindgen_test::*;

fn grant(e: &Engine, request_id: &str, start: u64, count: u64) -> String {
    format!(
        r#"{{"namespace":"orders","incarnation":"{}","requestId":"{request_id}","start":"{start}","end":"{}","count":{count},"replayed":false}}"#,
        e.incarnation(),
        u128::from(start) + u128::from(count)
    )
}

#[wasm_bindgen_test]
fn incarnations_come_from_the_platform_csprng() {
    let a = Engine::new(r#"{"namespace":"orders"}"#, 0.0).unwrap();
    let b = Engine::new(r#"{"namespace":"orders"}"#, 0.0).unwrap();
    assert_eq!(a.incarnation().len(), 32);
    assert!(a.incarnation().bytes().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(a.incarnation(), b.incarnation());
}

#[wasm_bindgen_test]
fn bad_options_throw_invalid_config() {
    assert!(Engine::new(r#"{"namespace":"Orders"}"#, 0.0).is_err());
    assert!(Engine::new("not json", 0.0).is_err());
}

#[wasm_bindgen_test]
fn requests_grants_and_blocks_cross_the_boundary_exactly() {
    let mut e = Engine::new(r#"{"namespace":"orders","rangeSize":10}"#, 5.0).unwrap();
    let body = e.poll_request(5.0).expect("a first request");
    assert!(body.contains(r#""requestId":"r1","count":10"#), "{body}");
    let top = u64::MAX - 9;
    assert_eq!(
        e.handle_response("r1", 200, &grant(&e, "r1", top, 10), -1.0, 6.0),
        "installed"
    );
    assert_eq!(
        e.handle_response("r1", 200, &grant(&e, "r1", top, 10), -1.0, 7.0),
        "duplicate"
    );
    assert_eq!(e.take(4), 4);
    assert!(!e.block_is_safe());
    assert_eq!(e.block_start_string(), "18446744073709551606");
    assert_eq!(e.take(100), 6);
    assert_eq!(e.block_start_string(), "18446744073709551610");
    assert_eq!(e.take(1), 0);
    assert_eq!(e.why(), "unavailable");
}

#[wasm_bindgen_test]
fn refusals_and_close() {
    let mut e = Engine::new(r#"{"namespace":"orders","rangeSize":10}"#, 0.0).unwrap();
    e.poll_request(0.0).unwrap();
    let forbidden = r#"{"error":{"code":"forbidden","message":"not for this namespace"}}"#;
    assert_eq!(
        e.handle_response("r1", 403, forbidden, -1.0, 1.0),
        "error:forbidden"
    );
    assert_eq!(e.take(1), 0);
    assert_eq!(e.why(), "forbidden");
    assert_eq!(e.close(), "0");
    assert_eq!(e.take(1), 0);
    assert_eq!(e.why(), "closed");
}
