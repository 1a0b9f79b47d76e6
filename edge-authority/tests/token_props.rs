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
//!   is spelt); a JWK entry exactly when it is an HS256 secret or an
//!   Ed25519 public key (never a private one) as documented.
//! - A token verifies only with the key its kid names and only if its alg
//!   is that key's (HS256 keyed with an Ed25519 public key, EdDSA under an
//!   HS256 kid, a kid removed by rotation: all refused as a bad signature).
//! - A token may not live longer than its role's cap.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use proptest::prelude::*;
use proptest::sample::Index;
use rangeid_authority::front::token::{
    bearer, ed25519_public, mint_with, verify, Claims, Key, Keyring, Role, Scope, SigningKey,
    TokenError, CLOCK_SKEW_SECS, MAX_NAMESPACES, MAX_SUB_LEN, MAX_TOKEN_LEN, MIN_KEY_LEN,
};
use rangeid_core::Namespace;
use serde_json::{json, Value};

const KID: &str = "k1";
const KEY: &str = "0123456789abcdef0123456789abcdef";
const OTHER_KID: &str = "k-2";
const OTHER_KEY: &str = "fedcba9876543210fedcba9876543210-second";
const ED_KID: &str = "ed-2026";
/// The Ed25519 private key's seed; the map holds only its public half.
const ED_SEED: [u8; 32] = [42; 32];
const NAMESPACE: &str = "[a-z0-9][a-z0-9._-]{0,62}";

/// The Ed25519 key's map entry: its public half, as a JWK.
fn ed_entry() -> Value {
    json!({"kty": "OKP", "crv": "Ed25519", "x": b64(&ed25519_public(&ED_SEED)), "created": 1_780_000_000})
}

/// Two HS256 keys and an Ed25519 one, as during a rotation.
fn keys() -> Keyring {
    Keyring::from_json(&json!({ KID: KEY, OTHER_KID: OTHER_KEY, ED_KID: ed_entry() }).to_string())
        .unwrap()
}

/// The map without `kid`, as after a rotation removed it.
fn keys_without(kid: &str) -> Keyring {
    let mut map = json!({ KID: KEY, OTHER_KID: OTHER_KEY, ED_KID: ed_entry() });
    map.as_object_mut().unwrap().remove(kid);
    Keyring::from_json(&map.to_string()).unwrap()
}

/// Which of the three keys signs.
#[derive(Clone, Copy, Debug)]
enum Signer {
    Hs,
    OtherHs,
    Ed,
}

impl Signer {
    fn kid(self) -> &'static str {
        match self {
            Signer::Hs => KID,
            Signer::OtherHs => OTHER_KID,
            Signer::Ed => ED_KID,
        }
    }

    fn key(self) -> SigningKey<'static> {
        match self {
            Signer::Hs => SigningKey::Hs256(KEY.as_bytes()),
            Signer::OtherHs => SigningKey::Hs256(OTHER_KEY.as_bytes()),
            Signer::Ed => SigningKey::Ed25519(&ED_SEED),
        }
    }
}

