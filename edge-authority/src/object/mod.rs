//! What the Durable Objects do, over [`Sql`]: the namespace object (grants,
//! the restore fence, admin actions, the ledger, retention), the fence
//! object (the witness) and the registry object.
//!
//! The front Worker sends an object one [`ObjectRequest`] (JSON); the
//! object answers with the final [`HttpReply`]. Every handler runs its
//! statements back to back with no `await`, and the output gate holds the
//! reply until the write is durable. A grant reads the state and the
//! caller's span, asks [`rangeid_core::decide`], then writes the boundary
//! advance, the ledger record (a new span row or the caller's span
//! extended, with its usage) and the minute bucket in one transaction
//! ([`Sql::atomically`], `transactionSync` on the runtime). A grant that
//! would pass the fence is not written: [`handle`] answers
//! [`Step::RaiseFence`], and [`serve::Serving`] has the driver raise the
//! witness's mark ([`raise::Raising`] applies its answer with
//! [`grant::witnessed`]) and handles the request again. Admin actions
//! write their audit entry in the same transaction as the change. A failed
//! write commits nothing and answers `503 unavailable`.
//!
//! - [`grant`]: grants, and the fence's start, record and refill.
//! - [`admin`]: creation, floors, freezes, limits and their audit entries.
//! - [`transfer`]: moving a namespace to another authority: the export
//!   (frozen in the same commit) and the import.
//! - [`ledger`]: retained grants, lookups, the audit log, rates, pruning.
//! - [`reports`]: relays' reports of their sub-grants, kept in the ledger.
//! - [`spans`]: the ledger's rows (spans of grants), each caller's usage,
//!   the limits: what a grant decision reads and writes.
//! - [`witness`]: the fence object: one mark that only rises.
//! - [`registry`]: the list of namespaces.
//! - [`schedule`]: when the alarm is due and what it does: pushes,
//!   pruning, and the periodic check-in (witness, registry).
//! - [`serve`]: how the namespace object serves one request (the order of
//!   the witness's raise or read and the commit), as a state machine.
//! - [`raise`]: one raise of the witness, with its retries.
//! - [`store`]: the SQLite schema and the 20-digit TEXT row codec.
//! - `driver` (wasm32 only): one runtime driver per Durable Object class,
//!   pumping the machines above.

use rangeid_core::wire::{DecBound, DecU64};
use rangeid_core::{GrantRequest, Namespace};
use serde::{Deserialize, Serialize};

use crate::api::{LimitsChange, RelaysSetting};
use crate::shared::refusals::Counted;
use crate::shared::response::{ApiError, HttpReply};
use crate::shared::summary::{summarize, LedgerJson, SubRows, Summary, MINUTE_MS};
use store::{NamespaceRow, Sql, StoreError, SELECT_NAMESPACE};

pub mod admin;
#[cfg(target_arch = "wasm32")]
mod driver;
pub mod grant;
pub mod ledger;
pub mod raise;
pub mod registry;
pub mod relay;
pub mod relays;
pub mod reports;
pub mod schedule;
pub mod serve;
pub mod spans;
pub mod store;
pub mod transfer;
pub mod witness;

pub use ledger::{prune, Window};

