//! `Engine`: one generator's lease engine, exposed to JS.
//!
//! A thin driver: JS owns the clock, the timers and `fetch`; this type owns
//! the core `Lease` and parses every reply strictly in Rust, so no ID ever
//! passes through a JS number on the way in. IDs leave as decimal strings,
//! or as numbers only for blocks that end at or below 2^53.

use rangeid_core::decimal::Decimal;
use rangeid_core::lease::{Failure, GrantOutcome, Lease};
use rangeid_core::wire::{ErrorReply, GrantReply};
use rangeid_core::{ErrorCode, RequestId};
use wasm_bindgen::prelude::*;

use crate::{code, options};

/// The largest value a JS number holds exactly, plus one.
const JS_EXACT_LIMIT: u128 = 1 << 53;

/// A generator's engine. See the module documentation.
#[wasm_bindgen]
pub struct Engine {
    lease: Lease,
    block_start: u64,
    block_count: u64,
    why: &'static str,
    last_request_id: String,
}

fn ms(now: f64) -> u64 {
    if now.is_finite() && now > 0.0 {
        now as u64
    } else {
        0
    }
}

impl Engine {
    /// An engine from options JSON, 16 random bytes and the current time.
    pub fn create(options_json: &str, random: [u8; 16], now: f64) -> Result<Engine, String> {
        let config = options::parse(options_json)?;
        let lease = Lease::new(config, random, ms(now)).map_err(|e| e.to_string())?;
        Ok(Engine {
            lease,
            block_start: 0,
            block_count: 0,
            why: "unavailable",
            last_request_id: String::new(),
        })
    }
}

#[wasm_bindgen]
impl Engine {
    /// A new engine with a fresh incarnation from the platform's CSPRNG.
    /// Throws an `Error` whose message starts with `invalid_config:`.
    #[wasm_bindgen(constructor)]
    pub fn new(options_json: &str, now: f64) -> Result<Engine, JsError> {
        let mut random = [0u8; 16];
        getrandom::getrandom(&mut random)
            .map_err(|e| JsError::new(&format!("unavailable: no secure random source: {e}")))?;
        Engine::create(options_json, random, now)
            .map_err(|e| JsError::new(&format!("invalid_config: {e}")))
    }

    /// This engine's incarnation: 32 hex digits.
    pub fn incarnation(&self) -> String {
        self.lease.incarnation().as_str().to_owned()
    }

    /// Takes up to `n` contiguous IDs from one range and returns how many
    /// (fewer at a range's end); 0 when none is ready, and then `why()`
    /// says why. Read the block with `blockStart*`.
    pub fn take(&mut self, n: u32) -> u32 {
        match self.lease.take(u64::from(n)) {
            Ok(r) => {
                self.block_start = r.start();
                self.block_count = r.count();
                // count <= n, which is a u32.
                r.count() as u32
            }
            Err(e) => {
                self.block_count = 0;
                self.why = code::from_issue(e);
                0
            }
        }
    }

    /// The last block's first ID, as a decimal string.
    #[wasm_bindgen(js_name = blockStartString)]
    pub fn block_start_string(&self) -> String {
        Decimal::new(self.block_start).as_str().to_owned()
    }

    /// Whether every ID of the last block is exact as a JS number.
    #[wasm_bindgen(js_name = blockIsSafe)]
    pub fn block_is_safe(&self) -> bool {
        u128::from(self.block_start) + u128::from(self.block_count) <= JS_EXACT_LIMIT
    }

    /// The last block's first ID as a number; exact only when `blockIsSafe()`.
    #[wasm_bindgen(js_name = blockStartNumber)]
    pub fn block_start_number(&self) -> f64 {
        self.block_start as f64
    }

    /// Why the last `take` returned 0: `unavailable`, `frozen`, `exhausted`,
    /// `closed`, or the authority's code (`unauthenticated`, `forbidden`,
    /// `namespace_not_found`, ...).
    pub fn why(&self) -> String {
        self.why.to_owned()
    }

    /// Whether the driver should call `pollRequest` now.
    #[wasm_bindgen(js_name = shouldPoll)]
    pub fn should_poll(&self) -> bool {
        self.lease.should_poll()
    }

    /// The next request to send now as its JSON body, or `undefined`. Its
    /// request id is then in `lastRequestId()`. Call until `undefined`.
    #[wasm_bindgen(js_name = pollRequest)]
    pub fn poll_request(&mut self, now: f64) -> Option<String> {
        let out = self.lease.poll_request(ms(now))?;
        self.last_request_id = out.request.request_id.as_str().to_owned();
        serde_json::to_string(&out.request).ok()
    }

