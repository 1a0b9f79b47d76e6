//! Bearer tokens: JWTs signed with HS256 (a shared secret) or EdDSA
//! (Ed25519, where the authority holds only the public key and so cannot
//! mint), verified by the maintained `jsonwebtoken` crate; our roles,
//! namespace scopes and lifetime caps on top.
//!
//! A token's header is `{"alg":"HS256"|"EdDSA","kid":..,"typ":"JWT"}`; its
//! claims `{"sub":..,"role":"generator"|"reader"|"admin","ns":[..]|["*"],"exp":..}`
//! and optionally `nbf` (honoured with [`CLOCK_SKEW_SECS`] of skew) and
//! `aud` (checked when the authority is configured with an audience). A
//! token may not outlive its role's cap ([`Role::max_lifetime_secs`]).
//!
//! Keys come from a JSON map kid → key (the `RANGEID_SIGNING_KEYS` secret),
//! read by [`Keyring::from_json`]; several kids let keys rotate, and HS256
//! and Ed25519 keys may sit side by side. A token is checked with the key
//! its `kid` names, and only if its `alg` is that key's: an HS256 token
//! never meets an Ed25519 key, nor the reverse.
//!
//! Every verification failure is a [`TokenError`] (answered 401); an
//! unknown kid, a kid whose key is of the other kind and a bad signature
//! give the same answer, so callers cannot probe which kids exist. A valid
//! token used outside its role or namespaces fails [`Claims::allows`]
//! (answered 403).

use std::collections::BTreeMap;
use std::fmt;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rangeid_core::Namespace;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// The longest token accepted, in bytes.
pub const MAX_TOKEN_LEN: usize = 4096;
/// The shortest HS256 key accepted, in bytes (RFC 7518 §3.2).
pub const MIN_KEY_LEN: usize = 32;
/// The longest `sub` accepted, in bytes.
pub const MAX_SUB_LEN: usize = 128;
/// The most namespaces one token may list.
pub const MAX_NAMESPACES: usize = 256;
/// The clock skew allowed between the minting machine and the authority,
/// in seconds: on `nbf`, and on the lifetime cap.
pub const CLOCK_SKEW_SECS: u64 = 60;
/// One day, in seconds.
const DAY_SECS: u64 = 86_400;

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
    /// A relay (docs/relays.md): takes ranges (`POST /v1/ranges`) to hand
    /// out to the generators routed to it, and nothing else. Its requests
    /// are decided only while the namespace's relays are on.
    Relay,
}

impl Role {
    /// Every role, in the order the OpenAPI document lists them (the CLI's
    /// list is checked against it: tests/npm/one-source.test.mjs).
    pub const ALL: [Role; 4] = [Role::Generator, Role::Reader, Role::Admin, Role::Relay];

