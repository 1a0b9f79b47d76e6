//! The front Worker's driver (wasm32 only): the `fetch` event. It reads
//! the request (the body only once route, origin and token passed, and at
//! most [`api::MAX_BODY`] + 1 bytes), follows the [`Plan`] the front
//! decides, pumps the listing and the scrape ([`Listing`], [`Scrape`]),
//! and serves the admin page's files from `ASSETS` ([`page`] decides their
//! headers).

use std::cell::RefCell;
use std::rc::Rc;

use futures_util::future::join_all;
use futures_util::StreamExt;
use rangeid_core::ErrorCode;
use rangeid_core::Namespace as NsName;
use wasm_bindgen::JsValue;
use worker::{event, js_sys, Context, Date, Env, Headers, Method, Request, Response};

use crate::api::{Region, MAX_BODY};
use crate::front::listing::{Listing, Scrape};
use crate::front::page::{self, PageRoute};
use crate::front::relay_route::{self, Hop, Routes};
use crate::front::token::{Keyring, KeyringError};
use crate::front::{self, BeforeBody, FrontConfig, Incoming, Plan};
use crate::object::registry::{RegistryPage, RegistryRequest};
use crate::object::relay::RelayRequest;
use crate::object::ObjectRequest;
use crate::shared::logline;
use crate::shared::response::{ApiError, Cors, HttpReply};
use crate::shared::runtime::{
    call, call_near, env_text, grant_retention, reply_or_unavailable, test_retention_text,
    to_response, NAMESPACE_BINDING, REGISTRY_BINDING, REGISTRY_NAME, RELAY_BINDING,
};
use crate::shared::settings;

/// The signing keys: a secret, or a plain variable locally (both strings).
fn signing_keys_text(env: &Env) -> Option<String> {
    env_text(env, "RANGEID_SIGNING_KEYS")
}

/// The parsed configuration and the raw texts it was parsed from.
struct CachedConfig {
    texts: [Option<String>; 5],
    config: Rc<FrontConfig>,
}

thread_local! {
    static CONFIG: RefCell<Option<CachedConfig>> = const { RefCell::new(None) };
}

/// The front configuration, parsed once per isolate (and again only if
/// the environment's texts change).
fn front_config(env: &Env) -> Rc<FrontConfig> {
    let texts = [
        signing_keys_text(env),
        env_text(env, "RANGEID_CORS_ORIGINS"),
        env_text(env, "RANGEID_TOKEN_AUDIENCE"),
        env_text(env, "RANGEID_GRANT_RETENTION_SECONDS"),
        test_retention_text(env),
    ];
    CONFIG.with(|cell| {
        let mut cached = cell.borrow_mut();
        if let Some(c) = cached.as_ref() {
            if c.texts == texts {
                return Rc::clone(&c.config);
            }
        }
        let keys = match &texts[0] {
            Some(text) => Keyring::from_json(text),
            None => Err(KeyringError("RANGEID_SIGNING_KEYS is not set".into())),
        };
        let config = Rc::new(FrontConfig {
            keys,
            cors: Cors::parse(texts[1].as_deref().unwrap_or("")),
            audience: settings::audience(texts[2].as_deref()),
            retention: grant_retention(texts[3].as_deref(), texts[4].as_deref()),
        });
        *cached = Some(CachedConfig {
            texts,
            config: Rc::clone(&config),
        });
        config
    })
}

async fn call_namespace(env: &Env, ns: &NsName, request: &ObjectRequest) -> HttpReply {
    let payload = match serde_json::to_string(request) {
        Ok(p) => p,
        Err(e) => return ApiError::unavailable(format!("could not encode: {e}")).reply(),
    };
    match call(env, NAMESPACE_BINDING, ns.as_str(), payload).await {
        Ok(reply) => {
            let (reply, detail) = front::screen_object_reply(reply);
            if let Some(detail) = detail {
                let source = format!("namespace {ns}");
                worker::console_error!("{}", logline::unavailable(&source, &detail));
            }
            reply
        }
        Err(e) => {
            worker::console_error!("namespace object {ns}: {e}");
            front::object_failed(&e)
        }
    }
}

