//! The relay object's logic (docs/relays.md): one relay per (namespace,
//! region), in memory only, running core's [`Relay`]. Its driver
//! (`driver::relay`, wasm32 only) reads the clock and random bytes, moves
//! bytes to and from the namespace object and the front Worker, and sleeps
//! until [`RelayRun::next_deadline`]; every decision is core's or here.
//!
//! - A generator's `POST /v1/ranges`, routed here by the front Worker
//!   ([`RelayRequest::Grant`]), is answered from memory with a sub-range,
//!   or parked until the relay's next root grant, or refused as the
//!   namespace object would ([`answer_reply`]).
//! - The relay takes its own ranges from the namespace object as a
//!   generator does, by an object-to-object call that no token can make:
//!   [`root_request`] builds it with `relay: true`, the relay's own `sub`
//!   ([`relay_owner`]) and its region (`via`), so the namespace object
//!   admits it only while relays are on and can reach it to revoke it. A
//!   generator's token never reaches the namespace object as a relay: the
//!   front Worker sets `relay` only for a token with the `relay` role.
//! - A revocation from the namespace object ([`RelayRequest::Revoke`])
//!   closes the relay's incarnation if it is one the object named
//!   ([`Relay::handle_revoke_of`]) and answers the incarnation closed.
//! - Nothing is stored: a restart abandons what the relay held, and the
//!   new instance starts with a new incarnation (fresh random bits).
//! - Once the namespace object refused the relay for good (relays off),
//!   it answers `unavailable` with [`ROUTE_HEADER`] `object`, and the front
//!   Worker sends that request, and the namespace's next ones, to the
//!   namespace object itself. A generator's request that reaches a stopped
//!   relay again starts it anew ([`Relay::revive`]): the front routes here
//!   only when the namespace object last said its relays are on.

use rangeid_core::authority::Owner;
use rangeid_core::relay::{Answer, Relay, RelayConfig, RelayTerms, ReportBatch};
use rangeid_core::reply::Reply;
use rangeid_core::time::Instant;
use rangeid_core::wire::{ErrorReply, HttpAnswer};
use rangeid_core::{Action, ErrorCode, GrantRequest, Namespace, Ticket};
use serde::{Deserialize, Serialize};

use crate::api::Region;
use crate::object::reports::{RelayView, Reported};
use crate::object::ObjectRequest;
use crate::shared::response::HttpReply;

/// The header with which a relay tells the front Worker to send a request
/// to the namespace object instead (value `object`): the object refused
/// the relay for good (relays are off). The front strips it.
pub const ROUTE_HEADER: &str = "x-rangeid-route";

/// What the relay object is asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum RelayRequest {
    /// A generator's range request (the front Worker authenticated and
    /// validated it; `owner` is its token's `sub`).
    Grant {
        /// The request.
        request: GrantRequest,
        /// The token's `sub`.
        owner: String,
        /// The relay's region (the object's name holds it too).
        region: Region,
    },
    /// The namespace object revokes these incarnations of this relay.
    Revoke {
        /// The namespace.
        namespace: Namespace,
        /// The relay's region.
        region: Region,
        /// The incarnations the object wants closed.
        incarnations: Vec<rangeid_core::names::Incarnation>,
    },
}

/// The relay's answer to a revocation: the incarnation it closed, or
/// `null` when its current one is none of those named.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revoked {
    /// The incarnation closed.
    pub closed: Option<rangeid_core::names::Incarnation>,
}

/// The relay object's name for `namespace` in `region` (its
/// `idFromName`): the region, a slash (which no namespace name holds),
/// the namespace.
pub fn object_name(namespace: &Namespace, region: &Region) -> String {
    format!("{}/{}", region.as_str(), namespace.as_str())
}

/// How every relay object's `sub` begins ([`relay_owner`]).
pub const RELAY_OWNER_PREFIX: &str = "relay@";