    /// The claim's text: `generator`, `reader`, `admin` or `relay`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Generator => "generator",
            Role::Reader => "reader",
            Role::Admin => "admin",
            Role::Relay => "relay",
        }
    }

    /// Parses the claim's text.
    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// The longest a token of this role may live, in seconds: `exp` more
    /// than this (plus [`CLOCK_SKEW_SECS`]) ahead of the authority's clock
    /// is refused. Tokens are not revocable one by one (only by removing
    /// their key), so the cap bounds what a leaked token can do:
    ///
    /// - generator, 365 days: a deployed service holds it, an expiry is an
    ///   outage, and a yearly key rotation renews it; what a leak allows is
    ///   bounded by the namespace's limits.
    /// - reader, 365 days: dashboards and metrics scrapers; a leak reveals
    ///   grants and `sub`s but changes nothing.
    /// - admin, 30 days: people and deploy jobs, who can mint again; a leak
    ///   could freeze namespaces or raise floors (skipping IDs for good).
    /// - relay, 365 days: a deployed service, as a generator; a leak allows
    ///   what a generator's does, and nothing while relays are off.
    pub const fn max_lifetime_secs(self) -> u64 {
        match self {
            Role::Generator | Role::Reader | Role::Relay => 365 * DAY_SECS,
            Role::Admin => 30 * DAY_SECS,
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
    /// Who holds the token; recorded as the actor of admin actions and the
    /// owner of grants.
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
    /// Take ranges in a namespace: generator or relay.
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

    /// Who the token is and what it covers, for a refusal's message:
    /// `a generator token (sub "svc") for "users", "carts"`, or `... for
    /// every namespace`.
    pub fn describe(&self) -> String {
        let scope = match &self.ns {
            Scope::All => "every namespace".to_owned(),
            Scope::Only(list) => list
                .iter()
                .map(|n| format!("{:?}", n.as_str()))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let role = self.role.as_str();
        let article = if role.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {role} token (sub {:?}) for {scope}", self.sub)
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
            Access::Generate(ns) => {
                matches!(self.role, Role::Generator | Role::Relay) && self.ns.covers(ns)
            }
            Access::Read(ns) => reads && self.ns.covers(ns),
            Access::List => reads,
            Access::Admin(ns) => self.role == Role::Admin && self.ns.covers(ns),
        }
    }
}

/// Why a token is refused; every variant is answered 401 `unauthenticated`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenError {
    /// No `Authorization` header.
    Missing,
    /// The header is not `Bearer <token>`.
    NotBearer,
    /// The token is not a well-formed JWT.
    Malformed(&'static str),
    /// The header's `alg` is neither `HS256` nor `EdDSA` (this includes
    /// `none`).
    UnsupportedAlg,
    /// The signature does not verify: tampered, signed with another key,
    /// its `kid` names no key, or names a key of the other kind than its
    /// `alg` (not told apart).
    BadSignature,
    /// The claims are missing or invalid.
    BadClaims(&'static str),
    /// `exp` has passed.
    Expired,
    /// `nbf` is still ahead, by more than the allowed skew.
    NotYetValid,
    /// The authority expects an audience and the token names another.
    WrongAudience,
    /// `exp` is further ahead than the role's cap allows, from now or from
    /// the token's `iat` ([`Role::max_lifetime_secs`]).
    LifetimeTooLong(Role),
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::Missing => f.write_str("missing Authorization: Bearer token"),
            TokenError::NotBearer => f.write_str("Authorization must be 'Bearer <token>'"),
            TokenError::Malformed(why) => write!(f, "malformed token: {why}"),
            TokenError::UnsupportedAlg => f.write_str("token alg must be HS256 or EdDSA"),
            TokenError::BadSignature => {
                f.write_str("token signature does not verify with any configured key")
            }
            TokenError::BadClaims(why) => write!(f, "invalid token claims: {why}"),
            TokenError::Expired => f.write_str("token expired"),
            TokenError::NotYetValid => f.write_str("token is not valid yet (nbf)"),
            TokenError::WrongAudience => f.write_str("token is for another audience (aud)"),
            TokenError::LifetimeTooLong(role) => write!(
                f,
                "token lives too long: a {} token may live at most {} days; mint a shorter one",
                role.as_str(),
                role.max_lifetime_secs() / DAY_SECS
            ),
        }
    }
}

impl std::error::Error for TokenError {}

/// Why a key map is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyringError(pub String);

impl fmt::Display for KeyringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KeyringError {}

/// One verification key of the key map.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Key {
    /// An HS256 shared secret (at least [`MIN_KEY_LEN`] bytes): whoever
    /// holds it can also mint.
    Hs256(Vec<u8>),
    /// An Ed25519 public key: verifies EdDSA tokens, cannot mint them.
    Ed25519([u8; 32]),
}

impl Key {
    /// The JWT `alg` this key verifies: `HS256` or `EdDSA`.
    pub const fn alg(&self) -> &'static str {
        match self {
            Key::Hs256(_) => "HS256",
            Key::Ed25519(_) => "EdDSA",
        }
    }

    const fn algorithm(&self) -> Algorithm {
        match self {
            Key::Hs256(_) => Algorithm::HS256,
            Key::Ed25519(_) => Algorithm::EdDSA,
        }
    }

    fn decoding(&self) -> DecodingKey {
        match self {
            Key::Hs256(secret) => DecodingKey::from_secret(secret),
            Key::Ed25519(public) => DecodingKey::from_ed_der(public),
        }
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print key material (a public key neither: one rule).
        f.write_str(self.alg())
    }
}

