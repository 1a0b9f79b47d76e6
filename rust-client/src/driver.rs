//! The driver: carries out what core's `Lease` asks (sends, cancels,
//! timers), hands it every outcome, keeps the shelf filled and serves the
//! callers who wait. It decides nothing: sizing, retries, install-once and
//! what an answer means are the engine's.
//!
//! Everything here runs under one lock (`Shared::state`), held only for
//! engine calls and bookkeeping, never across I/O. The background task
//! ([`drive`]) wakes on a notification (a reader found a block used up, an
//! answer came, a caller started waiting) or at the engine's next deadline
//! or a waiter's.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use arc_swap::ArcSwap;
use rangeid_core::lease::{IssueError, Phase as LeasePhase};
use rangeid_core::reply::Reply;
use rangeid_core::{Action, Instant, Lease, Outgoing, Range, Ticket};
use reqwest::header::{CONTENT_TYPE, RETRY_AFTER};
use reqwest::Url;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use crate::options::Token;
use crate::shelf::{Shelf, BLOCK};
use crate::Error;

/// The most bytes of an answer read: a grant or an error is far smaller;
/// a proxy's page is cut (its excerpt needs 160 bytes).
const MAX_BODY: usize = 64 * 1024;

/// What a waiting caller wants.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Want {
    /// One ID.
    One,
    /// Exactly this many.
    Batch(u64),
    /// The first range installed, none taken (the start's warm-up).
    Warm,
}

/// What a waiting caller gets.
#[derive(Debug)]
pub(crate) enum Got {
    One(u64),
    Batch(Taken),
    Warm,
}

/// A batch taken under the lock, as ranges (a few): the caller makes the
/// IDs of it ([`Taken::ids`]) after the lock is dropped, so the lock is
/// never held for work that grows with the batch.
#[derive(Debug)]
pub(crate) struct Taken(Vec<Range>);

impl Taken {
    /// How many IDs it holds.
    pub fn count(&self) -> u64 {
        self.0.iter().map(Range::count).sum()
    }

    /// The batch's IDs, in order.
    pub fn ids(&self) -> Vec<u64> {
        let mut out = Vec::with_capacity(usize::try_from(self.count()).unwrap_or(0));
        for r in &self.0 {
            out.extend(r.start()..=r.last());
        }
        out
    }
}

/// The answer a waiting caller reads. Dropped unread (the caller's future
/// was dropped), it closes the channel first, so the driver's later sends
/// fail (and it counts what they held as lost), then counts as lost what
/// was sent before.
pub(crate) struct Pending<'a> {
    /// `None` once given to `blocking_recv`.
    rx: Option<oneshot::Receiver<Result<Got, Error>>>,
    shared: &'a Shared,
}

impl Future for Pending<'_> {
    type Output = Result<Result<Got, Error>, oneshot::error::RecvError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.rx.as_mut() {
            Some(rx) => Pin::new(rx).poll(cx),
            None => Poll::Ready(Ok(Err(Error::closed()))),
        }
    }
}

impl Pending<'_> {
    /// Blocks the calling thread (not a runtime's worker) for the answer.
    /// (A thread that blocks cannot stop waiting: nothing is lost.)
    pub fn blocking_recv(mut self) -> Result<Result<Got, Error>, oneshot::error::RecvError> {
        match self.rx.take() {
            Some(rx) => rx.blocking_recv(),
            None => Ok(Err(Error::closed())),
        }
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if let Some(rx) = self.rx.as_mut() {
            rx.close();
            if let Ok(Ok(got)) = rx.try_recv() {
                self.shared.lose(&got);
            }
        }
    }
}

struct Waiter {
    want: Want,
    deadline: std::time::Instant,
    tx: oneshot::Sender<Result<Got, Error>>,
}

impl Waiter {
    fn need(&self) -> u64 {
        match self.want {
            Want::One => 1,
            Want::Batch(n) => n,
            Want::Warm => 0,
        }
    }
}

