//! The engine's requests in flight: tickets, attempts, due times, backoff
//! and the cancellations it asks its driver for.
//!
//! Each request has a number `n` (its request id is `r<n>`) and is sent in
//! attempts 0, 1, 2, ... under that same id. An attempt is identified to
//! the driver by its [`Ticket`]. Sending attempt `k` leaves attempt `k - 1`
//! running (a slow answer to it still installs) and cancels attempt
//! `k - 2`; settling a request cancels every attempt of it.

use crate::names::RequestId;
use crate::protocol::GrantRequest;

use super::config::MAX_OUTSTANDING;

/// Identifies one attempt of one request. The driver hands it back with the
/// attempt's outcome; the engine ignores failures of attempts that were
/// superseded. Its fields are the engine's: a driver reads them, and only
/// a binding that carries a ticket across a boundary as its two numbers
/// rebuilds one ([`Ticket::from_parts`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ticket {
    pub(crate) request: u64,
    pub(crate) attempt: u32,
}

impl Ticket {
    /// The request's number `n` (request id `r<n>`).
    pub const fn request(&self) -> u64 {
        self.request
    }

    /// 0 for the first send, then 1, 2, ... for retries under the same id.
    pub const fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The ticket with these two numbers, as [`Ticket::request`] and
    /// [`Ticket::attempt`] gave them: for a binding that hands tickets to
    /// its host as plain values (the JS engine) and takes them back. One
    /// that names no attempt this engine sent changes nothing: its
    /// failures are stale, and a grant installs only when it answers that
    /// very request.
    pub const fn from_parts(request: u64, attempt: u32) -> Ticket {
        Ticket { request, attempt }
    }
}

/// A request the driver must send now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// Hand this back with the outcome.
    pub ticket: Ticket,
    /// What to send.
    pub request: GrantRequest,
    /// The last attempt was refused as `unauthenticated`: get fresh
    /// credentials for this one (call the token source anew).
    pub fresh_credentials: bool,
}

/// What the engine asks its driver to do, from [`crate::Lease::poll`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // Short-lived; boxing would need a heap.
#[non_exhaustive]
pub enum Action {
    /// Send this attempt.
    Send(Outgoing),
    /// Stop waiting for every attempt of `ticket.request` up to and
    /// including `ticket.attempt` (abort them if possible). Their outcomes
    /// no longer matter; a driver may still report them.
    Cancel(Ticket),
}

/// One request not yet settled.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    pub number: u64,
    pub count: u64,
    /// When attempt 0 was sent; `None` until then.
    pub first_sent: Option<u64>,
    /// The latest attempt sent.
    pub attempt: u32,
    /// When the next attempt is due (a timeout or a backoff).
    pub due: u64,
    /// Whether the next attempt must use fresh credentials.
    pub fresh_credentials: bool,
    /// Whether the latest attempt was sent with fresh credentials.
    pub sent_fresh: bool,
}

impl Pending {
    /// The ticket of the latest attempt sent.
    pub fn latest(&self) -> Ticket {
        Ticket {
            request: self.number,
            attempt: self.attempt,
        }
    }
}

const CANCELS: usize = 2 * MAX_OUTSTANDING + 2;

/// The requests in flight and the cancellations not yet handed over.
#[derive(Debug)]
pub(super) struct Requests {
    pub made: u64,
    pub pending: [Option<Pending>; MAX_OUTSTANDING],
    cancels: [Option<Ticket>; CANCELS],
    rng: u64,
}

impl Requests {
    pub fn new(seed: u64) -> Requests {
        Requests {
            made: 0,
            pending: [None; MAX_OUTSTANDING],
            cancels: [None; CANCELS],
            rng: seed | 1,
        }
    }

    pub fn outstanding(&self) -> usize {
        self.pending.iter().flatten().count()
    }

    pub fn in_flight_ids(&self) -> u64 {
        self.pending
            .iter()
            .flatten()
            .fold(0u64, |sum, p| sum.saturating_add(p.count))
    }

    pub fn slot(&self, number: u64) -> Option<usize> {
        self.pending
            .iter()
            .position(|p| p.is_some_and(|p| p.number == number))
    }

    /// Makes request `made + 1` (its id `r<made + 1>`) for `count` IDs,
    /// first due at `due`; `false`, making nothing, when no slot is free.
    pub fn make(&mut self, count: u64, due: u64) -> bool {
        let Some(slot) = self.pending.iter().position(Option::is_none) else {
            return false;
        };
        self.made += 1;
        self.pending[slot] = Some(Pending {
            number: self.made,
            count,
            first_sent: None,
            attempt: 0,
            due,
            fresh_credentials: false,
            sent_fresh: false,
        });
        true
    }

