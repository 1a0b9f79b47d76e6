//! The front Worker's decisions: from an HTTP request to a [`Plan`].
//!
//! Order of checks: route (`404`/`405`), CORS origin (`403`), token (`401`),
//! body size (`413`), body and path validation (`400`, or `404` for an
//! impossible namespace name), role and namespace (`403`). Only a request
//! that passed all of them is forwarded to an object, so nothing malformed
//! or unauthorized ever reaches storage. The body is read only after the
//! route, origin and token passed ([`plan_before_body`]), and at most
//! [`api::MAX_BODY`] + 1 bytes of it.
//!
//! - [`route`]: method and path to a route; 404 and 405.
//! - [`token`]: HS256 and EdDSA bearer tokens, roles and namespace scopes.
//! - [`listing`]: the namespace listing and the metrics scrape, as state
//!   machines.
//! - [`metrics`]: `/v1/metrics` in the Prometheus text format.
//! - `driver` (wasm32 only): the `fetch` event, which pumps all of these.

pub mod listing;
pub mod metrics;
pub mod openapi;
pub mod page;
pub mod relay_route;
pub mod route;
pub mod token;

#[cfg(target_arch = "wasm32")]
mod driver;

use rangeid_core::wire::DecU64;
use rangeid_core::{ErrorCode, Namespace};

use crate::api;
use crate::front::route::{allowed_methods, route, Route, RouteError};
use crate::front::token::{bearer, verify, Access, Claims, Keyring, KeyringError, Role, Scope};
use crate::object::ObjectRequest;
use crate::shared::response::{ApiError, Cors, CorsCheck, HttpReply};

/// What every caller of an authenticated route is told while the
/// configuration is refused: nothing about why (that is in the logs,
/// [`FrontConfig::problem`]), as no caller could be authenticated.
pub const NOT_SERVING: &str = "the authority is unavailable; retry later";

/// The front Worker's configuration, read from its environment.
#[derive(Clone, Debug)]
pub struct FrontConfig {
    /// The verification keys, or why they could not be loaded (then every
    /// authenticated route answers `503 unavailable`).
    pub keys: Result<Keyring, KeyringError>,
    /// The CORS allow-list.
    pub cors: Cors,
    /// The audience tokens must name (`aud`), when configured.
    pub audience: Option<String>,
    /// The grant retention in seconds, or why the configured one is
    /// refused (then every authenticated route answers `503`).
    pub retention: Result<u64, String>,
}

impl FrontConfig {
    /// Why this configuration is refused, for the operator's logs; `None`
    /// when it serves.
    pub fn problem(&self) -> Option<String> {
        match (&self.keys, &self.retention) {
            (Err(e), _) => Some(format!("RANGEID_SIGNING_KEYS: {e}")),
            (_, Err(e)) => Some(e.clone()),
            _ => None,
        }
    }
}

/// An incoming request, as the runtime delivered it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Incoming<'a> {
    /// The method, upper-case.
    pub method: &'a str,
    /// The path, without the query.
    pub path: &'a str,
    /// The query string without `?` (empty when absent).
    pub query: &'a str,
    /// The `Authorization` header.
    pub authorization: Option<&'a str>,
    /// The `Origin` header.
    pub origin: Option<&'a str>,
    /// This request's own origin (`scheme://host[:port]` of its URL): an
    /// `Origin` equal to it is same-origin (the admin page), not CORS.
    pub own_origin: &'a str,
    /// The body (at most [`api::MAX_BODY`] + 1 bytes of it), or `None` when
    /// it was not read because it is longer.
    pub body: Option<&'a [u8]>,
}

impl<'a> Incoming<'a> {
    /// The `Origin` of a cross-origin request; `None` without one or when
    /// it is this request's own origin (browsers send `Origin` on
    /// same-origin POSTs too).
    fn cross_origin(&self) -> Option<&'a str> {
        self.origin.filter(|o| *o != self.own_origin)
    }
}

/// What the Worker must do with a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Answer directly.
    Reply(HttpReply),
    /// Send `request` to the namespace object of `namespace` and pass its
    /// answer on.
    Object {
        /// Which object (`idFromName(namespace)`).
        namespace: Namespace,
        /// What to ask it.
        request: ObjectRequest,
    },
    /// A generator's range request: to the relay object of `namespace` in
    /// its region when the namespace's relays are on, else to the namespace
    /// object ([`relay_route`] decides, with what the isolate learned).
    Grant {
        /// The namespace.
        namespace: Namespace,
        /// The request for its namespace object (`relay: false`).
        request: ObjectRequest,
        /// The region the generator named (`?region=`), if any.
        region: Option<api::Region>,
    },
    /// Record the namespace in the registry first (so a listing never misses
    /// a namespace that exists), then send the create request to the
    /// namespace object and pass its answer on; a retry repeats both.
    Create {
        /// The new namespace.
        namespace: Namespace,
        /// The create request.
        request: ObjectRequest,
    },
    /// Read a page of the registry (only the namespaces `only` lists, when
    /// the token's scope is a list), and answer with the summaries the
    /// objects pushed there ([`list_reply`]); a namespace without one is
    /// asked directly.
    List {
        /// Page size.
        limit: u32,
        /// Only names after this one.
        after: Option<Namespace>,
        /// The token's namespaces, unless it covers all.
        only: Option<Vec<Namespace>>,
    },
    /// Read every page of the registry's listing (within `only`) and answer
    /// [`crate::front::metrics::render`] of the summaries ([`metrics_reply`]).
    Metrics {
        /// The token's namespaces, unless it covers all.
        only: Option<Vec<Namespace>>,
    },
}