async fn call_registry(env: &Env, request: &RegistryRequest) -> Result<HttpReply, HttpReply> {
    let payload = serde_json::to_string(request)
        .map_err(|e| ApiError::unavailable(format!("could not encode: {e}")).reply())?;
    match call(env, REGISTRY_BINDING, REGISTRY_NAME, payload).await {
        Ok(reply) if reply.status == 200 => Ok(reply),
        Ok(reply) => {
            let (reply, detail) = front::screen_object_reply(reply);
            if let Some(detail) = detail {
                worker::console_error!("{}", logline::unavailable("registry", &detail));
            }
            Err(reply)
        }
        Err(e) => {
            worker::console_error!("registry: {e}");
            Err(front::object_failed(&e))
        }
    }
}

// The isolate's word on which namespaces' relays are on
// (`relay_route::Routes`).
thread_local! {
    static ROUTES: RefCell<Routes> = RefCell::new(Routes::default());
}

/// `request.cf`'s `continent` and `colo`, read without the `worker`
/// crate's getters (which panic on a missing field); `None` without `cf`
/// (workerd).
fn cf_place(req: &Request) -> (Option<String>, Option<String>) {
    let get = |from: &JsValue, key: &str| js_sys::Reflect::get(from, &JsValue::from_str(key)).ok();
    let Some(cf) = get(req.inner(), "cf").filter(|v| v.is_object()) else {
        return (None, None);
    };
    let text = |key| get(&cf, key).and_then(|v| v.as_string());
    (text("continent"), text("colo"))
}

/// A generator's range request: to its relay while the namespace's relays
/// are on, else (or when the relay says so) to the namespace object.
async fn route_grant(
    env: &Env,
    namespace: NsName,
    request: ObjectRequest,
    region: Region,
) -> HttpReply {
    let hop = ROUTES.with(|r| r.borrow().first_hop(&namespace, &region));
    if let (
        Hop::Relay { name, hint },
        ObjectRequest::Grant {
            request: grant,
            owner,
            ..
        },
    ) = (&hop, &request)
    {
        let message = RelayRequest::Grant {
            request: *grant,
            owner: owner.clone(),
            region: region.clone(),
        };
        let payload = match serde_json::to_string(&message) {
            Ok(p) => p,
            Err(e) => return ApiError::unavailable(format!("could not encode: {e}")).reply(),
        };
        match call_near(env, RELAY_BINDING, name, *hint, payload).await {
            // `None`: relays are off; this request, and the next ones, go
            // to the namespace object.
            Ok(reply) => {
                if let Some(reply) = ROUTES.with(|r| r.borrow_mut().after_relay(namespace, reply)) {
                    return reply;
                }
            }
            // The relay cannot be reached: this request goes to the
            // namespace object, where it is a new request (docs/relays.md
            // §3: a sub-range the relay may have cut for it and whose
            // answer was lost is a gap, never handed out twice).
            Err(e) => worker::console_warn!("relay {name}: {e}; asking the namespace object"),
        }
    }
    let reply = call_namespace(env, &namespace, &request).await;
    ROUTES.with(|r| r.borrow_mut().after_object(namespace, reply))
}

async fn execute(plan: Plan, env: &Env, place: (Option<String>, Option<String>)) -> HttpReply {
    match plan {
        Plan::Reply(reply) => reply,
        Plan::Object { namespace, request } => call_namespace(env, &namespace, &request).await,
        Plan::Grant {
            namespace,
            request,
            region,
        } => {
            let region = relay_route::region_of(region, place.0.as_deref(), place.1.as_deref());
            route_grant(env, namespace, request, region).await
        }
        Plan::Create { namespace, request } => {
            // The registry first: a listing never misses a namespace that
            // exists, and a retry of a creation whose object write failed
            // finds the name there and completes it.
            if let Err(failed) = call_registry(env, &RegistryRequest::Add { namespace }).await {
                return failed;
            }
            call_namespace(env, &namespace, &request).await
        }
        Plan::List { limit, after, only } => {
            match listing(env, &RegistryRequest::List { limit, after, only }).await {
                Ok((texts, next_after)) => front::list_reply(&texts, next_after),
                Err(failed) => failed,
            }
        }
        Plan::Metrics { only } => {
            let mut scrape = Scrape::new(only);
            while let Some(list) = scrape.next_page() {
                let page = match listing(env, &list).await {
                    Ok(page) => page,
                    Err(failed) => return failed,
                };
                if let Err(failed) = scrape.handle_page(page) {
                    return failed;
                }
            }
            front::metrics_reply(&scrape.finish())
        }
    }
}