    /// Settles the request in `slot`: it is gone, and every attempt of it
    /// that was sent is cancelled (a no-op for the one that just answered).
    pub fn settle(&mut self, slot: usize) -> Option<Pending> {
        let p = self.pending[slot].take()?;
        if p.first_sent.is_some() {
            self.cancel(p.latest());
        }
        Some(p)
    }

    fn cancel(&mut self, ticket: Ticket) {
        match self.cancels.iter_mut().find(|c| c.is_none()) {
            Some(free) => *free = Some(ticket),
            None => {
                // Full: drop the oldest. A lost cancellation only leaves an
                // attempt running until it ends by itself.
                self.cancels.rotate_left(1);
                self.cancels[CANCELS - 1] = Some(ticket);
            }
        }
    }

    pub fn next_cancel(&mut self) -> Option<Ticket> {
        let first = self.cancels[0].take()?;
        self.cancels.rotate_left(1);
        Some(first)
    }

    /// The earliest due request, if one is due at `now`.
    fn due_slot(&self, now: u64) -> Option<usize> {
        self.pending
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.filter(|p| p.due <= now).map(|p| (i, p.due)))
            .min_by_key(|&(_, due)| due)
            .map(|(i, _)| i)
    }

    /// The next attempt that is due, as the driver must send it; the
    /// attempt two before it is cancelled. `first_send` reports whether it
    /// is a request's first attempt.
    pub fn send_due(
        &mut self,
        now: u64,
        timeout_ms: u64,
        request: impl Fn(&Pending) -> GrantRequest,
    ) -> Option<(Outgoing, bool)> {
        let slot = self.due_slot(now)?;
        let mut p = self.pending[slot]?;
        let first_send = p.first_sent.is_none();
        if first_send {
            p.first_sent = Some(now);
        } else {
            p.attempt = p.attempt.saturating_add(1);
            if p.attempt >= 2 {
                self.cancel(Ticket {
                    request: p.number,
                    attempt: p.attempt - 2,
                });
            }
        }
        p.due = now.saturating_add(timeout_ms);
        let fresh = core::mem::take(&mut p.fresh_credentials);
        p.sent_fresh = fresh;
        self.pending[slot] = Some(p);
        let out = Outgoing {
            ticket: p.latest(),
            request: request(&p),
            fresh_credentials: fresh,
        };
        Some((out, first_send))
    }

    /// Reschedules the request in `slot` to `due`.
    pub fn retry_at(&mut self, slot: usize, due: u64, fresh_credentials: bool) {
        if let Some(p) = self.pending[slot].as_mut() {
            p.due = due;
            p.fresh_credentials |= fresh_credentials;
        }
    }

    /// Drops the requests never sent; returns how many IDs they asked for.
    pub fn drop_unsent(&mut self) -> u64 {
        let mut ids = 0u64;
        for p in self.pending.iter_mut() {
            if p.is_some_and(|p| p.first_sent.is_none()) {
                ids = ids.saturating_add(p.take().map_or(0, |p| p.count));
            }
        }
        ids
    }

    /// Drops requests first sent `max_age_ms` or more before `now`; returns
    /// how many.
    pub fn expire(&mut self, now: u64, max_age_ms: u64) -> u64 {
        let mut expired = 0;
        for slot in 0..MAX_OUTSTANDING {
            let old = self.pending[slot]
                .and_then(|p| p.first_sent)
                .is_some_and(|at| now.saturating_sub(at) >= max_age_ms);
            if old {
                self.settle(slot);
                expired += 1;
            }
        }
        expired
    }

    /// Settles the earliest request due at `now` without sending it again
    /// (cancelling its latest attempt), for a stopped engine; returns it.
    pub fn give_up_due(&mut self, now: u64) -> Option<Pending> {
        let slot = self.due_slot(now)?;
        self.settle(slot)
    }

    pub fn next_due(&self) -> Option<u64> {
        self.pending.iter().flatten().map(|p| p.due).min()
    }

    /// A backoff for `attempt`: exponential from `initial` to `max`, with
    /// jitter in its upper half.
    pub fn backoff(&mut self, attempt: u32, initial: u64, max: u64) -> u64 {
        let shift = attempt.min(20);
        let cap = initial.saturating_mul(1 << shift).min(max);
        // xorshift64: jitter only, never part of an ID.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let half = cap / 2;
        half + self.rng % (cap - half + 1)
    }
}

/// The request id of request `number`.
pub(super) fn request_id(number: u64) -> RequestId {
    RequestId::numbered(number)
}