/// One request from the front Worker to a namespace object. The front has
/// already authenticated, authorized and validated it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum ObjectRequest {
    /// Take a range.
    Grant {
        /// The validated request.
        request: GrantRequest,
        /// The token's `sub`: a replay is answered only to it.
        owner: String,
        /// Whether the token is a relay's: decided only while relays are
        /// on ([`relays::RelayDesk::admit`]), and recorded when granted.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        relay: bool,
        /// For one of this authority's relay objects (`object::relay`):
        /// its region, so that the namespace object can reach it to revoke
        /// it (`relays::RelayDesk::to_revoke`). `None` for a token's
        /// request, which the front Worker makes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        via: Option<crate::api::Region>,
        /// For one of this authority's relay objects: the lease it serves
        /// by (its version's `RANGEID_RELAY_LEASE_MS`), which the object
        /// waits out when it is longer than its own
        /// ([`relays::record_lease`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lease_ms: Option<u64>,
    },
    /// Create the namespace (idempotent for the same configuration).
    #[serde(rename_all = "camelCase")]
    Create {
        /// Its name.
        namespace: Namespace,
        /// Its first ID.
        first: DecU64,
        /// Its last ID.
        max: DecU64,
        /// Its largest request.
        max_count: u64,
        /// The token's `sub`.
        actor: String,
    },
    /// Read the summary.
    Summary {
        /// The namespace.
        namespace: Namespace,
    },
    /// List retained grants, newest first.
    Grants {
        /// The namespace.
        namespace: Namespace,
        /// Page size.
        limit: u32,
        /// Only grants starting below this.
        before: Option<DecBound>,
    },
    /// Find the retained grant holding `id`.
    Lookup {
        /// The namespace.
        namespace: Namespace,
        /// The ID.
        id: DecU64,
    },
    /// Per-minute grant counts over a window.
    Rates {
        /// The namespace.
        namespace: Namespace,
        /// The last hour or the last day.
        window: Window,
    },
    /// Raise `next` to `floor`.
    Floor {
        /// The namespace.
        namespace: Namespace,
        /// The new next value.
        floor: DecU64,
        /// The token's `sub`.
        actor: String,
    },
    /// Freeze (`frozen: true`) or unfreeze.
    SetFrozen {
        /// The namespace.
        namespace: Namespace,
        /// The new status.
        frozen: bool,
        /// Why, for the audit log.
        reason: String,
        /// The token's `sub`.
        actor: String,
    },
    /// Export the namespace to move it: freeze it and answer the document
    /// (after the driver read the witness: [`Step::ReadWitness`]).
    #[serde(rename_all = "camelCase")]
    Export {
        /// The namespace.
        namespace: Namespace,
        /// Why, for the audit log and the document.
        reason: String,
        /// The token's `sub`.
        actor: String,
        /// This authority's origin, as the request named it.
        source: String,
    },
    /// Create the namespace from an export document, at its start.
    Import {
        /// The namespace of the path the document was sent to.
        namespace: Namespace,
        /// The document, as the source answered it.
        document: Box<rangeid_core::transfer::ExportDocument>,
        /// The token's `sub`.
        actor: String,
    },
    /// Change the limits on what callers add.
    SetLimits {
        /// The namespace.
        namespace: Namespace,
        /// What to change.
        change: LimitsChange,
        /// The token's `sub`.
        actor: String,
    },
    /// Turn relays on or off.
    SetRelays {
        /// The namespace.
        namespace: Namespace,
        /// The new setting.
        relays: RelaysSetting,
        /// Why, for the audit log.
        reason: String,
        /// The token's `sub`.
        actor: String,
    },
    /// A relay object's report of its sub-grants, for the ledger
    /// ([`reports::keep`]). Only the Worker's own relay objects send it.
    Report {
        /// The namespace.
        namespace: Namespace,
        /// The relay's region.
        region: crate::api::Region,
        /// The sub-grants, oldest first.
        grants: Vec<reports::Reported>,
        /// The relay's view of itself.
        relay: reports::RelayView,
    },
    /// List audit entries, newest first.
    Audit {
        /// The namespace.
        namespace: Namespace,
        /// Page size.
        limit: u32,
        /// Only entries with a smaller id.
        before: Option<DecBound>,
    },
}

impl ObjectRequest {
    /// Whether the request waits until the object has heard from its
    /// witness since it started: a grant or a floor, which the witness
    /// must cover. A floor that went ahead of that read would raise the
    /// witness itself, and a restore of the object would then go unseen.
    pub fn waits_for_witness(&self) -> bool {
        matches!(
            self,
            ObjectRequest::Grant { .. }
                | ObjectRequest::Floor { .. }
                | ObjectRequest::Export { .. }
        )
    }

    /// Whether the request, when it succeeds, changes what the namespace's
    /// summary shows an admin (its configuration, status or limits): the
    /// registry is then told at once, so a listing shows it. A grant's
    /// change is pushed within [`schedule::PUSH_EVERY_MS`] instead; reads
    /// change nothing.
    pub fn changes_admin_state(&self) -> bool {
        match self {
            ObjectRequest::Create { .. }
            | ObjectRequest::Floor { .. }
            | ObjectRequest::SetFrozen { .. }
            | ObjectRequest::Export { .. }
            | ObjectRequest::Import { .. }
            | ObjectRequest::SetLimits { .. }
            | ObjectRequest::SetRelays { .. } => true,
            ObjectRequest::Grant { .. }
            | ObjectRequest::Summary { .. }
            | ObjectRequest::Grants { .. }
            | ObjectRequest::Lookup { .. }
            | ObjectRequest::Rates { .. }
            | ObjectRequest::Report { .. }
            | ObjectRequest::Audit { .. } => false,
        }
    }

