//! Moving a namespace from one authority to another (self-hosted workerd to
//! Cloudflare, or back): what the source hands over, and where the
//! destination starts.
//!
//! The source freezes the namespace in the same commit that writes the
//! handover, after reading its witness's mark, so it grants nothing after
//! the handover was taken. The handover holds the configuration, the
//! source's `next`, its recorded fence and the witness's mark. The
//! destination creates the namespace already at [`Handover::start`], the
//! highest of the three, in one commit: there is never a moment it could
//! grant below anything the source may have granted, even from a source
//! whose own storage had gone back without its noticing (the witness's mark
//! covers every grant the source ever made, see [`crate::fence`]).

use crate::authority::{NamespaceConfig, NamespaceState, NamespaceStatus, StateError};
use crate::names::Namespace;

/// A namespace's state as its source authority handed it over.
///
/// Guaranteed: `config` is valid, `first <= next <= max + 1`,
/// `first <= fence <= max + 1` and `witness <= 2^64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handover {
    state: NamespaceState,
    witness: u128,
}

impl Handover {
    /// What a source whose committed state is `state` hands over, having
    /// just read `witness` from its witness: the state as it is frozen by
    /// the same commit.
    pub fn export(state: &NamespaceState, witness: u128) -> Handover {
        Handover {
            state: state.with_status(NamespaceStatus::Frozen),
            witness: witness.min(1 << 64),
        }
    }

    /// A handover read back from its parts (a document from the source),
    /// checked against core's invariants.
    pub fn from_parts(
        name: Namespace,
        config: NamespaceConfig,
        next: u128,
        fence: u128,
        witness: u128,
    ) -> Result<Handover, HandoverError> {
        if witness > 1 << 64 {
            return Err(HandoverError::WitnessOutOfBounds);
        }
        let state = NamespaceState::load(name, config, next, NamespaceStatus::Frozen, fence)
            .map_err(HandoverError::State)?;
        Ok(Handover { state, witness })
    }

    /// The namespace's name.
    pub const fn name(&self) -> &Namespace {
        self.state.name()
    }

    /// Its fixed bounds.
    pub const fn config(&self) -> &NamespaceConfig {
        self.state.config()
    }

    /// The source's `next`.
    pub const fn next(&self) -> u128 {
        self.state.next()
    }

    /// The fence the source recorded (the witness's last acknowledged mark
    /// it knew of).
    pub const fn fence(&self) -> u128 {
        self.state.fence()
    }

    /// The mark the source's witness held when the source read it, just
    /// before the handover was committed (0 when it never held one).
    pub const fn witness(&self) -> u128 {
        self.witness
    }

    /// Where the destination's first grant starts: the highest of the
    /// source's `next`, its fence and its witness's mark, capped at
    /// `max + 1` (then the namespace arrives exhausted). The source never
    /// granted an ID at or above this: every grant ended at or below both
    /// `next` and the fence, and the witness's mark is at or above every
    /// fence the source ever recorded.
    pub fn start(&self) -> u128 {
        let end = u128::from(self.config().max()) + 1;
        self.next().max(self.fence()).max(self.witness).min(end)
    }

    /// The destination's new namespace: active, `next` at [`Self::start`],
    /// its fence at `first` (its own witness has acknowledged nothing yet,
    /// so its first grant raises it, from `start` on).
    pub fn import(&self) -> NamespaceState {
        NamespaceState::create(*self.name(), *self.config()).skip_to(self.start())
    }
}

/// Why a handover is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandoverError {
    /// `next` or the fence lies outside the configuration's bounds.
    State(StateError),
    /// The witness's mark is above 2^64.
    WitnessOutOfBounds,
}

