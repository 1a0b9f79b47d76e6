//! The runtime drivers (wasm32 only): the front Worker and the three
//! Durable Object classes (namespace, fence, registry). They only move
//! bytes between the runtime and the host-tested modules: [`front`]
//! decides, [`object`] runs the storage logic synchronously, and the
//! output gate holds each reply until its writes are durable. What they
//! add is only what needs the runtime: reaching another object, the start
//! gate (`blockConcurrencyWhile`), one fence raise at a time, alarms.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures_util::future::{join_all, FutureExt, LocalBoxFuture, Shared};
use futures_util::StreamExt;

use rangeid_core::fence::{Phase, Witnessed};
use rangeid_core::wire::DecBound;
use rangeid_core::ErrorCode;
use rangeid_core::Namespace as NsName;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use worker::{
    durable_object, event, js_sys, wasm_bindgen_futures, Context, Date, DurableObject, Env,
    Headers, Method, Request, RequestInit, Response, ScheduledTime, SqlStorage, SqlStorageValue,
    State, Storage,
};

use crate::api::{self, MAX_BODY};
use crate::front::{self, FrontConfig, Incoming, Plan};
use crate::logline;
use crate::object::registry::{RegistryPage, RegistryRequest};
use crate::object::schedule::{Clock, PUSH_EVERY_MS};
use crate::object::witness::{FenceMark, FenceRequest};
use crate::object::{self, ObjectRequest, Step};
use crate::page::{self, PageRoute};
use crate::refusals::{Counted, Refusals};
use crate::response::{ApiError, Cors, HttpReply};
use crate::settings;
use crate::store::{self, Sql, StoreError, Value};
use crate::token::{Keyring, KeyringError};

/// The binding of the namespace objects.
const NAMESPACE_BINDING: &str = "NAMESPACE";
/// The binding of the fence objects (one per namespace, the witness).
const FENCE_BINDING: &str = "FENCE";
/// The binding of the registry object.
const REGISTRY_BINDING: &str = "REGISTRY";
/// The one registry object's name.
const REGISTRY_NAME: &str = "registry";
/// How many namespace summaries a listing asks objects for at once.
const LIST_BATCH: usize = 32;
/// How often a grant may go back to the fence before giving up (each time
/// the witness raised the mark, another grant may have used it).
const FENCE_TRIES: usize = 8;

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
        DoSql::from_storage(state.storage())
    }

    fn from_storage(storage: Storage) -> DoSql {
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
        Err(e) => {
            // The runtime's error text is for the logs, not the caller.
            worker::console_error!("{}", logline::unavailable("runtime", &e.to_string()));
            to_response(ApiError::unavailable(front::NOT_SERVING).reply())
        }
    }
}

/// Reads a whole request body for an object (sent by the front Worker).
async fn object_body(req: &mut Request) -> Result<Vec<u8>, HttpReply> {
    req.bytes()
        .await
        .map_err(|e| ApiError::unavailable(format!("could not read request: {e}")).reply())
}