    /// Whether the request joins the batch of requests that share one
    /// commit (see [`serve::Serving::joins_batch`]): a generator's grant,
    /// the one request that comes in floods. Admin changes, reads and
    /// exports are decided alone, at once, and so is a relay's grant: the
    /// relay gate records it in the same step as its decision
    /// (`relays::RelayDesk::answered`), which a batch's run would split
    /// from the answer by an await, letting an act begin without it.
    pub fn joins_batch(&self) -> bool {
        matches!(self, ObjectRequest::Grant { relay: false, .. })
    }

    /// Whether the answer shows the refusals counted so far (a summary):
    /// the driver adds those it counted in memory to storage first.
    pub fn shows_refusals(&self) -> bool {
        matches!(self, ObjectRequest::Summary { .. })
    }

    /// The namespace the request is for (its object's name).
    pub fn namespace(&self) -> &Namespace {
        match self {
            ObjectRequest::Grant { request, .. } => &request.namespace,
            ObjectRequest::Create { namespace, .. }
            | ObjectRequest::Summary { namespace }
            | ObjectRequest::Grants { namespace, .. }
            | ObjectRequest::Lookup { namespace, .. }
            | ObjectRequest::Rates { namespace, .. }
            | ObjectRequest::Floor { namespace, .. }
            | ObjectRequest::SetFrozen { namespace, .. }
            | ObjectRequest::Export { namespace, .. }
            | ObjectRequest::Import { namespace, .. }
            | ObjectRequest::SetLimits { namespace, .. }
            | ObjectRequest::SetRelays { namespace, .. }
            | ObjectRequest::Report { namespace, .. }
            | ObjectRequest::Audit { namespace, .. } => namespace,
        }
    }
}

/// A new grant, committed: when, and what the driver does after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Granted {
    /// The grant row's `at` (the driver keeps an alarm to push and prune).
    pub at: i64,
    /// The mark to raise the fence to ahead of need, when it is near after
    /// this commit ([`grant::refill`]), read from the state and minute
    /// buckets the commit wrote, so the driver reads no storage for it.
    pub refill: Option<u128>,
}

/// A handled request: the answer, and whether a grant row was written at
/// that time (so the driver can make sure a pruning alarm is set).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The answer to send.
    pub reply: HttpReply,
    /// Set when a new grant row was committed.
    pub granted: Option<Granted>,
    /// Set when core refused a grant request in a way operators count.
    pub refused: Option<Counted>,
}

impl From<ApiError> for Outcome {
    fn from(e: ApiError) -> Outcome {
        Outcome {
            reply: e.reply(),
            granted: None,
            refused: None,
        }
    }
}

impl From<HttpReply> for Outcome {
    fn from(reply: HttpReply) -> Outcome {
        Outcome {
            reply,
            granted: None,
            refused: None,
        }
    }
}

/// What the driver must do next with a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send this answer.
    Reply(Outcome),
    /// Have the witness raise its mark to at least `target`, record what it
    /// acknowledged with [`grant::witnessed`], then handle the request
    /// again. Nothing was written.
    RaiseFence {
        /// The mark to ask for.
        target: u128,
    },
    /// Read the witness's mark now and hand its answer to
    /// [`transfer::export`] (an export covers the mark as it is when the
    /// namespace freezes). Nothing was written.
    ReadWitness,
}

pub(crate) fn unavailable(e: StoreError) -> ApiError {
    ApiError::unavailable(format!("the authority cannot establish a safe answer: {e}"))
}

/// The namespace row, checked to be `ns`'s.
pub(crate) fn load(sql: &impl Sql, ns: &Namespace) -> Result<NamespaceRow, ApiError> {
    let row = load_any(sql).map_err(unavailable)?;
    let Some(row) = row else {
        return Err(ApiError::namespace_not_found(ns.as_str()));
    };
    if row.state.name() != ns {
        return Err(unavailable(StoreError(format!(
            "object holds namespace {}, asked for {ns}",
            row.state.name()
        ))));
    }
    Ok(row)
}

/// The namespace row, if the namespace was created.
pub(crate) fn load_any(sql: &impl Sql) -> Result<Option<NamespaceRow>, StoreError> {
    let rows = sql.exec(SELECT_NAMESPACE, &[])?;
    rows.first().map(|r| NamespaceRow::decode(r)).transpose()
}