/// The engine and the driver's books, under the lock.
pub(crate) struct State {
    pub lease: Lease,
    waiters: VecDeque<Waiter>,
    attempts: HashMap<(u64, u32), AbortHandle>,
    /// Why the last attempt without an answer got none.
    last_cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
    pub closed: bool,
}

/// What the generator's handles and its background task share.
pub(crate) struct Shared {
    pub shelf: Shelf,
    state: Mutex<State>,
    /// The error a caller who finds no ID gets now, kept without a lock.
    why_empty: ArcSwap<Error>,
    /// Calls that found no ID on the shelf.
    pub misses: AtomicU64,
    /// IDs taken for waiting callers who were gone when they came (see
    /// [`Pending`]); the shelf counts its readers' own.
    lost: AtomicU64,
    pub closed: AtomicBool,
    epoch: std::time::Instant,
    endpoint: Url,
    endpoint_text: String,
    pub namespace: String,
    pub incarnation: String,
    pub deadline_ms: u64,
    token: Token,
    http: reqwest::Client,
}

impl Shared {
    pub fn new(
        lease: Lease,
        endpoint: Url,
        namespace: String,
        token: Token,
        deadline_ms: u64,
    ) -> Result<Shared, Error> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("rangeid-client/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::invalid_config(format!("no HTTP client: {e}")))?;
        let incarnation = lease.incarnation().as_str().to_owned();
        let endpoint_text = endpoint.to_string();
        let why = Error::from_issue(IssueError::Unavailable, None, None, &endpoint_text, None);
        Ok(Shared {
            shelf: Shelf::default(),
            state: Mutex::new(State {
                lease,
                waiters: VecDeque::new(),
                attempts: HashMap::new(),
                last_cause: None,
                closed: false,
            }),
            why_empty: ArcSwap::from_pointee(why),
            misses: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            epoch: std::time::Instant::now(),
            endpoint,
            endpoint_text,
            namespace,
            incarnation,
            deadline_ms,
            token,
            http,
        })
    }

