//! Bearer tokens: HS256 JWTs signed with rotating keys, verified by the
//! maintained `jsonwebtoken` crate; our roles and namespace scopes on top.
//!
//! A token's header is `{"alg":"HS256","kid":..,"typ":"JWT"}`; its claims
//! `{"sub":..,"role":"generator"|"reader"|"admin","ns":[..]|["*"],"exp":..}`
//! and optionally `nbf` (honoured with 60 s of clock skew) and `aud`
//! (checked when the authority is configured with an audience). Keys come
//! from a JSON map kid → key (the `RANGEID_SIGNING_KEYS` secret); a key is
//! the UTF-8 bytes of its string, at least 32 of them; a kid may appear
//! once. Several kids let keys rotate.
//!
//! Every verification failure is a [`TokenError`] (answered 401); an
//! unknown kid and a bad signature give the same answer, so callers cannot
//! probe which kids exist. A valid token used outside its role or
//! namespaces fails [`Claims::allows`] (answered 403).

use std::collections::BTreeMap;
use std::fmt;

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rangeid_core::Namespace;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// The longest token accepted, in bytes.
pub const MAX_TOKEN_LEN: usize = 4096;
/// The shortest signing key accepted, in bytes (RFC 7518 §3.2).
pub const MIN_KEY_LEN: usize = 32;
/// The longest `sub` accepted, in bytes.
pub const MAX_SUB_LEN: usize = 128;
/// The most namespaces one token may list.
pub const MAX_NAMESPACES: usize = 256;
/// The clock skew allowed on `nbf`, in seconds.
pub const NBF_LEEWAY_SECS: u64 = 60;

/// What a token's holder may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Takes ranges (`POST /v1/ranges`) and nothing else.
    Generator,
    /// Reads namespace summaries, grants and lookups.
    Reader,
    /// Creates and administers namespaces; implies reader.
    Admin,
}

impl Role {
    /// The claim's text: `generator`, `reader` or `admin`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Generator => "generator",
            Role::Reader => "reader",
            Role::Admin => "admin",
        }
    }

    /// Parses the claim's text.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "generator" => Some(Role::Generator),
            "reader" => Some(Role::Reader),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }
}

/// The namespaces a token covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every namespace, present and future (`["*"]`).
    All,
    /// Exactly these namespaces.
    Only(Vec<Namespace>),
}

impl Scope {
    /// Whether the scope covers `ns`.
    pub fn covers(&self, ns: &Namespace) -> bool {
        match self {
            Scope::All => true,
            Scope::Only(list) => list.contains(ns),
        }
    }
}

/// The verified claims of a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claims {
    /// Who holds the token; recorded as the actor of admin actions.
    pub sub: String,
    /// What the holder may do.
    pub role: Role,
    /// Which namespaces the holder may do it in.
    pub ns: Scope,
    /// Expiry, seconds since the Unix epoch; the token is refused from then on.
    pub exp: u64,
}