/// The `sub` a relay object takes ranges under, on the namespace object's
/// ledger: `relay@REGION`. No token may take ranges under such a `sub`
/// ([`reserved_owner`]): it would share the relay's requests (and be
/// replayed the ranges the relay is cutting up).
pub fn relay_owner(region: &Region) -> String {
    format!("{RELAY_OWNER_PREFIX}{}", region.as_str())
}

/// Whether `owner`, a token's `sub`, is one only relay objects take ranges
/// under.
pub fn reserved_owner(owner: &str) -> bool {
    owner.starts_with(RELAY_OWNER_PREFIX)
}

/// `403 forbidden` for a token's range request under a reserved `sub`
/// ([`reserved_owner`]): the front Worker refuses it before routing (a
/// relay would serve it), the namespace object again.
pub fn reserved_owner_refused(owner: &str) -> crate::shared::response::ApiError {
    crate::shared::response::ApiError::new(
        ErrorCode::Forbidden,
        format!(
            "the token's sub {owner:?} is reserved for the authority's relay objects \
             ({RELAY_OWNER_PREFIX}...); mint the token with another sub"
        ),
    )
}

/// The request to the namespace object for one of the relay's attempts,
/// by a relay that serves by a lease of `lease_ms`.
pub fn root_request(request: GrantRequest, region: &Region, lease_ms: u64) -> ObjectRequest {
    ObjectRequest::Grant {
        request,
        owner: relay_owner(region),
        relay: true,
        via: Some(region.clone()),
        lease_ms: Some(lease_ms),
    }
}

/// The request to the namespace object for one batch of reports, with the
/// relay's view of itself.
pub fn report_request(
    namespace: Namespace,
    region: &Region,
    batch: &ReportBatch,
    relay: &Relay,
) -> ObjectRequest {
    ObjectRequest::Report {
        namespace,
        region: region.clone(),
        grants: batch.grants.iter().map(Reported::from_sub_grant).collect(),
        relay: RelayView::of(relay),
    }
}

/// A generator's answer, as the namespace object would send it; with
/// [`ROUTE_HEADER`] when the relay is stopped for good.
pub fn answer_reply(answer: &Answer, stopped: bool) -> HttpReply {
    let mut reply = HttpReply::from(match answer {
        Answer::Grant(g) => HttpAnswer::grant(g),
        Answer::Refused(r) => HttpAnswer::refusal(r),
        _ => HttpAnswer::error(&ErrorReply::new(
            ErrorCode::Unavailable,
            "the relay has no range for this request now; retry",
        )),
    });
    if stopped && reply.status == 503 {
        reply.set_header(ROUTE_HEADER, "object");
    }
    reply
}

/// What the driver must do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send `request` to the namespace object; hand its answer back to
    /// [`RelayRun::root_reply`] with `ticket`.
    Send {
        /// The attempt.
        ticket: Ticket,
        /// What to send.
        request: Box<ObjectRequest>,
    },
    /// Send `request`, a batch of sub-grants for the namespace object's
    /// ledger (reports are best effort: docs/relays.md §6); hand `batch`
    /// back to [`RelayRun::report_failed`] if it was not delivered.
    Report {
        /// The batch, to put back on failure.
        batch: ReportBatch,
        /// What to send ([`report_request`]).
        request: Box<ObjectRequest>,
    },
    /// Answer the generator request known as `handle`.
    Answer {
        /// The driver's handle.
        handle: u64,
        /// The answer.
        reply: HttpReply,
    },
}

/// One run of a relay object: core's [`Relay`] with the clock it measures
/// on (never going back) and its region.
#[derive(Debug)]
pub struct RelayRun {
    relay: Relay,
    lease_ms: u64,
    namespace: Namespace,
    region: Region,
    last: u64,
}

