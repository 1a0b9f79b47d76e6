//! Property tests of the bearer-token parser: `verify`, `mint_with`,
//! `Keyring::from_json` and `bearer`.
//!
//! - A minted token verifies with its claims back, at any time before its
//!   `exp`, with or without `nbf` and `aud`.
//! - Any single-byte change to a valid token (replaced, inserted or
//!   removed) is refused.
//! - No string makes `verify`, `bearer` or `Keyring::from_json` panic, and
//!   whatever `verify` accepts is a valid set of claims.
//! - Tokens signed with a configured key but with claims of every kind are
//!   accepted exactly when the documented claim rules hold.
//! - `exp`, `nbf` (60 s of skew) and the audience decide exactly at their
//!   documented boundaries; the token length limit is exact.
//! - A key map is accepted exactly when it is a non-empty object of valid
//!   kids to keys of at least 32 bytes with no kid given twice (however it
//!   is spelt).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use proptest::prelude::*;
use proptest::sample::Index;
use rangeid_authority::token::{
    bearer, mint_with, verify, Claims, Keyring, Role, Scope, TokenError, MAX_NAMESPACES,
    MAX_SUB_LEN, MAX_TOKEN_LEN, MIN_KEY_LEN, NBF_LEEWAY_SECS,
};
use rangeid_core::Namespace;
use serde_json::{json, Value};

const KID: &str = "k1";
const KEY: &str = "0123456789abcdef0123456789abcdef";
const OTHER_KID: &str = "k-2";
const OTHER_KEY: &str = "fedcba9876543210fedcba9876543210-second";
const NAMESPACE: &str = "[a-z0-9][a-z0-9._-]{0,62}";

fn keys() -> Keyring {
    Keyring::from_json(&json!({ KID: KEY, OTHER_KID: OTHER_KEY }).to_string()).unwrap()
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// `header.payload.signature`, signed by hand with `key`.
fn forge(header: &Value, payload: &str, key: &[u8]) -> String {
    let h = b64(header.to_string().as_bytes());
    let p = b64(payload.as_bytes());
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
    mac.update(format!("{h}.{p}").as_bytes());
    format!("{h}.{p}.{}", b64(&mac.finalize().into_bytes()))
}

fn header() -> Value {
    json!({"alg": "HS256", "typ": "JWT", "kid": KID})
}

// ---- the documented claim rules, written out again ----

fn sub_ok(sub: &str) -> bool {
    (1..=MAX_SUB_LEN).contains(&sub.len()) && !sub.chars().any(char::is_control)
}

fn ns_ok(ns: &[String]) -> bool {
    ns == ["*"]
        || ((1..=MAX_NAMESPACES).contains(&ns.len())
            && ns.iter().all(|n| Namespace::new(n).is_ok()))
}

/// What `verify` may ever hand back.
fn valid_claims(c: &Claims, now: u64) -> bool {
    let ns_fine = match &c.ns {
        Scope::All => true,
        Scope::Only(list) => (1..=MAX_NAMESPACES).contains(&list.len()),
    };
    sub_ok(&c.sub) && ns_fine && c.exp > now
}

// ---- strategies ----

fn role() -> impl Strategy<Value = Role> {
    prop::sample::select(&[Role::Generator, Role::Reader, Role::Admin][..])
}

fn scope() -> impl Strategy<Value = Scope> {
    let names = |n: std::ops::RangeInclusive<usize>, pattern: &'static str| {
        prop::collection::vec(pattern, n)
            .prop_map(|list| Scope::Only(list.iter().map(|s| Namespace::new(s).unwrap()).collect()))
    };
    prop_oneof![
        1 => Just(Scope::All),
        3 => names(1..=12, NAMESPACE),
        1 => names(MAX_NAMESPACES..=MAX_NAMESPACES, "[a-z0-9]"),
    ]
}

/// 1 to 128 printable characters: ASCII, or any Unicode outside the
/// control, format, surrogate, private and unassigned categories.
fn sub() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[ -~]{1,128}",
        1 => "\\PC{1,128}",
        1 => "[a-z]{128}",
    ]
}

fn claims(now: u64) -> impl Strategy<Value = Claims> {
    let exp = prop_oneof![
        now.saturating_add(1)..=u64::MAX,
        Just(now.saturating_add(1)),
        Just(u64::MAX),
    ];
    (sub(), role(), scope(), exp).prop_map(|(sub, role, ns, exp)| Claims { sub, role, ns, exp })
}