/// An action a request needs permission for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access<'a> {
    /// Take ranges in a namespace: generator.
    Generate(&'a Namespace),
    /// Read a namespace: reader or admin.
    Read(&'a Namespace),
    /// List namespaces (filtered to the scope): reader or admin.
    List,
    /// Create or administer a namespace: admin.
    Admin(&'a Namespace),
}

impl Claims {
    /// The claims as `GET /v1/session` answers them:
    /// `{"sub","role","ns":[..]|["*"],"exp"}`.
    pub fn session_json(&self) -> serde_json::Value {
        serde_json::json!({
            "sub": self.sub,
            "role": self.role.as_str(),
            "ns": self.ns_list(),
            "exp": self.exp,
        })
    }

    fn ns_list(&self) -> Vec<String> {
        match &self.ns {
            Scope::All => vec!["*".into()],
            Scope::Only(list) => list.iter().map(|n| n.as_str().to_owned()).collect(),
        }
    }

    /// Whether these claims permit `access`: admin implies reader, generator
    /// implies nothing else, and the namespace must be in scope.
    pub fn allows(&self, access: Access<'_>) -> bool {
        let reads = matches!(self.role, Role::Reader | Role::Admin);
        match access {
            Access::Generate(ns) => self.role == Role::Generator && self.ns.covers(ns),
            Access::Read(ns) => reads && self.ns.covers(ns),
            Access::List => reads,
            Access::Admin(ns) => self.role == Role::Admin && self.ns.covers(ns),
        }
    }
}

/// Why a token is refused; every variant is answered 401 `unauthenticated`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenError {
    /// No `Authorization` header.
    Missing,
    /// The header is not `Bearer <token>`.
    NotBearer,
    /// The token is not a well-formed JWT.
    Malformed(&'static str),
    /// The header's `alg` is not `HS256` (this includes `none`).
    UnsupportedAlg,
    /// The signature does not verify: tampered, signed with another key,
    /// or its `kid` names no key (not told apart).
    BadSignature,
    /// The claims are missing or invalid.
    BadClaims(&'static str),
    /// `exp` has passed.
    Expired,
    /// `nbf` is still ahead, by more than the allowed skew.
    NotYetValid,
    /// The authority expects an audience and the token names another.
    WrongAudience,
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::Missing => f.write_str("missing Authorization: Bearer token"),
            TokenError::NotBearer => f.write_str("Authorization must be 'Bearer <token>'"),
            TokenError::Malformed(why) => write!(f, "malformed token: {why}"),
            TokenError::UnsupportedAlg => f.write_str("token alg must be HS256"),
            TokenError::BadSignature => {
                f.write_str("token signature does not verify with any configured key")
            }
            TokenError::BadClaims(why) => write!(f, "invalid token claims: {why}"),
            TokenError::Expired => f.write_str("token expired"),
            TokenError::NotYetValid => f.write_str("token is not valid yet (nbf)"),
            TokenError::WrongAudience => f.write_str("token is for another audience (aud)"),
        }
    }
}

/// Why a key map is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyringError(pub String);

impl fmt::Display for KeyringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The verification keys, by kid.
///
/// Guaranteed: at least one key; every kid is 1 to 64 bytes of
/// `[A-Za-z0-9._-]`; every key has at least [`MIN_KEY_LEN`] bytes.
#[derive(Clone)]
pub struct Keyring {
    keys: BTreeMap<String, Vec<u8>>,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print key material.
        f.debug_struct("Keyring")
            .field("kids", &self.keys.keys().collect::<Vec<_>>())
            .finish()
    }
}

