//! The namespace object's side of relays (docs/relays.md): the stored
//! setting, and [`RelayDesk`], which runs core's [`RelayGate`] for the
//! driver. Every decision is here or in core; the driver only reads the
//! clock, sleeps and moves bytes.
//!
//! - A range request made with a relay token is decided only while relays
//!   are on and its incarnation was not revoked ([`RelayDesk::admit`]).
//! - Every grant answered to a relay, new or replayed, is recorded in the
//!   same synchronous step as its decision ([`RelayDesk::granted`]).
//! - A freeze, a floor, an export (which freezes) or relays turned off is
//!   committed, then answered only when the gate says acknowledge
//!   ([`RelayDesk::begin`], [`RelayDesk::wait_ms`]).
//!
//! **The start rule, and why skipping it is safe.** The gate, made at each
//! start, acknowledges nothing until a lease has run out since that start,
//! because a grant an earlier run decided is not in its memory. That wait
//! is kept only where a relay can exist: when relays are on, or were ever
//! turned on (the stored setting is `NULL` until the first time they are
//! turned on, and never goes back to `NULL`), or this run granted to a
//! relay. A namespace whose relays were never turned on has never granted
//! to a relay (its object refuses every relay request), so no relay holds
//! anything of it, and its acts are exactly as fast as before relays.
//! Once relays were on, every act after a start waits one lease (bounded
//! by the lease setting, 10 s by default), even with relays off: an
//! earlier run may have committed "relays off" and been stopped before it
//! could wait its relays out.
//!
//!
//! **A restore to a copy from before relays were first turned on** holds
//! `NULL`, while a relay of the lost history may still serve for up to one
//! lease. So turning relays on for the first time raises the fence's
//! witness above the object's fence before it commits ([`first_on_mark`]):
//! such a copy is then seen at its start as a rollback, counted in the
//! stored `fence_forwards`, and a namespace that ever saw a rollback keeps
//! the start rule as if its relays had been on ([`for_acts`]). That is
//! conservative (any rollback, relays or not, slows the acts within a
//! lease of each later start), never unsafe.

use std::collections::{BTreeMap, BTreeSet};

use rangeid_core::names::Incarnation;
use rangeid_core::relay::{ActStatus, AdminAct, RelayGate, RelayRefusal, RelayTerms, TermsError};
use rangeid_core::time::Instant;

use super::store::{opt_text, Sql, StoreError, Value};
use super::ObjectRequest;
use crate::api::{Region, RelaysSetting};
use crate::shared::response::ApiError;

/// The relay setting as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Relays were never turned on (the default; stored `NULL`).
    Never,
    /// Relays are on.
    On,
    /// Relays are off, and were on at some time.
    Off,
}

impl Stored {
    /// Whether relays are on.
    pub const fn is_on(self) -> bool {
        matches!(self, Stored::On)
    }

    /// What the admin API shows: `on` or `off`.
    pub const fn setting(self) -> RelaysSetting {
        match self {
            Stored::On => RelaysSetting::On,
            Stored::Never | Stored::Off => RelaysSetting::Off,
        }
    }

    /// The stored value after an admin sets `to`: turning relays off that
    /// were never on leaves `Never`, so such a namespace keeps its acts
    /// free of the start rule.
    pub const fn after(self, to: RelaysSetting) -> Stored {
        match (self, to) {
            (_, RelaysSetting::On) => Stored::On,
            (Stored::Never, RelaysSetting::Off) => Stored::Never,
            (_, RelaysSetting::Off) => Stored::Off,
        }
    }

    /// As the start rule reads a setting it cannot trust yet: `Never` as
    /// `Off`.
    const fn max_known(self) -> Stored {
        match self {
            Stored::Never => Stored::Off,
            other => other,
        }
    }

    fn decode(v: Option<&str>) -> Result<Stored, StoreError> {
        match v {
            None => Ok(Stored::Never),
            Some("on") => Ok(Stored::On),
            Some("off") => Ok(Stored::Off),
            Some(other) => Err(StoreError(format!(
                "stored relay setting {other:?} is invalid"
            ))),
        }
    }

    fn encode(self) -> Value {
        match self {
            Stored::Never => Value::Null,
            Stored::On => "on".into(),
            Stored::Off => "off".into(),
        }
    }
}

/// The stored relay setting (`Never` without a namespace row).
pub fn stored(sql: &impl Sql) -> Result<Stored, StoreError> {
    let rows = sql.exec("SELECT relays FROM namespace WHERE id = 1", &[])?;
    match rows.first() {
        None => Ok(Stored::Never),
        Some(r) => Stored::decode(opt_text(r, 0)?),
    }
}

/// The relay setting as the start rule reads it: a namespace whose object
/// ever saw a rollback (`fence_forwards`) counts as one whose relays were
/// on, since the copy it was restored from may predate relays being turned
/// on (see the module documentation).
pub fn for_acts(sql: &impl Sql) -> Result<Stored, StoreError> {
    let setting = stored(sql)?;
    if setting != Stored::Never {
        return Ok(setting);
    }
    let rolled_back = super::load_any(sql)?.is_some_and(|row| row.fence_forwards > 0);
    Ok(if rolled_back {
        Stored::Off
    } else {
        Stored::Never
    })
}

