//! The protocol between a generator and the authority: what a generator
//! asks for ([`GrantRequest`]), what the authority commits ([`Grant`]) and
//! what it answers with ([`GrantReply`], with the namespace's
//! [`Capacity`]). Both sides import these from here: the authority's
//! decisions ([`crate::authority`]) and the client's engine
//! ([`crate::lease`]), which never imports the authority's module. Their
//! JSON forms are in [`crate::wire`] (feature `serde`); a client reads any
//! answer with [`crate::reply::Reply::from_http`]; errors are
//! [`crate::code::ErrorCode`]s.

use crate::names::{Incarnation, Namespace, RequestId};
use crate::range::Range;

/// The largest `count` a request may carry and a namespace's `maxCount`
/// may be: 2^53 - 1, so every count on the wire is exact as a JS number.
pub const MAX_COUNT: u64 = (1 << 53) - 1;

/// A request for `count` IDs by `(incarnation, request_id)`; with the
/// caller's [`Owner`](crate::authority::Owner) that is its identity.
///
/// On the wire (feature `serde`):
/// `{"namespace":"orders","incarnation":"A9","requestId":"r17","count":10000}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrantRequest {
    /// The namespace asked of.
    pub namespace: Namespace,
    /// The asking process's incarnation.
    pub incarnation: Incarnation,
    /// The request's identity within that incarnation.
    pub request_id: RequestId,
    /// How many IDs are asked for.
    pub count: u64,
}

/// A committed grant: the range given to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The namespace the range belongs to.
    pub namespace: Namespace,
    /// The incarnation it was granted to.
    pub incarnation: Incarnation,
    /// The request it answers.
    pub request_id: RequestId,
    /// The IDs granted.
    pub range: Range,
}

/// What the namespace reported about itself with a grant: its largest
/// request and what remains after this grant. Absent from older
/// authorities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capacity {
    /// The largest count one request may ask for.
    pub max_count: Option<u64>,
    /// IDs left in the namespace after this grant was committed.
    pub remaining: Option<u64>,
}

/// A grant as it crosses the wire: the committed [`Grant`], whether this
/// answer is a replay of an earlier one, and what the namespace has left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrantReply {
    /// The committed grant.
    pub grant: Grant,
    /// `true` when the authority answered an already committed request.
    pub replayed: bool,
    /// The namespace's capacity, when the authority says.
    pub capacity: Capacity,
}