fn valid_kid(kid: &str) -> bool {
    !kid.is_empty()
        && kid.len() <= 64
        && kid
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The key map's entries in the order written, duplicates kept (serde's
/// maps keep only the last of a repeated key).
struct Entries(Vec<(String, String)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Entries, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object of strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, String>()? {
                    out.push(entry);
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl Keyring {
    /// Parses the `RANGEID_SIGNING_KEYS` JSON map `{"kid":"key",...}`; a kid
    /// given twice is refused (which key would win is not obvious).
    pub fn from_json(text: &str) -> Result<Keyring, KeyringError> {
        let entries: Entries = serde_json::from_str(text).map_err(|e| {
            KeyringError(format!(
                "signing keys must be a JSON object of strings: {e}"
            ))
        })?;
        let mut keys = BTreeMap::new();
        for (kid, key) in entries.0 {
            if !valid_kid(&kid) {
                return Err(KeyringError(format!("invalid kid {kid:?}")));
            }
            if key.len() < MIN_KEY_LEN {
                return Err(KeyringError(format!(
                    "key {kid:?} is shorter than {MIN_KEY_LEN} bytes"
                )));
            }
            if keys.insert(kid.clone(), key.into_bytes()).is_some() {
                return Err(KeyringError(format!("kid {kid:?} is given twice")));
            }
        }
        if keys.is_empty() {
            return Err(KeyringError("no signing keys configured".into()));
        }
        Ok(Keyring { keys })
    }

    /// The key named `kid`, if any.
    pub fn get(&self, kid: &str) -> Option<&[u8]> {
        self.keys.get(kid).map(Vec::as_slice)
    }
}

/// The token in an `Authorization` header value: `Bearer <token>` (the
/// scheme is case-insensitive).
pub fn bearer(header: Option<&str>) -> Result<&str, TokenError> {
    let header = header.ok_or(TokenError::Missing)?;
    let (scheme, rest) = header.split_once(' ').ok_or(TokenError::NotBearer)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(TokenError::NotBearer);
    }
    let token = rest.trim();
    if token.is_empty() {
        return Err(TokenError::NotBearer);
    }
    Ok(token)
}

/// The claims as they appear in a token; other registered claims (`iat`,
/// `jti`, `iss`) are ignored.
#[derive(Serialize, Deserialize)]
struct ClaimsFields {
    sub: String,
    role: String,
    ns: Vec<String>,
    exp: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nbf: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    aud: Option<Audience>,
}

/// `aud`: one audience or a list of them.
#[derive(Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

/// Verifies `token` against `keys` at `now` (seconds since the epoch),
/// expecting audience `audience` when one is configured.
///
/// `jsonwebtoken` checks the shape, that `alg` is HS256 and the signature
/// (in constant time) with the key named by `kid`; this then checks the
/// claims, `exp > now`, `nbf <= now + 60 s` and the audience. Nothing in
/// the claims is trusted before the signature verifies.
pub fn verify(
    token: &str,
    keys: &Keyring,
    audience: Option<&str>,
    now: u64,
) -> Result<Claims, TokenError> {
    use jsonwebtoken::errors::ErrorKind as K;
    if token.len() > MAX_TOKEN_LEN {
        return Err(TokenError::Malformed("token too long"));
    }
    let header = jsonwebtoken::decode_header(token).map_err(|e| match e.kind() {
        // An `alg` outside the library's list (`none`, say) fails here.
        K::Json(_) => TokenError::UnsupportedAlg,
        _ => TokenError::Malformed("not a JWT header"),
    })?;
    if header.alg != Algorithm::HS256 {
        return Err(TokenError::UnsupportedAlg);
    }
    if header.typ.as_deref().is_some_and(|t| t != "JWT") {
        return Err(TokenError::Malformed("typ must be JWT"));
    }
    let key = header
        .kid
        .as_deref()
        .and_then(|kid| keys.get(kid))
        .ok_or(TokenError::BadSignature)?;
    let mut validation = Validation::new(Algorithm::HS256);
    // Time is checked below against `now`; the audience here when asked.
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.required_spec_claims = ["exp", "sub"].iter().map(|c| (*c).to_owned()).collect();
    match audience {
        Some(aud) => {
            validation.set_audience(&[aud]);
            validation.required_spec_claims.insert("aud".into());
        }
        None => validation.validate_aud = false,
    }
    let data =
        jsonwebtoken::decode::<ClaimsFields>(token, &DecodingKey::from_secret(key), &validation)
            .map_err(|e| match e.kind() {
                K::InvalidSignature | K::InvalidAlgorithm => TokenError::BadSignature,
                K::InvalidAudience => TokenError::WrongAudience,
                K::MissingRequiredClaim(c) if c == "aud" => TokenError::WrongAudience,
                K::Json(_) | K::MissingRequiredClaim(_) | K::InvalidClaimFormat(_) => {
                    TokenError::BadClaims("expected sub, role, ns and integer exp")
                }
                _ => TokenError::Malformed("not a JWT"),
            })?;
    let fields = data.claims;
    if fields
        .nbf
        .is_some_and(|nbf| nbf > now.saturating_add(NBF_LEEWAY_SECS))
    {
        return Err(TokenError::NotYetValid);
    }
    let claims = claims_from(fields)?;
    if now >= claims.exp {
        return Err(TokenError::Expired);
    }
    Ok(claims)
}

fn claims_from(f: ClaimsFields) -> Result<Claims, TokenError> {
    if f.sub.is_empty() || f.sub.len() > MAX_SUB_LEN || f.sub.chars().any(char::is_control) {
        return Err(TokenError::BadClaims(
            "sub must be 1 to 128 bytes without control characters",
        ));
    }
    let role = Role::parse(&f.role).ok_or(TokenError::BadClaims(
        "role must be generator, reader or admin",
    ))?;
    let ns = if f.ns.len() == 1 && f.ns[0] == "*" {
        Scope::All
    } else {
        if f.ns.is_empty() || f.ns.len() > MAX_NAMESPACES {
            return Err(TokenError::BadClaims(
                "ns must list 1 to 256 namespaces or be [\"*\"]",
            ));
        }
        let list =
            f.ns.iter()
                .map(|n| Namespace::new(n))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| TokenError::BadClaims("ns holds an invalid namespace name"))?;
        Scope::Only(list)
    };
    Ok(Claims {
        sub: f.sub,
        role,
        ns,
        exp: f.exp,
    })
}

/// Signs `claims` into a token with the key `key` named `kid`, valid from
/// `nbf` and for `aud` when given.
///
/// The result verifies with [`verify`] against a keyring holding that key
/// under that kid, until `claims.exp`, when the claims themselves are
/// valid (a `sub` of 1 to 128 bytes without control characters, 1 to 256
/// namespaces or all); minting does not check them.
pub fn mint_with(
    claims: &Claims,
    kid: &str,
    key: &[u8],
    nbf: Option<u64>,
    aud: Option<&str>,
) -> String {
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some(kid.into());
    let fields = ClaimsFields {
        sub: claims.sub.clone(),
        role: claims.role.as_str().into(),
        ns: claims.ns_list(),
        exp: claims.exp,
        nbf,
        aud: aud.map(|a| Audience::One(a.into())),
    };
    // HS256 over plain claims cannot fail.
    jsonwebtoken::encode(&header, &fields, &EncodingKey::from_secret(key)).unwrap_or_default()
}

/// [`mint_with`] with neither `nbf` nor `aud`.
pub fn mint(claims: &Claims, kid: &str, key: &[u8]) -> String {
    mint_with(claims, kid, key, None, None)
}

/// Parses a duration like `30d`, `12h`, `15m`, `90s` (or bare seconds)
/// into seconds; used by the token-minting command.
pub fn parse_ttl(s: &str) -> Option<u64> {
    let (digits, unit) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&s[..i], c),
        _ => (s, 's'),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let mult = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return None,
    };
    n.checked_mul(mult).filter(|&v| v > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine as _;
    use hmac::{Hmac, Mac};

    fn mac_for(key: &[u8]) -> Hmac<sha2::Sha256> {
        Hmac::new_from_slice(key).unwrap()
    }

    fn verify(token: &str, keys: &Keyring, now: u64) -> Result<Claims, TokenError> {
        super::verify(token, keys, None, now)
    }

    const KEY: &str = "0123456789abcdef0123456789abcdef";
    const KEY2: &str = "fedcba9876543210fedcba9876543210";
    const NOW: u64 = 1_800_000_000;

    fn keys() -> Keyring {
        Keyring::from_json(&format!(r#"{{"k1":"{KEY}","k2":"{KEY2}"}}"#)).unwrap()
    }

    fn ns(s: &str) -> Namespace {
        Namespace::new(s).unwrap()
    }

    fn claims(role: Role, scope: Scope) -> Claims {
        Claims {
            sub: "svc-orders".into(),
            role,
            ns: scope,
            exp: NOW + 60,
        }
    }

    fn b64(v: &serde_json::Value) -> String {
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(v).unwrap())
    }

    fn sign(h: &str, p: &str, key: &str) -> String {
        let mut mac = mac_for(key.as_bytes());
        mac.update(format!("{h}.{p}").as_bytes());
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    #[test]
    fn minted_tokens_verify_with_either_key() {
        let c = claims(Role::Generator, Scope::Only(vec![ns("orders")]));
        let t1 = mint(&c, "k1", KEY.as_bytes());
        let t2 = mint(&c, "k2", KEY2.as_bytes());
        assert_eq!(verify(&t1, &keys(), NOW), Ok(c.clone()));
        assert_eq!(verify(&t2, &keys(), NOW), Ok(c));
    }

    #[test]
    fn expiry_is_exclusive() {
        let c = claims(Role::Reader, Scope::All);
        let t = mint(&c, "k1", KEY.as_bytes());
        assert!(verify(&t, &keys(), NOW + 59).is_ok());
        assert_eq!(verify(&t, &keys(), NOW + 60), Err(TokenError::Expired));
    }

    #[test]
    fn an_unknown_kid_looks_like_a_bad_signature() {
        let c = claims(Role::Admin, Scope::All);
        let unknown = verify(&mint(&c, "k3", KEY.as_bytes()), &keys(), NOW);
        let wrong = verify(&mint(&c, "k1", KEY2.as_bytes()), &keys(), NOW);
        assert_eq!(unknown, Err(TokenError::BadSignature));
        assert_eq!(unknown, wrong, "callers cannot probe which kids exist");
        assert_eq!(
            unknown.unwrap_err().to_string(),
            wrong.unwrap_err().to_string()
        );
    }

    #[test]
    fn nbf_is_honoured_with_a_minute_of_skew() {
        let c = claims(Role::Reader, Scope::All);
        let t = mint_with(&c, "k1", KEY.as_bytes(), Some(NOW + 30), None);
        assert!(
            verify(&t, &keys(), NOW).is_ok(),
            "30 s ahead: within the skew"
        );
        let t = mint_with(&c, "k1", KEY.as_bytes(), Some(NOW + 61), None);
        assert_eq!(verify(&t, &keys(), NOW), Err(TokenError::NotYetValid));
        assert!(verify(&t, &keys(), NOW + 1).is_ok());
    }

    #[test]
    fn a_configured_audience_is_required() {
        let c = claims(Role::Reader, Scope::All);
        let ours = mint_with(&c, "k1", KEY.as_bytes(), None, Some("rangeid-prod"));
        let theirs = mint_with(&c, "k1", KEY.as_bytes(), None, Some("rangeid-staging"));
        let none = mint(&c, "k1", KEY.as_bytes());
        let with = |t: &str| super::verify(t, &keys(), Some("rangeid-prod"), NOW);
        assert!(with(&ours).is_ok());
        assert_eq!(with(&theirs), Err(TokenError::WrongAudience));
        assert_eq!(with(&none), Err(TokenError::WrongAudience));
        // Without a configured audience, any (or none) is accepted.
        assert!(verify(&theirs, &keys(), NOW).is_ok());
        assert!(verify(&none, &keys(), NOW).is_ok());
    }

    #[test]
    fn tampered_claims_are_refused() {
        let c = claims(Role::Reader, Scope::Only(vec![ns("orders")]));
        let t = mint(&c, "k1", KEY.as_bytes());
        let parts: Vec<&str> = t.split('.').collect();
        let forged = b64(&serde_json::json!({
            "sub": "svc-orders", "role": "admin", "ns": ["*"], "exp": NOW + 60
        }));
        let tampered = format!("{}.{}.{}", parts[0], forged, parts[2]);
        assert_eq!(
            verify(&tampered, &keys(), NOW),
            Err(TokenError::BadSignature)
        );
        // Flipping one signature character.
        let mut sig = parts[2].to_owned();
        let last = if sig.ends_with('A') { "B" } else { "A" };
        sig.replace_range(sig.len() - 1.., last);
        let t2 = format!("{}.{}.{}", parts[0], parts[1], sig);
        assert!(verify(&t2, &keys(), NOW).is_err());
        // Truncated signature.
        let t3 = format!("{}.{}.{}", parts[0], parts[1], &parts[2][..12]);
        assert!(verify(&t3, &keys(), NOW).is_err());
        let t4 = format!("{}.{}.", parts[0], parts[1]);
        assert!(verify(&t4, &keys(), NOW).is_err());
    }

    #[test]
    fn alg_none_and_other_algs_are_refused() {
        let p = b64(&serde_json::json!({"sub":"x","role":"admin","ns":["*"],"exp":NOW + 60}));
        for alg in ["none", "None", "HS512", "RS256", "hs256"] {
            let h = b64(&serde_json::json!({"alg": alg, "kid": "k1"}));
            for sig in [String::new(), sign(&h, &p, KEY)] {
                assert_eq!(
                    verify(&format!("{h}.{p}.{sig}"), &keys(), NOW),
                    Err(TokenError::UnsupportedAlg),
                    "{alg}"
                );
            }
        }
    }

    #[test]
    fn malformed_tokens_are_refused() {
        let h = b64(&serde_json::json!({"alg":"HS256","kid":"k1"}));
        let p = b64(&serde_json::json!({"sub":"x","role":"admin","ns":["*"],"exp":NOW + 60}));
        let good = format!("{h}.{p}.{}", sign(&h, &p, KEY));
        assert!(verify(&good, &keys(), NOW).is_ok());
        for bad in [
            String::new(),
            "abc".into(),
            "a.b".into(),
            format!("{good}.x"),
            format!("{h}.{p}"),
            format!("!!.{p}.x"),
            format!("{h}=.{p}.{}", sign(&h, &p, KEY)),
            "x".repeat(MAX_TOKEN_LEN + 1),
        ] {
            assert!(verify(&bad, &keys(), NOW).is_err(), "{bad}");
        }
        let no_kid = b64(&serde_json::json!({"alg":"HS256"}));
        let t = format!("{no_kid}.{p}.{}", sign(&no_kid, &p, KEY));
        assert_eq!(verify(&t, &keys(), NOW), Err(TokenError::BadSignature));
    }

    #[test]
    fn invalid_claims_are_refused_after_the_mac() {
        let h = b64(&serde_json::json!({"alg":"HS256","kid":"k1","typ":"JWT"}));
        for p in [
            serde_json::json!({"sub":"x","role":"root","ns":["*"],"exp":NOW + 60}),
            serde_json::json!({"sub":"","role":"admin","ns":["*"],"exp":NOW + 60}),
            serde_json::json!({"sub":"x","role":"admin","ns":[],"exp":NOW + 60}),
            serde_json::json!({"sub":"x","role":"admin","ns":["*","orders"],"exp":NOW + 60}),
            serde_json::json!({"sub":"x","role":"admin","ns":["Orders"],"exp":NOW + 60}),
            serde_json::json!({"sub":"x","role":"admin","ns":"*","exp":NOW + 60}),
            serde_json::json!({"sub":"x","role":"admin","ns":["*"]}),
            serde_json::json!({"sub":"x","role":"admin","ns":["*"],"exp":"1900000000"}),
            serde_json::json!({"sub":"x","role":"admin","ns":["*"],"exp":1.9e9}),
        ] {
            let p = b64(&p);
            let t = format!("{h}.{p}.{}", sign(&h, &p, KEY));
            assert!(
                matches!(verify(&t, &keys(), NOW), Err(TokenError::BadClaims(_))),
                "{p}"
            );
        }
    }

    #[test]
    fn role_and_namespace_matrix() {
        let orders = ns("orders");
        let other = ns("other");
        let cases = [
            (Role::Generator, [true, false, false, false]),
            (Role::Reader, [false, true, true, false]),
            (Role::Admin, [false, true, true, true]),
        ];
        for (role, [generate, read, list, admin]) in cases {
            let c = claims(role, Scope::Only(vec![orders]));
            assert_eq!(c.allows(Access::Generate(&orders)), generate, "{role:?}");
            assert_eq!(c.allows(Access::Read(&orders)), read, "{role:?}");
            assert_eq!(c.allows(Access::List), list, "{role:?}");
            assert_eq!(c.allows(Access::Admin(&orders)), admin, "{role:?}");
            for a in [
                Access::Generate(&other),
                Access::Read(&other),
                Access::Admin(&other),
            ] {
                assert!(!c.allows(a), "{role:?} {a:?}");
            }
            let all = claims(role, Scope::All);
            assert_eq!(all.allows(Access::Generate(&other)), generate);
            assert_eq!(all.allows(Access::Admin(&other)), admin);
        }
    }

    #[test]
    fn keyring_rules() {
        assert!(Keyring::from_json("{}").is_err());
        assert!(Keyring::from_json("[]").is_err());
        assert!(Keyring::from_json(r#"{"k":"short"}"#).is_err());
        assert!(Keyring::from_json(&format!(r#"{{"bad kid":"{KEY}"}}"#)).is_err());
        assert!(Keyring::from_json(&format!(r#"{{"k":{{"x":"{KEY}"}}}}"#)).is_err());
        let twice = Keyring::from_json(&format!(r#"{{"k1":"{KEY}","k1":"{KEY2}"}}"#));
        assert!(twice.unwrap_err().0.contains("given twice"));
        let k = keys();
        assert!(!format!("{k:?}").contains(KEY));
    }

    #[test]
    fn bearer_header() {
        assert_eq!(bearer(None), Err(TokenError::Missing));
        assert_eq!(bearer(Some("Basic abc")), Err(TokenError::NotBearer));
        assert_eq!(bearer(Some("Bearer")), Err(TokenError::NotBearer));
        assert_eq!(bearer(Some("Bearer   ")), Err(TokenError::NotBearer));
        assert_eq!(bearer(Some("Bearer a.b.c")), Ok("a.b.c"));
        assert_eq!(bearer(Some("bearer a.b.c")), Ok("a.b.c"));
    }

    #[test]
    fn ttl_parsing() {
        assert_eq!(parse_ttl("30d"), Some(30 * 86_400));
        assert_eq!(parse_ttl("12h"), Some(43_200));
        assert_eq!(parse_ttl("15m"), Some(900));
        assert_eq!(parse_ttl("90s"), Some(90));
        assert_eq!(parse_ttl("90"), Some(90));
        for bad in [
            "",
            "d",
            "0",
            "0d",
            "-1d",
            "1w",
            "1.5h",
            "99999999999999999999d",
        ] {
            assert_eq!(parse_ttl(bad), None, "{bad}");
        }
    }
}