/// Before relays are turned on (they are not on now): the mark to raise
/// the fence's witness to first, one past the highest the object asked
/// for or holds (`fence_asked`, `fence`), so that any copy of its storage
/// from before is below the witness, a rollback at its start. A setting
/// never turned on is first stored `off` ("were on at some time"), in a
/// commit before the raise, so that a copy taken while the raise is on
/// its way keeps the start rule too. `None` when relays are on already,
/// or the fence is at its end. Refuses like the change itself when the
/// namespace does not exist.
pub fn first_on_mark(
    sql: &impl Sql,
    ns: &rangeid_core::Namespace,
) -> Result<Option<u128>, ApiError> {
    let row = super::load(sql, ns)?;
    let setting = stored(sql).map_err(super::unavailable)?;
    if setting.is_on() {
        return Ok(None);
    }
    if setting == Stored::Never {
        store(sql, Stored::Off).map_err(super::unavailable)?;
    }
    let top = row.state.fence().max(row.fence_asked);
    Ok((top < 1 << 64).then_some(top + 1))
}

/// The longest lease a relay object of this namespace ever asked under
/// ([`record_lease`]), if any.
pub fn widest_lease(sql: &impl Sql) -> Result<Option<u64>, StoreError> {
    let rows = sql.exec("SELECT relay_lease_ms FROM namespace WHERE id = 1", &[])?;
    Ok(match rows.first() {
        Some(r) => super::store::opt_int(r, 0)?.and_then(|v| u64::try_from(v).ok()),
        None => None,
    })
}

/// Keeps `lease_ms`, the lease a relay object asks under, when it is the
/// longest yet: the object's gate waits it out in this run
/// ([`RelayDesk::answered`]) and, read at each start, in later runs
/// ([`RelayDesk::widen`]). A restore of the object's storage to a copy
/// from before a longer lease was seen forgets it: lower the lease and
/// restore one after the other, a lease apart. During a deployment that shortens
/// `RANGEID_RELAY_LEASE_MS`, a relay still on the old version is so
/// waited out for its whole lease. A lease out of core's bounds is refused
/// (`503`), nothing granted.
pub fn record_lease(sql: &impl Sql, lease_ms: u64) -> Result<(), ApiError> {
    let terms = RelayTerms::new(lease_ms)
        .map_err(|e| ApiError::unavailable(format!("relay lease {lease_ms} ms: {e}")))?;
    if widest_lease(sql).map_err(super::unavailable)? >= Some(terms.lease_ms()) {
        return Ok(());
    }
    sql.exec(
        "UPDATE namespace SET relay_lease_ms = ? WHERE id = 1",
        &[Value::Int(terms.lease_ms() as i64)],
    )
    .map_err(super::unavailable)?;
    Ok(())
}

/// `403 forbidden`: a relay's range request while relays are off.
pub fn relays_off() -> ApiError {
    refused(RelayRefusal::RelaysOff)
}

fn refused(refusal: RelayRefusal) -> ApiError {
    ApiError::new(refusal.code(), refusal.to_string())
}

/// Stores the relay setting; run it in the transaction of its audit entry.
pub fn store(sql: &impl Sql, to: Stored) -> Result<(), StoreError> {
    sql.exec(
        "UPDATE namespace SET relays = ? WHERE id = 1",
        &[to.encode()],
    )
    .map(|_| ())
}

/// The header with which the namespace object tells the front Worker,
/// on every answer to a generator's range request, whether the
/// namespace's relays are on (`on`, `off`): the front routes the
/// namespace's next grants by it (`front::relay_route`).
pub const RELAYS_HEADER: &str = "x-rangeid-relays";

/// The [`RELAYS_HEADER`] value for the answer to `request`: `Some` only for
/// a generator's range request (none when storage cannot be read: the front
/// keeps what it knew).
pub fn route_hint(sql: &impl Sql, request: &ObjectRequest) -> Option<&'static str> {
    if !matches!(request, ObjectRequest::Grant { relay: false, .. }) {
        return None;
    }
    match stored(sql) {
        Ok(s) if s.is_on() => Some("on"),
        Ok(_) => Some("off"),
        Err(_) => None,
    }
}

/// At most this many regions' relay objects hold ranges of one namespace
/// at a time: a generator may name any region (`?region=`), and each
/// region's relay takes ranges of its own, is called at every act, and
/// reports into the ledger, so a token that names region after region
/// could otherwise make the namespace object feed and revoke relays
/// without bound. A region past it is refused until one held nothing for
/// a lease (`RelayDesk::screen`); its relay stops, and its generators are
/// served by the namespace object meanwhile.
pub const MAX_RELAY_REGIONS: usize = 32;