/// A time to verify at, and a token minted to be valid then.
#[derive(Clone, Debug)]
struct Minted {
    now: u64,
    claims: Claims,
    aud: Option<String>,
    token: String,
}

fn minted() -> impl Strategy<Value = Minted> {
    let now = prop_oneof![
        3 => 1_600_000_000u64..2_000_000_000,
        1 => any::<u64>().prop_map(|n| n.min(u64::MAX - 1)),
    ];
    now.prop_flat_map(|now| {
        (
            Just(now),
            claims(now),
            prop::option::of(prop_oneof![
                0..=now.saturating_add(NBF_LEEWAY_SECS),
                Just(now.saturating_add(NBF_LEEWAY_SECS)),
            ]),
            prop::option::of("\\PC{0,24}"),
            any::<bool>(),
        )
    })
    .prop_map(|(now, claims, nbf, aud, other)| {
        let (kid, key) = if other {
            (OTHER_KID, OTHER_KEY)
        } else {
            (KID, KEY)
        };
        let token = mint_with(&claims, kid, key.as_bytes(), nbf, aud.as_deref());
        Minted {
            now,
            claims,
            aud,
            token,
        }
    })
}

/// Strings that are, or look a little like, tokens.
fn token_ish() -> impl Strategy<Value = String> {
    let segment = "[A-Za-z0-9_=+/-]{0,40}";
    let header_json = (
        prop::sample::select(
            &[
                "HS256", "none", "None", "HS512", "RS256", "ES256", "EdDSA", "hs256", "",
            ][..],
        ),
        prop::option::of(prop::sample::select(&[KID, OTHER_KID, "k9", ""][..])),
        prop::option::of(prop::sample::select(&["JWT", "jwt", "JOSE", ""][..])),
    )
        .prop_map(|(alg, kid, typ)| {
            let mut h = json!({ "alg": alg });
            if let Some(kid) = kid {
                h["kid"] = json!(kid);
            }
            if let Some(typ) = typ {
                h["typ"] = json!(typ);
            }
            h
        });
    let payload = prop_oneof![
        "\\PC{0,40}",
        Just(r#"{"sub":"x","role":"admin","ns":["*"],"exp":18446744073709551615}"#.to_owned()),
        Just(r#"{"sub":"x","role":"admin","ns":["*"],"exp":1e400}"#.to_owned()),
        Just(r#"{"sub":"x","role":"admin","ns":["*"],"exp":-1,"nbf":1.5}"#.to_owned()),
        Just(r#"{"sub":"x","role":"admin","ns":["*"],"exp":4e9,"aud":[1,{}]}"#.to_owned()),
    ];
    let forged = (
        header_json,
        payload,
        prop::sample::select(&[KEY, OTHER_KEY, "not-the-key-not-the-key-not-the-key"][..]),
    )
        .prop_map(|(h, p, key)| forge(&h, &p, key.as_bytes()));
    prop_oneof![
        any::<String>(),
        prop::collection::vec(segment, 0..5).prop_map(|s| s.join(".")),
        forged,
        "[ -~]{4090,4100}",
    ]
}

/// A claim value: right or wrong, of the right type or not.
fn payload() -> impl Strategy<Value = (Value, bool)> {
    // (value, valid)
    let sub = prop_oneof![
        3 => "[ -~]{1,128}".prop_map(|s| (json!(s), true)),
        1 => "\\PC{1,40}".prop_map(|s| { let ok = sub_ok(&s); (json!(s), ok) }),
        1 => prop::sample::select(&["", "a\u{0}b", "tab\there", "\u{7f}"][..])
            .prop_map(|s| (json!(s), false)),
        1 => "[a-z]{129,140}".prop_map(|s| (json!(s), false)),
        1 => Just((json!(12), false)),
    ];
    let role = prop_oneof![
        3 => prop::sample::select(&["generator", "reader", "admin"][..]).prop_map(|s| (json!(s), true)),
        1 => prop::sample::select(&["root", "Admin", "ADMIN", "", "admin "][..]).prop_map(|s| (json!(s), false)),
        1 => Just((json!(["admin"]), false)),
    ];
    let ns = prop_oneof![
        2 => Just((json!(["*"]), true)),
        3 => prop::collection::vec(NAMESPACE, 1..6).prop_map(|v| (json!(v), true)),
        1 => prop::collection::vec("[a-z]", MAX_NAMESPACES..=MAX_NAMESPACES + 1).prop_map(|v| {
            let ok = v.len() <= MAX_NAMESPACES;
            (json!(v), ok)
        }),
        1 => prop::collection::vec("[A-Za-z0-9*._ -]{0,5}", 0..4).prop_map(|v| {
            let ok = ns_ok(&v);
            (json!(v), ok)
        }),
        1 => prop::sample::select(vec![json!("*"), json!([]), json!(["*", "orders"]), json!([1])])
            .prop_map(|v| (v, false)),
    ];
    let unknown = prop::collection::btree_map(
        prop::sample::select(&["iat", "jti", "iss", "scope", "x"][..]),
        prop_oneof![
            Just(json!(1)),
            Just(json!("s")),
            Just(json!(null)),
            Just(json!([{}]))
        ],
        0..3,
    );
    (
        prop::option::weighted(0.9, sub),
        prop::option::weighted(0.9, role),
        prop::option::weighted(0.9, ns),
        unknown,
    )
        .prop_map(|(sub, role, ns, unknown)| {
            let mut p = serde_json::Map::new();
            let mut ok = true;
            for (k, field) in [("sub", sub), ("role", role), ("ns", ns)] {
                match field {
                    Some((v, valid)) => {
                        ok &= valid;
                        p.insert(k.into(), v);
                    }
                    None => ok = false,
                }
            }
            for (k, v) in unknown {
                p.insert(k.into(), v);
            }
            (Value::Object(p), ok)
        })
}

// ---- properties ----

proptest! {
    #![proptest_config(ProptestConfig::with_cases(768))]

    /// A minted token verifies with its claims back, with or without
    /// `nbf` and `aud` (checked when configured), with either key.
    #[test]
    fn minted_tokens_verify_with_their_claims(m in minted()) {
        let keys = keys();
        let fits = m.token.len() <= MAX_TOKEN_LEN;
        let want = if !fits {
            Err(TokenError::Malformed("token too long"))
        } else if m.claims.sub.len() > MAX_SUB_LEN {
            // 128 printable characters can be more than 128 bytes, and the
            // limit is in bytes.
            Err(TokenError::BadClaims("sub must be 1 to 128 bytes without control characters"))
        } else {
            Ok(m.claims.clone())
        };
        prop_assert_eq!(verify(&m.token, &keys, None, m.now), want.clone());
        if let Some(aud) = &m.aud {
            prop_assert_eq!(verify(&m.token, &keys, Some(aud), m.now), want);
        } else if fits {
            prop_assert_eq!(
                verify(&m.token, &keys, Some("rangeid"), m.now),
                Err(TokenError::WrongAudience)
            );
        }
        // The bearer header carries it whole.
        let header = format!("Bearer {}", m.token);
        prop_assert_eq!(bearer(Some(&header)), Ok(m.token.as_str()));
    }

    /// Any single-byte change to a valid token is refused: a byte replaced
    /// by another ASCII byte, one inserted, or one removed, anywhere, the
    /// ends and the dots included.
    #[test]
    fn every_single_byte_change_is_refused(
        m in minted(),
        changes in prop::collection::vec(
            (
                prop_oneof![
                    3 => any::<Index>().prop_map(Some),
                    1 => Just(None),
                ],
                any::<bool>(),
                prop_oneof![
                    2 => 0u8..0x80,
                    1 => prop::sample::select(&b" \t\r\n.=+/-_A"[..]),
                ],
                0..3u8,
            ),
            16,
        ),
    ) {
        let keys = keys();
        let aud = m.aud.as_deref();
        prop_assume!(verify(&m.token, &keys, aud, m.now).is_ok());
        let dots: Vec<usize> = m.token.match_indices('.').map(|(i, _)| i).collect();
        for (at, first, byte, how) in changes {
            let mut bytes = m.token.clone().into_bytes();
            let len = bytes.len();
            // A random place, or an end, or a dot (or just past it).
            let i = match at {
                Some(at) => at.index(len),
                None if first => 0,
                None => len - 1,
            };
            let i = if byte == b'.' && !first { dots[i % 2] + usize::from(i % 3 == 0) } else { i };
            match how {
                0 if bytes[i] == byte => continue,
                0 => bytes[i] = byte,
                1 => bytes.insert(if at.is_none() && !first { len } else { i }, byte),
                _ => {
                    bytes.remove(i);
                }
            }
            let changed = String::from_utf8(bytes).unwrap();
            let got = verify(&changed, &keys, aud, m.now);
            prop_assert!(got.is_err(), "{:?} accepted as {:?}", changed, got);
        }
    }

    /// Whatever `verify` is given, it does not panic, and what it accepts
    /// is a valid set of claims.
    #[test]
    fn no_string_makes_verify_panic(
        token in token_ish(),
        now in prop_oneof![Just(1_800_000_000u64), any::<u64>()],
        aud in prop::option::of(prop::sample::select(&["", "rangeid", "x"][..])),
    ) {
        let keys = keys();
        if let Ok(c) = verify(&token, &keys, aud, now) {
            prop_assert!(valid_claims(&c, now), "{:?}", c);
        }
        if token.len() > MAX_TOKEN_LEN {
            prop_assert_eq!(
                verify(&token, &keys, aud, now),
                Err(TokenError::Malformed("token too long"))
            );
        }
        let _ = bearer(Some(&token));
        let _ = Keyring::from_json(&token);
    }

    /// Tokens signed with a configured key are accepted exactly when their
    /// claims follow the documented rules: `sub` 1 to 128 bytes with no
    /// control character, `role` one of three, `ns` `["*"]` or 1 to 256
    /// valid names, `exp` an integer still ahead; other claims are ignored.
    #[test]
    fn signed_claims_follow_the_rules(
        (payload, fine) in payload(),
        exp in prop_oneof![
            3 => (1_800_000_001u64..=u64::MAX).prop_map(|e| (json!(e), Some(e))),
            1 => (0u64..=1_800_000_000).prop_map(|e| (json!(e), Some(e))),
            1 => prop::sample::select(vec![json!("1900000000"), json!(1.9e9), json!(-5), json!(null)])
                .prop_map(|v| (v, None)),
        ],
        with_exp in prop::bool::weighted(0.9),
    ) {
        const NOW: u64 = 1_800_000_000;
        let mut p = payload;
        let exp_value = if with_exp {
            p["exp"] = exp.0;
            exp.1
        } else {
            None
        };
        let token = forge(&header(), &p.to_string(), KEY.as_bytes());
        prop_assume!(token.len() <= MAX_TOKEN_LEN);
        let got = verify(&token, &keys(), None, NOW);
        match (fine, exp_value) {
            (true, Some(exp)) if exp > NOW => {
                let c = got.map_err(|e| TestCaseError::fail(format!("{p}: {e:?}")))?;
                prop_assert_eq!(c.sub.as_str(), p["sub"].as_str().unwrap());
                prop_assert_eq!(c.role.as_str(), p["role"].as_str().unwrap());
                prop_assert_eq!(c.exp, exp);
                let ns: Vec<String> = serde_json::from_value(p["ns"].clone()).unwrap();
                match c.ns {
                    Scope::All => prop_assert_eq!(ns, vec!["*".to_owned()]),
                    Scope::Only(list) => prop_assert_eq!(
                        list.iter().map(|n| n.as_str().to_owned()).collect::<Vec<_>>(),
                        ns
                    ),
                }
            }
            (true, Some(_)) => prop_assert_eq!(got, Err(TokenError::Expired), "{}", p),
            (false, Some(exp)) if exp > NOW => {
                prop_assert!(matches!(got, Err(TokenError::BadClaims(_))), "{}: {:?}", p, got)
            }
            (_, None) => {
                prop_assert!(matches!(got, Err(TokenError::BadClaims(_))), "{}: {:?}", p, got)
            }
            // Invalid and expired: either answer is documented.
            (false, Some(_)) => prop_assert!(
                matches!(got, Err(TokenError::BadClaims(_) | TokenError::Expired)),
                "{}: {:?}", p, got
            ),
        }
    }

    /// `exp` is exclusive, `nbf` has exactly 60 s of skew, and a configured
    /// audience must be named: each decides alone at its boundary, and the
    /// token is accepted exactly when all three hold.
    #[test]
    fn time_and_audience_boundaries_are_exact(
        now in prop_oneof![
            3 => 1_000u64..=4_000_000_000,
            1 => prop::sample::select(vec![0, 59, 60, 61, u64::MAX - 61, u64::MAX - 60, u64::MAX - 1]),
        ],
        exp_delta in prop_oneof![3 => -2i128..=2, 1 => -1_000_000i128..=1_000_000],
        nbf in prop::option::of(prop_oneof![3 => -2i128..=2, 1 => -1_000_000i128..=1_000_000]),
        token_aud in prop::option::of(prop::sample::select(&["rangeid-prod", "rangeid-staging", ""][..])),
        want_aud in prop::option::of(prop::sample::select(&["rangeid-prod", "rangeid-staging", ""][..])),
        sub in "[a-z]{1,8}",
    ) {
        let to_u64 = |v: i128| u64::try_from(v).ok();
        // exp relative to now; nbf relative to the last accepted instant,
        // now + 60.
        let exp = to_u64(i128::from(now) + exp_delta);
        let nbf = nbf.map(|d| to_u64(i128::from(now) + i128::from(NBF_LEEWAY_SECS) + d));
        let (Some(exp), Some(nbf)) = (exp, nbf.map_or(Some(None), |n| n.map(Some))) else {
            return Ok(());
        };
        let claims = Claims { sub, role: Role::Reader, ns: Scope::All, exp };
        let token = mint_with(&claims, KID, KEY.as_bytes(), nbf, token_aud);
        let got = verify(&token, &keys(), want_aud, now);

        let live = now < exp;
        let started = nbf.is_none_or(|n| u128::from(n) <= u128::from(now) + u128::from(NBF_LEEWAY_SECS));
        let for_us = want_aud.is_none_or(|w| token_aud == Some(w));
        match (live, started, for_us) {
            (true, true, true) => prop_assert_eq!(got, Ok(claims)),
            (false, true, true) => prop_assert_eq!(got, Err(TokenError::Expired)),
            (true, false, true) => prop_assert_eq!(got, Err(TokenError::NotYetValid)),
            (true, true, false) => prop_assert_eq!(got, Err(TokenError::WrongAudience)),
            _ => prop_assert!(got.is_err(), "{:?}", got),
        }
    }

    /// Tokens up to `MAX_TOKEN_LEN` bytes are read; longer ones are refused
    /// before anything else.
    #[test]
    fn the_length_limit_is_exact(pad in 2_900usize..2_970) {
        let payload = json!({
            "sub": "x", "role": "admin", "ns": ["*"], "exp": 4_000_000_000u64,
            "pad": "p".repeat(pad),
        });
        let token = forge(&header(), &payload.to_string(), KEY.as_bytes());
        let got = verify(&token, &keys(), None, 1_800_000_000);
        if token.len() <= MAX_TOKEN_LEN {
            prop_assert!(got.is_ok(), "{}: {:?}", token.len(), got);
        } else {
            prop_assert_eq!(got, Err(TokenError::Malformed("token too long")));
        }
    }

    /// The bearer scheme is matched without regard to case and the token is
    /// trimmed; anything else is not a bearer header.
    #[test]
    fn bearer_headers(
        scheme_case in prop::collection::vec(any::<bool>(), 6),
        pad in "[ \t]{0,3}",
        token in "[!-~]([ -~]{0,30}[!-~])?",
        other in "\\PC{0,12}",
        raw in any::<String>(),
    ) {
        let scheme: String = "bearer"
            .chars()
            .zip(scheme_case)
            .map(|(c, up)| if up { c.to_ascii_uppercase() } else { c })
            .collect();
        let header = format!("{scheme} {pad}{token}{pad}");
        prop_assert_eq!(bearer(Some(&header)), Ok(token.as_str()));
        let empty = format!("{scheme} {pad}");
        prop_assert_eq!(bearer(Some(&empty)), Err(TokenError::NotBearer));
        let tab = format!("{scheme}\t{token}");
        prop_assert_eq!(bearer(Some(&tab)), Err(TokenError::NotBearer));
        if !other.eq_ignore_ascii_case("bearer") && !other.contains(' ') {
            let wrong = format!("{other} {token}");
            prop_assert_eq!(bearer(Some(&wrong)), Err(TokenError::NotBearer));
        }
        prop_assert_eq!(bearer(None), Err(TokenError::Missing));
        if let Ok(t) = bearer(Some(&raw)) {
            prop_assert!(raw.get(..7).is_some_and(|p| p.eq_ignore_ascii_case("bearer ")));
            prop_assert!(!t.is_empty() && t.trim() == t && raw.trim_end().ends_with(t));
        }
    }

    /// A key map is accepted exactly when it is a non-empty JSON object of
    /// valid kids to keys of at least 32 bytes, with no kid given twice
    /// (however the kid is spelt); then every key is found by its kid.
    #[test]
    fn key_maps_follow_the_rules(
        mut entries in prop::collection::vec(
            (
                prop_oneof![
                    4 => "[A-Za-z0-9._-]{1,64}",
                    1 => prop::sample::select(&["k1", "k2"][..]).prop_map(str::to_owned),
                    1 => "[A-Za-z0-9 ./:-]{0,3}",
                    1 => "[a-z]{65,66}",
                ],
                any::<bool>(),
                prop_oneof![
                    3 => "#[ -~]{31,70}",
                    1 => "#\\PC{10,40}",
                    1 => "#[ -~]{0,31}",
                ],
            ),
            0..5,
        ),
        dup in prop::option::weighted(0.4, (any::<Index>(), any::<Index>(), "#[ -~]{31,40}")),
        ws in "[ \n\t]{0,2}",
    ) {
        // A kid given again, spelt the other way, with another key.
        if let (Some((from, to, key)), false) = (dup, entries.is_empty()) {
            let (kid, escape, _) = entries[from.index(entries.len())].clone();
            entries.insert(to.index(entries.len() + 1), (kid, !escape, key));
        }
        let kid_ok = |k: &str| {
            (1..=64).contains(&k.len())
                && k.bytes().all(|b| b.is_ascii_alphanumeric() || b".-_".contains(&b))
        };
        let spelt = |s: &str, escape: bool| {
            if escape {
                s.encode_utf16().map(|u| format!("\\u{u:04x}")).collect::<String>()
            } else {
                let quoted = serde_json::to_string(s).unwrap();
                quoted[1..quoted.len() - 1].to_owned()
            }
        };
        let text = format!(
            "{ws}{{{}}}{ws}",
            entries
                .iter()
                .map(|(kid, escape, key)| format!(
                    "{ws}\"{}\"{ws}:{ws}{}",
                    spelt(kid, *escape),
                    serde_json::to_string(key).unwrap()
                ))
                .collect::<Vec<_>>()
                .join(",")
        );
        let mut kids: Vec<&str> = entries.iter().map(|(k, _, _)| k.as_str()).collect();
        kids.sort_unstable();
        let unique = kids.windows(2).all(|w| w[0] != w[1]);
        let ok = !entries.is_empty()
            && unique
            && entries.iter().all(|(k, _, key)| kid_ok(k) && key.len() >= MIN_KEY_LEN);
        match Keyring::from_json(&text) {
            Ok(ring) => {
                prop_assert!(ok, "accepted {}", text);
                for (kid, _, key) in &entries {
                    prop_assert_eq!(ring.get(kid), Some(key.as_bytes()));
                    let shown = format!("{ring:?}");
                    prop_assert!(!shown.contains(key.as_str()), "{} shows a key", shown);
                }
                prop_assert_eq!(ring.get("no-such-kid!"), None);
            }
            Err(e) => {
                prop_assert!(!ok, "refused {}: {}", text, e);
                let all_valid = entries.iter().all(|(k, _, key)| kid_ok(k) && key.len() >= MIN_KEY_LEN);
                if all_valid && !unique {
                    prop_assert!(e.0.contains("given twice"), "{}", e);
                }
            }
        }
    }

    /// No text makes the key map parser panic.
    #[test]
    fn no_text_makes_the_keyring_panic(
        text in prop_oneof![
            any::<String>(),
            prop::collection::vec(
                prop::sample::select(&["{", "}", "[", "]", ",", ":", "\"", "\\", "\\u00", "\"k1\"",
                    "\"0123456789abcdef0123456789abcdef\"", "null", "1", " ", "\u{e9}"][..]),
                0..24,
            )
            .prop_map(|t| t.concat()),
        ],
    ) {
        if let Ok(ring) = Keyring::from_json(&text) {
            let shown = format!("{ring:?}");
            prop_assert!(shown.starts_with("Keyring"));
        }
    }
}
