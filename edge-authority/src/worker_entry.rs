//! The runtime drivers (wasm32 only): the front Worker and the two Durable
//! Object classes. They only move bytes between the runtime and the
//! host-tested modules: [`front::plan`] decides, [`object::handle`] runs
//! the storage logic synchronously, and the output gate holds each reply
//! until its writes are durable.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures_util::future::join_all;

use rangeid_core::Namespace as NsName;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use worker::{
    durable_object, event, js_sys, Context, Date, DurableObject, Env, Method, Request, RequestInit,
    Response, ScheduledTime, SqlStorage, SqlStorageValue, State, Storage,
};

use crate::api::MAX_BODY;
use crate::front::{self, FrontConfig, Incoming, Plan};
use crate::object::{self, ObjectRequest, RegistryList, RegistryRequest};
use crate::response::{ApiError, Cors, HttpReply};
use crate::store::{self, Sql, StoreError, Value};
use crate::token::{Keyring, KeyringError};

/// The binding of the namespace objects.
const NAMESPACE_BINDING: &str = "NAMESPACE";
/// The binding of the registry object.
const REGISTRY_BINDING: &str = "REGISTRY";
/// The one registry object's name.
const REGISTRY_NAME: &str = "registry";
/// How many namespace summaries a listing asks for at once.
const LIST_BATCH: usize = 32;
/// Default grant retention: 24 hours.
const DEFAULT_RETENTION_SECS: i64 = 86_400;

fn now_ms() -> i64 {
    Date::now().as_millis() as i64
}

#[wasm_bindgen]
extern "C" {
    /// The storage object, seen through the one method `worker` 0.8.7 does
    /// not bind.
    #[wasm_bindgen(extends = js_sys::Object)]
    type TxStorage;

    /// `storage.transactionSync(fn)`: runs `fn` in a SQLite transaction,
    /// rolled back if it throws (then rethrown).
    #[wasm_bindgen(method, catch, js_name = transactionSync)]
    fn transaction_sync(
        this: &TxStorage,
        body: &mut dyn FnMut() -> Result<JsValue, JsValue>,
    ) -> Result<JsValue, JsValue>;
}

/// [`Sql`] over a Durable Object's SQLite storage.
struct DoSql {
    sql: SqlStorage,
    storage: Storage,
}

impl DoSql {
    fn new(state: &State) -> DoSql {
        let storage = state.storage();
        DoSql {
            sql: storage.sql(),
            storage,
        }
    }
}

fn to_value(v: SqlStorageValue) -> Value {
    match v {
        SqlStorageValue::Null => Value::Null,
        SqlStorageValue::Integer(i) => Value::Int(i),
        SqlStorageValue::Float(f) => Value::Real(f),
        SqlStorageValue::String(s) => Value::Text(s),
        SqlStorageValue::Boolean(b) => Value::Int(i64::from(b)),
        SqlStorageValue::Blob(_) => Value::Null,
    }
}

impl Sql for DoSql {
    fn exec(&self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, StoreError> {
        let err = |e: worker::Error| StoreError(e.to_string());
        let mut bindings = Vec::with_capacity(params.len());
        for p in params {
            bindings.push(match p {
                Value::Null => SqlStorageValue::Null,
                // Refuses anything an f64 would round.
                Value::Int(i) => SqlStorageValue::try_from_i64(*i).map_err(err)?,
                Value::Real(f) => SqlStorageValue::Float(*f),
                Value::Text(s) => SqlStorageValue::String(s.clone()),
            });
        }
        let cursor = self.sql.exec(sql, bindings).map_err(err)?;
        // Drain at once: the statement runs to completion here.
        let mut rows = Vec::new();
        for row in cursor.raw() {
            rows.push(row.map_err(err)?.into_iter().map(to_value).collect());
        }
        Ok(rows)
    }

    fn atomically(
        &self,
        body: &mut dyn FnMut() -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut failure: Option<StoreError> = None;
        let mut run = || match body() {
            Ok(()) => Ok(JsValue::UNDEFINED),
            Err(e) => {
                let js = JsValue::from_str(&e.0);
                failure = Some(e);
                // Thrown: the runtime rolls the transaction back.
                Err(js)
            }
        };
        let raw: &TxStorage = self.storage.as_raw().unchecked_ref();
        let result = raw.transaction_sync(&mut run);
        match result {
            Ok(_) => Ok(()),
            Err(js) => Err(failure.unwrap_or_else(|| {
                StoreError(
                    js.as_string()
                        .unwrap_or_else(|| format!("transaction failed: {js:?}")),
                )
            })),
        }
    }
}

fn to_response(reply: HttpReply) -> worker::Result<Response> {
    let mut resp = if reply.body.is_empty() {
        Response::empty()?
    } else {
        Response::from_bytes(reply.body.into_bytes())?
    }
    .with_status(reply.status);
    for (name, value) in &reply.headers {
        resp.headers_mut().set(name, value)?;
    }
    Ok(resp)
}

fn reply_or_unavailable(r: worker::Result<Response>) -> worker::Result<Response> {
    match r {
        Ok(resp) => Ok(resp),
        Err(e) => to_response(ApiError::unavailable(format!("internal error: {e}")).reply()),
    }
}

/// One namespace: its state, grant ledger and audit log.
#[durable_object(alarm)]
pub struct Namespace {
    state: State,
    sql: DoSql,
    schema: Result<(), StoreError>,
    retention_ms: i64,
    alarm_known: Cell<bool>,
}

impl DurableObject for Namespace {
    fn new(state: State, env: Env) -> Self {
        let sql = DoSql::new(&state);
        let schema = store::migrate(&sql, store::NAMESPACE_SCHEMA);
        let retention_secs = env
            .var("RANGEID_GRANT_RETENTION_SECONDS")
            .ok()
            .and_then(|v| v.to_string().trim().parse::<i64>().ok())
            .filter(|&s| s > 0)
            .unwrap_or(DEFAULT_RETENTION_SECS);
        Self {
            state,
            sql,
            schema,
            retention_ms: retention_secs.saturating_mul(1000),
            alarm_known: Cell::new(false),
        }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        // Every await comes before the synchronous storage block.
        let body = req.bytes().await;
        let reply = match (&self.schema, body) {
            (Err(e), _) => ApiError::unavailable(format!("storage not ready: {e}")).reply(),
            (_, Err(e)) => ApiError::unavailable(format!("could not read request: {e}")).reply(),
            (Ok(()), Ok(bytes)) => match serde_json::from_slice::<ObjectRequest>(&bytes) {
                Err(e) => ApiError::unavailable(format!("bad object request: {e}")).reply(),
                Ok(request) => {
                    // --- synchronous: one coalesced write, no await ---
                    let outcome = object::handle(&self.sql, &request, now_ms());
                    // --- end of the write batch ---
                    if let Some(at) = outcome.granted_at {
                        self.ensure_alarm(at).await;
                    }
                    outcome.reply
                }
            },
        };
        reply_or_unavailable(to_response(reply))
    }

