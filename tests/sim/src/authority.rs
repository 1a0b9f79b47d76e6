//! `Authority`: the core decision over an in-memory store with a durable
//! part and a staged part, so a crash can lose exactly what was not yet
//! committed; a witness that keeps the fence's high-water mark outside it;
//! and snapshots of both, so either can be restored to an older copy
//! (point-in-time recovery of the namespace object alone, or of its witness
//! alone).
//!
//! Requests are decided one at a time against the staged state (as the
//! Durable Object does in one synchronous block). Each decision's writes
//! become durable at a later commit; its reply leaves only then. A crash
//! throws the staged writes away and keeps the committed ones. After any
//! restart the authority reads the witness before its first grant, and
//! applies every answer of its witness as core decides
//! (`rangeid_core::fence::observe`): it skips to a mark above its own, and
//! raises a witness found below its fence back before granting.
//!
//! The store keeps the grant ledger the authority's way: spans found by
//! core's `span_for` among the caller's own (a request is its owner,
//! incarnation and request id), written as core records, with each
//! caller's usage and the namespace's limits; a restore takes it back
//! with everything else.

use std::collections::{BTreeMap, VecDeque};

use rangeid_core::authority::{decide, Decision, NamespaceState, Owner, Refusal};
use rangeid_core::fence::{self, Phase, Witnessed};
use rangeid_core::ledger::{span_for, LedgerView, Limits, Record, Span, SpanKey, Usage};
use rangeid_core::protocol::{Grant, GrantRequest};
use rangeid_core::{Incarnation, RequestId};

/// A deliberate authority bug, to prove the checker catches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bug {
    /// Correct behaviour.
    None,
    /// Reply as soon as a grant is decided, before it is durable.
    ReplyBeforeCommit,
    /// No fence: grant without a witness and start without skipping to its
    /// mark, so a restored copy grants again what it forgot.
    NoFence,
    /// Requests keyed without their owner, as before a request's identity
    /// included its `sub`: a key another owner took is refused for good,
    /// so an insider who posts a generator's next request id stops it.
    KeyWithoutOwner,
    /// A witness found below the fence is left there (the fence's check
    /// only one way): a restored witness, then a restored object, grants
    /// again.
    NoRaiseBack,
    /// The mark asked of the witness is not recorded before asking: a
    /// raise whose answer was lost reads as a rollback at the next start.
    ForgetsWhatItAsked,
}

/// A span's key, ordered as the authority's unique index orders it: owner
/// (here its number among the owners seen), incarnation, the first
/// request id's number (ids that are not numbered first, as `''` sorts
/// before digits), the first request id. Every part is `Copy`, so the
/// snapshots a restore needs copy no strings.
type SpanKeyRow = (u32, Incarnation, Option<u64>, RequestId);

fn key_of(owner: u32, span: &Span) -> SpanKeyRow {
    (
        owner,
        *span.incarnation(),
        span.first().number(),
        *span.first(),
    )
}

/// The grant ledger: spans, each owner's usage, the row count.
#[derive(Clone, Default)]
struct Ledger {
    spans: BTreeMap<SpanKeyRow, Span>,
    usage: BTreeMap<u32, Usage>,
    rows: u64,
}

/// The owners seen, numbered in order of arrival.
#[derive(Default)]
struct Owners(Vec<Owner>);

impl Owners {
    fn find(&self, owner: &Owner) -> Option<u32> {
        self.0.iter().position(|o| o == owner).map(|i| i as u32)
    }

    fn number(&mut self, owner: &Owner) -> u32 {
        self.find(owner).unwrap_or_else(|| {
            self.0.push(*owner);
            (self.0.len() - 1) as u32
        })
    }
}

impl Ledger {
    /// The caller's span for `request`, as the authority's queries find it.
    fn find(&self, request: &GrantRequest, owner: Option<u32>) -> Option<Span> {
        let o = owner?;
        let i = request.incarnation;
        match span_for(&request.request_id) {
            SpanKey::Exact(id) => self.spans.get(&(o, i, None, id)).copied(),
            SpanKey::AtOrBelow(m) => {
                let lo = (o, i, Some(0), RequestId::numbered(0));
                let hi = (o, i, Some(m), RequestId::numbered(m));
                self.spans.range(lo..=hi).next_back().map(|(_, s)| *s)
            }
        }
    }

