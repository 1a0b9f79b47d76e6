//! Reports: the relay's sub-grants, sent to the namespace object off the
//! grant path, in batches, so that its ledger can say who got ID N.
//!
//! A report is best effort. It is not needed for uniqueness (every
//! sub-range lies inside a grant the object already committed to the
//! relay) and dies with a relay that restarts before sending it; the
//! object then names the relay for those IDs.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use crate::authority::Owner;
use crate::ledger::Span;
use crate::names::Incarnation;
use crate::protocol::Grant;

/// One sub-grant as reported: who asked, the grant it got (namespace,
/// the generator's incarnation and request id, the sub-range), and the
/// relay incarnation whose root grant it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubGrant {
    /// The generator's token `sub`.
    pub owner: Owner,
    /// What the generator was handed.
    pub grant: Grant,
    /// The relay incarnation that held the range.
    pub relay: Incarnation,
}

impl SubGrant {
    /// Whether this sub-grant can have come from `root`, a span of the
    /// namespace object's ledger: `root` was granted to relay `relay_owner`
    /// under this sub-grant's relay incarnation, and one of its grants
    /// holds the whole sub-range. The namespace object keeps a report only
    /// then, so a report can never name a range the relay did not hold.
    pub fn lies_in(&self, root: &Span, relay_owner: &Owner) -> bool {
        if root.owner() != relay_owner || root.incarnation() != &self.relay {
            return false;
        }
        let range = self.grant.range;
        match root.index_holding(range.start()) {
            Some(i) => root.range(i).is_some_and(|r| range.end() <= r.end()),
            None => false,
        }
    }
}

/// A batch of sub-grants to send to the namespace object in one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportBatch {
    /// Numbers the batches of one relay, from 1.
    pub seq: u64,
    /// The sub-grants, oldest first.
    pub grants: Vec<SubGrant>,
}

/// The sub-grants waiting to be reported.
#[derive(Debug)]
pub(super) struct Outbox {
    batch: usize,
    interval_ms: u64,
    backlog: usize,
    queue: VecDeque<SubGrant>,
    oldest_at: Option<u64>,
    // Since when the relay's view of itself changed unreported (a refusal,
    // an abandonment): a batch goes within the interval, empty if need be.
    noted_at: Option<u64>,
    seq: u64,
    /// Sub-grants dropped because the backlog was full.
    pub dropped: u64,
    /// Batches handed to the driver.
    pub sent: u64,
}

impl Outbox {
    pub fn new(batch: usize, interval_ms: u64) -> Outbox {
        Outbox {
            batch: batch.max(1),
            interval_ms,
            backlog: batch.max(1).saturating_mul(16),
            queue: VecDeque::new(),
            oldest_at: None,
            noted_at: None,
            seq: 0,
            dropped: 0,
            sent: 0,
        }
    }

    pub fn push(&mut self, grant: SubGrant, now: u64) {
        if self.queue.len() >= self.backlog {
            self.queue.pop_front();
            self.dropped += 1;
        }
        self.queue.push_back(grant);
        self.oldest_at.get_or_insert(now);
    }

    /// The relay's view of itself changed at `now` (its refusal or
    /// abandonment counts): the next batch carries it within the interval,
    /// with no sub-grant if none waits.
    pub fn note(&mut self, now: u64) {
        self.noted_at.get_or_insert(now);
    }

    /// When the next batch is due, if any sub-grant or noted change waits.
    pub fn due(&self) -> Option<u64> {
        if self.queue.len() >= self.batch {
            return Some(0);
        }
        [self.oldest_at, self.noted_at]
            .into_iter()
            .flatten()
            .min()
            .map(|at| at.saturating_add(self.interval_ms))
    }

    pub fn poll(&mut self, now: u64) -> Option<ReportBatch> {
        if self.due()? > now {
            return None;
        }
        let n = self.queue.len().min(self.batch);
        let grants: Vec<SubGrant> = self.queue.drain(..n).collect();
        self.oldest_at = (!self.queue.is_empty()).then_some(now);
        self.noted_at = None;
        self.seq += 1;
        self.sent += 1;
        Some(ReportBatch {
            seq: self.seq,
            grants,
        })
    }

    /// A batch that could not be delivered goes back to the front (within
    /// the backlog; the oldest beyond it are dropped).
    pub fn put_back(&mut self, batch: ReportBatch, now: u64) {
        // The view it carried goes with the next batch.
        self.note(now);
        for g in batch.grants.into_iter().rev() {
            if self.queue.len() >= self.backlog {
                self.dropped += 1;
                continue;
            }
            self.queue.push_front(g);
        }
        if !self.queue.is_empty() {
            self.oldest_at = Some(self.oldest_at.map_or(now, |a| a.min(now)));
        }
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }
}
