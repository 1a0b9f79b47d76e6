//! The namespace object's driver (wasm32 only): the start gate, the
//! serving loop ([`Serving`] decides, this file does the I/O: raising or
//! reading the witness, pushing the summary to the registry), the one fence
//! raise in flight shared by waiting grants, the batch of grants that
//! share one commit ([`Serving::joins_batch`] decides which), refusal
//! counts kept in memory until the next push, and the alarm ([`schedule`]
//! decides when).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures_util::future::{FutureExt, LocalBoxFuture, Shared};
use rangeid_core::fence::{Phase, Witnessed};
use rangeid_core::wire::DecBound;
use rangeid_core::Namespace as NsName;
use wasm_bindgen::JsValue;
use worker::{
    durable_object, js_sys, wasm_bindgen_futures, DurableObject, Env, Request, Response,
    ScheduledTime, State, Storage,
};

use crate::object::raise::{Flight, RaiseAction, Raising};
use crate::object::registry::RegistryRequest;
use crate::object::relay::{self, RelayRequest, Revoked};
use crate::object::relays::{self, RelayDesk};
use crate::object::schedule::{self, AlarmSlot, Clock};
use crate::object::serve::{self, Action, Finished, RaiseFor, Serving};
use crate::object::store::{self, Sql, StoreError};
use crate::object::witness::{FenceMark, FenceRequest};
use crate::object::{self, ObjectRequest};
use crate::shared::logline;
use crate::shared::refusals::{Counted, Refusals};
use crate::shared::response::{ApiError, HttpReply};
use crate::shared::runtime::{
    call, env_text, now_ms, object_body, reply_or_unavailable, retention_ms, to_response, DoSql,
    FENCE_BINDING, REGISTRY_BINDING, REGISTRY_NAME, RELAY_BINDING,
};
use crate::shared::settings;
use rangeid_core::relay::AdminAct;

/// How soon a relay object that could not be reached is asked again to
/// close its incarnation, while an act waits for it.
const REVOKE_RETRY_MS: u64 = 250;

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