fn authenticate(
    incoming: &Incoming<'_>,
    config: &FrontConfig,
    now: u64,
) -> Result<Claims, ApiError> {
    // Before the token: a refused configuration is no caller's business,
    // and no caller can be authenticated without keys.
    let Ok(keys) = &config.keys else {
        return Err(ApiError::unavailable(NOT_SERVING));
    };
    if config.retention.is_err() {
        return Err(ApiError::unavailable(NOT_SERVING));
    }
    let token = bearer(incoming.authorization)
        .map_err(|e| ApiError::new(ErrorCode::Unauthenticated, e.to_string()))?;
    verify(token, keys, config.audience.as_deref(), now)
        .map_err(|e| ApiError::new(ErrorCode::Unauthenticated, e.to_string()))
}

fn require(claims: &Claims, access: Access<'_>) -> Result<(), ApiError> {
    if claims.allows(access) {
        return Ok(());
    }
    let what = match access {
        Access::Generate(ns) => format!(
            "taking ranges in {:?} needs a generator token for it",
            ns.as_str()
        ),
        Access::Read(ns) => format!(
            "reading {:?} needs a reader or admin token for it",
            ns.as_str()
        ),
        Access::List => "listing namespaces needs a reader or admin token".to_owned(),
        Access::Admin(ns) => format!(
            "administering {:?} needs an admin token for it",
            ns.as_str()
        ),
    };
    Err(ApiError::new(
        ErrorCode::Forbidden,
        format!("{what}; this is {}", claims.describe()),
    ))
}

fn body<'a>(incoming: &Incoming<'a>) -> Result<&'a [u8], ApiError> {
    match incoming.body {
        Some(b) => api::check_size(b.len()).map(|()| b),
        None => api::check_size(api::MAX_BODY + 1).map(|()| &[][..]),
    }
}

/// Decides what to do with `incoming` at `now` (seconds since the epoch).
pub fn plan(incoming: &Incoming<'_>, config: &FrontConfig, now: u64) -> Plan {
    plan_verified(incoming, config, now, None)
}

/// [`plan`] for a request whose token [`plan_before_body`] verified
/// (`verified`, from the same request at the same `now`): the token is not
/// verified a second time.
pub fn plan_with(
    incoming: &Incoming<'_>,
    config: &FrontConfig,
    now: u64,
    verified: Verified,
) -> Plan {
    plan_verified(incoming, config, now, Some(verified.0))
}

/// What [`plan_before_body`] decided.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "made once per request and matched at once; boxing would allocate for every request"
)]
pub enum BeforeBody {
    /// The answer, which does not depend on the body.
    Plan(Plan),
    /// Read the body, at most [`api::MAX_BODY`] + 1 bytes of it, and call
    /// [`plan_with`] with it and this token.
    ReadBody(Verified),
}

/// The claims of a token that passed verification for one request; only
/// [`plan_before_body`] makes one.
#[derive(Debug)]
pub struct Verified(Claims);

fn plan_verified(
    incoming: &Incoming<'_>,
    config: &FrontConfig,
    now: u64,
    verified: Option<Claims>,
) -> Plan {
    if incoming.method == "OPTIONS" {
        return Plan::Reply(
            config
                .cors
                .preflight(incoming.cross_origin(), allowed_methods(incoming.path)),
        );
    }
    let result = route(incoming.method, incoming.path)
        .map_err(|e| match e {
            RouteError::NotFound => ApiError::new(ErrorCode::NotFound, "no such path"),
            RouteError::MethodNotAllowed { allow } => {
                let mut err = ApiError::new(
                    ErrorCode::MethodNotAllowed,
                    format!("{} is not allowed here; use {allow}", incoming.method),
                );
                err.allow = Some(allow);
                err
            }
        })
        .and_then(|r| {
            if config.cors.check(incoming.cross_origin()) == CorsCheck::Refused {
                return Err(crate::shared::response::refused_origin());
            }
            plan_route(r, incoming, config, now, verified)
        });
    let mut plan = result.unwrap_or_else(|e| Plan::Reply(e.reply()));
    if let Plan::Reply(reply) = &mut plan {
        config.cors.decorate(incoming.cross_origin(), reply);
    }
    plan
}

