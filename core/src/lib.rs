//! rangeid-core: the sans-IO heart of rangeid, a distributed unique-ID
//! allocator.
//!
//! An authority hands out disjoint half-open ranges `[start, end)` of a
//! namespace; each generator process issues IDs locally from its ranges and
//! asks for the next one ahead of need. This crate holds both sides'
//! logic and nothing else: no I/O, no clock, no randomness. Callers pass
//! `now` and random bytes in, and drive the state machines.
//!
//! - [`range`]: `Range`, a non-empty `[start, end)` of positive `u64` IDs.
//! - [`decimal`]: the strict decimal codec IDs cross JSON and JS with.
//! - [`names`]: validated `Namespace`, `Incarnation` and `RequestId`.
//! - [`code`]: `ErrorCode`, the stable error codes of every layer.
//! - [`protocol`]: what both sides exchange: `GrantRequest`, `Grant`,
//!   `GrantReply` and its `Capacity`.
//! - [`authority`]: the authority's grant, floor and configuration decisions.
//! - [`ledger`]: how the authority keeps grants (spans, replays derived
//!   from them) and what a caller may add (grant rate, row budgets).
//! - [`lease`]: `Lease`, a generator's engine and the client half of the
//!   protocol (cursor, prefetch, install-once grants, sizing, tickets,
//!   retries, configuration limits).
//! - [`reply`]: `Reply`, what a client makes of any HTTP answer, and
//!   `Disposition`, what it does about a refusal.
//! - `relay` (feature `alloc`): `Relay`, the in-memory tier that hands
//!   generators sub-ranges of what it holds, and `RelayGate`, when the
//!   namespace object may acknowledge an admin act.
//! - [`fence`]: the restore fence: how far the witness's mark must be
//!   ahead, and what a start does with it.
//! - [`transfer`]: moving a namespace between authorities: what the source
//!   hands over and where the destination starts.
//! - [`text`]: `Text<N>`, a bounded string that needs no heap.
//! - [`time`]: `Instant`, a point on a driver's clock; why durations stay
//!   `*_ms` numbers and the authority's clock is another.
//! - [`cursor`]: `AtomicCursor` and `CursorSlot`, lock-free issuing for
//!   native threads.
//! - [`wire`] (feature `serde`): the JSON forms of the protocol types and
//!   of errors, and the authority's answer encoder.
//!
//! Guaranteed, under lost, duplicated and reordered replies, restarts and
//! pauses: no ID is issued twice within a namespace. Not provided: any order
//! between IDs, gapless numbering, or secrecy (IDs are predictable).
#![no_std]
#![deny(missing_docs)]

#[cfg(any(feature = "alloc", test))]
extern crate alloc;
#[cfg(any(test, loom))]
extern crate std;

pub mod authority;
pub mod code;
pub mod cursor;
pub mod decimal;
pub mod fence;
pub mod lease;
pub mod ledger;
pub mod names;
pub mod protocol;
pub mod range;
#[cfg(any(feature = "alloc", test))]
pub mod relay;
pub mod reply;
pub mod text;
pub mod time;
pub mod transfer;
#[cfg(feature = "serde")]
pub mod wire;

pub use authority::{decide, Decision, IdStanding, NamespaceConfig, NamespaceState, Refusal};
pub use code::ErrorCode;
pub use cursor::{AtomicCursor, CursorSlot};
pub use lease::{Action, Lease, LeaseConfig, Outgoing, Ticket};
pub use names::{Incarnation, Namespace, Region, RequestId};
pub use protocol::{Grant, GrantRequest};
pub use range::Range;
pub use reply::{Disposition, Reply};
pub use time::Instant;