    fn view(&self, request: &GrantRequest, owner: Option<u32>, limits: Limits) -> LedgerView {
        LedgerView {
            span: self.find(request, owner),
            caller: owner
                .and_then(|o| self.usage.get(&o).copied())
                .unwrap_or(Usage::NEW),
            rows: self.rows,
            limits,
        }
    }

    fn apply(&mut self, owner: u32, record: &Record) {
        self.spans.insert(key_of(owner, &record.span), record.span);
        self.usage.insert(owner, record.caller);
        self.rows = record.rows;
    }

    /// The grant committed to `owner` for `grant`'s key, if any.
    fn granted(&self, grant: &Grant, owner: Option<u32>) -> Option<Grant> {
        let request = GrantRequest {
            namespace: grant.namespace,
            incarnation: grant.incarnation,
            request_id: grant.request_id,
            count: grant.range.count(),
        };
        let span = self.find(&request, owner)?;
        span.grant(grant.namespace, span.index_of(&grant.request_id)?)
    }

    /// Another owner's span holding `request`'s incarnation and request id.
    fn someone_elses(&self, request: &GrantRequest, owner: Option<u32>) -> bool {
        self.spans.iter().any(|((o, ..), s)| {
            Some(*o) != owner
                && *s.incarnation() == request.incarnation
                && s.index_of(&request.request_id).is_some()
        })
    }
}

#[derive(Clone)]
struct Store {
    state: NamespaceState,
    ledger: Ledger,
    // The highest mark ever asked of the witness, written before asking.
    asked: u128,
    // Grants per minute, newest last, as the object keeps them to size
    // fence chunks (`fence::recent_chunk`); only recent ones are kept.
    minutes: Vec<fence::Minute>,
}

impl Store {
    /// Counts a grant of `count` committed at `at` (ms) in its minute.
    fn count_minute(&mut self, at: i64, count: u64) {
        let minute = at.div_euclid(fence::MINUTE_MS);
        match self.minutes.last_mut() {
            Some(m) if m.minute == minute => {
                m.ids += u128::from(count);
                m.largest = m.largest.max(count);
            }
            _ => self.minutes.push(fence::Minute {
                minute,
                ids: count.into(),
                largest: count,
            }),
        }
        // Older minutes never size a chunk again.
        let from = fence::recent_from(at);
        self.minutes.retain(|m| m.minute >= from);
    }
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
    /// The range would pass the fence: the witness must raise its mark to
    /// at least this first; the request waits for it.
    NeedsFence(u128),
    /// Not started against the witness since the last restart.
    NotStarted,
    /// A decision this simulation does not know (core's `Decision` may
    /// grow): nothing is staged, and the request is answered 503
    /// `unavailable`, as an authority that cannot carry it out would.
    Unavailable,
}

/// What hearing from the witness did (a start, a check-in, a raise's
/// answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Heard {
    /// IDs skipped to reach the witness's mark.
    pub skipped: u128,
    /// The witness was ahead of every mark recorded or asked for: the
    /// object's storage had gone back.
    pub forward: bool,
    /// The witness had gone below the fence (and is back up, or must be
    /// raised to `raise_back` first).
    pub behind: bool,
    /// The witness is below the fence: raise it to this before any grant.
    pub raise_back: Option<u128>,
}

/// How many committed snapshots are kept for restores.
const SNAPSHOTS: usize = 32;

/// The simulated authority for one namespace, and its witness.
pub struct Authority {
    committed: Store,
    staged: Store,
    // Writes decided but not durable yet, oldest first: the grant, its
    // owner, its ledger record and the state after.
    unflushed: VecDeque<(Grant, Owner, Record, NamespaceState)>,
    limits: Limits,
    owners: Owners,
    snapshots: VecDeque<Store>,
    epoch: u64,
    started: bool,
    witness: u128,
    witness_snapshots: VecDeque<u128>,
    bug: Bug,
}