fn plan_route(
    r: Route,
    incoming: &Incoming<'_>,
    config: &FrontConfig,
    now: u64,
    verified: Option<Claims>,
) -> Result<Plan, ApiError> {
    match r {
        Route::Healthz => {
            return Ok(Plan::Reply(HttpReply::json(
                200,
                &serde_json::json!({"ok": true}),
            )))
        }
        Route::OpenApi => {
            return Ok(Plan::Reply(HttpReply::json_text(
                200,
                openapi::document_text().to_owned(),
            )))
        }
        _ => {}
    }
    let claims = match verified {
        Some(claims) => claims,
        None => authenticate(incoming, config, now)?,
    };
    let object = |namespace: Namespace, request: ObjectRequest| Plan::Object { namespace, request };
    Ok(match r {
        Route::Healthz | Route::OpenApi => {
            return Err(ApiError::new(ErrorCode::NotFound, "no such path"))
        }
        Route::Grant => {
            let region = api::grant_region(incoming.query)?;
            let request = api::grant_request(body(incoming)?)?;
            require(&claims, Access::Generate(&request.namespace))?;
            // A relay object's sub: refused here, since a relay object
            // would otherwise serve it.
            if crate::object::relay::reserved_owner(&claims.sub) {
                return Err(crate::object::relay::reserved_owner_refused(&claims.sub));
            }
            let relay = claims.role == Role::Relay;
            let namespace = request.namespace;
            let request = ObjectRequest::Grant {
                request,
                owner: claims.sub.clone(),
                relay,
                via: None,
                lease_ms: None,
            };
            if relay {
                // A relay's own request: to the namespace object, always.
                object(namespace, request)
            } else {
                Plan::Grant {
                    namespace,
                    request,
                    region,
                }
            }
        }
        Route::ListNamespaces => {
            require(&claims, Access::List)?;
            let page = api::page(incoming.query)?;
            Plan::List {
                limit: page.limit,
                after: page.cursor,
                only: match &claims.ns {
                    Scope::All => None,
                    Scope::Only(list) => Some(list.clone()),
                },
            }
        }
        Route::Session => Plan::Reply(HttpReply::json(200, &claims.session_json())),
        Route::Metrics => {
            require(&claims, Access::List)?;
            api::no_query(incoming.query)?;
            Plan::Metrics {
                only: match &claims.ns {
                    Scope::All => None,
                    Scope::Only(list) => Some(list.clone()),
                },
            }
        }
        Route::Rates(seg) => {
            let namespace = api::path_namespace(&seg)?;
            require(&claims, Access::Read(&namespace))?;
            let window = api::window(incoming.query)?;
            object(namespace, ObjectRequest::Rates { namespace, window })
        }
        Route::CreateNamespace => {
            let c = api::create_namespace(body(incoming)?)?;
            require(&claims, Access::Admin(&c.namespace))?;
            Plan::Create {
                namespace: c.namespace,
                request: ObjectRequest::Create {
                    namespace: c.namespace,
                    first: DecU64(c.config.first()),
                    max: DecU64(c.config.max()),
                    max_count: c.config.max_count(),
                    actor: claims.sub.clone(),
                },
            }
        }
        Route::Summary(seg) => {
            let namespace = api::path_namespace(&seg)?;
            require(&claims, Access::Read(&namespace))?;
            object(namespace, ObjectRequest::Summary { namespace })
        }
        Route::Grants(seg) => {
            let namespace = api::path_namespace(&seg)?;
            require(&claims, Access::Read(&namespace))?;
            let page = api::page(incoming.query)?;
            object(
                namespace,
                ObjectRequest::Grants {
                    namespace,
                    limit: page.limit,
                    before: page.cursor,
                },
            )
        }
        Route::Lookup(seg) => {
            let namespace = api::path_namespace(&seg)?;
            require(&claims, Access::Read(&namespace))?;
            let id = api::lookup_id(incoming.query)?;
            object(
                namespace,
                ObjectRequest::Lookup {
                    namespace,
                    id: DecU64(id),
                },
            )
        }
        Route::Audit(seg) => {
            let namespace = api::path_namespace(&seg)?;
            require(&claims, Access::Admin(&namespace))?;
            let page = api::page(incoming.query)?;
            object(
                namespace,
                ObjectRequest::Audit {
                    namespace,
                    limit: page.limit,
                    before: page.cursor,
                },
            )
        }
        Route::Floor(seg) => {
            let namespace = api::path_namespace(&seg)?;
            require(&claims, Access::Admin(&namespace))?;
            let floor = api::floor(body(incoming)?)?;
            object(
                namespace,
                ObjectRequest::Floor {
                    namespace,
                    floor: DecU64(floor),
                    actor: claims.sub.clone(),
                },
            )
        }
        Route::Limits(seg) => {
            let namespace = api::path_namespace(&seg)?;
            require(&claims, Access::Admin(&namespace))?;
            let change = api::limits(body(incoming)?)?;
            object(
                namespace,
                ObjectRequest::SetLimits {
                    namespace,
                    change,
                    actor: claims.sub.clone(),
                },
            )
        }
        Route::Relays(seg) => {
            let namespace = api::path_namespace(&seg)?;
            require(&claims, Access::Admin(&namespace))?;
            let (relays, reason) = api::relays(body(incoming)?)?;
            object(
                namespace,
                ObjectRequest::SetRelays {
                    namespace,
                    relays,
                    reason,
                    actor: claims.sub.clone(),
                },
            )
        }
        Route::Freeze(ref seg) | Route::Unfreeze(ref seg) => {
            let frozen = matches!(r, Route::Freeze(_));
            let seg = seg.clone();
            let namespace = api::path_namespace(&seg)?;
            require(&claims, Access::Admin(&namespace))?;
            let reason = api::reason(body(incoming)?)?;
            object(
                namespace,
                ObjectRequest::SetFrozen {
                    namespace,
                    frozen,
                    reason,
                    actor: claims.sub.clone(),
                },
            )
        }
        Route::Export(seg) => {
            let namespace = api::path_namespace(&seg)?;
            require(&claims, Access::Admin(&namespace))?;
            let reason = api::reason(body(incoming)?)?;
            object(
                namespace,
                ObjectRequest::Export {
                    namespace,
                    reason,
                    actor: claims.sub.clone(),
                    source: incoming.own_origin.to_owned(),
                },
            )
        }
        Route::Import(seg) => {
            let namespace = api::path_namespace(&seg)?;
            require(&claims, Access::Admin(&namespace))?;
            let document = api::import_document(body(incoming)?, &namespace)?;
            // As a creation: the registry learns the name first.
            Plan::Create {
                namespace,
                request: ObjectRequest::Import {
                    namespace,
                    document: Box::new(document),
                    actor: claims.sub.clone(),
                },
            }
        }
    })
}

