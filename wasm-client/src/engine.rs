//! `Engine`: core's `Lease` exposed to JS. It only marshals: every decision
//! (configuration limits, reply classification, retries, what is final, the
//! JS error codes) is core's.
//!
//! JS owns the clock, timers, `fetch` and promises; it hands each answer's
//! status and body text over as they came, and core reads them. Each call
//! returns one value and no call's meaning depends on the one before. IDs
//! leave as JS numbers for blocks that end at or below 2^53, where numbers
//! are exact, and as BigInts beyond.

use js_sys::{Array, Object, Reflect};
use rangeid_core::decimal::Decimal;
use rangeid_core::lease::{Handled, IssueError, LeaseOptions, OptionValue, Phase, Stats};
use rangeid_core::reply::{Excerpt, Reply, TransientKind};
use rangeid_core::{Action, Instant, Lease, Range, Ticket};
use wasm_bindgen::prelude::*;

/// The largest value a JS number holds exactly, plus one.
const JS_EXACT_LIMIT: u128 = 1 << 53;

/// A generator's engine. See the module documentation.
#[wasm_bindgen]
pub struct Engine {
    lease: Lease,
    deadline_ms: u64,
}

/// A JS time (ms) as core's: negative, NaN and infinite become 0.
fn ms(now: f64) -> u64 {
    if now.is_finite() && now > 0.0 {
        now as u64
    } else {
        0
    }
}

/// A JS time (ms, the driver's monotonic clock) as core's instant; as
/// [`ms`].
fn at(now: f64) -> Instant {
    Instant::from_ms(ms(now))
}

/// A JS count as core's: at least 1, at most 2^32 - 1.
fn count(n: f64) -> u64 {
    if n.is_finite() && n >= 1.0 {
        (n as u64).min(u64::from(u32::MAX))
    } else {
        1
    }
}

fn ticket(request: f64, attempt: f64) -> Ticket {
    Ticket::from_parts(ms(request), ms(attempt).min(u64::from(u32::MAX)) as u32)
}

/// The first ID of `r`: a number when every ID of it is exact, else a
/// BigInt.
fn start(r: &Range) -> JsValue {
    if r.end() <= JS_EXACT_LIMIT {
        JsValue::from_f64(r.start() as f64)
    } else {
        JsValue::from(r.start())
    }
}

fn set(o: &Object, key: &str, value: impl Into<JsValue>) {
    // Setting a plain property on a fresh plain object cannot fail.
    let _ = Reflect::set(o, &JsValue::from_str(key), &value.into());
}

fn decimal(v: u64) -> JsValue {
    JsValue::from_str(Decimal::new(v).as_str())
}

fn handled(h: Handled) -> &'static str {
    match h {
        Handled::Installed => "installed",
        Handled::Duplicate => "duplicate",
        Handled::Abandoned => "abandoned",
        Handled::NotOurs(_) => "not_ours",
        Handled::Stale => "stale",
        Handled::WillRetry => "will_retry",
        Handled::Blocked => "blocked",
        Handled::Stopped => "stopped",
        _ => "other",
    }
}

#[wasm_bindgen]
impl Engine {
    /// A new engine with a fresh incarnation from the platform's CSPRNG.
    /// `options` holds the engine's options by their JS names (`namespace`,
    /// `rangeSize`, ..., `deadlineMs`); anything else is refused. Throws an
    /// `Error` whose message starts with `invalid_config: `.
    #[wasm_bindgen(constructor)]
    pub fn new(options: &Object, now: f64) -> Result<Engine, JsError> {
        let invalid = |e: &dyn core::fmt::Display| JsError::new(&format!("invalid_config: {e}"));
        let mut o = LeaseOptions::default();
        for entry in Object::entries(options).iter() {
            let pair: Array = entry.unchecked_into();
            let key = pair.get(0).as_string().unwrap_or_default();
            let value = pair.get(1);
            let text = value.as_string();
            let v = match (value.as_f64(), &text) {
                (Some(n), _) => OptionValue::Number(n),
                (None, Some(t)) => OptionValue::Text(t),
                _ => OptionValue::Other,
            };
            o.set(&key, v).map_err(|e| invalid(&e))?;
        }
        let config = o.config().map_err(|e| invalid(&e))?;
        let mut random = [0u8; 16];
        getrandom::getrandom(&mut random)
            .map_err(|e| JsError::new(&format!("unavailable: no secure random source: {e}")))?;
        let lease = Lease::new(config.lease, random, at(now)).map_err(|e| invalid(&e))?;
        Ok(Engine {
            lease,
            deadline_ms: config.deadline_ms,
        })
    }

    /// This engine's incarnation: 32 hex digits.
    pub fn incarnation(&self) -> String {
        self.lease.incarnation().as_str().to_owned()
    }

    /// How long a caller waits for an ID, in ms (the `deadlineMs` option).
    #[wasm_bindgen(js_name = deadlineMs)]
    pub fn deadline_ms(&self) -> f64 {
        self.deadline_ms as f64
    }