/// A key with what the map says about it.
#[derive(Clone)]
struct Entry {
    key: Key,
    created: Option<u64>,
    decoding: DecodingKey,
}

/// The verification keys, by kid.
///
/// Guaranteed: at least one key; every kid is 1 to 64 bytes of
/// `[A-Za-z0-9._-]`; every HS256 key has at least [`MIN_KEY_LEN`] bytes;
/// every Ed25519 key is a valid public key that is not of small order; no
/// private key.
#[derive(Clone)]
pub struct Keyring {
    keys: BTreeMap<String, Entry>,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print key material.
        f.debug_map()
            .entries(self.keys.iter().map(|(kid, e)| (kid, &e.key)))
            .finish()
    }
}

/// The key-id rule as a regular expression: 1 to 64 of `A-Z a-z 0-9 . _
/// -`. The rule's one text: a test proves it accepts exactly what the key
/// map's parser accepts, and the CLI's copy (`npm/bin/keys.mjs`, `KID_RE`)
/// is checked against it (`tests/npm/one-source.test.mjs`).
pub const KID_PATTERN: &str = "^[A-Za-z0-9._-]{1,64}$";

fn valid_kid(kid: &str) -> bool {
    !kid.is_empty()
        && kid.len() <= 64
        && kid
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The key map's entries in the order written, duplicates kept (serde's
/// maps keep only the last of a repeated key).
struct Entries(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Entries, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object of kid to key")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, serde_json::Value>()? {
                    out.push(entry);
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The fields a key's JWK (RFC 7517) may hold in the map; any other is
/// refused (a typo would otherwise pass unnoticed).
const JWK_FIELDS: [&str; 7] = ["kty", "crv", "alg", "k", "x", "d", "created"];

/// Base64url without padding (RFC 7515 §2), canonical.
fn base64url(kid: &str, field: &str, text: &serde_json::Value) -> Result<Vec<u8>, KeyringError> {
    let bad = || {
        KeyringError(format!(
            "key {kid:?}: {field} must be base64url without padding"
        ))
    };
    let text = text.as_str().ok_or_else(bad)?;
    URL_SAFE_NO_PAD.decode(text).map_err(|_| bad())
}

/// One entry of the map: a string (an HS256 secret, its UTF-8 bytes, as
/// keys were written before creation times were recorded) or a JWK.
fn parse_entry(kid: &str, value: &serde_json::Value) -> Result<(Key, Option<u64>), KeyringError> {
    let err = |why: String| KeyringError(format!("key {kid:?}: {why}"));
    let secret = |bytes: Vec<u8>| {
        if bytes.len() < MIN_KEY_LEN {
            return Err(KeyringError(format!(
                "key {kid:?} is shorter than {MIN_KEY_LEN} bytes"
            )));
        }
        Ok(Key::Hs256(bytes))
    };
    let jwk = match value {
        serde_json::Value::String(s) => return Ok((secret(s.clone().into_bytes())?, None)),
        serde_json::Value::Object(o) => o,
        _ => {
            return Err(err(
                "must be a string (an HS256 secret) or a JWK object".into()
            ))
        }
    };
    if let Some(field) = jwk.keys().find(|f| !JWK_FIELDS.contains(&f.as_str())) {
        return Err(err(format!(
            "unknown field {field:?} (a key holds kty, crv, alg, k or x, and created)"
        )));
    }
    // A field's text: `None` when absent, `Some(None)` when not a string.
    let text = |field: &str| jwk.get(field).map(serde_json::Value::as_str);
    let created = match jwk.get("created") {
        None => None,
        Some(v) => Some(v.as_u64().ok_or_else(|| {
            err("created must be a whole number of seconds since the Unix epoch".into())
        })?),
    };
    let expect_alg = |want: &str| match text("alg") {
        None => Ok(()),
        Some(Some(a)) if a == want => Ok(()),
        Some(_) => Err(err(format!("alg must be {want} for this key type"))),
    };
    let key = match text("kty") {
        Some(Some("oct")) => {
            expect_alg("HS256")?;
            if let Some(f) = ["crv", "x", "d"].into_iter().find(|f| jwk.contains_key(*f)) {
                return Err(err(format!("an oct (HS256) key has no {f}")));
            }
            let k = jwk
                .get("k")
                .ok_or_else(|| err("an oct key needs k".into()))?;
            secret(base64url(kid, "k", k)?)?
        }
        Some(Some("OKP")) => {
            expect_alg("EdDSA")?;
            if text("crv") != Some(Some("Ed25519")) {
                return Err(err("an OKP key must have crv Ed25519".into()));
            }
            if jwk.contains_key("d") {
                return Err(err(
                    "holds a private key (d): the authority takes only the public half, so it \
                     cannot mint; give it the map `rangeid keygen --public` prints"
                        .into(),
                ));
            }
            if jwk.contains_key("k") {
                return Err(err("an OKP key has no k".into()));
            }
            let x = jwk
                .get("x")
                .ok_or_else(|| err("an OKP key needs x".into()))?;
            let x: [u8; 32] = base64url(kid, "x", x)?
                .try_into()
                .map_err(|_| err("x must be 32 bytes".into()))?;
            let public = ed25519_dalek::VerifyingKey::from_bytes(&x)
                .map_err(|_| err("x is not an Ed25519 public key".into()))?;
            if public.is_weak() {
                return Err(err("x is a weak (small-order) Ed25519 key".into()));
            }
            Key::Ed25519(x)
        }
        _ => return Err(err("kty must be oct (HS256) or OKP (Ed25519, EdDSA)".into())),
    };
    Ok((key, created))
}

impl Keyring {
    /// Parses the `RANGEID_SIGNING_KEYS` JSON map. Each kid maps to
    ///
    /// - a string: an HS256 secret, its UTF-8 bytes (at least 32);
    /// - `{"kty":"oct","k":base64url,"created":secs}`: an HS256 secret;
    /// - `{"kty":"OKP","crv":"Ed25519","x":base64url,"created":secs}`: an
    ///   Ed25519 public key.
    ///
    /// `alg` (`HS256` or `EdDSA`) may be given and must match; `created`
    /// (seconds since the Unix epoch) is optional. A private key (`d`) is
    /// refused: the authority must not be able to mint. A kid given twice
    /// is refused (which key would win is not obvious).
    pub fn from_json(text: &str) -> Result<Keyring, KeyringError> {
        let entries: Entries = serde_json::from_str(text).map_err(|e| {
            KeyringError(format!(
                "signing keys must be a JSON object of kid to key: {e}"
            ))
        })?;
        let mut keys = BTreeMap::new();
        for (kid, value) in entries.0 {
            if !valid_kid(&kid) {
                return Err(KeyringError(format!("invalid kid {kid:?}")));
            }
            let (key, created) = parse_entry(&kid, &value)?;
            let decoding = key.decoding();
            let entry = Entry {
                key,
                created,
                decoding,
            };
            if keys.insert(kid.clone(), entry).is_some() {
                return Err(KeyringError(format!("kid {kid:?} is given twice")));
            }
        }
        if keys.is_empty() {
            return Err(KeyringError("no signing keys configured".into()));
        }
        Ok(Keyring { keys })
    }

    /// The key named `kid`, if any.
    pub fn get(&self, kid: &str) -> Option<&Key> {
        self.keys.get(kid).map(|e| &e.key)
    }

    /// When the key named `kid` was made, if the map says.
    pub fn created(&self, kid: &str) -> Option<u64> {
        self.keys.get(kid).and_then(|e| e.created)
    }

    /// Every kid, in byte order.
    pub fn kids(&self) -> impl Iterator<Item = &str> {
        self.keys.keys().map(String::as_str)
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

/// The claims as they appear in a token; `iat`, when present, bounds the
/// lifetime too; other registered claims (`jti`, `iss`) are ignored.
#[derive(Serialize, Deserialize)]
struct ClaimsFields {
    sub: String,
    role: String,
    ns: Vec<String>,
    exp: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nbf: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    iat: Option<u64>,
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
/// The header must name `alg` HS256 or EdDSA and a `kid` whose key is of
/// that kind; `jsonwebtoken` then checks the shape and the signature (in
/// constant time for HS256) with that key; this then checks the claims,
/// `exp > now`, `nbf <= now + 60 s`, the audience and the role's lifetime
/// cap. Nothing in the claims is trusted before the signature verifies.
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
    if !matches!(header.alg, Algorithm::HS256 | Algorithm::EdDSA) {
        return Err(TokenError::UnsupportedAlg);
    }
    if header.typ.as_deref().is_some_and(|t| t != "JWT") {
        return Err(TokenError::Malformed("typ must be JWT"));
    }
    // The kid's key decides the algorithm; a token claiming the other one
    // is refused as an unknown kid is, so nothing tells the two apart.
    let entry = header
        .kid
        .as_deref()
        .and_then(|kid| keys.keys.get(kid))
        .filter(|e| e.key.algorithm() == header.alg)
        .ok_or(TokenError::BadSignature)?;
    let mut validation = Validation::new(entry.key.algorithm());
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
        jsonwebtoken::decode::<ClaimsFields>(token, &entry.decoding, &validation).map_err(|e| {
            match e.kind() {
            K::InvalidSignature | K::InvalidAlgorithm | K::InvalidEddsaKey => {
                TokenError::BadSignature
            }
            K::InvalidAudience => TokenError::WrongAudience,
            K::MissingRequiredClaim(c) if c == "aud" => TokenError::WrongAudience,
            K::Json(_) | K::MissingRequiredClaim(_) | K::InvalidClaimFormat(_) => {
                TokenError::BadClaims(
                    "expected sub, role, ns, an integer exp, and integer iat and nbf when present",
                )
            }
            _ => TokenError::Malformed("not a JWT"),
        }
        })?;
    let fields = data.claims;
    if fields
        .nbf
        .is_some_and(|nbf| nbf > now.saturating_add(CLOCK_SKEW_SECS))
    {
        return Err(TokenError::NotYetValid);
    }
    let iat = fields.iat;
    let claims = claims_from(fields)?;
    if now >= claims.exp {
        return Err(TokenError::Expired);
    }
    // The cap bounds what is left (`exp - now`) and, when the token says
    // when it was issued, its whole life (`exp - iat`): a token minted with
    // a far `exp` is not let in once its remainder fits under the cap.
    let cap = claims.role.max_lifetime_secs() + CLOCK_SKEW_SECS;
    let life = iat.map_or(0, |iat| claims.exp.saturating_sub(iat));
    if claims.exp - now > cap || life > cap {
        return Err(TokenError::LifetimeTooLong(claims.role));
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

/// A key to sign with, for [`mint_with`].
#[derive(Clone, Copy)]
#[non_exhaustive]
pub enum SigningKey<'a> {
    /// An HS256 secret.
    Hs256(&'a [u8]),
    /// An Ed25519 private key: its 32-byte seed (a JWK's `d`).
    Ed25519(&'a [u8; 32]),
}

/// Signs `claims` into a token with `key` named `kid`, valid from `nbf`
/// and for `aud` when given. The authority never mints (it may hold only
/// public keys); this is for tests of the verifier. The `rangeid token`
/// command is the minting tool, and its tokens are checked against this
/// crate's [`verify`] on the running authority.
///
/// The result verifies with [`verify`] against a keyring holding that key
/// (or its public half) under that kid, until `claims.exp`, when the
/// claims themselves are valid (a `sub` of 1 to 128 bytes without control
/// characters, 1 to 256 namespaces or all, a lifetime within the role's
/// cap); minting does not check them.
pub fn mint_with(
    claims: &Claims,
    kid: &str,
    key: SigningKey<'_>,
    nbf: Option<u64>,
    aud: Option<&str>,
) -> String {
    let (alg, encoding) = match key {
        SigningKey::Hs256(secret) => (Algorithm::HS256, EncodingKey::from_secret(secret)),
        SigningKey::Ed25519(seed) => {
            use ed25519_dalek::pkcs8::EncodePrivateKey;
            let der = ed25519_dalek::SigningKey::from_bytes(seed)
                .to_pkcs8_der()
                .map(|d| d.as_bytes().to_vec())
                .unwrap_or_default();
            (Algorithm::EdDSA, EncodingKey::from_ed_der(&der))
        }
    };
    let mut header = Header::new(alg);
    header.kid = Some(kid.into());
    let fields = ClaimsFields {
        sub: claims.sub.clone(),
        role: claims.role.as_str().into(),
        ns: claims.ns_list(),
        exp: claims.exp,
        nbf,
        iat: None,
        aud: aud.map(|a| Audience::One(a.into())),
    };
    // Signing plain claims with a well-formed key cannot fail.
    jsonwebtoken::encode(&header, &fields, &encoding).unwrap_or_default()
}

/// [`mint_with`] an HS256 `secret`, with neither `nbf` nor `aud`.
pub fn mint(claims: &Claims, kid: &str, secret: &[u8]) -> String {
    mint_with(claims, kid, SigningKey::Hs256(secret), None, None)
}

/// The public half of an Ed25519 private key's 32-byte seed (a JWK's `x`
/// from its `d`), for tests that build key maps.
pub fn ed25519_public(seed: &[u8; 32]) -> [u8; 32] {
    ed25519_dalek::SigningKey::from_bytes(seed)
        .verifying_key()
        .to_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn the_kid_pattern_says_what_the_parser_checks() {
        let re = regex::Regex::new(KID_PATTERN).unwrap();
        let mut alphabet: Vec<char> = (0u8..128).map(char::from).collect();
        alphabet.extend(['é', '\u{212A}', '\u{FEFF}']);
        let mut corpus = vec![String::new()];
        for a in &alphabet {
            corpus.push(a.to_string());
            for b in &alphabet {
                corpus.push(format!("{a}{b}"));
            }
        }
        for len in [63, 64, 65] {
            corpus.push("a".repeat(len));
            corpus.push(format!("{}\n", "a".repeat(len - 1)));
        }
        for kid in corpus {
            assert_eq!(re.is_match(&kid), valid_kid(&kid), "{kid:?}");
        }
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
        let t = mint_with(
            &c,
            "k1",
            SigningKey::Hs256(KEY.as_bytes()),
            Some(NOW + 30),
            None,
        );
        assert!(
            verify(&t, &keys(), NOW).is_ok(),
            "30 s ahead: within the skew"
        );
        let t = mint_with(
            &c,
            "k1",
            SigningKey::Hs256(KEY.as_bytes()),
            Some(NOW + 61),
            None,
        );
        assert_eq!(verify(&t, &keys(), NOW), Err(TokenError::NotYetValid));
        assert!(verify(&t, &keys(), NOW + 1).is_ok());
    }

    #[test]
    fn a_configured_audience_is_required() {
        let c = claims(Role::Reader, Scope::All);
        let ours = mint_with(
            &c,
            "k1",
            SigningKey::Hs256(KEY.as_bytes()),
            None,
            Some("rangeid-prod"),
        );
        let theirs = mint_with(
            &c,
            "k1",
            SigningKey::Hs256(KEY.as_bytes()),
            None,
            Some("rangeid-staging"),
        );
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
            (Role::Relay, [true, false, false, false]),
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

    /// An Ed25519 key pair from a fixed seed, and the map holding its
    /// public half as `ed1` beside the HS256 keys.
    const SEED: [u8; 32] = [7; 32];

    fn mixed() -> Keyring {
        let x = URL_SAFE_NO_PAD.encode(ed25519_public(&SEED));
        Keyring::from_json(&format!(
            r#"{{"k1":"{KEY}","ed1":{{"kty":"OKP","crv":"Ed25519","alg":"EdDSA","x":"{x}","created":1780000000}}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn ed25519_tokens_verify_with_the_public_key_beside_hs256() {
        let keys = mixed();
        assert_eq!(keys.get("ed1").map(Key::alg), Some("EdDSA"));
        assert_eq!(keys.created("ed1"), Some(1_780_000_000));
        assert_eq!(keys.created("k1"), None);
        let c = claims(Role::Generator, Scope::Only(vec![ns("orders")]));
        let ed = mint_with(&c, "ed1", SigningKey::Ed25519(&SEED), None, None);
        let header: serde_json::Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(ed.split('.').next().unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(header["alg"], "EdDSA");
        assert_eq!(verify(&ed, &keys, NOW), Ok(c.clone()));
        assert_eq!(
            verify(&mint(&c, "k1", KEY.as_bytes()), &keys, NOW),
            Ok(c.clone())
        );
        // Another private key under the same kid does not verify.
        let other = mint_with(&c, "ed1", SigningKey::Ed25519(&[8; 32]), None, None);
        assert_eq!(verify(&other, &keys, NOW), Err(TokenError::BadSignature));
        // A tampered payload does not verify either.
        let parts: Vec<&str> = ed.split('.').collect();
        let forged = b64(&serde_json::json!({
            "sub": "svc-orders", "role": "admin", "ns": ["*"], "exp": NOW + 60
        }));
        let tampered = format!("{}.{forged}.{}", parts[0], parts[2]);
        assert_eq!(verify(&tampered, &keys, NOW), Err(TokenError::BadSignature));
    }

    #[test]
    fn alg_confusion_is_refused_like_an_unknown_kid() {
        let keys = mixed();
        let c = claims(Role::Admin, Scope::All);
        // The classic attack: HS256 keyed with the Ed25519 public key's
        // bytes (which are public), under the Ed25519 kid.
        let public = ed25519_public(&SEED);
        let x = URL_SAFE_NO_PAD.encode(public);
        for secret in [&public[..], x.as_bytes()] {
            let t = mint(&c, "ed1", secret);
            assert_eq!(verify(&t, &keys, NOW), Err(TokenError::BadSignature));
        }
        // EdDSA under an HS256 kid.
        let t = mint_with(&c, "k1", SigningKey::Ed25519(&SEED), None, None);
        assert_eq!(verify(&t, &keys, NOW), Err(TokenError::BadSignature));
        // The same answer as an unknown kid: nothing tells them apart.
        let unknown = mint_with(&c, "nope", SigningKey::Ed25519(&SEED), None, None);
        assert_eq!(verify(&unknown, &keys, NOW), Err(TokenError::BadSignature));
        // alg none, with the Ed25519 kid.
        let p = b64(&serde_json::json!({"sub":"x","role":"admin","ns":["*"],"exp":NOW + 60}));
        let h = b64(&serde_json::json!({"alg":"none","kid":"ed1"}));
        assert_eq!(
            verify(&format!("{h}.{p}."), &keys, NOW),
            Err(TokenError::UnsupportedAlg)
        );
    }

    #[test]
    fn a_kid_removed_by_rotation_refuses_its_tokens() {
        let c = claims(Role::Generator, Scope::All);
        let old = mint(&c, "k1", KEY.as_bytes());
        let new = mint(&c, "k2", KEY2.as_bytes());
        let rotated = Keyring::from_json(&format!(r#"{{"k2":"{KEY2}"}}"#)).unwrap();
        assert_eq!(verify(&old, &rotated, NOW), Err(TokenError::BadSignature));
        assert_eq!(verify(&new, &rotated, NOW), Ok(c));
    }

    #[test]
    fn lifetimes_are_capped_per_role() {
        for role in Role::ALL {
            let cap = role.max_lifetime_secs();
            let at = |exp: u64| {
                let c = Claims {
                    exp,
                    ..claims(role, Scope::All)
                };
                verify(&mint(&c, "k1", KEY.as_bytes()), &keys(), NOW)
            };
            assert!(at(NOW + cap).is_ok(), "{role:?}");
            assert!(
                at(NOW + cap + CLOCK_SKEW_SECS).is_ok(),
                "{role:?}: the skew"
            );
            assert_eq!(
                at(NOW + cap + CLOCK_SKEW_SECS + 1),
                Err(TokenError::LifetimeTooLong(role))
            );
            assert_eq!(at(u64::MAX), Err(TokenError::LifetimeTooLong(role)));
        }
        // `iat` bounds the whole life: a far `exp` minted long ago is not let
        // in once what is left fits under the cap.
        let header = b64(&serde_json::json!({"alg":"HS256","typ":"JWT","kid":"k1"}));
        let with_iat = |iat: u64, exp: u64| {
            let p = b64(&serde_json::json!({
                "sub":"x","role":"admin","ns":["*"],"iat":iat,"exp":exp
            }));
            let t = format!("{header}.{p}.{}", sign(&header, &p, KEY));
            verify(&t, &keys(), NOW)
        };
        let cap = Role::Admin.max_lifetime_secs();
        assert!(with_iat(NOW - 10, NOW + cap - 10).is_ok());
        assert!(with_iat(NOW - 10, NOW + cap + CLOCK_SKEW_SECS - 10).is_ok());
        assert_eq!(
            with_iat(NOW - 10 * cap, NOW + 100),
            Err(TokenError::LifetimeTooLong(Role::Admin))
        );
        assert_eq!(
            with_iat(NOW - 10, NOW + cap + CLOCK_SKEW_SECS - 9),
            Err(TokenError::LifetimeTooLong(Role::Admin))
        );
        assert_eq!(Role::Admin.max_lifetime_secs(), 30 * 86_400);
        assert_eq!(Role::Generator.max_lifetime_secs(), 365 * 86_400);
        let text = TokenError::LifetimeTooLong(Role::Admin).to_string();
        assert!(text.contains("30 days"), "{text}");
    }

    #[test]
    fn jwk_key_maps() {
        let k = URL_SAFE_NO_PAD.encode([9u8; 32]);
        let x = URL_SAFE_NO_PAD.encode(ed25519_public(&SEED));
        let d = URL_SAFE_NO_PAD.encode(SEED);
        let ok = Keyring::from_json(&format!(
            r#"{{"a":{{"kty":"oct","k":"{k}","alg":"HS256","created":1}},"b":{{"kty":"OKP","crv":"Ed25519","x":"{x}"}}}}"#
        ))
        .unwrap();
        assert_eq!(ok.get("a"), Some(&Key::Hs256(vec![9; 32])));
        assert_eq!(ok.kids().collect::<Vec<_>>(), ["a", "b"]);
        let shown = format!("{ok:?}");
        assert!(!shown.contains(&k) && !shown.contains(&x), "{shown}");
        let refused = |entry: String, why: &str| {
            let e = Keyring::from_json(&format!(r#"{{"a":{entry}}}"#)).unwrap_err();
            assert!(e.0.contains(why), "{entry}: {e}");
        };
        refused(
            format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}","d":"{d}"}}"#),
            "private key",
        );
        refused(
            format!(r#"{{"kty":"OKP","crv":"X25519","x":"{x}"}}"#),
            "Ed25519",
        );
        refused(
            format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}","alg":"HS256"}}"#),
            "alg must be EdDSA",
        );
        refused(
            format!(r#"{{"kty":"oct","k":"{k}","alg":"EdDSA"}}"#),
            "alg must be HS256",
        );
        refused(
            format!(
                r#"{{"kty":"oct","k":"{}"}}"#,
                URL_SAFE_NO_PAD.encode([1u8; 31])
            ),
            "shorter than 32",
        );
        refused(format!(r#"{{"kty":"oct","k":"{k}="}}"#), "base64url");
        refused(format!(r#"{{"kty":"oct","k":"{k}","x":"{x}"}}"#), "no x");
        refused(
            r#"{"kty":"OKP","crv":"Ed25519","x":"AAAA"}"#.into(),
            "32 bytes",
        );
        refused(
            format!(
                r#"{{"kty":"OKP","crv":"Ed25519","x":"{}"}}"#,
                URL_SAFE_NO_PAD.encode([0u8; 32])
            ),
            "weak",
        );
        refused(format!(r#"{{"kty":"RSA","k":"{k}"}}"#), "kty");
        refused(
            format!(r#"{{"kty":"oct","k":"{k}","created":-1}}"#),
            "created",
        );
        refused(
            format!(r#"{{"kty":"oct","k":"{k}","created":"2026-06-01"}}"#),
            "created",
        );
        refused(
            format!(r#"{{"kty":"oct","k":"{k}","kid":"a"}}"#),
            "unknown field",
        );
        refused("12".into(), "string");
        refused("null".into(), "string");
    }
}