fn env_text(env: &Env, name: &str) -> Option<String> {
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
fn grant_retention(configured: Option<&str>, _test_only: Option<&str>) -> Result<u64, String> {
    #[cfg(feature = "test-switches")]
    if let Some(secs) = crate::test_switches::grant_retention(_test_only) {
        return secs;
    }
    settings::grant_retention(configured)
}

/// The text of the test-only retention override (always `None` in the
/// production build, which does not know the variable).
fn test_retention_text(_env: &Env) -> Option<String> {
    #[cfg(feature = "test-switches")]
    return env_text(_env, crate::test_switches::GRANT_RETENTION_SECONDS);
    #[cfg(not(feature = "test-switches"))]
    None
}

/// The grant retention in ms, from the environment, checked.
fn retention_ms(env: &Env) -> Result<i64, String> {
    grant_retention(
        env_text(env, "RANGEID_GRANT_RETENTION_SECONDS").as_deref(),
        test_retention_text(env).as_deref(),
    )
    .map(|s| (s as i64).saturating_mul(1000))
}

/// Asks the fence object (the witness) of `ns` something; its answer.
async fn ask_witness(env: &Env, ns: &NsName, request: &FenceRequest) -> Result<Witnessed, String> {
    let payload = serde_json::to_string(request).map_err(|e| e.to_string())?;
    let reply = call(env, FENCE_BINDING, ns.as_str(), payload).await?;
    if reply.status != 200 {
        return Err(format!(
            "the witness answered {}: {}",
            reply.status, reply.body
        ));
    }
    let mark: FenceMark = serde_json::from_str(&reply.body).map_err(|e| e.to_string())?;
    Ok(mark.witnessed())
}

/// Raises the witness of `ns` to at least `target` and applies its answer
/// ([`object::grant::witnessed`]): the mark asked for is recorded first, so
/// an answer lost after the witness's write is never taken for a rollback.
/// `was`, when given, is what the witness said it held just before (for a
/// witness of an older build, which does not say). An answer below this
/// object's fence (the witness was restored while the raise was on its way)
/// is raised back at once, so no caller ever relies on a witness below the
/// fence. `None` when the namespace does not exist.
async fn raise_witness(
    sql: &DoSql,
    env: &Env,
    ns: &NsName,
    target: u128,
    was: Option<u128>,
) -> Result<Option<object::grant::Heard>, String> {
    let (mut target, mut was) = (target, was);
    for _ in 0..FENCE_TRIES {
        let sent_at = object::grant::record_asked(sql, target).map_err(|e| e.to_string())?;
        let Some(sent_at) = sent_at else {
            return Ok(None);
        };
        let request = FenceRequest::Raise {
            to: DecBound(target),
        };
        let mut answer = ask_witness(env, ns, &request).await?;
        answer.was = answer.was.or(was);
        let heard = object::grant::witnessed(sql, sent_at, answer, Phase::Running, now_ms())
            .map_err(|e| e.to_string())?;
        let Some(heard) = heard else {
            return Ok(None);
        };
        log_heard(ns, &heard);
        match heard.raise_back {
            None => return Ok(Some(heard)),
            Some(mark) => (target, was) = (mark, Some(answer.mark)),
        }
    }
    Err("the witness stayed below this object's fence".to_owned())
}

/// Logs what an answer from the witness showed, when it showed anything.
fn log_heard(ns: &NsName, h: &object::grant::Heard) {
    if h.forward {
        worker::console_warn!("{}", logline::fence_start(ns.as_str(), h.skipped, true));
    } else if h.skipped > 0 {
        worker::console_log!("{}", logline::fence_start(ns.as_str(), h.skipped, false));
    }
    if h.behind_mended {
        worker::console_warn!("{}", logline::witness_behind(ns.as_str()));
    }
}

/// Whether a namespace object has heard from its witness since it started,
/// when it last checked in, and when a check-in last failed.
#[derive(Default)]
struct Gate {
    started: Cell<bool>,
    checked_at: Cell<i64>,
    failed_at: Cell<Option<i64>>,
}

/// A fence raise in flight, shared by every grant waiting for it.
type Raise = Shared<LocalBoxFuture<'static, Result<u128, String>>>;

/// The grants gathered for one shared commit ([`Namespace::decide`]), and
/// the run that decides and writes them all, shared by every grant in it
/// (each takes its step by its index).
struct GrantBatch {
    requests: Vec<ObjectRequest>,
    run: Shared<LocalBoxFuture<'static, Rc<Vec<Step>>>>,
}

/// One namespace: its state, grant ledger and audit log.
#[durable_object(alarm)]
pub struct Namespace {
    state: State,
    env: Env,
    sql: DoSql,
    schema: Result<(), StoreError>,
    retention: Result<i64, String>,
    // Whether `alarm_at` was read from storage since this instance started.
    alarm_checked: Cell<bool>,
    // When the stored alarm is due (ms), if one is.
    alarm_at: Cell<Option<i64>>,
    // Whether this instance heard from its witness (and applied what it
    // said) since it started; no grant or floor before that.
    gate: Rc<Gate>,
    // How often it checks in (ms), from RANGEID_CHECK_SECONDS.
    check_every: Result<i64, String>,
    raising: Rc<RefCell<Option<Raise>>>,
    // The grants gathered for the next shared commit.
    batch: Rc<RefCell<Option<GrantBatch>>>,
    // IDs asked for by grants now waiting for the fence to rise: the next
    // raise covers them too.
    waiting: Rc<Cell<u64>>,
    pushed_at: Cell<i64>,
    // Refusals counted since they were last added to storage.
    pending: RefCell<Refusals>,
    // When the last 429 refusal was logged (ms): a flood gets a line a second.
    throttle_logged_at: Cell<i64>,
    /// The benchmark variant this object runs (test build only).
    #[cfg(feature = "test-switches")]
    bench: Option<crate::test_switches::Bench>,
}

/// The start, and the periodic check: reads the witness's mark and applies
/// it before any grant (`object::grant::witnessed`): a rolled-back object
/// moves up to the mark; a witness found below this object's fence is
/// raised back to it first. With no namespace row yet it stays unstarted,
/// so a namespace created later (or again, on storage restored from before
/// its creation) still hears from its witness before its first grant. Never
/// fails the object: on error it stays unstarted and the next grant (or
/// floor) tries again.
async fn check_witness(storage: Storage, env: Env, gate: Rc<Gate>) {
    let started = &gate.started;
    let sql = DoSql::from_storage(storage);
    let row = match object::load_any(&sql) {
        Ok(row) => row,
        Err(e) => {
            worker::console_error!("start: storage unreadable: {e}");
            return;
        }
    };
    let Some(row) = row else {
        return;
    };
    let ns = *row.state.name();
    // A started object checks in while running; any other is starting.
    let phase = if started.get() {
        Phase::Running
    } else {
        Phase::Starting
    };
    let sent_at = row.state.fence();
    let checked = async {
        let got = ask_witness(&env, &ns, &FenceRequest::Get).await?;
        let heard = object::grant::witnessed(&sql, sent_at, got, phase, now_ms())
            .map_err(|e| e.to_string())?;
        let Some(heard) = heard else {
            return Ok(());
        };
        log_heard(&ns, &heard);
        if let Some(mark) = heard.raise_back {
            // No grant until the witness is back up to this object's fence.
            started.set(false);
            raise_witness(&sql, &env, &ns, mark, Some(got.mark)).await?;
        }
        Ok::<(), String>(())
    };
    match checked.await {
        Ok(()) => {
            started.set(true);
            gate.checked_at.set(now_ms());
            gate.failed_at.set(None);
        }
        // Unstarted stays unstarted; a started object whose witness could
        // not be read keeps granting below the fence it recorded. The
        // check-in is tried again soon (schedule::CHECK_RETRY_MS).
        Err(e) => {
            gate.failed_at.set(Some(now_ms()));
            worker::console_error!("{}", logline::fence_unreachable(ns.as_str(), &e));
        }
    }
}

impl DurableObject for Namespace {
    fn new(state: State, env: Env) -> Self {
        let sql = DoSql::new(&state);
        let schema = store::migrate(&sql, store::NAMESPACE_MIGRATIONS);
        let retention = retention_ms(&env);
        let check_every =
            settings::check_interval(env_text(&env, "RANGEID_CHECK_SECONDS").as_deref())
                .map(|s| s as i64 * 1000);
        let gate = Rc::new(Gate::default());
        #[cfg(feature = "test-switches")]
        let bench = bench_variant(&env);
        if schema.is_ok() {
            // The start gate: no event reaches the object before it has
            // heard from its witness (or failed to).
            let _gate = state.block_concurrency_while(
                check_witness(state.storage(), env.clone(), Rc::clone(&gate)).map(Ok),
            );
        }
        Self {
            state,
            env,
            sql,
            schema,
            retention,
            check_every,
            alarm_checked: Cell::new(false),
            alarm_at: Cell::new(None),
            gate,
            raising: Rc::new(RefCell::new(None)),
            batch: Rc::new(RefCell::new(None)),
            waiting: Rc::new(Cell::new(0)),
            pushed_at: Cell::new(0),
            pending: RefCell::new(Refusals::default()),
            throttle_logged_at: Cell::new(i64::MIN),
            #[cfg(feature = "test-switches")]
            bench,
        }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let settings = self.retention.as_ref().and(self.check_every.as_ref());
        let reply = match (&self.schema, settings, object_body(&mut req).await) {
            (Err(e), _, _) => ApiError::unavailable(format!("storage not ready: {e}")).reply(),
            (_, Err(e), _) => {
                ApiError::unavailable(format!("authority misconfigured: {e}")).reply()
            }
            (_, _, Err(reply)) => reply,
            (Ok(()), Ok(_), Ok(bytes)) => match serde_json::from_slice::<ObjectRequest>(&bytes) {
                Err(e) => ApiError::unavailable(format!("bad object request: {e}")).reply(),
                #[cfg(feature = "test-switches")]
                Ok(ObjectRequest::Grant { .. })
                    if self.bench == Some(crate::test_switches::Bench::NoStorage) =>
                {
                    HttpReply::json(200, &serde_json::json!({}))
                }
                Ok(request) => {
                    let reply = self.serve(&request).await;
                    // Every namespace's object keeps an alarm for its next
                    // check-in, idle or not (one storage read per instance).
                    // A request that found no namespace arms nothing.
                    if reply.status < 300 {
                        self.alarm_no_later_than(self.check_at(now_ms())).await;
                    }
                    reply
                }
            },
        };
        reply_or_unavailable(to_response(reply))
    }

    async fn alarm(&self) -> worker::Result<Response> {
        let now = now_ms();
        // This alarm has fired: none is due now. An alarm asked for while
        // this handler awaits is kept (merged below), not lost.
        self.alarm_at.set(None);
        self.alarm_checked.set(true);
        // An object whose namespace does not exist (any more, after a
        // restore to before its creation) keeps no alarm; storage that
        // cannot be read is an error, so the runtime retries the alarm
        // rather than the check-ins stopping for good.
        match object::load_any(&self.sql) {
            Ok(Some(_)) => {}
            Ok(None) => return Response::ok("no namespace"),
            Err(e) => return Err(worker::Error::RustError(format!("alarm: {e}"))),
        }
        if self.clock(now).check_due() {
            // The check-in: hear from the witness (raising it back if it went
            // back); the push below re-registers with the registry.
            let again = check_witness(
                self.state.storage(),
                self.env.clone(),
                Rc::clone(&self.gate),
            );
            let _ = self.state.block_concurrency_while(again.map(Ok)).await;
        }
        self.push_summary(now).await;
        let retention = self
            .retention
            .clone()
            .unwrap_or(settings::DEFAULT_RETENTION_SECS as i64 * 1000);
        match object::prune(&self.sql, now, retention) {
            Ok(prune_at) => {
                let at = self
                    .clock(now_ms())
                    .next_alarm(prune_at, self.alarm_at.get());
                self.set_alarm_at(at).await?;
                self.alarm_at.set(Some(at));
            }
            // Thrown: the runtime retries the alarm.
            Err(e) => return Err(worker::Error::RustError(e.to_string())),
        }
        Response::ok("done")
    }
}

impl Namespace {
    /// Serves one request: grants and floors go through the start gate (the
    /// witness heard from since this instance started) and the fence;
    /// everything else straight to the storage logic.
    async fn serve(&self, request: &ObjectRequest) -> HttpReply {
        if request.waits_for_witness() && !self.gate.started.get() {
            let again = check_witness(
                self.state.storage(),
                self.env.clone(),
                Rc::clone(&self.gate),
            );
            let _ = self.state.block_concurrency_while(again.map(Ok)).await;
            // Unstarted with a namespace row: the witness could not be read.
            // (Without one, the request goes on to its 404.)
            let exists = !matches!(object::load_any(&self.sql), Ok(None));
            if !self.gate.started.get() && exists {
                if matches!(request, ObjectRequest::Grant { .. }) {
                    self.count(Counted::Fenced).await;
                }
                return ApiError::unavailable(
                    "the fence's witness cannot be reached; nothing was changed",
                )
                .reply();
            }
        }
        if matches!(request, ObjectRequest::Summary { .. }) {
            self.flush_refusals();
        }
        if let ObjectRequest::Floor {
            namespace, floor, ..
        } = request
        {
            // The witness holds a floor before it is committed, so a
            // restore of this object alone never goes back below it.
            match object::admin::floor_mark(&self.sql, namespace, floor.0) {
                Err(e) => return e.reply(),
                Ok(None) => {}
                Ok(Some(mark)) => {
                    let raised = raise_witness(&self.sql, &self.env, namespace, mark, None).await;
                    if let Err(e) = raised {
                        return ApiError::unavailable(format!(
                            "the fence's witness cannot be reached ({e}); the floor was not raised"
                        ))
                        .reply();
                    }
                }
            }
        }
        for _ in 0..FENCE_TRIES {
            match self.decide(request).await {
                Step::Reply(outcome) => {
                    if let (Some(kind), ObjectRequest::Grant { request, owner }) =
                        (outcome.refused, request)
                    {
                        let now = now_ms();
                        if logline::refusal_logged(kind, self.throttle_logged_at.get(), now) {
                            if matches!(kind, Counted::RateLimited | Counted::LedgerFull) {
                                self.throttle_logged_at.set(now);
                            }
                            worker::console_log!(
                                "{}",
                                logline::grant_refused(request, owner, kind)
                            );
                        }
                        self.count(kind).await;
                    }
                    if let Some(at) = outcome.granted_at {
                        #[cfg(feature = "test-switches")]
                        let after = self.bench != Some(crate::test_switches::Bench::NoAfter);
                        #[cfg(not(feature = "test-switches"))]
                        let after = true;
                        if after {
                            self.after_grant(at).await;
                        }
                    } else if outcome.reply.status < 300
                        && !matches!(
                            request,
                            ObjectRequest::Summary { .. }
                                | ObjectRequest::Grants { .. }
                                | ObjectRequest::Lookup { .. }
                                | ObjectRequest::Rates { .. }
                                | ObjectRequest::Audit { .. }
                        )
                    {
                        // An admin change: the registry shows it at once.
                        self.push_summary(now_ms()).await;
                    }
                    return outcome.reply;
                }
                Step::ReadWitness => {
                    let ObjectRequest::Export {
                        namespace,
                        reason,
                        actor,
                        source,
                    } = request
                    else {
                        return ApiError::unavailable("only an export reads the witness").reply();
                    };
                    // The fence the read is sent at (a witness found below
                    // it went back), then the mark as it is now, just before
                    // the freeze commits.
                    let sent_at = match object::load_any(&self.sql) {
                        Ok(Some(row)) => row.state.fence(),
                        // The export itself answers namespace_not_found.
                        Ok(None) => 0,
                        Err(e) => return ApiError::unavailable(e.to_string()).reply(),
                    };
                    let got = match ask_witness(&self.env, namespace, &FenceRequest::Get).await {
                        Ok(got) => got,
                        Err(e) => {
                            return ApiError::unavailable(format!(
                                "the fence's witness cannot be reached ({e}); nothing was exported"
                            ))
                            .reply()
                        }
                    };
                    // --- synchronous: the freeze and its audit entry, one commit ---
                    let exported = object::transfer::export(
                        &self.sql,
                        namespace,
                        (sent_at, got),
                        (reason, actor, source),
                        now_ms(),
                    );
                    let (reply, retire) = match exported {
                        Ok(done) => done,
                        Err(e) => return e.reply(),
                    };
                    self.push_summary(now_ms()).await;
                    // The document only once the namespace is retired here:
                    // the witness past the last ID, so no copy of this
                    // object's storage can ever grant again.
                    return match raise_witness(&self.sql, &self.env, namespace, retire, None).await
                    {
                        Ok(Some(_)) => reply,
                        Ok(None) => ApiError::unavailable("no namespace here").reply(),
                        Err(e) => ApiError::unavailable(format!(
                            "the namespace is frozen and exported, but its witness could not be \
                             retired ({e}); export again to get the document"
                        ))
                        .reply(),
                    };
                }
                Step::RaiseFence { target } => {
                    let count = match request {
                        ObjectRequest::Grant { request, .. } => request.count,
                        _ => 0,
                    };
                    self.waiting.set(self.waiting.get().saturating_add(count));
                    let raised = self.raise(*request.namespace(), target).await;
                    self.waiting.set(self.waiting.get().saturating_sub(count));
                    if let Err(e) = raised {
                        self.count(Counted::Fenced).await;
                        return ApiError::unavailable(format!(
                            "the fence's witness cannot be reached ({e}); nothing was granted"
                        ))
                        .reply();
                    }
                }
            }
        }
        worker::console_error!(
            "{}",
            logline::fence_unreachable(request.namespace().as_str(), "the fence moved too often")
        );
        self.count(Counted::Fenced).await;
        ApiError::unavailable("the fence moved under this grant too often; retry").reply()
    }

    /// Decides `request` and writes what was decided. A grant joins the
    /// batch gathered since the last run, which runs once the runtime has
    /// delivered the requests already on their way (a zero timer fires
    /// after the event loop's pending events): every grant in it decided
    /// back to back with no `await`, so their writes share one SQLite
    /// commit, and the output gate holds each of their replies until that
    /// commit is durable. Anything else is decided at once, alone.
    async fn decide(&self, request: &ObjectRequest) -> Step {
        #[cfg(feature = "test-switches")]
        let request = &match (self.bench, request) {
            (Some(crate::test_switches::Bench::Unbatched), ObjectRequest::Grant { .. }) => {
                return object::handle(&self.sql, request, self.waiting.get(), now_ms())
            }
            _ => request.clone(),
        };
        if !matches!(request, ObjectRequest::Grant { .. }) {
            // --- synchronous: one write, no await ---
            return object::handle(&self.sql, request, self.waiting.get(), now_ms());
        }
        let (run, index) = {
            let mut slot = self.batch.borrow_mut();
            let batch = slot.get_or_insert_with(|| self.grant_batch());
            batch.requests.push(request.clone());
            (batch.run.clone(), batch.requests.len() - 1)
        };
        let steps = run.await;
        steps.get(index).cloned().unwrap_or_else(|| {
            Step::Reply(ApiError::unavailable("a grant went missing from its batch").into())
        })
    }

    /// A new, empty batch of grants and its run.
    fn grant_batch(&self) -> GrantBatch {
        let (storage, slot) = (self.state.storage(), Rc::clone(&self.batch));
        let (gate, waiting) = (Rc::clone(&self.gate), Rc::clone(&self.waiting));
        #[cfg(feature = "test-switches")]
        let bench = self.bench;
        let run = async move {
            worker::Delay::from(std::time::Duration::ZERO).await;
            let requests = slot.take().map(|b| b.requests).unwrap_or_default();
            let sql = DoSql::from_storage(storage);
            #[cfg(feature = "test-switches")]
            if let Some(b) = bench {
                return Rc::new(bench_batch(b, &sql, &requests, waiting.get()));
            }
            // --- synchronous: the whole batch, one commit, no await ---
            let steps = requests.iter().map(|request| {
                // The object went back to its start gate (a check-in found
                // its witness behind) since this grant passed it.
                if !gate.started.get() {
                    let busy = "the fence's witness is being checked; nothing was granted";
                    return Step::Reply(ApiError::unavailable(busy).into());
                }
                object::handle(&sql, request, waiting.get(), now_ms())
            });
            Rc::new(steps.collect())
            // --- end of the write batch ---
        };
        GrantBatch {
            requests: Vec::new(),
            run: run.boxed_local().shared(),
        }
    }

    /// The fence raise in flight, or a new one asking the witness for at
    /// least `target`. One raise at a time: a grant that needs one while
    /// another is in flight waits for it (and asks again after, if it was
    /// not enough). The flight records the acknowledged mark itself, only
    /// after the witness acknowledged it, and runs to its end even if no
    /// grant waits for it.
    fn raise(&self, ns: NsName, target: u128) -> Raise {
        if let Some(flight) = self.raising.borrow().as_ref() {
            if flight.peek().is_none() {
                return flight.clone();
            }
        }
        let env = self.env.clone();
        let storage = self.state.storage();
        let flight: Raise = async move {
            let sql = DoSql::from_storage(storage);
            raise_witness(&sql, &env, &ns, target, None).await?;
            Ok(target)
        }
        .boxed_local()
        .shared();
        *self.raising.borrow_mut() = Some(flight.clone());
        let (driver, slot) = (flight.clone(), Rc::clone(&self.raising));
        wasm_bindgen_futures::spawn_local(async move {
            // Logged here once, for waiting grants and background raises alike.
            if let Err(e) = driver.clone().await {
                worker::console_error!("{}", logline::fence_unreachable(ns.as_str(), &e));
            }
            let mut current = slot.borrow_mut();
            if current.as_ref().is_some_and(|f| f.ptr_eq(&driver)) {
                *current = None;
            }
        });
        flight
    }

    /// After a new grant: raise the fence ahead of need when it is near (in
    /// the background), and make sure an alarm pushes the summary to the
    /// registry within PUSH_EVERY_MS (and later prunes the grant).
    async fn after_grant(&self, granted_at: i64) {
        if self.raising.borrow().is_none() {
            if let (Ok(Some(target)), Ok(Some(row))) = (
                object::grant::refill_target(&self.sql, granted_at),
                object::load_any(&self.sql),
            ) {
                // Runs on its own; a grant that still finds the fence near
                // waits for it.
                drop(self.raise(*row.state.name(), target));
            }
        }
        // The registry's copy trails by at most PUSH_EVERY_MS: the alarm
        // pushes it (at once when the last push is that old), off the
        // grant's path, so a slow registry never delays a grant.
        self.alarm_no_later_than(self.pushed_at.get() + PUSH_EVERY_MS)
            .await;
    }

    /// Pushes the summary to the registry, so listings read it there. A
    /// failure only leaves the registry's copy older.
    async fn push_summary(&self, now: i64) {
        self.flush_refusals();
        let Ok(Some(row)) = object::load_any(&self.sql) else {
            return;
        };
        let Ok(summary) = object::summary_of(&self.sql, &row, now) else {
            return;
        };
        let Ok(text) = serde_json::to_string(&summary) else {
            return;
        };
        self.pushed_at.set(now);
        let put = RegistryRequest::Put {
            namespace: *row.state.name(),
            summary: text,
            at: now,
        };
        if let Err(e) = call_registry(&self.env, &put).await {
            worker::console_warn!("registry push: {}", e.body);
        }
    }

    /// Counts one refusal; storage and the registry learn of it with the
    /// next push, at most `PUSH_EVERY_MS` later.
    async fn count(&self, kind: Counted) {
        self.pending.borrow_mut().add(kind);
        self.alarm_no_later_than(self.pushed_at.get() + PUSH_EVERY_MS)
            .await;
    }

    /// Adds the refusals counted in memory to storage (a failure keeps them
    /// in memory for the next try).
    fn flush_refusals(&self) {
        let pending = *self.pending.borrow();
        if pending.is_empty() {
            return;
        }
        match self
            .sql
            .atomically(&mut || store::add_refusals(&self.sql, &pending))
        {
            Ok(()) => *self.pending.borrow_mut() = Refusals::default(),
            Err(e) => worker::console_warn!("storing refusal counts: {e}"),
        }
    }

    /// The next check-in, without reading storage.
    fn check_at(&self, now: i64) -> i64 {
        Clock {
            last_grant_at: None,
            ..self.clock_with(now, None)
        }
        .check_at()
    }

    /// What the alarm schedule needs to know at `now`.
    fn clock(&self, now: i64) -> Clock {
        let last_grant_at = object::load_any(&self.sql)
            .ok()
            .flatten()
            .and_then(|r| r.last_grant_at);
        self.clock_with(now, last_grant_at)
    }

    fn clock_with(&self, now: i64, last_grant_at: Option<i64>) -> Clock {
        Clock {
            now,
            pushed_at: self.pushed_at.get(),
            unpushed: !self.pending.borrow().is_empty(),
            last_grant_at,
            checked_at: self.gate.checked_at.get(),
            failed_at: self.gate.failed_at.get(),
            check_every_ms: self
                .check_every
                .clone()
                .unwrap_or(settings::DEFAULT_CHECK_SECS as i64 * 1000),
        }
    }

    async fn set_alarm_at(&self, at_ms: i64) -> worker::Result<()> {
        let date = js_sys::Date::new(&JsValue::from_f64(at_ms as f64));
        self.state
            .storage()
            .set_alarm(ScheduledTime::new(date))
            .await
    }

    /// Makes sure an alarm is due no later than `at` (ms): to prune, and
    /// to refresh the registry's summary. Reads the stored alarm once per
    /// instance, then keeps it in memory, so a grant costs no storage call
    /// unless it moves the alarm earlier. Failing here delays pruning or a
    /// listing's refresh only, so errors are logged, not returned.
    async fn alarm_no_later_than(&self, at: i64) {
        if !self.alarm_checked.get() {
            match self.state.storage().get_alarm().await {
                Ok(pending) => {
                    self.alarm_at.set(pending);
                    self.alarm_checked.set(true);
                }
                Err(e) => {
                    worker::console_warn!("get_alarm: {e}");
                    return;
                }
            }
        }
        if self.alarm_at.get().is_some_and(|t| t <= at) {
            return;
        }
        match self.set_alarm_at(at).await {
            Ok(()) => self.alarm_at.set(Some(at)),
            Err(e) => worker::console_warn!("set_alarm: {e}"),
        }
    }
}

/// The witness of one namespace's fence: one mark that only rises.
#[durable_object(fetch)]
pub struct Fence {
    sql: DoSql,
    schema: Result<(), StoreError>,
    /// How this witness misbehaves on purpose (test build only).
    #[cfg(feature = "test-switches")]
    switches: crate::test_switches::Witness,
    /// How many more raises this instance acknowledges (test build only).
    #[cfg(feature = "test-switches")]
    raises_left: Cell<Option<u64>>,
}

impl DurableObject for Fence {
    fn new(state: State, _env: Env) -> Self {
        let sql = DoSql::new(&state);
        let schema = store::migrate(&sql, store::FENCE_MIGRATIONS);
        #[cfg(feature = "test-switches")]
        let switches = crate::test_switches::Witness::from_env(|name| env_text(&_env, name));
        Self {
            sql,
            schema,
            #[cfg(feature = "test-switches")]
            switches,
            #[cfg(feature = "test-switches")]
            raises_left: Cell::new(switches.raises_left),
        }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        #[cfg(feature = "test-switches")]
        if self.switches.down {
            return Err(worker::Error::RustError(
                "witness down (test switch)".into(),
            ));
        }
        let reply = match (&self.schema, object_body(&mut req).await) {
            (Err(e), _) => ApiError::unavailable(format!("storage not ready: {e}")).reply(),
            (_, Err(reply)) => reply,
            (Ok(()), Ok(bytes)) => match serde_json::from_slice::<FenceRequest>(&bytes) {
                Err(e) => ApiError::unavailable(format!("bad fence request: {e}")).reply(),
                Ok(request) => {
                    #[cfg(feature = "test-switches")]
                    let request = match self.test_switched(request) {
                        Some(r) => r,
                        None => {
                            return Err(worker::Error::RustError(
                                "witness down after its raises (test switch)".into(),
                            ))
                        }
                    };
                    object::witness::handle(&self.sql, &request)
                }
            },
        };
        reply_or_unavailable(to_response(reply))
    }
}

#[cfg(feature = "test-switches")]
impl Fence {
    /// `request` as the test switches change it, or `None` when this
    /// witness has acknowledged all the raises it was allowed.
    fn test_switched(&self, mut request: FenceRequest) -> Option<FenceRequest> {
        if !matches!(request, FenceRequest::Raise { .. }) {
            return Some(request);
        }
        if self.switches.marks_all {
            request = FenceRequest::Raise {
                to: DecBound(1 << 64),
            };
        }
        match self.raises_left.get() {
            Some(0) => return None,
            Some(n) => self.raises_left.set(Some(n - 1)),
            None => {}
        }
        Some(request)
    }
}

/// The list of namespaces and their pushed summaries.
#[durable_object(fetch)]
pub struct Registry {
    sql: DoSql,
    schema: Result<(), StoreError>,
}

impl DurableObject for Registry {
    fn new(state: State, _env: Env) -> Self {
        let sql = DoSql::new(&state);
        let schema = store::migrate(&sql, store::REGISTRY_MIGRATIONS);
        Self { sql, schema }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let reply = match (&self.schema, object_body(&mut req).await) {
            (Err(e), _) => ApiError::unavailable(format!("storage not ready: {e}")).reply(),
            (_, Err(reply)) => reply,
            (Ok(()), Ok(bytes)) => match serde_json::from_slice::<RegistryRequest>(&bytes) {
                Err(e) => ApiError::unavailable(format!("bad registry request: {e}")).reply(),
                Ok(request) => object::registry::handle(&self.sql, &request, now_ms()),
            },
        };
        reply_or_unavailable(to_response(reply))
    }
}

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

async fn execute(plan: Plan, env: &Env) -> HttpReply {
    match plan {
        Plan::Reply(reply) => reply,
        Plan::Object { namespace, request } => call_namespace(env, &namespace, &request).await,
        Plan::Create { namespace, request } => {
            // The registry first: a listing never misses a namespace that
            // exists, and a retry of a creation whose object write failed
            // finds the name there and completes it.
            if let Err(failed) = call_registry(env, &RegistryRequest::Add { namespace }).await {
                return failed;
            }
            call_namespace(env, &namespace, &request).await
        }
        Plan::List { limit, after, only } => match listing(env, limit, after, only).await {
            Ok((texts, next_after)) => front::list_reply(&texts, next_after),
            Err(failed) => failed,
        },
        Plan::Metrics { only } => {
            let (mut all, mut after) = (Vec::new(), None);
            loop {
                match listing(env, api::MAX_LIMIT, after, only.clone()).await {
                    Ok((texts, next)) => {
                        all.extend(texts);
                        match next {
                            Some(n) => after = Some(n),
                            None => break,
                        }
                    }
                    Err(failed) => return failed,
                }
            }
            front::metrics_reply(&all)
        }
    }
}

/// One page of the namespace listing: each namespace's summary as its
/// object last pushed it to the registry (asking the object only when it
/// never pushed one), in name order, and the next page's `after`.
async fn listing(
    env: &Env,
    limit: u32,
    after: Option<NsName>,
    only: Option<Vec<NsName>>,
) -> Result<(Vec<String>, Option<NsName>), HttpReply> {
    let listed = call_registry(env, &RegistryRequest::List { limit, after, only }).await?;
    let page: RegistryPage = serde_json::from_str(&listed.body)
        .map_err(|e| ApiError::unavailable(format!("registry answer: {e}")).reply())?;
    let mut summaries = Vec::with_capacity(page.namespaces.len());
    let mut missing = Vec::new();
    for (i, l) in page.namespaces.iter().enumerate() {
        match &l.summary {
            Some(s) => summaries.push((i, s.clone())),
            None => missing.push((i, l.namespace)),
        }
    }
    for batch in missing.chunks(LIST_BATCH) {
        let replies = join_all(batch.iter().map(|(i, namespace)| async move {
            let request = ObjectRequest::Summary {
                namespace: *namespace,
            };
            (*i, call_namespace(env, namespace, &request).await)
        }))
        .await;
        for (i, r) in replies {
            match r.status {
                200 => summaries.push((i, r.body)),
                404 => {}
                _ => return Err(r),
            }
        }
    }
    summaries.sort_by_key(|(i, _)| *i);
    Ok((
        summaries.into_iter().map(|(_, s)| s).collect(),
        page.next_after,
    ))
}

/// Reads at most `MAX_BODY + 1` bytes of the body: `None` when it is longer
/// (declared or found so), without buffering the rest.
async fn capped_body(req: &mut Request) -> Result<Option<Vec<u8>>, HttpReply> {
    let declared: Option<usize> = req
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse().ok());
    if declared.is_some_and(|n| n > MAX_BODY) {
        return Ok(None);
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
        Some(plan) => plan,
        None => {
            let body = match capped_body(&mut req).await {
                Ok(b) => b,
                Err(reply) => return reply,
            };
            front::plan(
                &Incoming {
                    body: body.as_deref(),
                    ..head
                },
                &config,
                now,
            )
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
    let mut reply = execute(plan, env).await;
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

/// The benchmark variant the environment names (test build only).
#[cfg(feature = "test-switches")]
fn bench_variant(env: &Env) -> Option<crate::test_switches::Bench> {
    crate::test_switches::Bench::parse(env_text(env, crate::test_switches::BENCH).as_deref())
}

/// A batch of grants as a benchmark variant runs it (test build only):
/// rolled back instead of committed, or with the minute bucket written
/// more times.
#[cfg(feature = "test-switches")]
fn bench_batch(
    bench: crate::test_switches::Bench,
    sql: &DoSql,
    requests: &[ObjectRequest],
    waiting: u64,
) -> Vec<Step> {
    use crate::test_switches::{Bench, REPEATS};
    let run = || {
        requests
            .iter()
            .map(|request| {
                let step = object::handle(sql, request, waiting, now_ms());
                if bench == Bench::Metrics {
                    let minute = now_ms().div_euclid(crate::summary::MINUTE_MS);
                    for _ in 0..REPEATS {
                        let _ = store::add_to_minute(sql, minute, 0);
                    }
                }
                step
            })
            .collect::<Vec<_>>()
    };
    if bench != Bench::NoCommit {
        return run();
    }
    let mut steps = Vec::new();
    let _ = sql.atomically(&mut || {
        steps = run();
        Err(StoreError("rolled back (benchmark)".into()))
    });
    steps
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
    use crate::test_switches::{Bench, REPEATS};
    use std::hint::black_box;
    let Plan::Object {
        request: request @ ObjectRequest::Grant { .. },
        ..
    } = &plan
    else {
        return Ok(plan);
    };
    match bench_variant(env) {
        Some(Bench::NoCall) => return Err(HttpReply::json(200, &serde_json::json!({}))),
        Some(Bench::Token) => {
            if let (Ok(keys), Ok(token)) = (&config.keys, crate::token::bearer(authorization)) {
                for _ in 0..REPEATS {
                    let _ = black_box(crate::token::verify(
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