    async fn alarm(&self) -> worker::Result<Response> {
        let now = now_ms();
        match object::prune(&self.sql, now, self.retention_ms) {
            Ok(Some(at)) => {
                self.set_alarm_at(at).await?;
                self.alarm_known.set(true);
            }
            Ok(None) => self.alarm_known.set(false),
            // Thrown: the runtime retries the alarm.
            Err(e) => return Err(worker::Error::RustError(e.to_string())),
        }
        Response::ok("pruned")
    }
}

impl Namespace {
    async fn set_alarm_at(&self, at_ms: i64) -> worker::Result<()> {
        let date = js_sys::Date::new(&JsValue::from_f64(at_ms as f64));
        self.state
            .storage()
            .set_alarm(ScheduledTime::new(date))
            .await
    }

    /// Makes sure a pruning alarm is pending once a grant exists. Failing
    /// here delays pruning only, so errors are logged, not returned.
    async fn ensure_alarm(&self, granted_at: i64) {
        if self.alarm_known.get() {
            return;
        }
        let storage = self.state.storage();
        let pending = match storage.get_alarm().await {
            Ok(p) => p,
            Err(e) => {
                worker::console_warn!("get_alarm: {e}");
                return;
            }
        };
        if pending.is_none() {
            if let Err(e) = self.set_alarm_at(granted_at + self.retention_ms).await {
                worker::console_warn!("set_alarm: {e}");
                return;
            }
        }
        self.alarm_known.set(true);
    }
}

/// The list of namespaces.
#[durable_object(fetch)]
pub struct Registry {
    sql: DoSql,
    schema: Result<(), StoreError>,
}

impl DurableObject for Registry {
    fn new(state: State, _env: Env) -> Self {
        let sql = DoSql::new(&state);
        let schema = store::migrate(&sql, store::REGISTRY_SCHEMA);
        Self { sql, schema }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let body = req.bytes().await;
        let reply = match (&self.schema, body) {
            (Err(e), _) => ApiError::unavailable(format!("storage not ready: {e}")).reply(),
            (_, Err(e)) => ApiError::unavailable(format!("could not read request: {e}")).reply(),
            (Ok(()), Ok(bytes)) => match serde_json::from_slice::<RegistryRequest>(&bytes) {
                Err(e) => ApiError::unavailable(format!("bad registry request: {e}")).reply(),
                Ok(request) => object::handle_registry(&self.sql, &request, now_ms()),
            },
        };
        reply_or_unavailable(to_response(reply))
    }
}

fn signing_keys_text(env: &Env) -> Option<String> {
    env.secret("RANGEID_SIGNING_KEYS")
        .map(|s| s.to_string())
        .or_else(|_| env.var("RANGEID_SIGNING_KEYS").map(|v| v.to_string()))
        .ok()
}

/// The parsed configuration and the raw texts it was parsed from.
struct CachedConfig {
    keys_text: Option<String>,
    cors_text: String,
    config: Rc<FrontConfig>,
}

thread_local! {
    static CONFIG: RefCell<Option<CachedConfig>> = const { RefCell::new(None) };
}

/// The front configuration, parsed once per isolate (and again only if
/// the environment's texts change).
fn front_config(env: &Env) -> Rc<FrontConfig> {
    let keys_text = signing_keys_text(env);
    let cors_text = env
        .var("RANGEID_CORS_ORIGINS")
        .map(|v| v.to_string())
        .unwrap_or_default();
    CONFIG.with(|cell| {
        let mut cached = cell.borrow_mut();
        if let Some(c) = cached.as_ref() {
            if c.keys_text == keys_text && c.cors_text == cors_text {
                return Rc::clone(&c.config);
            }
        }
        let keys = match &keys_text {
            Some(text) => Keyring::from_json(text),
            None => Err(KeyringError("RANGEID_SIGNING_KEYS is not set".into())),
        };
        let config = Rc::new(FrontConfig {
            keys,
            cors: Cors::parse(&cors_text),
        });
        *cached = Some(CachedConfig {
            keys_text,
            cors_text,
            config: Rc::clone(&config),
        });
        config
    })
}

/// Sends `payload` to the object `name` of `binding`; any failure to get an
/// answer is an `Err` with the runtime's message.
async fn call(env: &Env, binding: &str, name: &str, payload: String) -> Result<HttpReply, String> {
    let inner = async {
        let ns = env.durable_object(binding)?;
        let stub = ns.id_from_name(name)?.get_stub()?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_body(Some(JsValue::from_str(&payload)));
        let req = Request::new_with_init("https://object/", &init)?;
        let mut resp = stub.fetch_with_request(req).await?;
        let status = resp.status_code();
        let body = resp.text().await?;
        let mut reply = HttpReply {
            status,
            headers: Vec::new(),
            body,
        };
        for name in ["content-type", "cache-control", "retry-after", "allow"] {
            if let Some(v) = resp.headers().get(name)? {
                reply.set_header(name, v);
            }
        }
        worker::Result::Ok(reply)
    };
    inner.await.map_err(|e: worker::Error| e.to_string())
}

async fn call_namespace(env: &Env, ns: &NsName, request: &ObjectRequest) -> HttpReply {
    let payload = match serde_json::to_string(request) {
        Ok(p) => p,
        Err(e) => return ApiError::unavailable(format!("could not encode: {e}")).reply(),
    };
    match call(env, NAMESPACE_BINDING, ns.as_str(), payload).await {
        Ok(reply) => reply,
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
        Ok(reply) => Err(reply),
        Err(e) => {
            worker::console_error!("registry: {e}");
            Err(front::object_failed(&e))
        }
    }
}

async fn execute(plan: Plan, env: &Env) -> HttpReply {
    match plan {
        Plan::Reply(reply) => reply,
        Plan::Object { namespace, request } => call_namespace(env, &namespace, &request).await,
        Plan::Create { namespace, request } => {
            let reply = call_namespace(env, &namespace, &request).await;
            if reply.status == 201 || reply.status == 409 {
                // Idempotent; also repairs a registry write lost earlier.
                if let Err(failed) = call_registry(env, &RegistryRequest::Add { namespace }).await {
                    return failed;
                }
            }
            reply
        }
        Plan::List { claims } => {
            let listed = match call_registry(env, &RegistryRequest::List).await {
                Ok(r) => r,
                Err(failed) => return failed,
            };
            let all: RegistryList = match serde_json::from_str(&listed.body) {
                Ok(l) => l,
                Err(e) => return ApiError::unavailable(format!("registry answer: {e}")).reply(),
            };
            let mut summaries = Vec::new();
            let visible = front::visible(&claims, &all.namespaces);
            // Ask the objects in parallel, a bounded batch at a time.
            for batch in visible.chunks(LIST_BATCH) {
                let replies = join_all(batch.iter().map(|namespace| async move {
                    let request = ObjectRequest::Summary {
                        namespace: *namespace,
                    };
                    call_namespace(env, namespace, &request).await
                }))
                .await;
                for r in replies {
                    match r.status {
                        200 => summaries.push(r.body),
                        404 => {}
                        _ => return r,
                    }
                }
            }
            front::list_reply(&summaries)
        }
    }
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
    let declared: Option<usize> = header("content-length").and_then(|v| v.trim().parse().ok());
    let body = if method == "POST" && declared.is_none_or(|n| n <= MAX_BODY) {
        match req.bytes().await {
            Ok(b) => Some(b),
            Err(_) => return ApiError::invalid("could not read the request body").reply(),
        }
    } else if method == "POST" {
        None
    } else {
        Some(Vec::new())
    };
    let incoming = Incoming {
        method: &method,
        path: url.path(),
        query: url.query().unwrap_or(""),
        authorization: authorization.as_deref(),
        origin: origin.as_deref(),
        body: body.as_deref(),
    };
    let now = Date::now().as_millis() / 1000;
    let plan = front::plan(&incoming, &config, now);
    let mut reply = execute(plan, env).await;
    config.cors.decorate(origin.as_deref(), &mut reply);
    if method == "HEAD" {
        reply.body.clear();
    }
    reply
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> worker::Result<Response> {
    let reply = handle(req, &env).await;
    reply_or_unavailable(to_response(reply))
}
