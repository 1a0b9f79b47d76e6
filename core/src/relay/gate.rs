//! `RelayGate`: what the namespace object keeps about relays, and when an
//! admin act (a freeze, a floor, relays turned off) may be acknowledged.
//!
//! The gate lives in the object's memory only and is made anew at every
//! start of the object, with that start's time. It records each grant it
//! decides for a relay incarnation ([`RelayGate::granted`]) and each
//! revocation a relay acknowledged ([`RelayGate::revoked`]). When an act
//! commits, [`RelayGate::begin`] notes which relay incarnations may still
//! serve from a grant decided before it; [`RelayGate::check`] then says
//! whether the act may be acknowledged: once each of them acknowledged a
//! revocation or its lease ran out, and once the lease has run out since
//! the object's start.
//!
//! Why the start counts: a grant decided by an earlier run of the object,
//! or one a restored copy forgot, was decided before this start, so the
//! relay holding it stops serving it within a lease of the start whatever
//! storage says. A relay that cannot be reached, a stale second instance
//! (its own incarnation, which no revocation reached) and a relay storage
//! does not list are all waited out; revocation only makes the common case
//! faster. Slower, never unsafe.

use core::fmt;

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::code::ErrorCode;
use crate::names::Incarnation;
use crate::time::Instant;

use super::terms::RelayTerms;

/// Why the namespace object refuses a relay's range request before
/// deciding it ([`RelayGate::admit`]). Answered `403 forbidden`: for the
/// relay a final refusal, after which it answers its generators
/// `unavailable` and its driver routes them to the object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RelayRefusal {
    /// Relays are turned off for this namespace.
    RelaysOff,
    /// This relay incarnation acknowledged a revocation: it installs
    /// nothing more, so nothing is granted to it.
    Revoked,
}

impl RelayRefusal {
    /// The stable code it is answered with.
    pub const fn code(&self) -> ErrorCode {
        ErrorCode::Forbidden
    }
}

impl fmt::Display for RelayRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RelayRefusal::RelaysOff => "relays are turned off for this namespace",
            RelayRefusal::Revoked => "this relay incarnation was revoked",
        })
    }
}

impl core::error::Error for RelayRefusal {}

/// What the gate knows of one relay incarnation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Held {
    /// When the last grant to it was decided, or its revocation
    /// acknowledged, on the object's clock.
    last: u64,
    /// It acknowledged a revocation: it closed its lease for good.
    revoked: bool,
}

/// See the module documentation. Made at each start of the namespace
/// object; never stored.
#[derive(Clone, Debug)]
pub struct RelayGate {
    terms: RelayTerms,
    started_at: u64,
    relays: BTreeMap<Incarnation, Held>,
}

/// An admin act that committed and waits to be acknowledged
/// ([`RelayGate::begin`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdminAct {
    committed_at: u64,
    // No acknowledgement before this: a lease past the object's start.
    not_before: u64,
    // Relay incarnations that may still serve a grant decided before the
    // act, and when their lease runs out on the object's clock.
    pending: Vec<(Incarnation, u64)>,
}

/// Whether an act may be acknowledged now ([`RelayGate::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ActStatus {
    /// No relay can serve a range granted before the act any more.
    Acknowledge,
    /// Not yet: by `until` at the latest (on the object's clock), or
    /// sooner if the `waiting_for` relays still pending acknowledge a
    /// revocation.
    Wait {
        /// When every pending lease has run out.
        until: Instant,
        /// Relay incarnations still pending: revoke them to go faster.
        waiting_for: usize,
    },
}

impl RelayGate {
    /// The gate of an object that started at `started_at`.
    pub fn new(terms: RelayTerms, started_at: Instant) -> RelayGate {
        RelayGate {
            terms,
            started_at: started_at.as_ms(),
            relays: BTreeMap::new(),
        }
    }

    /// The lease terms.
    pub const fn terms(&self) -> RelayTerms {
        self.terms
    }

    /// Waits as long as `terms` ask from now on, when they ask longer: a
    /// relay that holds a longer lease than the object's own (one running
    /// another version during a deployment that changed the lease) is
    /// then waited out for its whole lease. Call it before the grant to
    /// such a relay is recorded ([`RelayGate::granted`]), and at a start
    /// with the longest lease the object ever granted to. The wait never
    /// shrinks.
    pub fn widen(&mut self, terms: RelayTerms) {
        if terms.lease_ms() > self.terms.lease_ms() {
            self.terms = terms;
        }
    }