/// Raises the witness of `ns` to at least `target`, as
/// [`object::raise::Raising`] decides (the mark asked for recorded first,
/// an answer below the fence raised back, at most `FENCE_TRIES` times).
/// `was`, when given, is what the witness said it held just before. `None`
/// when the namespace does not exist.
async fn raise_witness(
    sql: &DoSql,
    env: &Env,
    ns: &NsName,
    target: u128,
    was: Option<u128>,
) -> Result<Option<object::grant::Heard>, String> {
    let mut raising = Raising::new(target, was);
    loop {
        match raising.poll(sql)? {
            RaiseAction::Ask { to } => {
                let request = FenceRequest::Raise { to: DecBound(to) };
                let answer = ask_witness(env, ns, &request).await?;
                if let Some(heard) = raising.handle_answer(sql, answer, now_ms())? {
                    log_heard(ns, &heard);
                }
            }
            RaiseAction::Done(heard) => return Ok(heard),
            RaiseAction::GaveUp => {
                return Err("the witness stayed below this object's fence".to_owned())
            }
        }
    }
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

/// The grants gathered for one shared commit, and the run that polls them
/// all back to back; each grant takes its own back by its index.
struct GrantBatch {
    servings: Vec<Serving>,
    run: Shared<LocalBoxFuture<'static, BatchDone>>,
}

/// A batch's run, done: each grant and the action its poll gave, taken back
/// by the grant at its index.
type BatchDone = Rc<RefCell<Vec<Option<(Serving, Action)>>>>;

/// One namespace: its state, grant ledger and audit log.
#[durable_object(alarm)]
pub struct Namespace {
    state: State,
    env: Env,
    sql: DoSql,
    schema: Result<(), StoreError>,
    retention: Result<i64, String>,
    // The stored alarm, as this instance knows it.
    alarm: Cell<AlarmSlot>,
    // Whether this instance heard from its witness (and applied what it
    // said) since it started; no grant or floor before that.
    gate: Rc<Gate>,
    // How often it checks in (ms), from RANGEID_CHECK_SECONDS.
    check_every: Result<i64, String>,
    raising: Rc<RefCell<Option<Raise>>>,
    // What the raise in flight aims at and has reached.
    flight: Rc<Cell<Flight>>,
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
    // Core's RelayGate for this run (made at the start, never stored),
    // with the lease from RANGEID_RELAY_LEASE_MS.
    relays: Result<RefCell<RelayDesk>, String>,
    /// `RANGEID_RELAY_LEASE_MS`, checked.
    relay_lease: Result<u64, String>,
    // The benchmark variant this object runs (test build only).
    #[cfg(feature = "test-switches")]
    bench: Option<Bench>,
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
        // A bad lease setting is a misconfiguration (every request says so);
        // a failed read of the widest lease asked, the relay gate's own
        // failure (its requests say that, `serve`).
        let relay_lease =
            settings::relay_lease_ms(env_text(&env, "RANGEID_RELAY_LEASE_MS").as_deref());
        let relays = match &relay_lease {
            Ok(ms) => RelayDesk::at_start(&sql, *ms, now_ms()).map(RefCell::new),
            Err(e) => Err(e.clone()),
        };
        let gate = Rc::new(Gate::default());
        #[cfg(feature = "test-switches")]
        let bench = Bench::parse(env_text(&env, crate::shared::test_switches::BENCH).as_deref());
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
            alarm: Cell::new(AlarmSlot::default()),
            gate,
            raising: Rc::new(RefCell::new(None)),
            flight: Rc::new(Cell::new(Flight::default())),
            batch: Rc::new(RefCell::new(None)),
            waiting: Rc::new(Cell::new(0)),
            pushed_at: Cell::new(0),
            pending: RefCell::new(Refusals::default()),
            throttle_logged_at: Cell::new(i64::MIN),
            relays,
            relay_lease,
            #[cfg(feature = "test-switches")]
            bench,
        }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let settings = self
            .retention
            .as_ref()
            .and(self.check_every.as_ref())
            .and(self.relay_lease.as_ref().map(|_| &0));
        let reply = match (&self.schema, settings, object_body(&mut req).await) {
            (Err(e), _, _) => ApiError::unavailable(format!("storage not ready: {e}")).reply(),
            (_, Err(e), _) => {
                ApiError::unavailable(format!("authority misconfigured: {e}")).reply()
            }
            (_, _, Err(reply)) => reply,
            (Ok(()), Ok(_), Ok(bytes)) => match serde_json::from_slice::<ObjectRequest>(&bytes) {
                Err(e) => ApiError::unavailable(format!("bad object request: {e}")).reply(),
                #[cfg(feature = "test-switches")]
                Ok(ObjectRequest::Grant { .. }) if self.bench == Some(Bench::NoStorage) => {
                    HttpReply::json(200, &serde_json::json!({}))
                }
                Ok(request) => {
                    let mut reply = self.serve(&request).await;
                    // A generator's grant: the front Worker routes the
                    // namespace's next ones by whether relays are on.
                    if let Some(on) = relays::route_hint(&self.sql, &request) {
                        reply.set_header(relays::RELAYS_HEADER, on);
                    }
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
        self.update_alarm(AlarmSlot::handle_fired);
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
                    .next_alarm(prune_at, self.alarm.get().asked());
                self.set_alarm_at(at).await?;
                self.update_alarm(|slot| slot.handle_set(at));
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
        let relays = match &self.relays {
            Ok(relays) => relays,
            Err(e) => {
                return ApiError::unavailable(format!("the relay gate cannot start: {e}")).reply()
            }
        };
        // A relay's range request while relays are off: refused before
        // anything else (RelayDesk::screen).
        if let Err(e) = relays.borrow().screen(&self.sql, request, now_ms()) {
            return e.reply();
        }
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
                return self
                    .finish(request, Finished::witness_unreached(request))
                    .await;
            }
        }
        if request.shows_refusals() {
            self.flush_refusals();
        }
        let mut serving = Serving::new(request);
        let done = loop {
            // The storage logic runs synchronously inside `poll` (one
            // coalesced write, no await), for a grant inside its batch's
            // run; the driver only does the I/O.
            let action = if self.batches(&serving) {
                match self.in_batch(serving).await {
                    Some((back, action)) => {
                        serving = back;
                        action
                    }
                    None => {
                        let lost = ApiError::unavailable("a grant went missing from its batch");
                        return lost.reply();
                    }
                }
            } else {
                serving.poll(&self.sql, self.waiting.get(), now_ms())
            };
            match action {
                Action::Finish(done) => break done,
                Action::PushSummary => self.push_summary(now_ms()).await,
                Action::ReadWitness => {
                    let got = ask_witness(&self.env, request.namespace(), &FenceRequest::Get).await;
                    serving.handle_read(&self.sql, got, now_ms());
                }
                Action::Raise { target, purpose } => {
                    let ns = request.namespace();
                    let raised = match purpose {
                        RaiseFor::Fence { count } => {
                            // The next raise covers the grants waiting too.
                            self.waiting.set(self.waiting.get().saturating_add(count));
                            let raised = self.raise(*ns, target).await;
                            self.waiting.set(self.waiting.get().saturating_sub(count));
                            raised.map(|_| true)
                        }
                        RaiseFor::Floor | RaiseFor::Relays | RaiseFor::Retire => {
                            raise_witness(&self.sql, &self.env, ns, target, None)
                                .await
                                .map(|heard| heard.is_some())
                        }
                    };
                    serving.handle_raised(raised);
                }
            }
        };
        // In the same step as the decision (no await since `poll`): a grant
        // to a relay is recorded; an act that must reach relays is waited.
        let act = relays.borrow_mut().answered(
            &self.sql,
            request,
            done.reply.status,
            now_ms(),
            self.gate.started.get(),
        );
        if let Some(act) = act {
            self.wait_out(relays, request.namespace(), act).await;
        }
        self.finish(request, done).await
    }

    /// Waits until no relay can serve a range granted before `act` (a
    /// freeze, floor, export or relays off that committed): revokes the
    /// relay objects the desk names (each answers the incarnation it
    /// closed), and sleeps as long as the desk says, until it says
    /// acknowledge. A relay object that cannot be reached, or does not
    /// answer before the wait ends, is asked again after
    /// [`REVOKE_RETRY_MS`]; one that closed none of those named is
    /// not asked again, and its lease is waited out (slower, never unsafe).
    async fn wait_out(&self, relays: &RefCell<RelayDesk>, ns: &NsName, mut act: AdminAct) {
        let mut asked = std::collections::BTreeSet::new();
        loop {
            let wait = relays.borrow_mut().wait_ms(&mut act, now_ms());
            let Some(ms) = wait else { return };
            let targets = relays.borrow_mut().to_revoke(&act, &asked, now_ms());
            let calls = targets.into_iter().map(|(region, incarnations)| {
                let name = relay::object_name(ns, &region);
                let message = RelayRequest::Revoke {
                    namespace: *ns,
                    region,
                    incarnations: incarnations.clone(),
                };
                let asking = async move {
                    let payload = serde_json::to_string(&message).ok()?;
                    let reply = call(&self.env, RELAY_BINDING, &name, payload).await.ok()?;
                    let revoked: Revoked = serde_json::from_str(&reply.body).ok()?;
                    (reply.status == 200).then_some((incarnations, revoked))
                };
                // A call that hangs is given up when the act's wait ends
                // (the leases it waits for run out then anyway): unreached.
                let deadline = worker::Delay::from(std::time::Duration::from_millis(ms.max(1)));
                async move {
                    match futures_util::future::select(Box::pin(asking), deadline).await {
                        futures_util::future::Either::Left((answer, _)) => answer,
                        futures_util::future::Either::Right(_) => None,
                    }
                }
            });
            let answers = futures_util::future::join_all(calls).await;
            let mut unreached = false;
            for answer in answers {
                match answer {
                    Some((named, revoked)) => {
                        if let Some(closed) = revoked.closed {
                            relays.borrow_mut().revoked(closed, now_ms());
                        }
                        asked.extend(named);
                    }
                    None => unreached = true,
                }
            }
            if relays.borrow_mut().wait_ms(&mut act, now_ms()).is_none() {
                return;
            }
            let sleep = if unreached {
                ms.min(REVOKE_RETRY_MS)
            } else {
                ms
            };
            worker::Delay::from(std::time::Duration::from_millis(sleep)).await;
        }
    }

    /// Does what a served request leaves to the driver: logs and counts a
    /// refusal, keeps the fence ahead of need and the alarm set after a
    /// grant, pushes an admin change to the registry.
    async fn finish(&self, request: &ObjectRequest, done: Finished) -> HttpReply {
        if let Some(line) = &done.log_error {
            worker::console_error!("{line}");
        }
        if let Some(kind) = done.counted {
            if let (true, ObjectRequest::Grant { request, owner, .. }) =
                (done.refused_grant, request)
            {
                let now = now_ms();
                if logline::refusal_logged(kind, self.throttle_logged_at.get(), now) {
                    if matches!(kind, Counted::RateLimited | Counted::LedgerFull) {
                        self.throttle_logged_at.set(now);
                    }
                    worker::console_log!("{}", logline::grant_refused(request, owner, kind));
                }
            }
            self.count(kind).await;
        }
        #[cfg(feature = "test-switches")]
        let done = match self.bench {
            Some(Bench::NoAfter) => Finished {
                granted: None,
                ..done
            },
            _ => done,
        };
        if let Some(granted) = done.granted {
            self.after_grant(*request.namespace(), granted).await;
        } else if done.push_summary {
            // An admin change: the registry shows it at once.
            self.push_summary(now_ms()).await;
        }
        done.reply
    }

    /// Whether `serving`'s next poll waits for the batch (the benchmark's
    /// unbatched variant polls every grant alone).
    fn batches(&self, serving: &Serving) -> bool {
        #[cfg(feature = "test-switches")]
        if self.bench == Some(Bench::Unbatched) {
            return false;
        }
        serving.joins_batch()
    }

    /// Hands `serving` to the batch gathered since the last run and waits
    /// for that run: it starts once the runtime has delivered the requests
    /// already on their way (a zero timer fires after the event loop's
    /// pending events) and polls every grant in it back to back with no
    /// `await`, so their writes share one SQLite commit and the output
    /// gate holds each of their replies until that commit is durable.
    /// `None` if the run lost it (it does not).
    async fn in_batch(&self, serving: Serving) -> Option<(Serving, Action)> {
        let (run, index) = {
            let mut slot = self.batch.borrow_mut();
            let batch = slot.get_or_insert_with(|| self.grant_batch());
            batch.servings.push(serving);
            (batch.run.clone(), batch.servings.len() - 1)
        };
        let done = run.await;
        let mut done = done.borrow_mut();
        done.get_mut(index).and_then(Option::take)
    }

    /// A new, empty batch of grants and its run.
    fn grant_batch(&self) -> GrantBatch {
        let (storage, slot) = (self.state.storage(), Rc::clone(&self.batch));
        let (gate, waiting) = (Rc::clone(&self.gate), Rc::clone(&self.waiting));
        #[cfg(feature = "test-switches")]
        let bench = self.bench;
        let run = async move {
            worker::Delay::from(std::time::Duration::ZERO).await;
            let servings = slot.borrow_mut().take().map(|b| b.servings);
            let mut servings = servings.unwrap_or_default();
            let sql = DoSql::from_storage(storage);
            // --- synchronous: the whole batch, one commit, no await ---
            let mut poll_all = || {
                let (started, now) = (gate.started.get(), now_ms());
                let actions = serve::poll_batch(&mut servings, &sql, waiting.get(), now, started);
                #[cfg(feature = "test-switches")]
                bench_after_poll(bench, &sql, actions.len());
                actions
            };
            #[cfg(feature = "test-switches")]
            let actions = bench_batch(bench, &sql, &mut poll_all);
            #[cfg(not(feature = "test-switches"))]
            let actions = poll_all();
            // --- end of the batch ---
            let done = servings.into_iter().zip(actions).map(Some).collect();
            Rc::new(RefCell::new(done))
        };
        GrantBatch {
            servings: Vec::new(),
            run: run.boxed_local().shared(),
        }
    }

    /// The fence raise in flight, or a new one asking the witness for at
    /// least `target`. One flight at a time: a grant that needs a raise
    /// while one flies joins it, and the flight goes on to the highest
    /// mark joined before it lands ([`Flight`] decides, at most
    /// `FLIGHT_RAISES` raises; a grant it still does not cover asks again
    /// after). The flight records each acknowledged mark itself, only after
    /// the witness acknowledged it, and runs to its end even if no grant
    /// waits for it.
    fn raise(&self, ns: NsName, target: u128) -> Raise {
        if let Some(flight) = self.raising.borrow().as_ref() {
            if flight.peek().is_none() {
                self.update_flight(|f| f.join(target));
                return flight.clone();
            }
        }
        self.flight.set(Flight::new(target));
        let env = self.env.clone();
        let storage = self.state.storage();
        let aim = Rc::clone(&self.flight);
        let flight: Raise = async move {
            let sql = DoSql::from_storage(storage);
            loop {
                let mut f = aim.get();
                let next = f.next_raise();
                aim.set(f);
                let Some(mark) = next else {
                    return Ok(f.reached());
                };
                if let Err(e) = raise_witness(&sql, &env, &ns, mark, None).await {
                    // Grants a mark already acknowledged covers are not
                    // failed by a later raise of the same flight.
                    let Some(reached) = aim.get().after_failure() else {
                        return Err(e);
                    };
                    worker::console_error!("{}", logline::fence_unreachable(ns.as_str(), &e));
                    return Ok(reached);
                }
                let mut f = aim.get();
                f.handle_reached(mark);
                aim.set(f);
            }
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
    /// registry within `schedule::PUSH_EVERY_MS` (and later prunes the grant).
    async fn after_grant(&self, ns: NsName, granted: object::Granted) {
        let idle = self.raising.borrow().is_none();
        if let (true, Some(target)) = (idle, granted.refill) {
            // Runs on its own; a grant that still finds the fence near
            // waits for it.
            drop(self.raise(ns, target));
        }
        // The registry's copy trails by at most `schedule::PUSH_EVERY_MS`: the alarm
        // pushes it (at once when the last push is that old), off the
        // grant's path, so a slow registry never delays a grant.
        self.alarm_no_later_than(schedule::push_due_by(self.pushed_at.get()))
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
        let Ok(payload) = serde_json::to_string(&put) else {
            return;
        };
        match call(&self.env, REGISTRY_BINDING, REGISTRY_NAME, payload).await {
            Ok(reply) if reply.status == 200 => {}
            Ok(reply) => worker::console_warn!("registry push: {} {}", reply.status, reply.body),
            Err(e) => worker::console_warn!("registry push: {e}"),
        }
    }

    /// Counts one refusal; storage and the registry learn of it with the
    /// next push, at most `schedule::PUSH_EVERY_MS` later.
    async fn count(&self, kind: Counted) {
        self.pending.borrow_mut().add(kind);
        self.alarm_no_later_than(schedule::push_due_by(self.pushed_at.get()))
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

    /// Changes what the raise in flight aims at.
    fn update_flight(&self, change: impl FnOnce(&mut Flight)) {
        let mut f = self.flight.get();
        change(&mut f);
        self.flight.set(f);
    }

    /// Makes sure an alarm is due no later than `at` (ms): to prune, and
    /// to refresh the registry's summary. Reads the stored alarm once per
    /// instance, then keeps it in memory, so a grant costs no storage call
    /// unless it moves the alarm earlier. Failing here delays pruning or a
    /// listing's refresh only, so errors are logged, not returned.
    async fn alarm_no_later_than(&self, at: i64) {
        if self.alarm.get().needs_read() {
            match self.state.storage().get_alarm().await {
                Ok(stored) => self.update_alarm(|slot| slot.handle_read(stored)),
                Err(e) => {
                    worker::console_warn!("get_alarm: {e}");
                    return;
                }
            }
        }
        let Some(at) = self.alarm.get().to_set(at) else {
            return;
        };
        match self.set_alarm_at(at).await {
            Ok(()) => self.update_alarm(|slot| slot.handle_set(at)),
            Err(e) => worker::console_warn!("set_alarm: {e}"),
        }
    }

    fn update_alarm(&self, change: impl FnOnce(&mut AlarmSlot)) {
        let mut slot = self.alarm.get();
        change(&mut slot);
        self.alarm.set(slot);
    }
}

#[cfg(feature = "test-switches")]
use crate::shared::test_switches::Bench;

/// After a batch of `grants` (test build only): the minute bucket written
/// [`crate::shared::test_switches::REPEATS`] more times per grant.
#[cfg(feature = "test-switches")]
fn bench_after_poll(bench: Option<Bench>, sql: &DoSql, grants: usize) {
    if bench == Some(Bench::Metrics) {
        let minute = now_ms().div_euclid(crate::shared::summary::MINUTE_MS);
        for _ in 0..crate::shared::test_switches::REPEATS * grants {
            let _ = store::add_to_minute(sql, minute, 0);
        }
    }
}

/// A batch's run as a benchmark variant does it (test build only): rolled
/// back instead of committed for [`Bench::NoCommit`].
#[cfg(feature = "test-switches")]
fn bench_batch(
    bench: Option<Bench>,
    sql: &DoSql,
    poll_all: &mut dyn FnMut() -> Vec<Action>,
) -> Vec<Action> {
    if bench != Some(Bench::NoCommit) {
        return poll_all();
    }
    let mut actions = Vec::new();
    let _ = sql.atomically(&mut || {
        actions = poll_all();
        Err(StoreError("rolled back (benchmark)".into()))
    });
    actions
}