    /// The request id of the request `pollRequest` last returned.
    #[wasm_bindgen(js_name = lastRequestId)]
    pub fn last_request_id(&self) -> String {
        self.last_request_id.clone()
    }

    /// When to call `pollRequest` next at the latest (ms, same clock as
    /// `now`), or -1 when nothing is scheduled.
    #[wasm_bindgen(js_name = nextDeadline)]
    pub fn next_deadline(&self) -> f64 {
        self.lease.next_deadline().map_or(-1.0, |d| d as f64)
    }

    /// Hands over the authority's answer to request `requestId`: HTTP status,
    /// body text and `Retry-After` in ms (or -1). Returns what happened:
    /// `installed`, `duplicate`, `refused`, `error:<code>` or `transport`
    /// (unreadable; it will be retried).
    #[wasm_bindgen(js_name = handleResponse)]
    pub fn handle_response(
        &mut self,
        request_id: &str,
        status: u16,
        body: &str,
        retry_after_ms: f64,
        now: f64,
    ) -> String {
        let now = ms(now);
        let Ok(id) = RequestId::new(request_id) else {
            return "refused".to_owned();
        };
        if status == 200 {
            return match serde_json::from_str::<GrantReply>(body) {
                Ok(reply) => match self.lease.handle_grant(&reply.grant, reply.replayed, now) {
                    GrantOutcome::Installed => "installed".to_owned(),
                    GrantOutcome::Duplicate => "duplicate".to_owned(),
                    GrantOutcome::Refused(_) => "refused".to_owned(),
                },
                Err(_) => {
                    self.lease.handle_error(&id, Failure::Transport, now);
                    "transport".to_owned()
                }
            };
        }
        let retry_after_ms = (retry_after_ms >= 0.0).then(|| ms(retry_after_ms));
        let failure = match serde_json::from_str::<ErrorReply>(body) {
            Ok(e) => Failure::Refused {
                code: e.error.code,
                remaining: e.error.remaining.map(|r| r.0),
                retry_after_ms,
            },
            Err(_) if status == 503 || status == 429 => Failure::Refused {
                code: ErrorCode::Unavailable,
                remaining: None,
                retry_after_ms,
            },
            Err(_) => Failure::Transport,
        };
        self.lease.handle_error(&id, failure, now);
        match failure {
            Failure::Transport => "transport".to_owned(),
            Failure::Refused { code, .. } => format!("error:{}", code::from_authority(code)),
        }
    }

    /// Reports that request `requestId` got no answer (network error or
    /// timeout); it is retried under the same id after a backoff.
    #[wasm_bindgen(js_name = handleTransportError)]
    pub fn handle_transport_error(&mut self, request_id: &str, now: f64) {
        if let Ok(id) = RequestId::new(request_id) {
            self.lease.handle_error(&id, Failure::Transport, ms(now));
        }
    }

    /// The counters, as JSON. `available` and `abandoned` are decimal
    /// strings; the rest are numbers.
    pub fn stats(&self) -> String {
        let s = self.lease.stats();
        let phase = match self.lease.phase() {
            rangeid_core::lease::Phase::Running => "running".to_owned(),
            rangeid_core::lease::Phase::Exhausted => "exhausted".to_owned(),
            rangeid_core::lease::Phase::Closed => "closed".to_owned(),
            rangeid_core::lease::Phase::Failed(c) => code::from_authority(c).to_owned(),
        };
        serde_json::json!({
            "incarnation": self.lease.incarnation().as_str(),
            "phase": phase,
            "issued": s.issued,
            "rangesInstalled": s.ranges_installed,
            "replaysInstalled": s.replays_installed,
            "duplicatesIgnored": s.duplicates_ignored,
            "grantsRefused": s.grants_refused,
            "requests": s.requests,
            "retries": s.retries,
            "starved": s.starved,
            "abandoned": Decimal::new(s.abandoned).as_str(),
            "available": Decimal::new(self.lease.available()).as_str(),
            "outstanding": self.lease.outstanding(),
            "ratePerSecond": self.lease.rate(),
            "lastGrantMs": s.last_grant_ms,
            "maxGrantMs": s.max_grant_ms,
        })
        .to_string()
    }

    /// Abandons every unused ID and stops; returns how many, as a decimal
    /// string. Later calls issue nothing.
    pub fn close(&mut self) -> String {
        Decimal::new(self.lease.close()).as_str().to_owned()
    }
}

#[cfg(test)]
mod tests;