/// One page of the namespace listing: each namespace's summary as its
/// object last pushed it to the registry, asking the objects that never
/// pushed one ([`Listing`] decides which, how many at once, and what their
/// answers mean), in name order, and the next page's `after`.
async fn listing(
    env: &Env,
    list: &RegistryRequest,
) -> Result<(Vec<String>, Option<NsName>), HttpReply> {
    let listed = call_registry(env, list).await?;
    let page: RegistryPage = serde_json::from_str(&listed.body)
        .map_err(|e| ApiError::unavailable(format!("registry answer: {e}")).reply())?;
    let mut listing = Listing::new(page);
    loop {
        let batch = listing.next_batch();
        if batch.is_empty() {
            break;
        }
        let replies = join_all(batch.iter().map(|namespace| async move {
            let request = ObjectRequest::Summary {
                namespace: *namespace,
            };
            (namespace, call_namespace(env, namespace, &request).await)
        }))
        .await;
        for (namespace, reply) in replies {
            listing.handle_summary(namespace, reply)?;
        }
    }
    listing.finish()
}

/// Reads at most `MAX_BODY + 1` bytes of the body: `None` when it is longer
/// (declared or found so), without buffering the rest (a body of no declared
/// length is read chunk by chunk, up to the cap).
async fn capped_body(req: &mut Request) -> Result<Option<Vec<u8>>, HttpReply> {
    let declared: Option<usize> = req
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse().ok());
    match declared {
        Some(n) if n > MAX_BODY => return Ok(None),
        // A declared length within the cap: the runtime reads exactly that
        // many bytes, in one call (a stream reader costs about a tenth of a
        // grant's CPU in the isolate, in a profile of the grant path).
        Some(_) => {
            let body = req
                .bytes()
                .await
                .map_err(|_| ApiError::invalid("could not read the request body").reply())?;
            return Ok((body.len() <= MAX_BODY).then_some(body));
        }
        None => {}
    }
    let mut stream = match req.stream() {
        Ok(s) => s,
        // No body at all.
        Err(_) => return Ok(Some(Vec::new())),
    };
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|_| ApiError::invalid("could not read the request body").reply())?;
        body.extend_from_slice(&chunk);
        if body.len() > MAX_BODY {
            return Ok(None);
        }
    }
    Ok(Some(body))
}

async fn handle(mut req: Request, env: &Env) -> HttpReply {
    let config = front_config(env);
    let method = req.inner().method().to_ascii_uppercase();
    let url = match req.url() {
        Ok(u) => u,
        Err(_) => return ApiError::invalid("unreadable URL").reply(),
    };
    let header = |name: &str| req.headers().get(name).ok().flatten();
    let authorization = header("authorization");
    let origin = header("origin");
    let own_origin = url.origin().ascii_serialization();
    let head = Incoming {
        method: &method,
        path: url.path(),
        query: url.query().unwrap_or(""),
        authorization: authorization.as_deref(),
        origin: origin.as_deref(),
        own_origin: &own_origin,
        body: None,
    };
    let now = Date::now().as_millis() / 1000;
    // Route, origin and token first: no unauthenticated body is read.
    let plan = match front::plan_before_body(&head, &config, now) {
        BeforeBody::Plan(plan) => plan,
        BeforeBody::ReadBody(verified) => {
            let body = match capped_body(&mut req).await {
                Ok(b) => b,
                Err(reply) => return reply,
            };
            let incoming = Incoming {
                body: body.as_deref(),
                ..head
            };
            front::plan_with(&incoming, &config, now, verified)
        }
    };
    if let (Some(problem), Plan::Reply(reply)) = (config.problem(), &plan) {
        if reply.status == 503 {
            worker::console_error!("{}", logline::config_refused(&problem));
        }
    }
    #[cfg(feature = "test-switches")]
    let plan = match bench_front(env, &config, authorization.as_deref(), now, plan) {
        Ok(plan) => plan,
        Err(reply) => return reply,
    };
    let mut reply = execute(plan, env, cf_place(&req)).await;
    config.cors.decorate(origin.as_deref(), &mut reply);
    if method == "HEAD" {
        reply.body.clear();
    }
    reply
}