    /// Lends up to `n` IDs of one range to issue locally:
    /// `[start, count, pollNow]`, where `start` is a number when the whole
    /// block is exact as numbers and a BigInt otherwise; or, when none is
    /// ready, the JS code saying why (`failure()` has the details). The
    /// previous block must have been issued whole.
    pub fn lend(&mut self, n: f64) -> JsValue {
        let r = self.lease.lend(count(n));
        self.block(r)
    }

    /// Exactly `n` IDs for one caller, or none: with `localLeft` IDs left
    /// in the last lent block, `[fromLocal, pollNow, start, count, start,
    /// count, ...]` (take `fromLocal` from the block first, then each
    /// piece; starts as in `lend`); or, when no batch can be had now, why,
    /// like `failure()` (`wait` says whether the caller should wait; a
    /// batch the namespace cannot supply is `exhausted` with `remaining`
    /// and `available`, one too large `invalid_request` with `limit`).
    #[wasm_bindgen(js_name = takeExact)]
    pub fn take_exact(&mut self, n: f64, local_left: f64) -> JsValue {
        match self.lease.take_exact(count(n), ms(local_left)) {
            Ok(batch) => {
                let out = Array::new();
                out.push(&JsValue::from_f64(batch.from_lent as f64));
                out.push(&JsValue::from_bool(self.lease.should_poll()));
                for piece in batch.pieces() {
                    out.push(&start(&piece));
                    out.push(&JsValue::from_f64(piece.count() as f64));
                }
                out.into()
            }
            Err(why) => self.describe(why),
        }
    }

    /// Tells the engine how many IDs callers wait for now (all of them),
    /// with `localLeft` IDs left in the last lent block.
    #[wasm_bindgen(js_name = setDemand)]
    pub fn set_demand(&mut self, ids: f64, local_left: f64) {
        self.lease.set_demand(ms(ids), ms(local_left));
    }

    fn block(&self, r: Result<Range, rangeid_core::lease::IssueError>) -> JsValue {
        match r {
            Ok(r) => Array::of3(
                &start(&r),
                &JsValue::from_f64(r.count() as f64),
                &JsValue::from_bool(self.lease.should_poll()),
            )
            .into(),
            Err(e) => JsValue::from_str(e.client_code()),
        }
    }

    /// Whether `poll` should be called now.
    #[wasm_bindgen(js_name = shouldPoll)]
    pub fn should_poll(&self) -> bool {
        self.lease.should_poll()
    }

    /// The next thing to do, or `undefined`; call until `undefined`:
    /// `["send", request, attempt, body, freshCredentials]` or
    /// `["cancel", request, attempt]` (stop waiting for every attempt of
    /// `request` up to `attempt`).
    pub fn poll(&mut self, now: f64) -> JsValue {
        let Some(action) = self.lease.poll(at(now)) else {
            return JsValue::UNDEFINED;
        };
        let out = Array::new();
        match action {
            Action::Send(o) => {
                let body = rangeid_core::wire::to_json(&o.request);
                out.push(&"send".into());
                out.push(&JsValue::from_f64(o.ticket.request() as f64));
                out.push(&JsValue::from_f64(f64::from(o.ticket.attempt())));
                // to_json writes UTF-8 only.
                out.push(&JsValue::from_str(
                    core::str::from_utf8(&body).unwrap_or("{}"),
                ));
                out.push(&JsValue::from_bool(o.fresh_credentials));
            }
            Action::Cancel(t) => {
                out.push(&"cancel".into());
                out.push(&JsValue::from_f64(t.request() as f64));
                out.push(&JsValue::from_f64(f64::from(t.attempt())));
            }
            // An action this binding does not know: nothing to hand JS, which
            // polls again at the next deadline.
            _ => return JsValue::UNDEFINED,
        }
        out.into()
    }

    /// When to call `poll` next at the latest (ms, same clock as `now`), or
    /// -1 when nothing is scheduled.
    #[wasm_bindgen(js_name = nextDeadline)]
    pub fn next_deadline(&self) -> f64 {
        self.lease
            .next_deadline()
            .map_or(-1.0, |d| d.as_ms() as f64)
    }

    /// Hands over the answer to attempt (`request`, `attempt`): the HTTP
    /// status, the body text and `Retry-After` in ms (or -1). Returns what
    /// became of it: `installed`, `duplicate`, `abandoned` (a grant after
    /// `close`), `not_ours`, `stale`, `will_retry`, `blocked` or `stopped`
    /// (`other` for an outcome this binding does not name).
    #[wasm_bindgen(js_name = handleAnswer)]
    pub fn handle_answer(
        &mut self,
        request: f64,
        attempt: f64,
        status: u16,
        body: &str,
        retry_after_ms: f64,
        now: f64,
    ) -> String {
        let retry_after = (retry_after_ms >= 0.0).then(|| ms(retry_after_ms));
        let reply = Reply::from_http(status, body.as_bytes(), retry_after);
        let h = self
            .lease
            .handle_reply(ticket(request, attempt), &reply, at(now));
        handled(h).to_owned()
    }