impl RelayRun {
    /// A relay for `namespace` in `region`, with the namespace objects'
    /// lease (`RANGEID_RELAY_LEASE_MS`), its first incarnation from
    /// `random`, started at `now` (ms).
    pub fn new(
        namespace: Namespace,
        region: Region,
        lease_ms: u64,
        random: [u8; 16],
        now: i64,
    ) -> Result<RelayRun, String> {
        let terms = RelayTerms::new(lease_ms).map_err(|e| e.to_string())?;
        let at = now.max(0) as u64;
        let relay = Relay::new(
            RelayConfig::with_terms(namespace, terms),
            random,
            Instant::from_ms(at),
        )
        .map_err(|e| e.to_string())?;
        Ok(RelayRun {
            relay,
            lease_ms,
            namespace,
            region,
            last: at,
        })
    }

    fn instant(&mut self, now: i64) -> Instant {
        self.last = self.last.max(now.max(0) as u64);
        Instant::from_ms(self.last)
    }

    /// The relay (its stats, its incarnation).
    pub fn relay(&self) -> &Relay {
        &self.relay
    }

    /// The region.
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// A generator's request, known to the driver as `handle`. A relay the
    /// object stopped is started anew first, under an incarnation from
    /// `random`.
    pub fn request(
        &mut self,
        handle: u64,
        owner: &str,
        request: GrantRequest,
        random: [u8; 16],
        now: i64,
    ) {
        let now = self.instant(now);
        self.relay.revive(random, now);
        self.relay
            .handle_request(handle, Owner::new(owner), request, now);
    }

    /// The namespace object's answer to attempt `ticket` (`status`, body,
    /// `Retry-After` in seconds), or `None` when it could not be reached.
    pub fn root_reply(&mut self, ticket: Ticket, answer: Option<&HttpReply>, now: i64) {
        let now = self.instant(now);
        let reply = match answer {
            Some(a) => {
                let retry_after_ms = a
                    .header("retry-after")
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(|s| s.saturating_mul(1_000));
                Reply::from_http(a.status, a.body.as_bytes(), retry_after_ms)
            }
            None => Reply::no_answer(),
        };
        self.relay.handle_root_reply(ticket, &reply, now);
    }

    /// A report batch the namespace object did not answer `200`: it is
    /// sent again later, within the relay's bounded backlog.
    pub fn report_failed(&mut self, batch: ReportBatch, now: i64) {
        let now = self.instant(now);
        self.relay.report_failed(batch, now);
    }

    /// A revocation naming `incarnations`: the one closed, if any.
    pub fn revoke(
        &mut self,
        incarnations: &[rangeid_core::names::Incarnation],
        random: [u8; 16],
        now: i64,
    ) -> Revoked {
        let now = self.instant(now);
        Revoked {
            closed: self.relay.handle_revoke_of(incarnations, random, now),
        }
    }

    /// Everything to do now: attempts to send, answers to give.
    pub fn poll(&mut self, now: i64) -> Vec<Step> {
        let now = self.instant(now);
        let mut steps = Vec::new();
        while let Some(action) = self.relay.poll_root(now) {
            if let Action::Send(out) = action {
                steps.push(Step::Send {
                    ticket: out.ticket,
                    request: Box::new(root_request(out.request, &self.region, self.lease_ms)),
                });
            }
            // A cancelled attempt is not aborted: its answer, if it
            // comes, is handed back and the Lease ignores it.
        }
        while let Some(batch) = self.relay.poll_report(now) {
            let request = Box::new(report_request(
                self.namespace,
                &self.region,
                &batch,
                &self.relay,
            ));
            steps.push(Step::Report { batch, request });
        }
        let stopped = self.relay.stopped();
        while let Some((handle, answer)) = self.relay.poll_answer() {
            steps.push(Step::Answer {
                handle,
                reply: answer_reply(&answer, stopped),
            });
        }
        steps
    }

    /// When [`RelayRun::poll`] must run next at the latest (ms on the
    /// clock the run was given).
    pub fn next_deadline(&self) -> Option<i64> {
        self.relay
            .next_deadline()
            .map(|d| d.as_ms().min(i64::MAX as u64) as i64)
    }
}

#[cfg(test)]
mod tests;