fn signer() -> impl Strategy<Value = Signer> {
    prop::sample::select(&[Signer::Hs, Signer::OtherHs, Signer::Ed][..])
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

/// The latest `exp` a token of `role` may have at `now`.
fn latest_exp(role: Role, now: u64) -> u64 {
    now.saturating_add(role.max_lifetime_secs() + CLOCK_SKEW_SECS)
}

/// What `verify` may ever hand back.
fn valid_claims(c: &Claims, now: u64) -> bool {
    let ns_fine = match &c.ns {
        Scope::All => true,
        Scope::Only(list) => (1..=MAX_NAMESPACES).contains(&list.len()),
    };
    sub_ok(&c.sub) && ns_fine && c.exp > now && c.exp <= latest_exp(c.role, now)
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

/// Claims valid at `now` (`now` below `u64::MAX`): `exp` from just after
/// `now` to the last second the role's cap allows.
fn claims(now: u64) -> impl Strategy<Value = Claims> {
    (sub(), role(), scope()).prop_flat_map(move |(sub, role, ns)| {
        let last = latest_exp(role, now);
        let exp = prop_oneof![now + 1..=last, Just(now + 1), Just(last),];
        exp.prop_map(move |exp| Claims {
            sub: sub.clone(),
            role,
            ns: ns.clone(),
            exp,
        })
    })
}

/// A time to verify at, and a token minted to be valid then.
#[derive(Clone, Debug)]
struct Minted {
    now: u64,
    claims: Claims,
    aud: Option<String>,
    signer: Signer,
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
                0..=now.saturating_add(CLOCK_SKEW_SECS),
                Just(now.saturating_add(CLOCK_SKEW_SECS)),
            ]),
            prop::option::of("\\PC{0,24}"),
            signer(),
        )
    })
    .prop_map(|(now, claims, nbf, aud, signer)| {
        let token = mint_with(&claims, signer.kid(), signer.key(), nbf, aud.as_deref());
        Minted {
            now,
            claims,
            aud,
            signer,
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
        prop::option::of(prop::sample::select(
            &[KID, OTHER_KID, ED_KID, "k9", ""][..],
        )),
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
    /// valid names, `exp` an integer still ahead and within the role's
    /// lifetime cap, from now and from `iat` when there is one (`iat`, when
    /// not null, a whole number); other claims are ignored.
    #[test]
    fn signed_claims_follow_the_rules(
        (payload, fine) in payload(),
        exp in prop_oneof![
            3 => (1_800_000_001u64..=1_800_000_000 + 400 * 86_400).prop_map(|e| (json!(e), Some(e))),
            1 => (1_800_000_001u64..=u64::MAX).prop_map(|e| (json!(e), Some(e))),
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
        let role = p["role"].as_str().and_then(Role::parse);
        let (iat_ok, iat) = match p.get("iat") {
            None | Some(Value::Null) => (true, None),
            Some(v) => (v.as_u64().is_some(), v.as_u64()),
        };
        let fine = fine && iat_ok;
        let too_long = |r: Role, exp: u64| {
            exp > latest_exp(r, NOW) || iat.is_some_and(|i| exp.saturating_sub(i) > latest_exp(r, NOW) - NOW)
        };
        match (fine, exp_value) {
            (true, Some(exp)) if exp > NOW && role.is_some_and(|r| too_long(r, exp)) => {
                prop_assert_eq!(got, Err(TokenError::LifetimeTooLong(role.unwrap())), "{}", p)
            }
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

    /// `exp` is exclusive, `nbf` has exactly 60 s of skew, a configured
    /// audience must be named, and `exp` may be at most the role's cap and
    /// 60 s ahead: each decides alone at its boundary, and the token is
    /// accepted exactly when all four hold.
    #[test]
    fn time_and_audience_boundaries_are_exact(
        now in prop_oneof![
            3 => 1_000u64..=4_000_000_000,
            1 => prop::sample::select(vec![0, 59, 60, 61, u64::MAX - 61, u64::MAX - 60, u64::MAX - 1]),
        ],
        exp_delta in prop_oneof![
            3 => -2i128..=2,
            1 => -1_000_000i128..=1_000_000,
            1 => {
                let last = i128::from(Role::Reader.max_lifetime_secs() + CLOCK_SKEW_SECS);
                last - 2..=last + 2
            },
        ],
        nbf in prop::option::of(prop_oneof![3 => -2i128..=2, 1 => -1_000_000i128..=1_000_000]),
        token_aud in prop::option::of(prop::sample::select(&["rangeid-prod", "rangeid-staging", ""][..])),
        want_aud in prop::option::of(prop::sample::select(&["rangeid-prod", "rangeid-staging", ""][..])),
        sub in "[a-z]{1,8}",
    ) {
        let to_u64 = |v: i128| u64::try_from(v).ok();
        // exp relative to now; nbf relative to the last accepted instant,
        // now + 60.
        let exp = to_u64(i128::from(now) + exp_delta);
        let nbf = nbf.map(|d| to_u64(i128::from(now) + i128::from(CLOCK_SKEW_SECS) + d));
        let (Some(exp), Some(nbf)) = (exp, nbf.map_or(Some(None), |n| n.map(Some))) else {
            return Ok(());
        };
        let claims = Claims { sub, role: Role::Reader, ns: Scope::All, exp };
        let token = mint_with(&claims, KID, SigningKey::Hs256(KEY.as_bytes()), nbf, token_aud);
        let got = verify(&token, &keys(), want_aud, now);

        let live = now < exp;
        let started = nbf.is_none_or(|n| u128::from(n) <= u128::from(now) + u128::from(CLOCK_SKEW_SECS));
        let for_us = want_aud.is_none_or(|w| token_aud == Some(w));
        let capped = u128::from(exp)
            <= u128::from(now) + u128::from(Role::Reader.max_lifetime_secs() + CLOCK_SKEW_SECS);
        match (live, started, for_us, capped) {
            (true, true, true, true) => prop_assert_eq!(got, Ok(claims)),
            (false, true, true, _) => prop_assert_eq!(got, Err(TokenError::Expired)),
            (true, false, true, true) => prop_assert_eq!(got, Err(TokenError::NotYetValid)),
            (true, true, false, true) => prop_assert_eq!(got, Err(TokenError::WrongAudience)),
            (true, true, true, false) => {
                prop_assert_eq!(got, Err(TokenError::LifetimeTooLong(Role::Reader)))
            }
            _ => prop_assert!(got.is_err(), "{:?}", got),
        }
    }

    /// Tokens up to `MAX_TOKEN_LEN` bytes are read; longer ones are refused
    /// before anything else.
    #[test]
    fn the_length_limit_is_exact(pad in 2_900usize..2_970) {
        let payload = json!({
            "sub": "x", "role": "admin", "ns": ["*"], "exp": 1_800_003_600u64,
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
                    prop_assert_eq!(ring.get(kid), Some(&Key::Hs256(key.as_bytes().to_vec())));
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

    /// A token verifies only with the key its kid names, and only when its
    /// alg is that key's: the same claims signed by the other kind of key
    /// under the kid (HS256 keyed with the Ed25519 public key's bytes, or
    /// EdDSA under an HS256 kid), or under a kid a rotation removed, are
    /// refused as a bad signature, the answer an unknown kid gets.
    #[test]
    fn a_token_verifies_only_with_its_kids_own_key(m in minted()) {
        prop_assume!(verify(&m.token, &keys(), None, m.now).is_ok());
        let kid = m.signer.kid();
        let public = ed25519_public(&ED_SEED);
        let confused = match m.signer {
            Signer::Ed => vec![
                mint_with(&m.claims, kid, SigningKey::Hs256(&public), None, None),
                mint_with(&m.claims, kid, SigningKey::Hs256(b64(&public).as_bytes()), None, None),
            ],
            _ => vec![mint_with(&m.claims, kid, SigningKey::Ed25519(&ED_SEED), None, None)],
        };
        for t in confused {
            prop_assert_eq!(verify(&t, &keys(), None, m.now), Err(TokenError::BadSignature));
        }
        prop_assert_eq!(
            verify(&m.token, &keys_without(kid), m.aud.as_deref(), m.now),
            Err(TokenError::BadSignature)
        );
        // The other keys still verify their own tokens after the rotation.
        for other in [Signer::Hs, Signer::OtherHs, Signer::Ed] {
            if other.kid() != kid {
                let t = mint_with(&m.claims, other.kid(), other.key(), None, None);
                prop_assert_eq!(verify(&t, &keys_without(kid), None, m.now), Ok(m.claims.clone()));
            }
        }
    }

    /// A JWK entry is accepted exactly when it is an HS256 secret
    /// (`kty` oct, `k` of at least 32 bytes) or an Ed25519 public key
    /// (`kty` OKP, `crv` Ed25519, `x` a valid key not of small order, no
    /// `d`), with a matching `alg` if any, a whole-number `created` if any,
    /// and no other field. Entries start valid, of either kind, and have
    /// up to three of their fields changed to something else.
    #[test]
    fn jwk_entries_follow_the_rules(
        okp in any::<bool>(),
        changed in prop::collection::btree_set(0usize..8, 0..=3),
        named_alg in any::<bool>(),
        good_k in prop::collection::vec(any::<u8>(), 32..64),
        good_x in any::<[u8; 32]>(),
        good_created in prop::option::of(any::<u64>()),
        other_kty in prop::option::of(prop::sample::select(&["oct", "OKP", "RSA", "EC", ""][..])),
        other_crv in prop::option::of(prop::sample::select(&["Ed25519", "X25519", "ed25519"][..])),
        other_alg in prop::option::of(prop::sample::select(&["HS256", "EdDSA", "none", "RS256"][..])),
        other_k in prop::option::of(prop_oneof![
            1 => prop::collection::vec(any::<u8>(), 32..64).prop_map(|b| (b64(&b), true)),
            2 => prop::collection::vec(any::<u8>(), 0..32).prop_map(|b| (b64(&b), false)),
            1 => "[A-Za-z0-9+/=]{43,44}".prop_map(|t| {
                let ok = URL_SAFE_NO_PAD.decode(&t).is_ok_and(|b| b.len() >= MIN_KEY_LEN);
                (t, ok)
            }),
        ]),
        other_x in prop::option::of(prop_oneof![
            1 => any::<[u8; 32]>().prop_map(|seed| (b64(&ed25519_public(&seed)), true)),
            // y = 0: a point of order 4.
            1 => Just((b64(&[0u8; 32]), false)),
            // The identity point's encoding: of small order too.
            1 => Just((b64(&{ let mut id = [0u8; 32]; id[0] = 1; id }), false)),
            1 => prop::collection::vec(any::<u8>(), 0..40)
                .prop_filter("not 32 bytes", |b| b.len() != 32)
                .prop_map(|b| (b64(&b), false)),
        ]),
        other_created in prop_oneof![
            1 => any::<u64>().prop_map(|c| (json!(c), true)),
            3 => prop::sample::select(vec![json!(-1), json!(1.5), json!("1780000000"), json!(null)])
                .prop_map(|c| (c, false)),
        ],
        extra_name in prop::sample::select(&["use", "kid", "key_ops", "y"][..]),
    ) {
        let own = if okp { "EdDSA" } else { "HS256" };
        let kty = if changed.contains(&0) { other_kty } else { Some(if okp { "OKP" } else { "oct" }) };
        let crv = if changed.contains(&1) { other_crv } else { okp.then_some("Ed25519") };
        let alg = if changed.contains(&2) { other_alg } else { named_alg.then_some(own) };
        let k = if changed.contains(&3) {
            other_k
        } else {
            (!okp).then(|| (b64(&good_k), true))
        };
        let x = if changed.contains(&4) {
            other_x
        } else {
            okp.then(|| (b64(&ed25519_public(&good_x)), true))
        };
        let d = changed.contains(&5);
        let created = if changed.contains(&6) {
            Some(other_created)
        } else {
            good_created.map(|c| (json!(c), true))
        };
        let extra = changed.contains(&7).then_some(extra_name);
        let mut jwk = serde_json::Map::new();
        let mut put = |name: &str, v: Value| {
            jwk.insert(name.into(), v);
        };
        if let Some(kty) = kty { put("kty", json!(kty)); }
        if let Some(crv) = crv { put("crv", json!(crv)); }
        if let Some(alg) = alg { put("alg", json!(alg)); }
        if let Some((k, _)) = &k { put("k", json!(k)); }
        if let Some((x, _)) = &x { put("x", json!(x)); }
        if d { put("d", json!(b64(&ED_SEED))); }
        if let Some((c, _)) = &created { put("created", c.clone()); }
        if let Some(extra) = extra { put(extra, json!("x")); }
        let created_ok = created.as_ref().is_none_or(|(_, ok)| *ok);
        let hs = kty == Some("oct")
            && alg.is_none_or(|a| a == "HS256")
            && crv.is_none() && x.is_none() && !d
            && k.as_ref().is_some_and(|(_, ok)| *ok);
        let ed = kty == Some("OKP")
            && alg.is_none_or(|a| a == "EdDSA")
            && crv == Some("Ed25519") && k.is_none() && !d
            && x.as_ref().is_some_and(|(_, ok)| *ok);
        let ok = extra.is_none() && created_ok && (hs || ed);
        let text = json!({ "a": Value::Object(jwk.clone()) }).to_string();
        match Keyring::from_json(&text) {
            Ok(ring) => {
                prop_assert!(ok, "accepted {}", text);
                let key = ring.get("a").unwrap();
                prop_assert_eq!(key.alg(), if hs { "HS256" } else { "EdDSA" });
                prop_assert_eq!(ring.created("a"), created.and_then(|(c, _)| c.as_u64()));
                let shown = format!("{ring:?}");
                for secret in ["k", "x"] {
                    if let Some(v) = jwk.get(secret).and_then(Value::as_str) {
                        prop_assert!(!shown.contains(v), "{} shows key material", shown);
                    }
                }
            }
            Err(e) => {
                prop_assert!(!ok, "refused {}: {}", text, e);
                if d && kty == Some("OKP") && extra.is_none() && created_ok
                    && crv == Some("Ed25519") && alg.is_none_or(|a| a == "EdDSA")
                {
                    prop_assert!(e.0.contains("private key"), "{}", e);
                }
            }
        }
    }
}

/// The key maps of `tests/fixtures/key-maps.json`, which the `rangeid`
/// command's tests read too: the authority accepts exactly those marked so.
#[test]
fn shared_key_map_cases() {
    let fixture: Value =
        serde_json::from_str(include_str!("../../tests/fixtures/key-maps.json")).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 30);
    for case in cases {
        let (name, text) = (
            case["name"].as_str().unwrap(),
            case["text"].as_str().unwrap(),
        );
        let got = Keyring::from_json(text);
        assert_eq!(
            got.is_ok(),
            case["authority"] == "ok",
            "{name}: {text} -> {got:?}"
        );
    }
}