    /// Reports that attempt (`request`, `attempt`) got no answer (a network
    /// error, or its abort). Returns like `handleAnswer`.
    #[wasm_bindgen(js_name = handleNoAnswer)]
    pub fn handle_no_answer(&mut self, request: f64, attempt: f64, now: f64) -> String {
        let h = self
            .lease
            .handle_reply(ticket(request, attempt), &Reply::no_answer(), at(now));
        handled(h).to_owned()
    }

    /// Why no ID can be issued now, for the error a caller gets:
    /// `{code, final, wait, status?, message?, authorityCode?, excerpt?,
    /// remaining?, retryAfterMs?, noAnswer?, blockedUntil?}`. `code` is the
    /// JS code, `final` whether the engine can never issue again, `wait`
    /// whether a caller should wait for a range (else it is told at once);
    /// the rest describe the last failed attempt (`excerpt`: the first
    /// bytes of an answer that is not a rangeid one) and, while blocked,
    /// when the engine asks again (same clock as `now`).
    pub fn failure(&self) -> JsValue {
        self.describe(self.lease.issue_error())
    }

    fn describe(&self, why: IssueError) -> JsValue {
        let o = Object::new();
        set(&o, "code", why.client_code());
        set(&o, "final", why.is_final());
        set(&o, "wait", why.waits());
        if let Some(n) = why.remaining() {
            set(&o, "remaining", decimal(n));
        }
        match why {
            IssueError::TooFew { available, .. } => set(&o, "available", decimal(available)),
            IssueError::BatchTooLarge { limit } => set(&o, "limit", limit as f64),
            _ => {}
        }
        if let Some(b) = self.lease.blocked() {
            set(&o, "blockedUntil", b.until.as_ms() as f64);
        }
        let excerpt = |o: &Object, e: &Excerpt| {
            if !e.as_str().is_empty() {
                set(o, "excerpt", e.as_str());
            }
        };
        match self.lease.last_failure() {
            Some(Reply::Refused(r)) => {
                set(&o, "status", r.status);
                set(&o, "message", r.message.as_str());
                set(&o, "authorityCode", r.code.as_str());
                if let Some(n) = r.remaining {
                    set(&o, "remaining", decimal(n));
                }
                if let Some(ms) = r.retry_after_ms {
                    set(&o, "retryAfterMs", ms as f64);
                }
            }
            Some(Reply::Foreign(f)) => {
                set(&o, "status", f.status);
                excerpt(&o, &f.excerpt);
                if let Some(ms) = f.retry_after_ms {
                    set(&o, "retryAfterMs", ms as f64);
                }
            }
            Some(Reply::Transient(t)) => {
                if let Some(s) = t.status {
                    set(&o, "status", s);
                }
                excerpt(&o, &t.excerpt);
                if let Some(ms) = t.retry_after_ms {
                    set(&o, "retryAfterMs", ms as f64);
                }
                set(&o, "noAnswer", t.kind == TransientKind::NoAnswer);
            }
            _ => {}
        }
        o.into()
    }

    /// The counters, with `localLeft` IDs of the last lent block not yet
    /// issued. `available`, `reservedAhead`, `reserved` and `abandoned` are
    /// decimal strings; the rest are numbers.
    pub fn stats(&self, local_left: f64) -> JsValue {
        let s: Stats = self.lease.stats(ms(local_left));
        let o = Object::new();
        set(&o, "incarnation", self.lease.incarnation().as_str());
        let phase = match self.lease.phase() {
            Phase::Running if self.lease.blocked().is_some() => "blocked",
            Phase::Running => "running",
            Phase::Exhausted => "exhausted",
            Phase::Closed => "closed",
            Phase::Failed(c) => c.client_code(),
            _ => "unavailable",
        };
        set(&o, "phase", phase);
        for (key, v) in [
            ("issued", s.issued),
            ("rangesInstalled", s.ranges_installed),
            ("replaysInstalled", s.replays_installed),
            ("duplicatesIgnored", s.duplicates_ignored),
            ("grantsRefused", s.grants_refused),
            ("staleIgnored", s.stale_ignored),
            ("requests", s.requests),
            ("retries", s.retries),
            ("requestsExpired", s.requests_expired),
            ("starved", s.starved),
            ("blocks", s.blocks),
            ("unblocks", s.unblocks),
            ("outstanding", s.outstanding),
            ("ratePerSecond", self.lease.rate()),
        ] {
            set(&o, key, v as f64);
        }
        set(&o, "available", decimal(s.available));
        set(&o, "reservedAhead", decimal(s.reserved_ahead));
        set(&o, "reserved", decimal(s.reserved));
        set(&o, "abandoned", decimal(s.abandoned));
        let g = Object::new();
        for (key, v) in [
            ("count", s.grant_ms.count),
            ("p50", s.grant_ms.p50),
            ("p99", s.grant_ms.p99),
            ("max", s.grant_ms.max),
        ] {
            set(&g, key, v as f64);
        }
        set(&o, "grantLatencyMs", g);
        o.into()
    }

    /// Abandons every unused ID, `localLeft` of the last lent block among
    /// them, and stops; returns how many, as a decimal string.
    pub fn close(&mut self, local_left: f64) -> String {
        Decimal::new(self.lease.close_with_unused(ms(local_left)))
            .as_str()
            .to_owned()
    }
}