/// Core's [`RelayGate`] for one run of the namespace object, made at its
/// start and never stored, with the start rule as the module says.
#[derive(Clone, Debug)]
pub struct RelayDesk {
    gate: RelayGate,
    // The region of each relay object incarnation granted to (never a
    // token's relay, which no call can reach): whom to revoke.
    via: BTreeMap<Incarnation, Region>,
    // The latest clock reading seen: the gate measures on a clock that
    // never goes back, and the runtime's wall clock could.
    last: u64,
}

impl RelayDesk {
    /// The desk of an object that started at `started_at` (ms), for relay
    /// leases of `lease_ms`.
    pub fn new(lease_ms: u64, started_at: i64) -> Result<RelayDesk, TermsError> {
        let terms = RelayTerms::new(lease_ms)?;
        let at = started_at.max(0) as u64;
        Ok(RelayDesk {
            gate: RelayGate::new(terms, Instant::from_ms(at)),
            via: BTreeMap::new(),
            last: at,
        })
    }

    /// The desk of an object starting at `now` (ms) with this version's
    /// lease `lease_ms`, widened to the longest lease a relay object of
    /// this namespace ever asked under ([`widest_lease`]): a relay an
    /// earlier run granted to may serve by it.
    pub fn at_start(sql: &impl Sql, lease_ms: u64, now: i64) -> Result<RelayDesk, String> {
        let mut desk = RelayDesk::new(lease_ms, now).map_err(|e| e.to_string())?;
        if let Some(ms) = widest_lease(sql).map_err(|e| e.to_string())? {
            desk.widen(ms);
        }
        Ok(desk)
    }

    /// The lease terms.
    pub fn terms(&self) -> RelayTerms {
        self.gate.terms()
    }

    /// Waits out a lease of `lease_ms` from now on when it is longer than
    /// the present terms (a lease out of core's bounds changes nothing):
    /// at the start, with [`widest_lease`]; and before recording a grant
    /// to a relay object that asked under it.
    pub fn widen(&mut self, lease_ms: u64) {
        if let Ok(terms) = RelayTerms::new(lease_ms) {
            self.gate.widen(terms);
        }
    }

    fn instant(&mut self, now: i64) -> Instant {
        self.last = self.last.max(now.max(0) as u64);
        Instant::from_ms(self.last)
    }

    /// Whether a range request from relay `incarnation` may be decided, with
    /// the relay setting `stored`: `403 forbidden` while relays are off or
    /// once the incarnation was revoked.
    pub fn admit(&self, stored: Stored, incarnation: &Incarnation) -> Result<(), ApiError> {
        self.gate
            .admit(stored.is_on(), incarnation)
            .map_err(refused)
    }

    /// Records a grant (new or replayed) answered to relay `incarnation` at
    /// `now`, in the same step as its decision (no await between).
    pub fn granted(&mut self, incarnation: Incarnation, now: i64) {
        let now = self.instant(now);
        self.gate.prune(now);
        self.gate.granted(incarnation, now);
        if !self.via.is_empty() {
            let live: BTreeSet<Incarnation> = self.gate.live(now).copied().collect();
            self.via.retain(|i, _| live.contains(i));
        }
    }

    /// Records a grant answered to relay `incarnation`, one of this
    /// authority's relay objects in `region` when `via` says so.
    pub fn granted_via(&mut self, incarnation: Incarnation, via: Option<&Region>, now: i64) {
        self.granted(incarnation, now);
        if let Some(region) = via {
            self.via.insert(incarnation, region.clone());
        }
    }

    /// Whom to revoke now to acknowledge `act` sooner: each relay object
    /// region with the incarnations it was granted that the act still
    /// waits for, leaving out those already `asked` (a relay object that
    /// answered a revocation without closing one no longer runs it, so
    /// only its lease can end it). A token's relay is never listed: no call
    /// reaches it, and its lease is waited out.
    pub fn to_revoke(
        &mut self,
        act: &AdminAct,
        asked: &BTreeSet<Incarnation>,
        now: i64,
    ) -> Vec<(Region, Vec<Incarnation>)> {
        let now = self.instant(now);
        let live: BTreeSet<&Incarnation> = self.gate.live(now).collect();
        let mut by_region: BTreeMap<Region, Vec<Incarnation>> = BTreeMap::new();
        for inc in act.pending() {
            if asked.contains(inc) || !live.contains(inc) {
                continue;
            }
            if let Some(region) = self.via.get(inc) {
                by_region.entry(region.clone()).or_default().push(*inc);
            }
        }
        by_region.into_iter().collect()
    }

    /// Records that relay `incarnation` acknowledged a revocation at `now`.
    pub fn revoked(&mut self, incarnation: Incarnation, now: i64) {
        let now = self.instant(now);
        self.gate.revoked(incarnation, now);
    }

    /// An act (freeze, floor, export, relays off) that committed at `now`,
    /// with the relay setting `stored` after it: what it waits for, or
    /// `None` when it may be answered at once (relays were never turned
    /// on and this run granted to none: no relay can hold anything).
    pub fn begin(&mut self, stored: Stored, now: i64) -> Option<AdminAct> {
        let now = self.instant(now);
        if stored == Stored::Never && self.gate.is_empty() {
            return None;
        }
        Some(self.gate.begin(now))
    }