/// The answer to `GET /v1/namespaces` from the summaries' JSON texts:
/// `{"namespaces":[summary,...],"nextAfter":name|null}`.
pub fn list_reply(summaries: &[String], next_after: Option<Namespace>) -> HttpReply {
    let values: Result<Vec<serde_json::Value>, _> =
        summaries.iter().map(|s| serde_json::from_str(s)).collect();
    match values {
        Ok(v) => HttpReply::json(
            200,
            &serde_json::json!({ "namespaces": v, "nextAfter": next_after }),
        ),
        Err(e) => ApiError::unavailable(format!("a namespace summary was unreadable: {e}")).reply(),
    }
}

/// The answer to [`Plan::Metrics`]: the summaries' JSON texts as
/// Prometheus text.
pub fn metrics_reply(summaries: &[String]) -> HttpReply {
    let values: Result<Vec<_>, _> = summaries
        .iter()
        .map(|s| crate::front::metrics::SummaryView::parse(s))
        .collect();
    match values {
        Ok(v) => {
            let mut reply = HttpReply::empty(200);
            reply.body = crate::front::metrics::render(&v);
            reply.set_header("content-type", crate::front::metrics::CONTENT_TYPE);
            reply
        }
        Err(e) => ApiError::unavailable(format!("a namespace summary was unreadable: {e}")).reply(),
    }
}

/// The plan for a request whose body was not read yet: the answer when
/// it does not depend on the body (a refusal by route, origin or token, or
/// a route without a body), or [`BeforeBody::ReadBody`] with the verified
/// token when the body must be read. So no unauthenticated body is ever
/// buffered, and a token is verified once.
pub fn plan_before_body(incoming: &Incoming<'_>, config: &FrontConfig, now: u64) -> BeforeBody {
    let early = Incoming {
        body: Some(&[]),
        ..*incoming
    };
    if incoming.method == "OPTIONS" {
        return BeforeBody::Plan(plan(&early, config, now));
    }
    let needs_body = match route(incoming.method, incoming.path) {
        Ok(r) => r.has_body(),
        Err(_) => false,
    };
    if !needs_body {
        return BeforeBody::Plan(plan(&early, config, now));
    }
    if config.cors.check(incoming.cross_origin()) == CorsCheck::Refused {
        return BeforeBody::Plan(plan(&early, config, now));
    }
    match authenticate(incoming, config, now) {
        Ok(claims) => BeforeBody::ReadBody(Verified(claims)),
        Err(e) => {
            let mut reply = e.reply();
            config.cors.decorate(incoming.cross_origin(), &mut reply);
            BeforeBody::Plan(Plan::Reply(reply))
        }
    }
}

/// What a caller is told instead of an object's `503` (a store error, a
/// witness that did not answer): the detail goes to the logs only.
pub const OBJECT_UNAVAILABLE: &str =
    "the authority could not answer safely now; retry (a grant with the same request id)";

/// An object's answer as the caller gets it: a `503`'s message, which can
/// carry a store's or the runtime's error text, is replaced by
/// [`OBJECT_UNAVAILABLE`] (status, code and `Retry-After` kept), and
/// returned for the logs; any other answer passes unchanged.
pub fn screen_object_reply(reply: HttpReply) -> (HttpReply, Option<String>) {
    if reply.status != 503 {
        return (reply, None);
    }
    let body: serde_json::Value = serde_json::from_str(&reply.body).unwrap_or_default();
    let detail = body["error"]["message"]
        .as_str()
        .map_or_else(|| reply.body.clone(), str::to_owned);
    let mut screened = ApiError::unavailable(OBJECT_UNAVAILABLE).reply();
    if let Some(after) = reply.header("retry-after") {
        screened.set_header("retry-after", after);
    }
    // The namespace object's word on relays, for the front's routing (which
    // strips it): a namespace object that cannot grant now still says it.
    if let Some(on) = reply.header(relay_route::RELAYS_HEADER) {
        screened.set_header(relay_route::RELAYS_HEADER, on);
    }
    (screened, Some(detail))
}