    /// Records a grant decided at `now` for relay incarnation `relay`, new
    /// or replayed. Call it in the same step as the decision, before any
    /// admin act can commit after it.
    pub fn granted(&mut self, relay: Incarnation, now: Instant) {
        let now = now.as_ms();
        let held = self.relays.entry(relay).or_insert(Held {
            last: now,
            revoked: false,
        });
        held.last = held.last.max(now);
    }

    /// Records that `relay` acknowledged a revocation at `now`: it closed
    /// its lease and will install nothing more under that incarnation. Its
    /// requests are refused ([`RelayGate::admit`]) for at least a lease
    /// after `now`, so one still on its way is not granted a range that
    /// would only be abandoned (and make the next act wait for it).
    pub fn revoked(&mut self, relay: Incarnation, now: Instant) {
        let now = now.as_ms();
        let held = self.relays.entry(relay).or_insert(Held {
            last: now,
            revoked: true,
        });
        held.revoked = true;
        held.last = held.last.max(now);
    }

    /// Whether a range request from relay incarnation `relay` may be
    /// decided, with relays turned on (`relays_on`) or off for the
    /// namespace. A generator's request never comes here.
    pub fn admit(&self, relays_on: bool, relay: &Incarnation) -> Result<(), RelayRefusal> {
        if !relays_on {
            return Err(RelayRefusal::RelaysOff);
        }
        if self.is_revoked(relay) {
            return Err(RelayRefusal::Revoked);
        }
        Ok(())
    }

    /// Whether `relay` acknowledged a revocation (its requests may be
    /// refused: whatever it is granted, it will not install).
    pub fn is_revoked(&self, relay: &Incarnation) -> bool {
        self.relays.get(relay).is_some_and(|h| h.revoked)
    }

    /// Relay incarnations that may still serve at `now` and were not
    /// revoked: whom a revocation would speed an act up for.
    pub fn live(&self, now: Instant) -> impl Iterator<Item = &Incarnation> + '_ {
        let wait = self.terms.wait_ms();
        self.relays
            .iter()
            .filter(move |(_, h)| !h.revoked && h.last.saturating_add(wait) > now.as_ms())
            .map(|(i, _)| i)
    }

    /// The act that committed at `now`: what it must wait for.
    pub fn begin(&self, now: Instant) -> AdminAct {
        let wait = self.terms.wait_ms();
        AdminAct {
            committed_at: now.as_ms(),
            not_before: self.started_at.saturating_add(wait),
            pending: self
                .relays
                .iter()
                .filter(|(_, h)| !h.revoked)
                .map(|(i, h)| (*i, h.last.saturating_add(wait)))
                .filter(|(_, until)| *until > now.as_ms())
                .collect(),
        }
    }

    /// Whether `act` may be acknowledged at `now`; forgets what it no
    /// longer waits for.
    pub fn check(&self, act: &mut AdminAct, now: Instant) -> ActStatus {
        let now = now.as_ms();
        act.pending
            .retain(|(relay, until)| *until > now && !self.is_revoked(relay));
        if act.pending.is_empty() && now >= act.not_before {
            return ActStatus::Acknowledge;
        }
        let until = act
            .pending
            .iter()
            .map(|(_, until)| *until)
            .fold(act.not_before, u64::max);
        ActStatus::Wait {
            until: Instant::from_ms(until),
            waiting_for: act.pending.len(),
        }
    }

    /// Forgets relays whose lease ran out by `now` (acts keep their own
    /// list), and revocations older than a lease: the gate holds only
    /// relays that may still serve or were revoked lately.
    pub fn prune(&mut self, now: Instant) {
        let wait = self.terms.wait_ms();
        self.relays
            .retain(|_, h| h.last.saturating_add(wait) > now.as_ms());
    }

    /// How many relay incarnations the gate holds.
    pub fn len(&self) -> usize {
        self.relays.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.relays.is_empty()
    }
}

impl AdminAct {
    /// When the act committed, on the object's clock.
    pub const fn committed_at(&self) -> Instant {
        Instant::from_ms(self.committed_at)
    }

    /// Relay incarnations it still waits for (revoke them to go faster).
    pub fn pending(&self) -> impl Iterator<Item = &Incarnation> + '_ {
        self.pending.iter().map(|(i, _)| i)
    }
}