impl core::fmt::Display for HandoverError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            HandoverError::State(StateError::NextOutOfBounds) => {
                "next must lie from first to max + 1"
            }
            HandoverError::State(StateError::FenceOutOfBounds) => {
                "fence must lie from first to max + 1"
            }
            HandoverError::WitnessOutOfBounds => "witness must be at most 2^64",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authority::{decide, Decision, GrantRequest, Owner};
    use crate::names::{Incarnation, RequestId};

    fn config(first: u64, max: u64) -> NamespaceConfig {
        NamespaceConfig::new(Some(first), Some(max), Some(1_000)).unwrap()
    }

    fn name() -> Namespace {
        Namespace::new("orders").unwrap()
    }

    fn source(next: u128, fence: u128) -> NamespaceState {
        NamespaceState::create(name(), config(1, 1_000_000))
            .with_fence(fence)
            .skip_to(next)
    }

    /// The start of the first range the destination grants.
    fn first_grant(state: &NamespaceState) -> u64 {
        let request = GrantRequest {
            namespace: name(),
            incarnation: Incarnation::new("a").unwrap(),
            request_id: RequestId::new("r").unwrap(),
            count: 10,
        };
        let owner = Owner::new("svc");
        let mut s = *state;
        loop {
            match decide(&s, None, &request, &owner) {
                Ok(Decision::New { grant, .. }) => return grant.range.start(),
                Ok(Decision::RaiseFence { at_least }) => s = s.with_fence(at_least),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn the_destination_starts_at_the_highest_mark_the_source_knew() {
        // Each of the three can be the highest: next (nothing fenced yet
        // past it), the recorded fence (the usual case: a chunk ahead), and
        // the witness (a raise the source had not recorded, or a source
        // whose storage went back unnoticed).
        for (next, fence, witness, start) in [
            (5_000, 1, 0, 5_000),
            (5_000, 7_000, 7_000, 7_000),
            (5_000, 7_000, 9_000, 9_000),
            (5_000, 7_000, 6_000, 7_000),
        ] {
            let h = Handover::export(&source(next, fence), witness);
            assert_eq!(h.start(), start, "{next} {fence} {witness}");
            let imported = h.import();
            assert_eq!(imported.next(), start);
            assert_eq!(imported.status(), NamespaceStatus::Active);
            assert_eq!(imported.fence(), 1, "its own witness acknowledged nothing");
            assert!(
                u128::from(first_grant(&imported)) >= start.max(witness).max(next),
                "never below anything the source knew"
            );
        }
    }

    #[test]
    fn the_source_is_frozen_by_the_same_commit() {
        let h = Handover::export(&source(10, 20), 20);
        assert_eq!(h.state.status(), NamespaceStatus::Frozen);
    }

    #[test]
    fn an_exhausted_or_nearly_full_namespace_arrives_capped_at_its_end() {
        let c = config(1, 100);
        let full = NamespaceState::create(name(), c).skip_to(101);
        let h = Handover::export(&full, 0);
        assert_eq!(h.import().remaining(), 0);
        let near = NamespaceState::create(name(), c)
            .with_fence(101)
            .skip_to(90);
        let h = Handover::export(&near, 1 << 64);
        assert_eq!((h.witness(), h.start()), (1 << 64, 101));
        let top = NamespaceConfig::new(Some(u64::MAX - 1), Some(u64::MAX), None).unwrap();
        let h = Handover::export(&NamespaceState::create(name(), top), u128::MAX);
        assert_eq!(h.start(), 1 << 64);
    }

    #[test]
    fn parts_are_checked_as_stored_state_is() {
        let c = config(10, 100);
        assert!(Handover::from_parts(name(), c, 10, 10, 0).is_ok());
        assert_eq!(
            Handover::from_parts(name(), c, 9, 10, 0),
            Err(HandoverError::State(StateError::NextOutOfBounds))
        );
        assert_eq!(
            Handover::from_parts(name(), c, 10, 102, 0),
            Err(HandoverError::State(StateError::FenceOutOfBounds))
        );
        assert_eq!(
            Handover::from_parts(name(), c, 10, 10, (1 << 64) + 1),
            Err(HandoverError::WitnessOutOfBounds)
        );
        let back = Handover::from_parts(name(), c, 50, 60, 70).unwrap();
        assert_eq!(
            back,
            Handover::export(
                &NamespaceState::load(name(), c, 50, NamespaceStatus::Active, 60).unwrap(),
                70
            )
        );
    }
}