impl Authority {
    /// An authority serving `state` (fenced at its first ID) under
    /// `limits`, with no grants yet and a witness at the same mark.
    pub fn new(state: NamespaceState, limits: Limits, bug: Bug) -> Authority {
        let state = if bug == Bug::NoFence {
            state.unfenced()
        } else {
            state
        };
        let store = Store {
            state,
            ledger: Ledger::default(),
            asked: 0,
            minutes: Vec::new(),
        };
        Authority {
            committed: store.clone(),
            staged: store,
            unflushed: VecDeque::new(),
            limits,
            owners: Owners::default(),
            snapshots: VecDeque::new(),
            epoch: 0,
            started: true,
            witness: state.fence(),
            witness_snapshots: VecDeque::new(),
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

    /// The witness's mark.
    pub fn witness(&self) -> u128 {
        self.witness
    }

    /// Whether the bug makes replies leave before their commit.
    pub fn replies_early(&self) -> bool {
        self.bug == Bug::ReplyBeforeCommit
    }

    /// Decides `request` from `owner` at `now` (ms) against the staged
    /// state, staging any writes.
    pub fn handle(&mut self, request: &GrantRequest, owner: &Owner, now: u64) -> Answer {
        if !self.started {
            return Answer::NotStarted;
        }
        let who = self.owners.find(owner);
        if self.bug == Bug::KeyWithoutOwner && self.staged.ledger.someone_elses(request, who) {
            // The old rule: the key is taken, by someone else.
            return Answer::Refused(Refusal::Conflict);
        }
        let view = self.staged.ledger.view(request, who, self.limits);
        match decide(&self.staged.state, &view, request, owner, now as i64) {
            Ok(Decision::New {
                grant,
                state,
                record,
            }) => {
                self.staged.state = state;
                let who = self.owners.number(owner);
                self.staged.ledger.apply(who, &record);
                self.staged
                    .count_minute(record.span.last_at(), grant.range.count());
                self.unflushed.push_back((grant, *owner, record, state));
                Answer::Grant(grant, false)
            }
            Ok(Decision::Replay(grant)) => Answer::Grant(grant, true),
            Ok(Decision::RaiseFence { at_least }) => Answer::NeedsFence(at_least),
            Ok(_) => Answer::Unavailable,
            Err(refusal) => Answer::Refused(refusal),
        }
    }

    /// The mark to ask the witness for at `now` (ms) so that a range can
    /// end at `at_least`: a chunk beyond it, sized by the last minute's
    /// grants as the object sizes it (`fence::recent_chunk`).
    pub fn fence_target(&self, at_least: u128, count: u64, now: u64) -> u128 {
        let s = &self.staged.state;
        let chunk = fence::recent_chunk(&self.staged.minutes, now as i64, count, 0, s.remaining());
        fence::target(s, at_least, chunk)
    }

    /// The authority is about to ask its witness for `target`: it records
    /// that durably first (the output gate holds the request until then).
    pub fn ask_witness(&mut self, target: u128) {
        if self.bug == Bug::ForgetsWhatItAsked {
            return;
        }
        self.committed.asked = self.committed.asked.max(target);
        self.staged.asked = self.committed.asked;
    }

    /// The witness raises its mark to at least `asked`; returns what it
    /// answers (its mark, and what it held before). Whether the answer
    /// reaches the authority is the world's to say ([`Authority::heard`]).
    pub fn witness_raises(&mut self, asked: u128) -> Witnessed {
        let was = self.witness;
        self.witness = fence::witness_raise(was, asked);
        Witnessed {
            mark: self.witness,
            was: Some(was),
        }
    }

    /// The witness's mark, as a read answers it.
    pub fn witness_read(&self) -> Witnessed {
        Witnessed::read(self.witness)
    }

    /// Applies an answer of the witness, to a request sent when the fence
    /// was `sent_at_fence`, as core decides: the state moves up
    /// to its mark (committed at once, as the object does before any grant).
    pub fn heard(&mut self, answer: Witnessed, phase: Phase, sent_at_fence: u128) -> Heard {
        if self.bug == Bug::NoFence {
            return Heard::default();
        }
        let r = fence::observe(
            &self.committed.state,
            self.committed.asked,
            sent_at_fence,
            answer,
            phase,
        );
        let raise_back = if self.bug == Bug::NoRaiseBack {
            None
        } else {
            r.raise_back
        };
        let to = r.state.next();
        self.committed.state = r.state;
        self.staged.state = self.staged.state.skip_to(to).with_fence(answer.mark);
        for (_, _, _, s) in self.unflushed.iter_mut() {
            *s = s.skip_to(to).with_fence(answer.mark);
        }
        Heard {
            skipped: r.skipped,
            forward: r.forward,
            behind: r.behind,
            raise_back,
        }
    }

    /// Makes the oldest staged write durable; returns its grant and owner.
    pub fn commit_one(&mut self) -> Option<(Grant, Owner)> {
        let (grant, owner, record, state) = self.unflushed.pop_front()?;
        let who = self.owners.number(&owner);
        self.committed.ledger.apply(who, &record);
        self.committed
            .count_minute(record.span.last_at(), grant.range.count());
        self.committed.state = state;
        Some((grant, owner))
    }

    /// Whether `grant` is durable for `owner`: the output gate lets its
    /// reply leave.
    pub fn is_committed(&self, grant: &Grant, owner: &Owner) -> bool {
        self.committed
            .ledger
            .granted(grant, self.owners.find(owner))
            == Some(*grant)
    }

    /// The rows `owner` holds in the committed ledger.
    pub fn rows_of(&self, owner: &Owner) -> u64 {
        self.owners
            .find(owner)
            .and_then(|o| self.committed.ledger.usage.get(&o))
            .map_or(0, |u| u.rows)
    }

    /// Whether the committed ledger still holds request `request_id` of
    /// `incarnation` under `owner` (a restore may have taken it back).
    pub fn holds(&self, owner: &Owner, incarnation: Incarnation, request_id: RequestId) -> bool {
        let Some(o) = self.owners.find(owner) else {
            return false;
        };
        let ledger = &self.committed.ledger;
        ledger.spans.iter().any(|((so, si, ..), span)| {
            *so == o && *si == incarnation && span.index_of(&request_id).is_some()
        })
    }

    /// The committed ledger's rows in all and the most one owner holds:
    /// never above the limits.
    pub fn ledger_rows(&self) -> (u64, u64) {
        let ledger = &self.committed.ledger;
        let most = ledger.usage.values().map(|u| u.rows).max().unwrap_or(0);
        (ledger.rows, most)
    }

    /// How many grants the committed ledger holds, and in how many rows.
    pub fn ledger_grants(&self) -> (u64, u64) {
        let ledger = &self.committed.ledger;
        let grants = ledger.spans.values().map(Span::grants).sum();
        (grants, ledger.spans.len() as u64)
    }

    /// The namespace's limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Keeps a copy of the committed store, and of the witness's mark, to
    /// restore later.
    pub fn snapshot(&mut self) {
        if self.snapshots.len() == SNAPSHOTS {
            self.snapshots.pop_front();
            self.witness_snapshots.pop_front();
        }
        self.snapshots.push_back(self.committed.clone());
        self.witness_snapshots.push_back(self.witness);
    }

    /// The witness's storage is put back to its copy `back` copies ago (the
    /// oldest if there are fewer). The namespace object is untouched and
    /// learns of it only when it next hears from its witness.
    pub fn restore_witness(&mut self, back: usize) {
        let i = self.witness_snapshots.len().saturating_sub(back.max(1));
        if let Some(&old) = self.witness_snapshots.get(i) {
            self.witness = old;
        }
    }

    /// Applies an administrative change (freeze, floor) directly to both
    /// states; refused while writes are staged so it cannot interleave.
    pub fn admin(&mut self, change: impl Fn(&NamespaceState) -> Option<NamespaceState>) -> bool {
        if !self.unflushed.is_empty() || !self.started {
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

    /// A crash and restart: staged writes are lost, committed ones kept;
    /// no grant before the next start against the witness.
    pub fn restart(&mut self) {
        self.staged = self.committed.clone();
        self.unflushed.clear();
        self.epoch += 1;
        self.started = false;
    }

    /// The object's storage is put back to the snapshot `back` copies ago
    /// (the oldest if there are fewer), then it restarts. The witness is
    /// untouched.
    pub fn restore(&mut self, back: usize) {
        let i = self.snapshots.len().saturating_sub(back.max(1));
        if let Some(old) = self.snapshots.get(i) {
            self.committed = old.clone();
        }
        self.restart();
    }

    /// The start against the witness: done once the witness was read and
    /// its answer applied ([`Authority::heard`]) with nothing left to raise
    /// back. Without the fence (a bug) it grants on from wherever the copy
    /// was.
    pub fn set_started(&mut self, started: bool) {
        self.started = started;
    }

    /// Whether the authority has started against the witness since its
    /// last restart.
    pub fn started(&self) -> bool {
        self.started
    }
}