    pub fn lock(&self) -> MutexGuard<'_, State> {
        // A panic under the lock leaves the books as they were at an engine
        // call's end: carry on with them.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now(&self) -> Instant {
        Instant::from_ms(u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX))
    }

    /// The error a caller who found no ID gets (counted as a miss).
    pub fn empty_error(&self) -> Error {
        self.misses.fetch_add(1, Ordering::Relaxed);
        Error::clone(&self.why_empty.load())
    }

    /// The engine's account of why no ID is ready, as an error.
    pub fn error(&self, st: &State, why: IssueError, prefix: Option<&str>) -> Error {
        if st.closed {
            return Error::closed();
        }
        Error::from_issue(
            why,
            st.lease.last_failure(),
            st.last_cause.as_ref(),
            &self.endpoint_text,
            prefix,
        )
    }

    /// IDs taken for a caller that never reached it: by the shelf's
    /// readers caught by a block swap, or sent to a caller who was gone.
    /// Gaps: counted as abandoned, not issued.
    pub fn lost(&self) -> u64 {
        self.lost
            .load(Ordering::Relaxed)
            .saturating_add(self.shelf.lost())
    }

    /// Counts what `got` held as lost: its caller is gone.
    fn lose(&self, got: &Got) {
        let n = match got {
            Got::One(_) => 1,
            Got::Batch(taken) => taken.count(),
            Got::Warm => 0,
        };
        self.lost.fetch_add(n, Ordering::Relaxed);
    }

    /// Queues a waiting caller and wakes the driver; the answer comes
    /// through the [`Pending`].
    pub fn wait(&self, want: Want) -> Pending<'_> {
        let (tx, rx) = oneshot::channel();
        let rx = Pending {
            rx: Some(rx),
            shared: self,
        };
        let mut st = self.lock();
        if st.closed {
            let _ = tx.send(Err(Error::closed()));
            return rx;
        }
        let why = st.lease.issue_error();
        if !why.waits() && !matches!(want, Want::Warm) && self.shelf.unused() == 0 {
            // Told at once: waiting cannot help now.
            let _ = tx.send(Err(self.error(&st, why, None)));
            return rx;
        }
        st.waiters.push_back(Waiter {
            want,
            deadline: std::time::Instant::now() + Duration::from_millis(self.deadline_ms),
            tx,
        });
        drop(st);
        self.shelf.wake.notify_one();
        rx
    }

    /// Exactly `n` IDs now, or why not (under the lock): the shelf's
    /// blocks first, then the engine's ranges. Stops the shelf's readers
    /// (seals both blocks, to count them exactly) only when the engine says
    /// the batch can be had with what the shelf holds now, and only for as
    /// long as it takes to cut ranges (a few): the IDs are made later,
    /// without the lock ([`Taken::ids`]).
    pub fn take_batch(&self, st: &mut State, n: u64) -> Result<Taken, IssueError> {
        if let Some(r) = self.shelf.take(n) {
            return Ok(Taken(vec![r]));
        }
        // Readers only lower what the shelf holds (the driver alone adds,
        // under this lock): a batch that cannot be had with this snapshot
        // cannot be had after a seal either.
        st.lease.check_exact(n, self.shelf.unused())?;
        let tails = self.shelf.seal();
        let held: u64 = tails.iter().flatten().map(Range::count).sum();
        match st.lease.take_exact(n, held) {
            Ok(batch) => {
                let mut out = Vec::with_capacity(2 + batch.pieces().count());
                let mut from_held = batch.from_lent;
                let mut rest = [None; 2];
                for (k, tail) in tails.iter().enumerate() {
                    let Some(t) = tail else { continue };
                    let take = from_held.min(t.count());
                    if let Ok(r) = Range::with_count(t.start(), take) {
                        out.push(r);
                    }
                    from_held -= take;
                    if take < t.count() {
                        rest[k] = Range::with_count(t.start() + take, t.count() - take).ok();
                    }
                }
                self.shelf.put_back(rest);
                out.extend(batch.pieces());
                Ok(Taken(out))
            }
            Err(e) => {
                // Readers took IDs between the snapshot and the seal.
                self.shelf.put_back(tails);
                Err(e)
            }
        }
    }

    fn refill(&self, st: &mut State) {
        if st.closed {
            return;
        }
        self.shelf
            .refill(|held| st.lease.lend_keeping(BLOCK, held).ok());
    }

    /// One pass: refill the shelf, serve waiters, tell the engine what
    /// they need, carry out its actions. Returns when to come back at the
    /// latest.
    fn service(self: &Arc<Self>) -> Option<std::time::Instant> {
        let mut st = self.lock();
        if st.closed {
            return None;
        }
        self.shelf.refill_wanted.store(false, Ordering::Release);
        self.refill(&mut st);
        self.serve(&mut st);
        let need = st.waiters.iter().map(Waiter::need).sum();
        let held = self.shelf.unused();
        st.lease.set_demand(need, held);
        let now = self.now();
        let mut actions = Vec::new();
        while let Some(a) = st.lease.poll(now) {
            actions.push(a);
        }
        for a in actions {
            match a {
                Action::Send(out) => self.send(&mut st, out),
                Action::Cancel(t) => st.attempts.retain(|&(request, attempt), handle| {
                    let cancelled = request == t.request() && attempt <= t.attempt();
                    if cancelled {
                        handle.abort();
                    }
                    !cancelled
                }),
                _ => {}
            }
        }
        // Poll may have made the shelf's next block lendable.
        self.refill(&mut st);
        let why = st.lease.issue_error();
        self.why_empty.store(Arc::new(self.error(&st, why, None)));
        let engine = st
            .lease
            .next_deadline()
            .map(|at| self.epoch + Duration::from_millis(at.as_ms()));
        let waiter = st.waiters.iter().map(|w| w.deadline).min();
        match (engine, waiter) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Serves what the shelf and the engine hold now. A caller who wants
    /// one ID is served from the shelf wherever it is in the queue: a
    /// batch ahead of it that must wait for more does not hold it up (one
    /// ID hardly delays a batch, and the engine is asked for what they all
    /// need). Batches are served in their order: none passes an earlier
    /// one that waits, so a large batch is not starved by smaller ones.
    fn serve(&self, st: &mut State) {
        let now = std::time::Instant::now();
        let mut waiting = VecDeque::with_capacity(st.waiters.len());
        let mut batch_waits = false;
        while let Some(w) = st.waiters.pop_front() {
            if w.tx.is_closed() {
                continue;
            }
            let got = match w.want {
                Want::One => self
                    .shelf
                    .next_id()
                    .or_else(|| {
                        // The shelf may be used up while the engine holds more.
                        self.refill(st);
                        self.shelf.next_id()
                    })
                    .map(|id| Ok(Got::One(id))),
                Want::Warm => {
                    (self.shelf.unused() > 0 || st.lease.available() > 0).then_some(Ok(Got::Warm))
                }
                Want::Batch(_) if batch_waits => None,
                Want::Batch(n) => match self.take_batch(st, n) {
                    Ok(taken) => Some(Ok(Got::Batch(taken))),
                    Err(e) if e.waits() => {
                        batch_waits = true;
                        None
                    }
                    Err(e) => Some(Err(self.error(st, e, None))),
                },
            };
            match got {
                Some(got) => {
                    // Gone since `is_closed`: what it was to get is lost.
                    if let Err(Ok(got)) = w.tx.send(got) {
                        self.lose(&got);
                    }
                    // A batch may have emptied a slot: fill it again.
                    self.refill(st);
                }
                None => waiting.push_back(w),
            }
        }
        st.waiters = waiting;
        if st.waiters.is_empty() {
            return;
        }
        // Told at once when waiting cannot help now: a final answer, or a
        // block (the engine keeps asking by itself).
        let why = st.lease.issue_error();
        if !why.waits() {
            let error = self.error(st, why, None);
            for w in st.waiters.drain(..) {
                let _ = w.tx.send(Err(error.clone()));
            }
            return;
        }
        let late: Vec<Waiter> = {
            let (late, on_time): (Vec<_>, Vec<_>) =
                st.waiters.drain(..).partition(|w| w.deadline <= now);
            st.waiters.extend(on_time);
            late
        };
        if !late.is_empty() {
            let prefix = format!("no ID within {} ms", self.deadline_ms);
            let error = self.error(st, why, Some(&prefix));
            for w in late {
                let _ = w.tx.send(Err(error.clone()));
            }
        }
    }

    fn send(self: &Arc<Self>, st: &mut State, out: Outgoing) {
        let body = rangeid_core::wire::to_json(&out.request);
        let me = Arc::clone(self);
        let ticket = out.ticket;
        let task = tokio::spawn(async move {
            let outcome = me.attempt(body, out.fresh_credentials).await;
            me.answer(ticket, outcome);
        });
        st.attempts
            .insert((ticket.request(), ticket.attempt()), task.abort_handle());
    }

    /// Hands the engine an attempt's outcome.
    fn answer(
        &self,
        ticket: Ticket,
        outcome: Result<Reply, Arc<dyn std::error::Error + Send + Sync>>,
    ) {
        let mut st = self.lock();
        st.attempts.remove(&(ticket.request(), ticket.attempt()));
        if st.closed {
            return;
        }
        let reply = match outcome {
            Ok(reply) => reply,
            Err(cause) => {
                st.last_cause = Some(cause);
                Reply::no_answer()
            }
        };
        let now = self.now();
        st.lease.handle_reply(ticket, &reply, now);
        drop(st);
        self.shelf.wake.notify_one();
    }

    /// One attempt: the token, the POST, the answer classified by core.
    async fn attempt(
        &self,
        body: Vec<u8>,
        fresh: bool,
    ) -> Result<Reply, Arc<dyn std::error::Error + Send + Sync>> {
        let token = match &self.token {
            Token::Fixed(t) => t.clone(),
            Token::Provider(p) => match p.token(fresh).await {
                Ok(t) if !t.is_empty() => t,
                Ok(_) => {
                    return Err(Arc::new(NotSent(
                        "the token provider returned an empty token".into(),
                    )))
                }
                Err(e) => return Err(Arc::new(NotSent(format!("the token provider failed: {e}")))),
            },
        };
        let mut resp = self
            .http
            .post(self.endpoint.clone())
            .bearer_auth(token)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| Arc::new(e) as Arc<dyn std::error::Error + Send + Sync>)?;
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(retry_after_ms);
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| Arc::new(e) as Arc<dyn std::error::Error + Send + Sync>)?
        {
            let room = MAX_BODY - body.len();
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if body.len() >= MAX_BODY {
                break;
            }
        }
        Ok(Reply::from_http(status, &body, retry_after))
    }

    /// Stops: abandons what the shelf and the engine hold, aborts requests
    /// in flight, fails waiters with `closed`. Returns the IDs abandoned
    /// and the requests that were in flight.
    pub fn close(&self) -> (u64, u64) {
        let mut st = self.lock();
        if st.closed {
            return (0, 0);
        }
        let tails = self.shelf.seal();
        let held: u64 = tails.iter().flatten().map(Range::count).sum();
        let in_flight = st.lease.outstanding() as u64;
        let abandoned = st.lease.close_with_unused(held);
        st.closed = true;
        self.closed.store(true, Ordering::Release);
        for (_, handle) in st.attempts.drain() {
            handle.abort();
        }
        for w in st.waiters.drain(..) {
            let _ = w.tx.send(Err(Error::closed()));
        }
        self.why_empty.store(Arc::new(Error::closed()));
        drop(st);
        self.shelf.wake.notify_one();
        (abandoned, in_flight)
    }

    /// The phase as the npm package's `stats().phase` names it.
    pub fn phase(st: &State) -> crate::Phase {
        match st.lease.phase() {
            LeasePhase::Running if st.lease.blocked().is_some() => crate::Phase::Blocked,
            LeasePhase::Running => crate::Phase::Running,
            LeasePhase::Exhausted => crate::Phase::Exhausted,
            LeasePhase::Closed => crate::Phase::Closed,
            LeasePhase::Failed(code) => crate::Phase::Failed(code.client_code()),
            _ => crate::Phase::Running,
        }
    }

    /// Attempts whose answer is still awaited.
    pub fn in_flight(st: &State) -> u64 {
        st.attempts.len() as u64
    }
}

/// The background task: one service pass per wake-up, until closed.
pub(crate) async fn drive(shared: Arc<Shared>) {
    loop {
        let next = shared.service();
        if shared.closed.load(Ordering::Acquire) {
            return;
        }
        match next {
            Some(at) => {
                tokio::select! {
                    _ = shared.shelf.wake.notified() => {}
                    _ = tokio::time::sleep_until(tokio::time::Instant::from_std(at)) => {}
                }
            }
            None => shared.shelf.wake.notified().await,
        }
    }
}

/// No request was sent: the token could not be had.
#[derive(Debug)]
struct NotSent(String);

impl std::fmt::Display for NotSent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no request sent: {}", self.0)
    }
}

impl std::error::Error for NotSent {}

/// `Retry-After` in ms: seconds, or an HTTP date (0 when past).
fn retry_after_ms(v: &str) -> Option<u64> {
    let v = v.trim();
    if let Ok(seconds) = v.parse::<u64>() {
        return Some(seconds.saturating_mul(1000));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(
        at.duration_since(std::time::SystemTime::now())
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        assert_eq!(retry_after_ms("3"), Some(3000));
        assert_eq!(retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT"), Some(0));
        assert_eq!(retry_after_ms("soon"), None);
    }
}
