//! `Authority`: the core decision over an in-memory store with a durable
//! part and a staged part, so a crash can lose exactly what was not yet
//! committed.
//!
//! Requests are decided one at a time against the staged state (as a
//! database would, under the namespace row's lock). Each decision's writes
//! become durable at a later commit; its reply leaves only then. A crash
//! throws the staged writes away and keeps the committed ones.

use std::collections::{HashMap, VecDeque};

use rangeid_core::authority::{decide, Decision, Grant, GrantRequest, NamespaceState, Refusal};
use rangeid_core::{Incarnation, RequestId};

/// A deliberate authority bug, to prove the checker catches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bug {
    /// Correct behaviour.
    None,
    /// Reply as soon as a grant is decided, before it is durable.
    ReplyBeforeCommit,
}

type Key = (Incarnation, RequestId);

#[derive(Clone)]
struct Store {
    state: NamespaceState,
    grants: HashMap<Key, Grant>,
}

/// What the authority answers a request with.
// Short-lived and moved once; boxing the grant would only add allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug)]
pub enum Answer {
    /// A grant; `replayed` when it was stored before.
    Grant(Grant, bool),
    /// A refusal.
    Refused(Refusal),
}

/// The simulated authority for one namespace.
pub struct Authority {
    committed: Store,
    staged: Store,
    // Writes decided but not durable yet, oldest first: (grant, state after).
    unflushed: VecDeque<(Grant, NamespaceState)>,
    epoch: u64,
    bug: Bug,
}

impl Authority {
    /// An authority serving `state`, with no grants yet.
    pub fn new(state: NamespaceState, bug: Bug) -> Authority {
        let store = Store {
            state,
            grants: HashMap::new(),
        };
        Authority {
            committed: store.clone(),
            staged: store,
            unflushed: VecDeque::new(),
            epoch: 0,
            bug,
        }
    }

    /// Changes each time the authority restarts; commits and replies
    /// scheduled under an older epoch are void.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The committed state.
    pub fn committed_state(&self) -> &NamespaceState {
        &self.committed.state
    }

    /// Whether the bug makes replies leave before their commit.
    pub fn replies_early(&self) -> bool {
        self.bug == Bug::ReplyBeforeCommit
    }

    /// Decides `request` against the staged state, staging any writes.
    pub fn handle(&mut self, request: &GrantRequest) -> Answer {
        let key = (request.incarnation, request.request_id);
        let stored = self.staged.grants.get(&key).copied();
        match decide(&self.staged.state, stored.as_ref(), request) {
            Ok(Decision::New { grant, state }) => {
                self.staged.state = state;
                self.staged.grants.insert(key, grant);
                self.unflushed.push_back((grant, state));
                Answer::Grant(grant, false)
            }
            Ok(Decision::Replay(grant)) => Answer::Grant(grant, true),
            Err(refusal) => Answer::Refused(refusal),
        }
    }

    /// Makes the oldest staged write durable; returns its grant.
    pub fn commit_one(&mut self) -> Option<Grant> {
        let (grant, state) = self.unflushed.pop_front()?;
        self.committed
            .grants
            .insert((grant.incarnation, grant.request_id), grant);
        self.committed.state = state;
        Some(grant)
    }

    /// Whether `grant` is durable: the output gate lets its reply leave.
    pub fn is_committed(&self, grant: &Grant) -> bool {
        self.committed
            .grants
            .get(&(grant.incarnation, grant.request_id))
            == Some(grant)
    }

    /// Applies an administrative change (freeze, floor) directly to both
    /// states; refused while writes are staged so it cannot interleave.
    pub fn admin(&mut self, change: impl Fn(&NamespaceState) -> Option<NamespaceState>) -> bool {
        if !self.unflushed.is_empty() {
            return false;
        }
        match change(&self.committed.state) {
            Some(next) => {
                self.committed.state = next;
                self.staged.state = next;
                true
            }
            None => false,
        }
    }

    /// A crash and restart: staged writes are lost, committed ones kept.
    pub fn restart(&mut self) {
        self.staged = self.committed.clone();
        self.unflushed.clear();
        self.epoch += 1;
    }
}