/// The summary of `row` at `now`, from the last hour's minute buckets.
pub(crate) fn summary_of(
    sql: &impl Sql,
    row: &NamespaceRow,
    now: i64,
) -> Result<Summary, ApiError> {
    let from = (now - 3_600_000).div_euclid(MINUTE_MS);
    let minutes = store::minutes_since(sql, from).map_err(unavailable)?;
    let refusals = store::refusals(sql).map_err(unavailable)?;
    let (rows, limits) = spans::budget(sql).map_err(unavailable)?;
    let top_subs = spans::top_subs(sql, 3)
        .map_err(unavailable)?
        .into_iter()
        .map(|(sub, rows)| SubRows {
            sub: (!sub.is_empty()).then_some(sub),
            rows,
        })
        .collect();
    let ledger = LedgerJson {
        rows,
        bytes: sql.size_bytes(),
        top_subs,
        relays: reports::by_relay(sql, now).map_err(unavailable)?,
    };
    let mut summary = summarize(row, &minutes, (refusals, limits, ledger), now);
    summary.relays = relays::stored(sql).map_err(unavailable)?.setting();
    Ok(summary)
}

/// Handles one request for the namespace object at `now` (ms). `waiting`
/// is what other grant requests, waiting for the fence to rise, asked for
/// in all (see [`grant::grant`]).
pub fn handle(sql: &impl Sql, request: &ObjectRequest, waiting: u64, now: i64) -> Step {
    let result = match request {
        ObjectRequest::Grant {
            request,
            owner,
            relay,
            via,
            lease_ms,
        } => {
            // A token's request (no `via`) under a relay object's `sub`
            // would share that relay's request ids, and be replayed the
            // ranges it is cutting up.
            if via.is_none() && relay::reserved_owner(owner) {
                return Step::Reply(relay::reserved_owner_refused(owner).into());
            }
            // A relay's grant is decided only while relays are on, checked
            // in the step that decides it: the driver's screen ran before
            // any await (a fence raise), after which relays may have been
            // turned off, and acknowledged so.
            if *relay {
                match relays::stored(sql) {
                    Ok(stored) if stored.is_on() => {}
                    Ok(_) => return Step::Reply(relays::relays_off().into()),
                    Err(e) => return Step::Reply(unavailable(e).into()),
                }
                // Kept before the grant, in the same step: a restart
                // after the answer waits this relay's whole lease.
                if let Some(ms) = lease_ms {
                    if let Err(e) = relays::record_lease(sql, *ms) {
                        return Step::Reply(e.into());
                    }
                }
            }
            return grant::grant(sql, request, owner, waiting, now);
        }
        ObjectRequest::Create {
            namespace,
            first,
            max,
            max_count,
            actor,
        } => admin::create(sql, *namespace, (first.0, max.0, *max_count), actor, now),
        ObjectRequest::Summary { namespace } => load(sql, namespace)
            .and_then(|row| summary_of(sql, &row, now))
            .map(|s| HttpReply::json(200, &s)),
        ObjectRequest::Grants {
            namespace,
            limit,
            before,
        } => ledger::list_grants(sql, namespace, *limit, before.map(|b| b.0)),
        ObjectRequest::Lookup { namespace, id } => ledger::lookup(sql, namespace, id.0),
        ObjectRequest::Rates { namespace, window } => ledger::rates(sql, namespace, *window, now),
        ObjectRequest::Floor {
            namespace,
            floor,
            actor,
        } => admin::raise_floor(sql, namespace, floor.0, actor, now),
        ObjectRequest::SetFrozen {
            namespace,
            frozen,
            reason,
            actor,
        } => admin::set_frozen(sql, namespace, *frozen, reason, actor, now),
        ObjectRequest::Export { .. } => return Step::ReadWitness,
        ObjectRequest::Import {
            namespace,
            document,
            actor,
        } => transfer::import(sql, namespace, document, actor, now),
        ObjectRequest::SetLimits {
            namespace,
            change,
            actor,
        } => admin::set_limits(sql, namespace, *change, actor, now),
        ObjectRequest::SetRelays {
            namespace,
            relays,
            reason,
            actor,
        } => admin::set_relays(sql, namespace, *relays, reason, actor, now),
        ObjectRequest::Report {
            namespace,
            region,
            grants,
            relay,
        } => reports::keep(sql, namespace, region, grants, relay, now),
        ObjectRequest::Audit {
            namespace,
            limit,
            before,
        } => ledger::list_audit(sql, namespace, *limit, before.map(|b| b.0)),
    };
    Step::Reply(match result {
        Ok(reply) => reply.into(),
        Err(e) => e.into(),
    })
}

#[cfg(test)]
mod ledger_tests;
#[cfg(test)]
mod tests;
