//! The relay object's driver (wasm32 only): one relay per (namespace,
//! region), in memory only ([`crate::object::relay`] decides everything).
//! It reads the clock and 16 random bytes from the runtime's
//! `crypto.getRandomValues` (a new incarnation at each start of the object,
//! and at each revocation), sends the relay's attempts to the namespace
//! object, answers the generators' requests the front Worker routes here
//! when the relay says, and sleeps on a timer (never an alarm, which would
//! write to storage) until the relay's next deadline. It writes nothing:
//! an evicted or restarted relay starts empty, under a new incarnation.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use worker::{durable_object, wasm_bindgen_futures, DurableObject, Env, Request, Response, State};

use crate::object::relay::{RelayRequest, RelayRun, Revoked, Step};
use crate::shared::logline;
use crate::shared::response::{ApiError, HttpReply};
use crate::shared::runtime::{
    call, env_text, now_ms, object_body, reply_or_unavailable, to_response, NAMESPACE_BINDING,
};
use crate::shared::settings;

/// One generator's answer, once the relay gives it.
#[derive(Default)]
struct Slot {
    reply: Option<HttpReply>,
    waker: Option<Waker>,
}

/// Waits for a [`Slot`] to be filled.
struct Answered(Rc<RefCell<Slot>>);

impl Future for Answered {
    type Output = HttpReply;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<HttpReply> {
        let mut slot = self.0.borrow_mut();
        match slot.reply.take() {
            Some(reply) => Poll::Ready(reply),
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// What the relay's tasks share: the run, the generators waiting, the
/// timer.
struct Inner {
    env: Env,
    run: RefCell<Option<RelayRun>>,
    waiting: RefCell<HashMap<u64, Rc<RefCell<Slot>>>>,
    next_handle: Cell<u64>,
    // The earliest timer set and not yet fired.
    timer_at: Cell<Option<i64>>,
}

/// A relay: see the module documentation.
#[durable_object(fetch)]
pub struct Relay {
    inner: Rc<Inner>,
    lease: Result<u64, String>,
    #[cfg(feature = "test-switches")]
    fault: Option<crate::shared::test_switches::RelayFault>,
}

fn random16() -> Result<[u8; 16], String> {
    let mut bytes = [0u8; 16];
    getrandom::getrandom(&mut bytes).map_err(|e| format!("no random bytes: {e}"))?;
    Ok(bytes)
}

/// Does everything the run says now, then sets the timer for its next
/// deadline.
fn pump(inner: &Rc<Inner>) {
    let steps = match inner.run.borrow_mut().as_mut() {
        Some(run) => run.poll(now_ms()),
        None => return,
    };
    for step in steps {
        match step {
            Step::Send { ticket, request } => {
                let task = Rc::clone(inner);
                wasm_bindgen_futures::spawn_local(async move {
                    let ns = *request.namespace();
                    let answer = match serde_json::to_string(&request) {
                        Ok(payload) => call(&task.env, NAMESPACE_BINDING, ns.as_str(), payload)
                            .await
                            .map_err(|e| {
                                let source = format!("relay's namespace object {ns}");
                                worker::console_warn!("{}", logline::unavailable(&source, &e));
                            })
                            .ok(),
                        Err(_) => None,
                    };
                    if let Some(run) = task.run.borrow_mut().as_mut() {
                        run.root_reply(ticket, answer.as_ref(), now_ms());
                    }
                    pump(&task);
                });
            }
            Step::Answer { handle, reply } => {
                if let Some(slot) = inner.waiting.borrow_mut().remove(&handle) {
                    let mut slot = slot.borrow_mut();
                    slot.reply = Some(reply);
                    if let Some(w) = slot.waker.take() {
                        w.wake();
                    }
                }
            }
            // Off the grant path: a batch not answered 200 goes back.
            Step::Report { batch, request } => {
                let task = Rc::clone(inner);
                wasm_bindgen_futures::spawn_local(async move {
                    let ns = *request.namespace();
                    let delivered = match serde_json::to_string(&request) {
                        Ok(payload) => {
                            match call(&task.env, NAMESPACE_BINDING, ns.as_str(), payload).await {
                                Ok(reply) => reply.status == 200,
                                Err(e) => {
                                    let source = format!("relay's reports to {ns}");
                                    worker::console_warn!("{}", logline::unavailable(&source, &e));
                                    false
                                }
                            }
                        }
                        Err(_) => false,
                    };
                    if !delivered {
                        if let Some(run) = task.run.borrow_mut().as_mut() {
                            run.report_failed(batch, now_ms());
                        }
                    }
                    pump(&task);
                });
            }
        }
    }
    schedule(inner);
}

/// A timer for the run's next deadline, unless one fires by then.
fn schedule(inner: &Rc<Inner>) {
    let Some(at) = inner
        .run
        .borrow()
        .as_ref()
        .and_then(RelayRun::next_deadline)
    else {
        return;
    };
    if inner.timer_at.get().is_some_and(|t| t <= at) {
        return;
    }
    inner.timer_at.set(Some(at));
    let task = Rc::clone(inner);
    wasm_bindgen_futures::spawn_local(async move {
        // At least 1 ms: a deadline already past never spins the timer.
        let ms = at.saturating_sub(now_ms()).max(1) as u64;
        worker::Delay::from(std::time::Duration::from_millis(ms)).await;
        if task.timer_at.get() == Some(at) {
            task.timer_at.set(None);
        }
        pump(&task);
    });
}

impl DurableObject for Relay {
    fn new(_state: State, env: Env) -> Self {
        let lease = settings::relay_lease_ms(env_text(&env, "RANGEID_RELAY_LEASE_MS").as_deref());
        #[cfg(feature = "test-switches")]
        let fault = crate::shared::test_switches::RelayFault::parse(
            env_text(&env, crate::shared::test_switches::RELAY_FAULT).as_deref(),
        );
        Self {
            inner: Rc::new(Inner {
                env,
                run: RefCell::new(None),
                waiting: RefCell::new(HashMap::new()),
                next_handle: Cell::new(0),
                timer_at: Cell::new(None),
            }),
            lease,
            #[cfg(feature = "test-switches")]
            fault,
        }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let reply = match object_body(&mut req).await {
            Err(reply) => reply,
            Ok(bytes) => match serde_json::from_slice::<RelayRequest>(&bytes) {
                Err(e) => ApiError::unavailable(format!("bad relay request: {e}")).reply(),
                Ok(request) => {
                    #[cfg(feature = "test-switches")]
                    {
                        use crate::shared::test_switches::RelayFault;
                        let revoke = matches!(request, RelayRequest::Revoke { .. });
                        match self.fault {
                            Some(RelayFault::Down) => {
                                return Err(worker::Error::RustError(
                                    "test switch: relay down".into(),
                                ))
                            }
                            Some(RelayFault::Deaf) if revoke => {
                                return Err(worker::Error::RustError(
                                    "test switch: relay deaf".into(),
                                ))
                            }
                            _ => {}
                        }
                    }
                    self.serve(request).await
                }
            },
        };
        reply_or_unavailable(to_response(reply))
    }
}

impl Relay {
    async fn serve(&self, request: RelayRequest) -> HttpReply {
        let inner = &self.inner;
        match request {
            RelayRequest::Grant {
                request,
                owner,
                region,
            } => {
                let random = match random16() {
                    Ok(r) => r,
                    Err(e) => return ApiError::unavailable(e).reply(),
                };
                if inner.run.borrow().is_none() {
                    let lease = match &self.lease {
                        Ok(ms) => *ms,
                        Err(e) => {
                            return ApiError::unavailable(format!("authority misconfigured: {e}"))
                                .reply()
                        }
                    };
                    // This instance's first incarnation: fresh random bits.
                    match RelayRun::new(request.namespace, region, lease, random, now_ms()) {
                        Ok(run) => *inner.run.borrow_mut() = Some(run),
                        Err(e) => return ApiError::unavailable(e).reply(),
                    }
                }
                let handle = inner.next_handle.get();
                inner.next_handle.set(handle + 1);
                let slot = Rc::new(RefCell::new(Slot::default()));
                inner.waiting.borrow_mut().insert(handle, Rc::clone(&slot));
                let revive = match random16() {
                    Ok(r) => r,
                    Err(e) => return ApiError::unavailable(e).reply(),
                };
                if let Some(run) = inner.run.borrow_mut().as_mut() {
                    run.request(handle, &owner, request, revive, now_ms());
                }
                pump(inner);
                Answered(slot).await
            }
            RelayRequest::Revoke { incarnations, .. } => {
                let random = match random16() {
                    Ok(r) => r,
                    Err(e) => return ApiError::unavailable(e).reply(),
                };
                let revoked = match inner.run.borrow_mut().as_mut() {
                    Some(run) => run.revoke(&incarnations, random, now_ms()),
                    // Nothing runs here: no incarnation to close.
                    None => Revoked { closed: None },
                };
                pump(inner);
                HttpReply::json(200, &revoked)
            }
        }
    }
}
