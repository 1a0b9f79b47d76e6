//! The drivers' runtime glue (wasm32 only): [`Sql`] over a Durable
//! Object's SQLite storage, a call to another object, the environment's
//! texts, and an [`HttpReply`] as the runtime's response. No decisions.

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::{
    js_sys, web_sys, Date, Env, Request, Response, SqlStorage, SqlStorageValue, State, Storage,
};

use crate::front;
use crate::object::store::{Sql, StoreError, Value};
use crate::shared::logline;
use crate::shared::response::{ApiError, HttpReply};
use crate::shared::settings;

/// The binding of the namespace objects.
pub(crate) const NAMESPACE_BINDING: &str = "NAMESPACE";
/// The binding of the fence objects (one per namespace, the witness).
pub(crate) const FENCE_BINDING: &str = "FENCE";
/// The binding of the relay objects (one per namespace and region).
pub(crate) const RELAY_BINDING: &str = "RELAY";
/// The binding of the registry object.
pub(crate) const REGISTRY_BINDING: &str = "REGISTRY";
/// The one registry object's name.
pub(crate) const REGISTRY_NAME: &str = "registry";

/// Now, in ms since the epoch.
pub(crate) fn now_ms() -> i64 {
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

    /// A Durable Object stub, seen through its `fetch(url, init)`.
    #[wasm_bindgen(extends = js_sys::Object)]
    type RawStub;

    /// `stub.fetch(url, init)`: the object's answer (a `Response`).
    #[wasm_bindgen(method, catch)]
    fn fetch(this: &RawStub, url: &str, init: &js_sys::Object) -> Result<js_sys::Promise, JsValue>;
}

/// The URL of every call to an object (objects route by the body, not the
/// path).
const OBJECT_URL: &str = "https://object/";

/// [`Sql`] over a Durable Object's SQLite storage.
pub(crate) struct DoSql {
    sql: SqlStorage,
    storage: Storage,
}

impl DoSql {
    pub(crate) fn new(state: &State) -> DoSql {
        DoSql::from_storage(state.storage())
    }

    pub(crate) fn from_storage(storage: Storage) -> DoSql {
        DoSql {
            sql: storage.sql(),
            storage,
        }
    }
}

pub(crate) fn to_value(v: SqlStorageValue) -> Value {
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

    fn size_bytes(&self) -> Option<u64> {
        Some(self.sql.database_size() as u64)
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

pub(crate) fn to_response(reply: HttpReply) -> worker::Result<Response> {
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

pub(crate) fn reply_or_unavailable(r: worker::Result<Response>) -> worker::Result<Response> {
    match r {
        Ok(resp) => Ok(resp),
        Err(e) => {
            // The runtime's error text is for the logs, not the caller.
            worker::console_error!("{}", logline::unavailable("runtime", &e.to_string()));
            to_response(ApiError::unavailable(front::NOT_SERVING).reply())
        }
    }
}

/// Reads a whole request body for an object (sent by the front Worker).
pub(crate) async fn object_body(req: &mut Request) -> Result<Vec<u8>, HttpReply> {
    req.bytes()
        .await
        .map_err(|e| ApiError::unavailable(format!("could not read request: {e}")).reply())
}

pub(crate) fn env_text(env: &Env, name: &str) -> Option<String> {
    // Read directly: `env.var` throws (uncatchably, hanging the request) on
    // a binding that is null, as workerd's `fromEnvironment` makes of an
    // unset variable.
    js_sys::Reflect::get(env, &JsValue::from_str(name))
        .ok()
        .and_then(|v| v.as_string())
}

/// The grant retention in seconds, from the environment's texts, checked:
/// `RANGEID_GRANT_RETENTION_SECONDS`, or in the test build its test-only
/// override when set.
pub(crate) fn grant_retention(
    configured: Option<&str>,
    _test_only: Option<&str>,
) -> Result<u64, String> {
    #[cfg(feature = "test-switches")]
    if let Some(secs) = crate::shared::test_switches::grant_retention(_test_only) {
        return secs;
    }
    settings::grant_retention(configured)
}

/// The text of the test-only retention override (always `None` in the
/// production build, which does not know the variable).
pub(crate) fn test_retention_text(_env: &Env) -> Option<String> {
    #[cfg(feature = "test-switches")]
    return env_text(_env, crate::shared::test_switches::GRANT_RETENTION_SECONDS);
    #[cfg(not(feature = "test-switches"))]
    None
}

/// The grant retention in ms, from the environment, checked.
pub(crate) fn retention_ms(env: &Env) -> Result<i64, String> {
    grant_retention(
        env_text(env, "RANGEID_GRANT_RETENTION_SECONDS").as_deref(),
        test_retention_text(env).as_deref(),
    )
    .map(|s| (s as i64).saturating_mul(1000))
}

/// Sends `payload` to the object `name` of `binding`; any failure to get an
/// answer is an `Err` with the runtime's message.
pub(crate) async fn call(
    env: &Env,
    binding: &str,
    name: &str,
    payload: String,
) -> Result<HttpReply, String> {
    call_near(env, binding, name, None, payload).await
}

/// The headers an object's answer passes on to its caller.
const PASSED_HEADERS: [&str; 6] = [
    "content-type",
    "cache-control",
    "retry-after",
    "allow",
    crate::object::relays::RELAYS_HEADER,
    crate::object::relay::ROUTE_HEADER,
];

/// As [`call`], to an object made near `hint` (a Durable Object location
/// hint) if it does not exist yet. The stub's own `fetch(url, init)` is
/// called and its answer read with `text()`: `worker`'s `Request` and
/// `Response` wrappers (a request object built, the body read back chunk
/// by chunk through a stream reader) cost about a fifth of a grant's CPU in
/// the isolate, in a profile of the grant path.
pub(crate) async fn call_near(
    env: &Env,
    binding: &str,
    name: &str,
    hint: Option<&str>,
    payload: String,
) -> Result<HttpReply, String> {
    let js = |e: JsValue| {
        e.as_string()
            .or_else(|| {
                e.dyn_ref::<js_sys::Error>()
                    .map(|e| String::from(e.message()))
            })
            .unwrap_or_else(|| format!("{e:?}"))
    };
    let stub: RawStub = {
        let ns = env.durable_object(binding).map_err(|e| e.to_string())?;
        let id = ns.id_from_name(name).map_err(|e| e.to_string())?;
        match hint {
            Some(h) => id.get_stub_with_location_hint(h),
            None => id.get_stub(),
        }
        .map_err(|e| e.to_string())?
        .into_rpc()
    };
    let init = js_sys::Object::new();
    js_sys::Reflect::set(&init, &"method".into(), &"POST".into()).map_err(js)?;
    js_sys::Reflect::set(&init, &"body".into(), &JsValue::from(payload)).map_err(js)?;
    let answer = JsFuture::from(stub.fetch(OBJECT_URL, &init).map_err(js)?)
        .await
        .map_err(js)?;
    let resp: web_sys::Response = answer.dyn_into().map_err(js)?;
    let status = resp.status();
    let text = JsFuture::from(resp.text().map_err(js)?).await.map_err(js)?;
    let mut reply = HttpReply {
        status,
        headers: Vec::new(),
        body: text.as_string().unwrap_or_default(),
    };
    let headers = resp.headers();
    for name in PASSED_HEADERS {
        if let Some(v) = headers.get(name).map_err(js)? {
            reply.set_header(name, v);
        }
    }
    Ok(reply)
}