/// The answer when an object could not be reached or failed: `503
/// unavailable` with `Retry-After`; the grant's outcome is unknown, and a
/// retry with the same request id is safe.
pub fn object_failed(detail: &str) -> HttpReply {
    let lower = detail.to_ascii_lowercase();
    let why = if lower.contains("overload") {
        "the namespace object is overloaded"
    } else {
        "the namespace object did not answer"
    };
    ApiError::unavailable(format!("{why}; retry with the same request id")).reply()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::token::{mint, Scope};

    const KEY: &str = "0123456789abcdef0123456789abcdef";
    const NOW: u64 = 1_800_000_000;

    fn config() -> FrontConfig {
        FrontConfig {
            keys: Keyring::from_json(&format!(r#"{{"k1":"{KEY}"}}"#)),
            cors: Cors::parse("https://ok.example"),
            audience: None,
            retention: Ok(86_400),
        }
    }

    fn token(role: Role, ns: &[&str]) -> String {
        token_as("tester", role, ns)
    }

    fn token_as(sub: &str, role: Role, ns: &[&str]) -> String {
        let scope = if ns == ["*"] {
            Scope::All
        } else {
            Scope::Only(ns.iter().map(|n| Namespace::new(n).unwrap()).collect())
        };
        let c = Claims {
            sub: sub.into(),
            role,
            ns: scope,
            exp: NOW + 60,
        };
        format!("Bearer {}", mint(&c, "k1", KEY.as_bytes()))
    }

    fn run(method: &str, path: &str, auth: Option<&str>, body: &[u8]) -> Plan {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let incoming = Incoming {
            method,
            path,
            query,
            authorization: auth,
            origin: None,
            own_origin: "https://authority.example",
            body: Some(body),
        };
        plan(&incoming, &config(), NOW)
    }

    fn status(p: &Plan) -> (u16, String) {
        match p {
            Plan::Reply(r) => {
                let v: serde_json::Value = serde_json::from_str(&r.body).unwrap_or_default();
                (
                    r.status,
                    v["error"]["code"].as_str().unwrap_or("").to_owned(),
                )
            }
            Plan::Object { .. }
            | Plan::Grant { .. }
            | Plan::Create { .. }
            | Plan::List { .. }
            | Plan::Metrics { .. } => (0, "forward".into()),
        }
    }

    const GRANT: &[u8] = br#"{"namespace":"orders","incarnation":"A9","requestId":"r1","count":5}"#;

    #[test]
    fn open_routes_need_no_token() {
        assert_eq!(status(&run("GET", "/healthz", None, b"")).0, 200);
        assert_eq!(status(&run("GET", "/v1/openapi.json", None, b"")).0, 200);
        assert_eq!(
            status(&run("GET", "/nope", None, b"")),
            (404, "not_found".into())
        );
        let p = run("DELETE", "/v1/ranges", None, b"");
        assert_eq!(status(&p), (405, "method_not_allowed".into()));
        if let Plan::Reply(r) = p {
            assert_eq!(r.header("allow"), Some("POST"));
        }
    }

    #[test]
    fn tokens_are_required() {
        assert_eq!(
            status(&run("POST", "/v1/ranges", None, GRANT)),
            (401, "unauthenticated".into())
        );
        assert_eq!(
            status(&run("POST", "/v1/ranges", Some("Bearer x.y.z"), GRANT)),
            (401, "unauthenticated".into())
        );
        let broken = FrontConfig {
            keys: Keyring::from_json("{}"),
            cors: Cors::default(),
            audience: None,
            retention: Ok(86_400),
        };
        let incoming = Incoming {
            method: "GET",
            path: "/v1/namespaces",
            query: "",
            authorization: None,
            origin: None,
            own_origin: "https://authority.example",
            body: Some(b""),
        };
        let reply = plan(&incoming, &broken, NOW);
        assert_eq!(status(&reply).0, 503);
        let Plan::Reply(reply) = reply else {
            unreachable!()
        };
        assert!(reply.body.contains(NOT_SERVING), "{}", reply.body);
        assert!(
            !reply.body.contains("keys"),
            "nothing about why: {}",
            reply.body
        );
        assert_eq!(
            broken.problem().as_deref(),
            Some("RANGEID_SIGNING_KEYS: no signing keys configured")
        );
        assert_eq!(config().problem(), None);
    }

    #[test]
    fn role_matrix_over_routes() {
        let gen = token(Role::Generator, &["orders"]);
        let reader = token(Role::Reader, &["orders"]);
        let admin = token(Role::Admin, &["orders"]);
        let other_gen = token(Role::Generator, &["other"]);
        let fwd = (0, "forward".to_owned());
        let forbidden = (403, "forbidden".to_owned());
        let import_doc = export_document("orders");
        type Case<'a> = (&'a str, &'a str, &'a [u8], [&'a (u16, String); 4]);
        let cases: &[Case<'_>] = &[
            (
                "POST",
                "/v1/ranges",
                GRANT,
                [&fwd, &forbidden, &forbidden, &forbidden],
            ),
            (
                "GET",
                "/v1/namespaces",
                b"",
                [&forbidden, &fwd, &fwd, &forbidden],
            ),
            (
                "GET",
                "/v1/namespaces/orders",
                b"",
                [&forbidden, &fwd, &fwd, &forbidden],
            ),
            (
                "GET",
                "/v1/namespaces/orders/grants",
                b"",
                [&forbidden, &fwd, &fwd, &forbidden],
            ),
            (
                "GET",
                "/v1/namespaces/orders/lookup?id=1",
                b"",
                [&forbidden, &fwd, &fwd, &forbidden],
            ),
            (
                "GET",
                "/v1/namespaces/orders/audit",
                b"",
                [&forbidden, &forbidden, &fwd, &forbidden],
            ),
            (
                "POST",
                "/v1/namespaces",
                br#"{"namespace":"orders"}"#,
                [&forbidden, &forbidden, &fwd, &forbidden],
            ),
            (
                "POST",
                "/v1/namespaces/orders/floor",
                br#"{"floor":"5"}"#,
                [&forbidden, &forbidden, &fwd, &forbidden],
            ),
            (
                "POST",
                "/v1/namespaces/orders/freeze",
                br#"{"reason":"x"}"#,
                [&forbidden, &forbidden, &fwd, &forbidden],
            ),
            (
                "POST",
                "/v1/namespaces/orders/unfreeze",
                br#"{"reason":"x"}"#,
                [&forbidden, &forbidden, &fwd, &forbidden],
            ),
            (
                "POST",
                "/v1/namespaces/orders/export",
                br#"{"reason":"x"}"#,
                [&forbidden, &forbidden, &fwd, &forbidden],
            ),
            (
                "POST",
                "/v1/namespaces/orders/import",
                import_doc.as_bytes(),
                [&forbidden, &forbidden, &fwd, &forbidden],
            ),
            (
                "POST",
                "/v1/namespaces/orders/limits",
                br#"{"grantsPerSecond":5}"#,
                [&forbidden, &forbidden, &fwd, &forbidden],
            ),
        ];
        for (m, p, b, expect) in cases {
            for (tok, want) in [&gen, &reader, &admin, &other_gen]
                .iter()
                .zip(expect.iter())
            {
                assert_eq!(&status(&run(m, p, Some(tok), b)), *want, "{m} {p} {tok}");
            }
        }
        // Admin of one namespace cannot create another.
        assert_eq!(
            status(&run(
                "POST",
                "/v1/namespaces",
                Some(&admin),
                br#"{"namespace":"other"}"#
            )),
            forbidden
        );
    }

    #[test]
    fn a_refusal_for_scope_names_what_the_token_covers() {
        let message = |p: &Plan| match p {
            Plan::Reply(r) => {
                let v: serde_json::Value = serde_json::from_str(&r.body).unwrap_or_default();
                v["error"]["message"].as_str().unwrap_or("").to_owned()
            }
            other => panic!("{other:?}"),
        };
        let gen = token_as("svc-users", Role::Generator, &["users", "carts"]);
        let p = run("POST", "/v1/ranges", Some(&gen), GRANT);
        assert_eq!(status(&p), (403, "forbidden".into()));
        assert_eq!(
            message(&p),
            r#"taking ranges in "orders" needs a generator token for it; this is a generator token (sub "svc-users") for "users", "carts""#
        );
        let reader = token_as("dash", Role::Reader, &["*"]);
        assert!(message(&run(
            "POST",
            "/v1/namespaces/orders/freeze",
            Some(&reader),
            br#"{"reason":"x"}"#
        ))
        .ends_with(r#"this is a reader token (sub "dash") for every namespace"#));
        assert!(
            message(&run("GET", "/v1/namespaces", Some(&gen), b"")).starts_with(
                "listing namespaces needs a reader or admin token; this is a generator token"
            )
        );
    }

    #[test]
    fn validation_after_auth() {
        let gen = token(Role::Generator, &["*"]);
        let admin = token(Role::Admin, &["*"]);
        assert_eq!(status(&run("POST", "/v1/ranges", Some(&gen), b"{")).0, 400);
        let big = vec![b' '; api::MAX_BODY + 1];
        assert_eq!(
            status(&run("POST", "/v1/ranges", Some(&gen), &big)),
            (413, "payload_too_large".into())
        );
        let incoming = Incoming {
            method: "POST",
            path: "/v1/ranges",
            query: "",
            authorization: Some(&gen),
            origin: None,
            own_origin: "https://authority.example",
            body: None,
        };
        assert_eq!(status(&plan(&incoming, &config(), NOW)).0, 413);
        assert_eq!(
            status(&run("GET", "/v1/namespaces/Bad/grants", Some(&admin), b"")),
            (404, "namespace_not_found".into())
        );
        assert_eq!(
            status(&run(
                "GET",
                "/v1/namespaces/orders/grants?limit=0",
                Some(&admin),
                b""
            ))
            .0,
            400
        );
        assert_eq!(
            status(&run(
                "GET",
                "/v1/namespaces/orders/lookup",
                Some(&admin),
                b""
            ))
            .0,
            400
        );
        assert_eq!(
            status(&run(
                "POST",
                "/v1/namespaces/orders/floor",
                Some(&admin),
                b"{}"
            ))
            .0,
            400
        );
    }

    /// A valid export document for `ns`, as a source answers it.
    fn export_document(ns: &str) -> String {
        use rangeid_core::authority::{NamespaceConfig, NamespaceState};
        let state = NamespaceState::create(
            Namespace::new(ns).unwrap(),
            NamespaceConfig::new(None, None, None).unwrap(),
        )
        .with_fence(9_000)
        .skip_to(5_000);
        let handover = rangeid_core::transfer::Handover::export(&state, 12_000);
        let doc = rangeid_core::transfer::ExportDocument::new(
            &handover,
            rangeid_core::transfer::Settings::default(),
            "http://127.0.0.1:8787",
            "2027-01-15T08:00:00Z",
            "ops",
            "to Cloudflare",
        );
        serde_json::to_string(&doc).unwrap()
    }

    #[test]
    fn export_and_import_are_admin_only_and_an_import_is_checked_before_it_is_forwarded() {
        let admin = token(Role::Admin, &["*"]);
        match run(
            "POST",
            "/v1/namespaces/orders/export",
            Some(&admin),
            br#"{"reason":"to Cloudflare"}"#,
        ) {
            Plan::Object {
                request:
                    ObjectRequest::Export {
                        actor,
                        source,
                        reason,
                        ..
                    },
                ..
            } => assert_eq!(
                (actor.as_str(), source.as_str(), reason.as_str()),
                ("tester", "https://authority.example", "to Cloudflare")
            ),
            other => panic!("{other:?}"),
        }
        let doc = export_document("orders");
        match run(
            "POST",
            "/v1/namespaces/orders/import",
            Some(&admin),
            doc.as_bytes(),
        ) {
            Plan::Create {
                request:
                    ObjectRequest::Import {
                        document, actor, ..
                    },
                ..
            } => {
                assert_eq!((document.start.0, actor.as_str()), (12_000, "tester"));
            }
            other => panic!("{other:?}"),
        }
        let refused = |body: &str| {
            status(&run(
                "POST",
                "/v1/namespaces/orders/import",
                Some(&admin),
                body.as_bytes(),
            ))
        };
        let code = |c: &str| (400, c.to_owned());
        assert_eq!(
            refused(&export_document("other")),
            code("export_namespace_mismatch"),
            "another namespace's document"
        );
        assert_eq!(
            refused(&doc.replace("\"12000\"", "\"2000\"")),
            code("export_invalid"),
            "an edited witness mark"
        );
        assert_eq!(
            refused(&doc.replace("\"start\"", "\"begin\"")),
            code("export_invalid"),
            "an unknown field"
        );
        assert_eq!(
            refused(&doc.replace("export/2", "export/0")),
            code("export_unsupported"),
            "an older format"
        );
        assert_eq!(refused("{}"), code("export_invalid"));
        assert_eq!(refused(&doc[..doc.len() / 2]), code("export_invalid"));
        let bad = (400, "invalid_request".to_owned());
        // An export needs a reason; an unfreeze takes a reason only (a
        // move is never undone by unfreezing the source).
        assert_eq!(
            status(&run(
                "POST",
                "/v1/namespaces/orders/export",
                Some(&admin),
                b"{}"
            )),
            bad
        );
        assert_eq!(
            status(&run(
                "POST",
                "/v1/namespaces/orders/unfreeze",
                Some(&admin),
                br#"{"reason":"move abandoned","abandonExport":true}"#
            )),
            bad,
            "an unfreeze takes a reason only"
        );
        assert_eq!(
            status(&run(
                "POST",
                "/v1/namespaces/orders/freeze",
                Some(&admin),
                br#"{"reason":"x","abandonExport":true}"#
            )),
            bad,
            "a freeze takes a reason only"
        );
    }

    #[test]
    fn a_generators_grant_may_name_a_region_and_a_relays_goes_to_the_namespace_object() {
        let gen = token(Role::Generator, &["orders"]);
        match run("POST", "/v1/ranges?region=weur", Some(&gen), GRANT) {
            Plan::Grant {
                namespace,
                region,
                request: ObjectRequest::Grant { relay, via, .. },
            } => {
                assert_eq!(namespace.as_str(), "orders");
                assert_eq!(region.as_ref().map(api::Region::as_str), Some("weur"));
                assert!(!relay && via.is_none());
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            run("POST", "/v1/ranges", Some(&gen), GRANT),
            Plan::Grant { region: None, .. }
        ));
        for bad in ["region=WEUR", "region=", "regio=x", "region=a&region=b"] {
            let p = run("POST", &format!("/v1/ranges?{bad}"), Some(&gen), GRANT);
            assert_eq!(status(&p), (400, "invalid_request".into()), "{bad}");
        }
        // No token takes ranges under a relay object's sub, through a relay
        // or not.
        for role in [Role::Generator, Role::Relay] {
            let t = token_as("relay@default", role, &["orders"]);
            let p = run("POST", "/v1/ranges?region=default", Some(&t), GRANT);
            assert_eq!(status(&p), (403, "forbidden".into()), "{role:?}");
        }
        // A relay token is a relay itself: never routed to a relay object.
        let relay = token(Role::Relay, &["orders"]);
        match run("POST", "/v1/ranges?region=weur", Some(&relay), GRANT) {
            Plan::Object {
                request: ObjectRequest::Grant { relay, via, .. },
                ..
            } => assert!(relay && via.is_none()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn forwarded_requests_carry_the_actor() {
        let admin = token(Role::Admin, &["*"]);
        match run(
            "POST",
            "/v1/namespaces/orders/freeze",
            Some(&admin),
            br#"{"reason":"r"}"#,
        ) {
            Plan::Object {
                request: ObjectRequest::SetFrozen { frozen, actor, .. },
                ..
            } => {
                assert!(frozen);
                assert_eq!(actor, "tester");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cross_origin_is_refused_unless_allowed() {
        let admin = token(Role::Admin, &["*"]);
        let mk = |origin| Incoming {
            method: "GET",
            path: "/v1/namespaces",
            query: "",
            authorization: Some(&admin),
            origin,
            own_origin: "https://authority.example",
            body: Some(b""),
        };
        assert_eq!(
            status(&plan(&mk(Some("https://evil.example")), &config(), NOW)),
            (403, "forbidden".into())
        );
        assert_eq!(
            status(&plan(&mk(Some("https://ok.example")), &config(), NOW)).1,
            "forward"
        );
        // The admin page, served by the authority itself: same origin, so
        // not CORS, and no CORS headers on the answer.
        let own = Incoming {
            method: "POST",
            path: "/v1/namespaces/orders/freeze",
            body: Some(br#"{"reason":"from the page"}"#),
            ..mk(Some("https://authority.example"))
        };
        assert_eq!(status(&plan(&own, &config(), NOW)).1, "forward");
        assert!(matches!(
            plan(&mk(Some("https://authority.example")), &config(), NOW),
            Plan::List { .. }
        ));
        let lookalike = Incoming {
            own_origin: "https://authority.example.evil",
            ..own
        };
        assert_eq!(
            status(&plan(&lookalike, &config(), NOW)),
            (403, "forbidden".into())
        );
        let pre = Incoming {
            method: "OPTIONS",
            ..mk(Some("https://ok.example"))
        };
        match plan(&pre, &config(), NOW) {
            Plan::Reply(r) => {
                assert_eq!(r.status, 204);
                assert_eq!(
                    r.header("access-control-allow-origin"),
                    Some("https://ok.example")
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn listing_pages_within_the_token_scope() {
        let reader = token(Role::Reader, &["b"]);
        match run("GET", "/v1/namespaces?limit=5&after=a", Some(&reader), b"") {
            Plan::List { limit, after, only } => {
                assert_eq!((limit, after), (5, Some(Namespace::new("a").unwrap())));
                assert_eq!(only, Some(vec![Namespace::new("b").unwrap()]));
            }
            other => panic!("{other:?}"),
        }
        let everyone = token(Role::Reader, &["*"]);
        assert!(matches!(
            run("GET", "/v1/namespaces", Some(&everyone), b""),
            Plan::List {
                limit: 100,
                after: None,
                only: None
            }
        ));
        for bad in [
            "limit=0",
            "limit=1001",
            "after=Bad",
            "after=a&after=b",
            "cursor=x",
        ] {
            let path = format!("/v1/namespaces?{bad}");
            assert_eq!(
                status(&run("GET", &path, Some(&everyone), b"")).0,
                400,
                "{bad}"
            );
        }
        let r = list_reply(
            &[r#"{"namespace":"b"}"#.into()],
            Some(Namespace::new("b").unwrap()),
        );
        assert_eq!(
            r.body,
            r#"{"namespaces":[{"namespace":"b"}],"nextAfter":"b"}"#
        );
        assert_eq!(object_failed("Durable Object is overloaded").status, 503);
        assert_eq!(object_failed("x").header("retry-after"), Some("1"));
    }

    #[test]
    fn a_body_is_read_only_after_the_token() {
        let no_token = Incoming {
            method: "POST",
            path: "/v1/ranges",
            query: "",
            authorization: None,
            origin: None,
            own_origin: "https://authority.example",
            body: None,
        };
        let BeforeBody::Plan(refused) = plan_before_body(&no_token, &config(), NOW) else {
            panic!("no token: answered before the body");
        };
        assert_eq!(status(&refused).0, 401);
        let gen = token(Role::Generator, &["orders"]);
        let with_token = Incoming {
            authorization: Some(&gen),
            ..no_token
        };
        let BeforeBody::ReadBody(verified) = plan_before_body(&with_token, &config(), NOW) else {
            panic!("then read");
        };
        // Too long to read whole: 413 after the token passed.
        assert_eq!(
            status(&plan_with(&with_token, &config(), NOW, verified)),
            (413, "payload_too_large".into())
        );
        // With the body, the token verified before it is used as it was:
        // not verified again (the header is not looked at a second time).
        let BeforeBody::ReadBody(verified) = plan_before_body(&with_token, &config(), NOW) else {
            panic!("then read");
        };
        let body = br#"{"namespace":"orders","incarnation":"A9","requestId":"r1","count":5}"#;
        let read = Incoming {
            authorization: None,
            body: Some(body),
            ..with_token
        };
        assert!(matches!(
            plan_with(&read, &config(), NOW, verified),
            Plan::Grant { .. }
        ));
        assert_eq!(status(&plan(&read, &config(), NOW)).0, 401, "plan verifies");
        let get = Incoming {
            method: "GET",
            path: "/v1/session",
            authorization: Some(&gen),
            ..no_token
        };
        match plan_before_body(&get, &config(), NOW) {
            BeforeBody::Plan(Plan::Reply(r)) => {
                let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
                assert_eq!(
                    (v["sub"].as_str(), v["role"].as_str()),
                    (Some("tester"), Some("generator"))
                );
                assert_eq!(v["ns"], serde_json::json!(["orders"]));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_objects_503_detail_goes_to_the_logs_only() {
        let store = ApiError::unavailable(
            "the authority cannot establish a safe answer: SQLITE_FULL: database or disk is full",
        )
        .reply();
        let (shown, logged) = screen_object_reply(store.clone());
        assert_eq!(shown.status, 503);
        assert!(!shown.body.contains("SQLITE"), "{}", shown.body);
        assert!(shown.body.contains(OBJECT_UNAVAILABLE));
        assert_eq!(shown.header("retry-after"), store.header("retry-after"));
        assert!(logged.unwrap().contains("SQLITE_FULL"));
        assert_eq!(shown.header(relay_route::RELAYS_HEADER), None);
        // The object's word on relays survives the screening (the routing
        // strips it later): an object that cannot grant still says it.
        let mut says = store.clone();
        says.set_header(relay_route::RELAYS_HEADER, "on");
        let (shown, _) = screen_object_reply(says);
        assert_eq!(shown.header(relay_route::RELAYS_HEADER), Some("on"));
        let ok = HttpReply::json(200, &serde_json::json!({"start": "1"}));
        assert_eq!(screen_object_reply(ok.clone()), (ok, None));
        let refused = ApiError::namespace_not_found("orders").reply();
        assert_eq!(screen_object_reply(refused.clone()), (refused, None));
    }

    #[test]
    fn a_misconfigured_retention_refuses_to_serve() {
        let short = FrontConfig {
            retention: Err("RANGEID_GRANT_RETENTION_SECONDS is 1".into()),
            ..config()
        };
        let admin = token(Role::Admin, &["*"]);
        let incoming = Incoming {
            method: "GET",
            path: "/v1/namespaces",
            query: "",
            authorization: Some(&admin),
            origin: None,
            own_origin: "https://authority.example",
            body: Some(b""),
        };
        assert_eq!(
            status(&plan(&incoming, &short, NOW)),
            (503, "unavailable".into())
        );
        let Plan::Reply(reply) = plan(&incoming, &short, NOW) else {
            unreachable!()
        };
        assert!(!reply.body.contains("RETENTION"), "{}", reply.body);
        assert_eq!(
            short.problem().as_deref(),
            Some("RANGEID_GRANT_RETENTION_SECONDS is 1")
        );
    }
}