/// Serves one admin page file from the `ASSETS` binding with the headers
/// [`page::decorate`] decides.
async fn serve_page(req: &Request, env: &Env, route: PageRoute) -> worker::Result<Response> {
    let (path, kind) = match route {
        PageRoute::Redirect(to) => return to_response(page::redirect(to)),
        PageRoute::File { path, kind } => (path, kind),
    };
    let Ok(assets) = env.assets("ASSETS") else {
        return to_response(
            ApiError::new(
                ErrorCode::NotFound,
                "the admin page is not served here (no ASSETS binding)",
            )
            .reply(),
        );
    };
    let mut url = req.url()?;
    url.set_path(&path);
    url.set_query(None);
    let fetched = assets.fetch(url.to_string(), None).await?;
    if fetched.status_code() != 200 {
        let missing = ApiError::new(ErrorCode::NotFound, "no such file");
        return to_response(missing.reply());
    }
    let mut decorated = HttpReply::empty(200);
    page::decorate(kind, &mut decorated);
    let mut resp = if req.method() == Method::Head {
        Response::empty()?
    } else {
        fetched
    };
    let headers = Headers::new();
    for (name, value) in &decorated.headers {
        headers.set(name, value)?;
    }
    resp = resp.with_headers(headers).with_status(200);
    Ok(resp)
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> worker::Result<Response> {
    let method = req.inner().method().to_ascii_uppercase();
    let path = req.path();
    if let Some(route) = page::page_route(&method, &path) {
        return match route {
            Ok(route) => serve_page(&req, &env, route).await,
            Err(e) => reply_or_unavailable(to_response(e.reply())),
        };
    }
    let reply = handle(req, &env).await;
    if let Some(line) = logline::auth_refused(&method, &path, &reply) {
        worker::console_log!("{line}");
    }
    reply_or_unavailable(to_response(reply))
}

/// The front's part of a benchmark variant (test build only): no object
/// call, or the token verified or the JSON handled more times.
#[cfg(feature = "test-switches")]
fn bench_front(
    env: &Env,
    config: &FrontConfig,
    authorization: Option<&str>,
    now: u64,
    plan: Plan,
) -> Result<Plan, HttpReply> {
    use crate::shared::test_switches::{Bench, BENCH, REPEATS};
    use std::hint::black_box;
    let request = match &plan {
        Plan::Object {
            request: request @ ObjectRequest::Grant { .. },
            ..
        }
        | Plan::Grant { request, .. } => request,
        _ => return Ok(plan),
    };
    match Bench::parse(env_text(env, BENCH).as_deref()) {
        Some(Bench::NoCall) => return Err(HttpReply::json(200, &serde_json::json!({}))),
        Some(Bench::Token) => {
            if let (Ok(keys), Ok(token)) =
                (&config.keys, crate::front::token::bearer(authorization))
            {
                for _ in 0..REPEATS {
                    let _ = black_box(crate::front::token::verify(
                        black_box(token),
                        keys,
                        config.audience.as_deref(),
                        now,
                    ));
                }
            }
        }
        Some(Bench::Json) => {
            let reply = serde_json::to_string(&serde_json::json!({"namespace": "n",
                "incarnation": "i", "requestId": "r", "start": "1", "end": "10001",
                "replayed": false, "capacity": {"maxCount": 10000, "remaining": "1"}}))
            .unwrap_or_default();
            for _ in 0..REPEATS {
                let text = serde_json::to_string(black_box(request)).unwrap_or_default();
                let _ = black_box(serde_json::from_str::<ObjectRequest>(&text));
                let _ = black_box(serde_json::from_str::<serde_json::Value>(black_box(&reply)));
            }
        }
        _ => {}
    }
    Ok(plan)
}