    /// How long to sleep before asking again (ms), or `None` when the act
    /// may be acknowledged at `now`.
    pub fn wait_ms(&mut self, act: &mut AdminAct, now: i64) -> Option<u64> {
        let now = self.instant(now);
        match self.gate.check(act, now) {
            ActStatus::Acknowledge => None,
            ActStatus::Wait { until, .. } => Some(until.as_ms().saturating_sub(now.as_ms()).max(1)),
            // A status this version does not know: wait a whole lease more.
            _ => Some(self.gate.terms().wait_ms()),
        }
    }

    /// Before `request` is served: a relay's range request is refused
    /// (`403 forbidden`) while relays are off or once its incarnation was
    /// revoked, or from a relay object of a region beyond the
    /// [`MAX_RELAY_REGIONS`] that may hold ranges now (that relay stops,
    /// and its generators are served by the namespace object);
    /// everything else passes. Storage that cannot be read refuses it
    /// (`503`), never admits it.
    pub fn screen(
        &self,
        sql: &impl Sql,
        request: &ObjectRequest,
        now: i64,
    ) -> Result<(), ApiError> {
        let ObjectRequest::Grant {
            request,
            relay: true,
            via,
            ..
        } = request
        else {
            return Ok(());
        };
        let stored = stored(sql).map_err(super::unavailable)?;
        self.admit(stored, &request.incarnation)?;
        if let Some(region) = via {
            let live: BTreeSet<&Incarnation> = self.live(now).collect();
            let regions: BTreeSet<&Region> = (self.via.iter())
                .filter(|(inc, _)| live.contains(inc))
                .map(|(_, r)| r)
                .collect();
            if !regions.contains(region) && regions.len() >= MAX_RELAY_REGIONS {
                // Forbidden: the relay stops and sends its generators'
                // requests to the namespace object (a stopped relay's 503
                // with the route header), which serves them directly.
                return Err(ApiError::new(
                    rangeid_core::ErrorCode::Forbidden,
                    format!(
                        "{MAX_RELAY_REGIONS} relay regions hold ranges of this namespace already; \
                         region {:?} is served by the namespace object until one of them has \
                         been idle a lease",
                        region.as_str()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Right after `request` was answered `status` at `now`, with no await
    /// between: a grant to a relay (new or replayed) is recorded; a
    /// freeze, floor, export or relays turned off that succeeded answers
    /// the act to wait for before replying, if any. Storage that cannot
    /// be read counts as relays on (wait, never skip the wait), and so
    /// does a namespace whose object has not `started` (heard from its
    /// witness since it started): a restore it has not seen yet may hide
    /// that relays were on.
    pub fn answered(
        &mut self,
        sql: &impl Sql,
        request: &ObjectRequest,
        status: u16,
        now: i64,
        started: bool,
    ) -> Option<AdminAct> {
        if status != 200 {
            return None;
        }
        match request {
            ObjectRequest::Grant {
                request,
                relay: true,
                via,
                lease_ms,
                ..
            } => {
                if let Some(ms) = lease_ms {
                    self.widen(*ms);
                }
                self.granted_via(request.incarnation, via.as_ref(), now);
                None
            }
            ObjectRequest::Floor { .. }
            | ObjectRequest::SetFrozen { frozen: true, .. }
            | ObjectRequest::Export { .. }
            | ObjectRequest::SetRelays {
                relays: RelaysSetting::Off,
                ..
            } => {
                let setting = for_acts(sql).unwrap_or(Stored::On);
                let setting = if started {
                    setting
                } else {
                    setting.max_known()
                };
                self.begin(setting, now)
            }
            _ => None,
        }
    }

    /// Relay incarnations that may still serve at `now`, not revoked: whom
    /// a revocation would speed an act up for.
    pub fn live(&self, now: i64) -> impl Iterator<Item = &Incarnation> + '_ {
        self.gate
            .live(Instant::from_ms(self.last.max(now.max(0) as u64)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rangeid_core::ErrorCode;

    fn inc(b: u8) -> Incarnation {
        Incarnation::from_random([b; 16])
    }

    const LEASE: u64 = 1_000;

    fn desk(started_at: i64) -> RelayDesk {
        RelayDesk::new(LEASE, started_at).unwrap()
    }

    /// Runs an act to its acknowledgement, sleeping as told; the time it
    /// was acknowledged.
    fn acknowledged_at(d: &mut RelayDesk, mut act: AdminAct, mut now: i64) -> i64 {
        while let Some(ms) = d.wait_ms(&mut act, now) {
            now += ms as i64;
        }
        now
    }

    #[test]
    fn a_namespace_whose_relays_were_never_on_acknowledges_at_once() {
        let mut d = desk(5_000);
        assert_eq!(d.begin(Stored::Never, 5_001), None);
    }

    #[test]
    fn once_relays_were_on_an_act_right_after_a_start_waits_a_lease() {
        let wait = RelayTerms::new(LEASE).unwrap().wait_ms() as i64;
        for stored in [Stored::On, Stored::Off] {
            let mut d = desk(5_000);
            let act = d.begin(stored, 5_001).expect("the start rule applies");
            assert_eq!(acknowledged_at(&mut d, act, 5_001), 5_000 + wait);
        }
        // Long after the start, with no relay granted to: at once.
        let mut d = desk(5_000);
        let mut act = d.begin(Stored::On, 5_000 + wait).unwrap();
        assert_eq!(d.wait_ms(&mut act, 5_000 + wait), None);
    }

    #[test]
    fn a_grant_to_a_relay_is_waited_out_even_if_the_setting_says_never() {
        let wait = RelayTerms::new(LEASE).unwrap().wait_ms() as i64;
        let mut d = desk(0);
        let t = 100_000;
        d.granted(inc(1), t);
        let act = d
            .begin(Stored::Never, t + 10)
            .expect("a relay was granted to");
        assert_eq!(acknowledged_at(&mut d, act, t + 10), t + wait);
    }

    #[test]
    fn a_replayed_grant_later_extends_the_wait() {
        let wait = RelayTerms::new(LEASE).unwrap().wait_ms() as i64;
        let mut d = desk(0);
        d.granted(inc(1), 100_000);
        d.granted(inc(1), 100_400);
        let act = d.begin(Stored::On, 100_500).unwrap();
        assert_eq!(acknowledged_at(&mut d, act, 100_500), 100_400 + wait);
    }

    #[test]
    fn a_revocation_acknowledged_ends_the_wait_early() {
        let mut d = desk(0);
        d.granted(inc(1), 100_000);
        let mut act = d.begin(Stored::On, 100_010).unwrap();
        assert!(d.wait_ms(&mut act, 100_010).is_some());
        d.revoked(inc(1), 100_015);
        assert_eq!(d.wait_ms(&mut act, 100_020), None);
        // And the revoked incarnation is refused from now on.
        assert_eq!(
            d.admit(Stored::On, &inc(1)).unwrap_err().code,
            ErrorCode::Forbidden
        );
    }

    #[test]
    fn a_clock_that_goes_back_does_not_shorten_the_wait() {
        let wait = RelayTerms::new(LEASE).unwrap().wait_ms() as i64;
        let mut d = desk(0);
        d.granted(inc(1), 100_000);
        let mut act = d.begin(Stored::On, 100_010).unwrap();
        // The wall clock steps back by a minute: still waiting, as long.
        let left = d.wait_ms(&mut act, 40_000).unwrap() as i64;
        assert_eq!(left, 100_000 + wait - 100_010);
    }

    #[test]
    fn relay_requests_are_admitted_only_while_relays_are_on() {
        let d = desk(0);
        assert!(d.admit(Stored::On, &inc(2)).is_ok());
        for off in [Stored::Never, Stored::Off] {
            let e = d.admit(off, &inc(2)).unwrap_err();
            assert_eq!(e.code, ErrorCode::Forbidden);
            assert!(e.message.contains("turned off"), "{}", e.message);
        }
    }

    #[test]
    fn turning_off_relays_that_were_never_on_keeps_the_fast_path() {
        assert_eq!(Stored::Never.after(RelaysSetting::Off), Stored::Never);
        assert_eq!(Stored::Never.after(RelaysSetting::On), Stored::On);
        assert_eq!(Stored::On.after(RelaysSetting::Off), Stored::Off);
        assert_eq!(Stored::Off.after(RelaysSetting::On), Stored::On);
    }

    #[test]
    fn the_setting_is_stored_shown_and_audited() {
        use crate::object::tests::{call, create_req, db, ns};
        use crate::object::ObjectRequest;
        let db = db();
        call(&db, create_req("orders", 1, 1_000, 10));
        assert_eq!(stored(&db).unwrap(), Stored::Never);
        let set = |relays| ObjectRequest::SetRelays {
            namespace: ns("orders"),
            relays,
            reason: "edge latency".into(),
            actor: "ops".into(),
        };
        let (status, summary) = call(
            &db,
            ObjectRequest::Summary {
                namespace: ns("orders"),
            },
        );
        assert_eq!((status, summary["relays"].as_str()), (200, Some("off")));
        let (status, summary) = call(&db, set(RelaysSetting::On));
        assert_eq!((status, summary["relays"].as_str()), (200, Some("on")));
        assert_eq!(stored(&db).unwrap(), Stored::On);
        let (_, summary) = call(&db, set(RelaysSetting::Off));
        assert_eq!(summary["relays"], "off");
        assert_eq!(stored(&db).unwrap(), Stored::Off);
        let (_, audit) = call(
            &db,
            ObjectRequest::Audit {
                namespace: ns("orders"),
                limit: 10,
                before: None,
            },
        );
        let last = &audit["audit"][0];
        assert_eq!(last["action"], "relays");
        assert_eq!(last["actor"], "ops");
        assert_eq!(last["before"]["relays"], "on");
        assert_eq!(last["after"]["relays"], "off");
        assert_eq!(last["reason"], "edge latency");
        assert_eq!(audit["audit"][1]["after"]["relays"], "on");
        // On a namespace that does not exist: 404, nothing written.
        let (status, _) = call(
            &super::super::tests::db(),
            ObjectRequest::SetRelays {
                namespace: ns("nope"),
                relays: RelaysSetting::On,
                reason: "x".into(),
                actor: "ops".into(),
            },
        );
        assert_eq!(status, 404);
    }

    thread_local! {
        /// Whether the object in a test has heard from its witness since
        /// its start (the driver's start gate): yes unless a test says.
        static STARTED: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    }

    fn started(_db: &crate::object::store::mem::MemSql) -> bool {
        STARTED.with(std::cell::Cell::get)
    }

    /// The namespace object's requests as the driver serves them: screened,
    /// handled, then answered to the desk, all at `now`.
    fn serve(
        d: &mut RelayDesk,
        db: &crate::object::store::mem::MemSql,
        r: &ObjectRequest,
        now: i64,
    ) -> (u16, Option<AdminAct>) {
        if let Err(e) = d.screen(db, r, now) {
            return (e.reply().status, None);
        }
        let status = crate::object::tests::run(db, r, now).reply.status;
        (status, d.answered(db, r, status, now, started(db)))
    }

    fn relay_grant(inc: &str, id: &str) -> ObjectRequest {
        crate::object::tests::relay_grant_as("relay-eu", "orders", inc, id, 10)
    }

    fn set_relays(to: RelaysSetting) -> ObjectRequest {
        ObjectRequest::SetRelays {
            namespace: crate::object::tests::ns("orders"),
            relays: to,
            reason: "r".into(),
            actor: "ops".into(),
        }
    }

    fn freeze() -> ObjectRequest {
        ObjectRequest::SetFrozen {
            namespace: crate::object::tests::ns("orders"),
            frozen: true,
            reason: "r".into(),
            actor: "ops".into(),
        }
    }

    const INC: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn the_object_refuses_a_relay_while_relays_are_off_and_waits_out_its_grants() {
        use crate::object::tests::{create_req, db, grant_req, T0};
        let wait = RelayTerms::new(LEASE).unwrap().wait_ms() as i64;
        let db = db();
        let mut d = desk(T0);
        serve(&mut d, &db, &create_req("orders", 1, 1_000_000, 100), T0);
        // Relays never on: a relay's request is refused, nothing written; a
        // generator's is served; a freeze is answered at once.
        assert_eq!(serve(&mut d, &db, &relay_grant(INC, "r1"), T0).0, 403);
        assert_eq!(
            serve(&mut d, &db, &grant_req("orders", INC, "r1", 5), T0).0,
            200
        );
        let (status, act) = serve(&mut d, &db, &freeze(), T0);
        assert_eq!((status, act), (200, None));
        // Relays on: the relay is served and recorded.
        let t = T0 + 5 * wait;
        assert_eq!(
            serve(&mut d, &db, &set_relays(RelaysSetting::On), t).1,
            None
        );
        let unfrozen = crate::object::tests::run(
            &db,
            &ObjectRequest::SetFrozen {
                namespace: crate::object::tests::ns("orders"),
                frozen: false,
                reason: "r".into(),
                actor: "ops".into(),
            },
            t,
        );
        assert_eq!(unfrozen.reply.status, 200);
        assert_eq!(serve(&mut d, &db, &relay_grant(INC, "r1"), t).0, 200);
        // A freeze now waits the relay's lease out, from its grant.
        let (status, act) = serve(&mut d, &db, &freeze(), t + 10);
        assert_eq!(status, 200);
        let act = act.expect("a relay holds a grant");
        assert_eq!(acknowledged_at(&mut d, act, t + 10), t + wait);
        // Relays off: answered once the relay's lease ran out (a replay of
        // its grant just before is waited out too); then it is refused.
        let t2 = t + 2 * wait;
        let replay = serve(&mut d, &db, &relay_grant(INC, "r1"), t2);
        assert_eq!(replay.0, 200, "a frozen namespace still replays");
        let (status, act) = serve(&mut d, &db, &set_relays(RelaysSetting::Off), t2 + 5);
        assert_eq!(status, 200);
        assert_eq!(acknowledged_at(&mut d, act.unwrap(), t2 + 5), t2 + wait);
        assert_eq!(
            serve(&mut d, &db, &relay_grant(INC, "r1"), t2 + wait).0,
            403
        );
    }

    #[test]
    fn after_a_restart_an_act_waits_a_lease_once_relays_were_on() {
        use crate::object::tests::{create_req, db, T0};
        let wait = RelayTerms::new(LEASE).unwrap().wait_ms() as i64;
        let db = db();
        let mut d = desk(T0);
        serve(&mut d, &db, &create_req("orders", 1, 1_000_000, 100), T0);
        serve(&mut d, &db, &set_relays(RelaysSetting::On), T0);
        serve(&mut d, &db, &set_relays(RelaysSetting::Off), T0 + 2 * wait);
        // A new run of the object: its desk is new and empty, but relays
        // were on, so a floor waits a lease after the start.
        let start = T0 + 10 * wait;
        let mut d = desk(start);
        let floor = ObjectRequest::Floor {
            namespace: crate::object::tests::ns("orders"),
            floor: rangeid_core::wire::DecU64(500),
            actor: "ops".into(),
        };
        let (status, act) = serve(&mut d, &db, &floor, start + 1);
        assert_eq!(status, 200);
        assert_eq!(
            acknowledged_at(&mut d, act.unwrap(), start + 1),
            start + wait
        );
        // A refused act (a floor below next) waits for nothing.
        let below = ObjectRequest::Floor {
            namespace: crate::object::tests::ns("orders"),
            floor: rangeid_core::wire::DecU64(100),
            actor: "ops".into(),
        };
        let (status, act) = serve(&mut d, &db, &below, start + 2);
        assert_eq!((status, act), (409, None));
    }

    #[test]
    fn a_restore_to_a_copy_from_before_relays_were_first_on_keeps_the_start_rule() {
        use crate::object::tests::{check, create_req, db, grant_req, restore, snapshot, T0};
        let wait = RelayTerms::new(LEASE).unwrap().wait_ms() as i64;
        let db = db();
        let mut d = desk(T0);
        serve(&mut d, &db, &create_req("orders", 1, 1_000_000, 100), T0);
        // A generator's grant raises the witness a chunk ahead: the relay's
        // grant below fits in that chunk and raises nothing itself.
        let g = serve(&mut d, &db, &grant_req("orders", INC, "r1", 5), T0);
        assert_eq!(g.0, 200);
        let copy = snapshot(&db);
        // Relays on for the first time: the witness goes above the fence
        // first; a relay takes a range.
        let fence = crate::object::load_any(&db).unwrap().unwrap().state.fence();
        assert_eq!(
            first_on_mark(&db, &crate::object::tests::ns("orders")),
            Ok(Some(fence + 1))
        );
        serve(&mut d, &db, &set_relays(RelaysSetting::On), T0 + 1);
        let mark = crate::object::tests::WITNESS.with(std::cell::Cell::get);
        assert_eq!(serve(&mut d, &db, &relay_grant(INC, "r1"), T0 + 2).0, 200);
        assert_eq!(
            crate::object::tests::WITNESS.with(std::cell::Cell::get),
            mark,
            "the relay's grant raised nothing"
        );
        // Once on, later turns on raise nothing more.
        assert_eq!(
            first_on_mark(&db, &crate::object::tests::ns("orders")),
            Ok(None)
        );
        // The storage goes back to the copy (relays never on), and the
        // object starts anew: the start sees a rollback, so a freeze right
        // after it waits a lease, as the relay may still serve.
        restore(&db, &copy);
        let start = T0 + 100;
        let heard = check(&db, start);
        assert!(heard.forward, "{heard:?}");
        assert_eq!(stored(&db), Ok(Stored::Never));
        assert_eq!(for_acts(&db), Ok(Stored::Off));
        let mut d = desk(start);
        let (status, act) = serve(&mut d, &db, &freeze(), start + 1);
        assert_eq!(status, 200);
        let act = act.expect("the start rule applies after a rollback");
        assert_eq!(acknowledged_at(&mut d, act, start + 1), start + wait);
    }

    #[test]
    fn at_most_max_relay_regions_hold_ranges_at_once() {
        use crate::object::tests::{create_req, db, grant_as, T0};
        let wait = RelayTerms::new(LEASE).unwrap().wait_ms() as i64;
        let db = db();
        let mut d = desk(T0);
        serve(&mut d, &db, &create_req("orders", 1, 1 << 40, 100), T0);
        serve(&mut d, &db, &set_relays(RelaysSetting::On), T0);
        let from = |r: usize, id: &str| {
            let region = Region::new(&format!("r{r}")).unwrap();
            let mut g = grant_as(
                &format!("relay@r{r}"),
                "orders",
                &format!("{r:032x}"),
                id,
                10,
            );
            if let ObjectRequest::Grant { relay, via, .. } = &mut g {
                *relay = true;
                *via = Some(region);
            }
            g
        };
        for r in 0..MAX_RELAY_REGIONS {
            assert_eq!(
                serve(&mut d, &db, &from(r, "r1"), T0 + 1).0,
                200,
                "region {r}"
            );
        }
        // One more region: refused, nothing granted; those live still served.
        let (status, _) = serve(&mut d, &db, &from(MAX_RELAY_REGIONS, "r1"), T0 + 2);
        assert_eq!(status, 403);
        assert_eq!(serve(&mut d, &db, &from(3, "r2"), T0 + 2).0, 200);
        // Once the others held nothing for a lease, it is served.
        let later = T0 + 2 + wait;
        assert_eq!(
            serve(&mut d, &db, &from(MAX_RELAY_REGIONS, "r1"), later).0,
            200
        );
    }

    #[test]
    fn a_relay_on_a_longer_lease_is_waited_out_in_this_run_and_after_a_restart() {
        use crate::object::tests::{create_req, db, T0};
        let long = 4 * LEASE;
        let wait = |ms| RelayTerms::new(ms).unwrap().wait_ms() as i64;
        let db = db();
        let mut d = desk(T0);
        serve(&mut d, &db, &create_req("orders", 1, 1 << 40, 100), T0);
        serve(&mut d, &db, &set_relays(RelaysSetting::On), T0);
        assert_eq!(widest_lease(&db), Ok(None));
        let mut g = relay_grant(INC, "r1");
        if let ObjectRequest::Grant { lease_ms, .. } = &mut g {
            *lease_ms = Some(long);
        }
        let t = T0 + 10 * wait(long);
        assert_eq!(serve(&mut d, &db, &g, t).0, 200);
        assert_eq!(widest_lease(&db), Ok(Some(long)));
        let (_, act) = serve(&mut d, &db, &freeze(), t + 1);
        assert_eq!(acknowledged_at(&mut d, act.unwrap(), t + 1), t + wait(long));
        // A new run of the object, on this version's shorter lease, reads
        // the widest lease at its start and waits it.
        let start = t + 100;
        let mut d = RelayDesk::at_start(&db, LEASE, start).unwrap();
        let floor = ObjectRequest::Floor {
            namespace: crate::object::tests::ns("orders"),
            floor: rangeid_core::wire::DecU64(1 << 30),
            actor: "ops".into(),
        };
        let (status, act) = serve(&mut d, &db, &floor, start + 1);
        assert_eq!(status, 200);
        assert_eq!(
            acknowledged_at(&mut d, act.unwrap(), start + 1),
            start + wait(long)
        );
        // A shorter lease, or one out of bounds, changes nothing; the
        // latter is refused.
        assert_eq!(record_lease(&db, LEASE), Ok(()));
        assert_eq!(widest_lease(&db), Ok(Some(long)));
        assert_eq!(
            record_lease(&db, 1).map_err(|e| e.code),
            Err(ErrorCode::Unavailable)
        );
    }

    /// A namespace with a generator's grant, `before` done to it, a copy
    /// of its storage, then relays turned on and a relay granted to, and
    /// the storage put back to the copy: what a restore to a copy from
    /// before relays were first on leaves.
    fn restored_from_before_relays(
        before: impl FnOnce(&crate::object::store::mem::MemSql),
    ) -> crate::object::store::mem::MemSql {
        use crate::object::tests::{create_req, db, grant_req, restore, snapshot, T0};
        let db = db();
        let mut d = desk(T0);
        serve(&mut d, &db, &create_req("orders", 1, 1_000_000, 100), T0);
        let granted = serve(&mut d, &db, &grant_req("orders", INC, "r1", 5), T0);
        assert_eq!(granted.0, 200);
        before(&db);
        let copy = snapshot(&db);
        serve(&mut d, &db, &set_relays(RelaysSetting::On), T0 + 1);
        assert_eq!(serve(&mut d, &db, &relay_grant(INC, "r1"), T0 + 2).0, 200);
        restore(&db, &copy);
        db
    }

    #[test]
    fn a_lost_raise_answer_before_relays_first_on_does_not_hide_a_restore() {
        use crate::object::tests::{check, T0};
        // A background raise whose answer was lost: asked recorded, the
        // witness applied it, the fence did not move.
        let db = restored_from_before_relays(|db| {
            let fence = crate::object::load_any(db).unwrap().unwrap().state.fence();
            crate::object::grant::record_asked(db, fence + 50).unwrap();
            crate::object::tests::WITNESS.with(|w| w.set(fence + 50));
        });
        let start = T0 + 100;
        let heard = check(&db, start);
        let mut d = desk(start);
        let (_, act) = serve(&mut d, &db, &freeze(), start + 1);
        assert!(
            heard.forward && act.is_some(),
            "restore unseen: heard {heard:?}, act {act:?}, for_acts {:?}",
            for_acts(&db)
        );
    }

    #[test]
    fn a_freeze_before_the_start_heard_the_witness_waits_as_if_relays_were_on() {
        use crate::object::tests::T0;
        let db = restored_from_before_relays(|_| {});
        // The start could not read the witness (no check): a freeze,
        // which does not wait for it, must wait as if relays were on.
        STARTED.with(|s| s.set(false));
        let start = T0 + 100;
        let mut d = desk(start);
        let (_, act) = serve(&mut d, &db, &freeze(), start + 1);
        assert!(
            act.is_some(),
            "acknowledged at once before the witness was heard"
        );
    }

    #[test]
    fn the_lease_must_be_one_core_accepts() {
        assert!(RelayDesk::new(50, 0).is_err());
        assert!(RelayDesk::new(100, 0).is_ok());
    }
}
