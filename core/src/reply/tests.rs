use super::*;
use crate::names::{Incarnation, Namespace, RequestId};
use crate::protocol::{Capacity, Grant};
use crate::range::Range;
use std::borrow::ToOwned;
use std::format;
use std::string::String;

const GRANT: &str = r#"{"namespace":"orders","incarnation":"A9","requestId":"r17","start":"1001","end":"11001","count":10000,"replayed":false}"#;

fn the_grant() -> GrantReply {
    GrantReply {
        grant: Grant {
            namespace: Namespace::new("orders").unwrap(),
            incarnation: Incarnation::new("A9").unwrap(),
            request_id: RequestId::new("r17").unwrap(),
            range: Range::new(1001, 11001).unwrap(),
        },
        replayed: false,
        capacity: Capacity::default(),
    }
}

fn refused(r: Reply) -> Refused {
    match r {
        Reply::Refused(r) => r,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn transient(r: Reply) -> TransientKind {
    match r {
        Reply::Transient(t) => t.kind,
        other => panic!("expected a transient failure, got {other:?}"),
    }
}

#[test]
fn grants_tolerate_fields_they_do_not_know() {
    assert_eq!(
        Reply::from_http(200, GRANT.as_bytes(), None),
        Reply::Grant(the_grant())
    );
    let extra = GRANT.replace(
        r#""replayed":false"#,
        r#""replayed":false,"shard":{"id":[1,2,{"x":null}]},"note":"h\"i","weight":1.5e3"#,
    );
    assert_eq!(
        Reply::from_http(200, extra.as_bytes(), None),
        Reply::Grant(the_grant())
    );
    let spaced = GRANT.replace(',', " ,\n ");
    assert_eq!(
        Reply::from_http(200, spaced.as_bytes(), None),
        Reply::Grant(the_grant())
    );
}

#[test]
fn unreadable_grants_are_retried_never_guessed() {
    let bad = [
        GRANT.replace(r#""start":"1001""#, r#""start":1001"#),
        GRANT.replace(r#""start":"1001""#, r#""start":"01001""#),
        GRANT.replace(r#""start":"1001""#, r#""start":"0""#),
        GRANT.replace(r#""end":"11001""#, r#""end":"1001""#),
        GRANT.replace(r#""end":"11001""#, r#""end":"18446744073709551617""#),
        GRANT.replace(r#""count":10000"#, r#""count":9999"#),
        GRANT.replace(r#""count":10000"#, r#""count":10000.0"#),
        GRANT.replace(r#","replayed":false"#, ""),
        GRANT.replace(r#""namespace":"orders""#, r#""namespace":"Orders""#),
        GRANT[..GRANT.len() - 9].to_owned(),
        String::new(),
        "<html><body>Bad gateway</body></html>".to_owned(),
        r#"["orders","A9","r17","1001","11001",10000,false]"#.to_owned(),
    ];
    for body in &bad {
        assert_eq!(
            transient(Reply::from_http(200, body.as_bytes(), None)),
            TransientKind::UnreadableGrant,
            "{body}"
        );
    }
}

#[test]
fn known_codes_keep_what_the_authority_said() {
    let body = r#"{"error":{"code":"namespace_exhausted","message":"only 12 IDs \"remain\"","remaining":"12","hint":[1]}}"#;
    let r = refused(Reply::from_http(409, body.as_bytes(), None));
    assert_eq!(r.code, ReplyCode::Known(ErrorCode::NamespaceExhausted));
    assert_eq!(
        r.message.as_str(),
        r#"only 12 IDs \"remain\""#,
        "escapes kept as written"
    );
    assert_eq!((r.status, r.remaining), (409, Some(12)));
    assert_eq!(r.disposition(), Disposition::Exhausted { remaining: 12 });

    let busy = r#"{"error":{"code":"unavailable","message":"later"}}"#;
    let r = refused(Reply::from_http(503, busy.as_bytes(), Some(1000)));
    assert_eq!(
        (r.retry_after_ms, r.disposition()),
        (Some(1000), Disposition::Retry)
    );

    let frozen = r#"{"error":{"code":"namespace_frozen","message":"f"}}"#;
    assert_eq!(
        refused(Reply::from_http(423, frozen.as_bytes(), None)).disposition(),
        Disposition::Frozen
    );
    let auth = r#"{"error":{"code":"unauthenticated","message":"expired"}}"#;
    assert_eq!(
        refused(Reply::from_http(401, auth.as_bytes(), None)).disposition(),
        Disposition::Reauthenticate
    );
    for code in [
        "forbidden",
        "namespace_not_found",
        "request_conflict",
        "invalid_request",
    ] {
        let body = format!(r#"{{"error":{{"code":"{code}","message":"m"}}}}"#);
        let r = refused(Reply::from_http(400, body.as_bytes(), None));
        assert_eq!(r.code.as_str(), code);
        assert_eq!(r.disposition(), Disposition::Final, "{code}");
    }
}

#[test]
fn unknown_codes_are_classified_by_status_and_keep_their_text() {
    let body = br#"{"error":{"code":"replay_owner_mismatch","message":"not yours","owner":"x"}}"#;
    let r = refused(Reply::from_http(403, body, None));
    assert_eq!(r.code.as_str(), "replay_owner_mismatch");
    assert_eq!(r.code.client_code(), "refused");
    assert_eq!(r.message.as_str(), "not yours");
    assert_eq!(r.disposition(), Disposition::Final);
    for status in [429, 500, 503, 599] {
        let r = refused(Reply::from_http(status, body, Some(2000)));
        assert_eq!(r.disposition(), Disposition::Retry, "{status}");
        assert_eq!(r.retry_after_ms, Some(2000));
    }
    // A code no client could hold is still classified by its status.
    let odd = br#"{"error":{"code":"Weird Code!","message":"m"}}"#;
    let r = refused(Reply::from_http(418, odd, None));
    assert_eq!(
        (r.code.as_str(), r.disposition()),
        ("unknown_code", Disposition::Final)
    );
    // A missing message is an empty one, not a failure to read.
    let bare = br#"{"error":{"code":"forbidden"}}"#;
    assert_eq!(
        refused(Reply::from_http(403, bare, None)).message.as_str(),
        ""
    );
}

fn foreign(r: Reply) -> Foreign {
    match r {
        Reply::Foreign(f) => f,
        other => panic!("expected a foreign answer, got {other:?}"),
    }
}

#[test]
fn answers_that_are_not_rangeid_errors() {
    let html = b"<!doctype html><title>404 Not Found</title>";
    let r = foreign(Reply::from_http(404, html, None));
    assert_eq!(r.code(), ErrorCode::NotFound);
    assert_eq!((r.status, r.disposition()), (404, Disposition::Blocked));
    assert_eq!(
        r.excerpt.as_str(),
        "<!doctype html><title>404 Not Found</title>"
    );
    let r = foreign(Reply::from_http(401, b"", None));
    assert_eq!(r.disposition(), Disposition::Reauthenticate);
    let r = foreign(Reply::from_http(418, b"teapot", None));
    assert_eq!(r.code(), ErrorCode::InvalidRequest);
    assert_eq!(
        Reply::from_http(403, b"x", Some(7)).disposition(),
        Some(Disposition::Blocked)
    );
    for status in [429, 500, 502, 503, 504] {
        assert_eq!(
            transient(Reply::from_http(status, html, Some(3000))),
            TransientKind::NotJson,
            "{status}"
        );
    }
    // Truncated JSON from a 4xx is not a rangeid error either.
    let cut = br#"{"error":{"code":"forbidden","mess"#;
    assert_eq!(
        foreign(Reply::from_http(403, cut, None)).code(),
        ErrorCode::Forbidden
    );
    for status in [100, 201, 204, 301, 302, 304] {
        assert_eq!(
            transient(Reply::from_http(status, b"", None)),
            TransientKind::UnexpectedStatus,
            "{status}"
        );
    }
}

#[test]
fn excerpts_are_bounded_readable_text() {
    let page = format!(
        "<html>\r\n\t<head>\u{0}<title>Access denied</title></head>\n{}</html>",
        "é".repeat(200)
    );
    let e = Excerpt::of(page.as_bytes());
    assert!(e
        .as_str()
        .starts_with("<html> <head> <title>Access denied</title></head> éé"));
    assert!(e.as_str().len() <= EXCERPT_MAX && e.as_str().len() >= EXCERPT_MAX - 1);
    assert_eq!(Excerpt::of(b"  \n ").as_str(), "");
    assert_eq!(Excerpt::of(b"a\xff\xfeb").as_str(), "a\u{fffd}\u{fffd}b");
    assert_eq!(Excerpt::of(b"").as_str(), "");
    let t = match Reply::from_http(502, b"<h1>502 Bad Gateway</h1>", None) {
        Reply::Transient(t) => t,
        other => panic!("{other:?}"),
    };
    assert_eq!(t.excerpt.as_str(), "<h1>502 Bad Gateway</h1>");
    assert_eq!(Reply::no_answer().retry_after_ms(), None);
}

#[test]
fn long_messages_are_kept_whole_characters() {
    let long = "é".repeat(400);
    let body = format!(r#"{{"error":{{"code":"forbidden","message":"{long}"}}}}"#);
    let r = refused(Reply::from_http(403, body.as_bytes(), None));
    assert_eq!(r.message.as_str(), &long[..MESSAGE_MAX]);
    assert_eq!(Message::new("a").as_str(), "a");
}

#[test]
fn fields_of_an_unexpected_type_keep_the_code() {
    let numeric = br#"{"error":{"code":"namespace_exhausted","message":null,"remaining":12}}"#;
    let r = refused(Reply::from_http(409, numeric, None));
    assert_eq!(r.code, ReplyCode::Known(ErrorCode::NamespaceExhausted));
    assert_eq!(r.remaining, None);
    assert_eq!(
        r.disposition(),
        Disposition::Retry,
        "no trusted count: not final"
    );
    assert_eq!(
        transient(Reply::from_http(408, b"<html>timeout</html>", None)),
        TransientKind::NotJson,
        "408 is retried"
    );
    let timeout = br#"{"error":{"code":"brand_new","message":"m"}}"#;
    assert_eq!(
        refused(Reply::from_http(408, timeout, None)).disposition(),
        Disposition::Retry
    );
}

#[test]
fn deeply_nested_bodies_are_classified_not_recursed() {
    // serde-json-core recurses per level with no limit: 100,000 `[` in an
    // unknown field would overflow the stack (a wasm stack much sooner).
    let deep = |prefix: &str, suffix: &str| {
        let mut body = String::from(prefix);
        body.push_str(&"[".repeat(100_000));
        body.push_str(&"]".repeat(100_000));
        body.push_str(suffix);
        body
    };
    let grant = deep(r#"{"x":"#, r#","namespace":"n"}"#);
    assert!(matches!(
        Reply::from_http(200, grant.as_bytes(), None),
        Reply::Transient(_)
    ));
    let error = deep(r#"{"error":{"code":"namespace_frozen","x":"#, "}}");
    match Reply::from_http(423, error.as_bytes(), None) {
        // Unreadable: classified by its status alone.
        Reply::Foreign(f) => assert_eq!(f.code(), ErrorCode::for_client_status(423)),
        other => panic!("{other:?}"),
    }
    // Brackets inside strings do not count; shallow nesting still reads.
    let ok = format!(
        r#"{{"error":{{"code":"namespace_frozen","message":"{}","x":[[{{"y":[1]}}]]}}}}"#,
        "[".repeat(1000)
    );
    match Reply::from_http(423, ok.as_bytes(), None) {
        Reply::Refused(r) => assert_eq!(r.code, ReplyCode::Known(ErrorCode::NamespaceFrozen)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn statuses_past_599_are_unexpected() {
    match Reply::from_http(600, b"{}", None) {
        Reply::Transient(t) => assert_eq!(t.kind, TransientKind::UnexpectedStatus),
        other => panic!("{other:?}"),
    }
}
