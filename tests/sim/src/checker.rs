//! `Checker`: records every committed grant and every issued ID, and fails
//! on the first broken guarantee.
//!
//! It trusts nothing the engines say about themselves: an issued ID must lie
//! in a range the authority durably committed to that engine's owner (its
//! token `sub`) and incarnation,
//! must not have been issued before by anyone (the full set of issued IDs is
//! kept, as coalesced intervals), and must never move a range's cursor back.
//! The world also holds engines to two more rules, reported here: a retry
//! never preempts an attempt that is still running, and an incarnation in
//! slow start never has more committed to it than its reservation bound.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use rangeid_core::authority::Owner;
use rangeid_core::{Incarnation, Range};

/// Who a range was committed to: the requester's owner and incarnation.
pub type Holder = (Owner, Incarnation);

/// A broken guarantee, with enough detail to debug it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// Two committed grants share IDs.
    OverlappingGrants {
        /// The grant already committed.
        earlier: Range,
        /// The grant that overlaps it.
        later: Range,
    },
    /// An ID was issued twice.
    Duplicate {
        /// The repeated ID.
        id: u64,
    },
    /// An ID lies in no range committed to the issuing owner and
    /// incarnation.
    NotGranted {
        /// The ID.
        id: u64,
        /// The incarnation that issued it.
        incarnation: String,
    },
    /// The engine asked its driver for an action the simulation does not
    /// know (core's `Action` grew): the run cannot go on faithfully.
    UnknownAction {
        /// The generator's slot.
        slot: usize,
        /// The action, as `Debug` prints it.
        action: String,
    },
    /// A generator was refused for good by something other than the
    /// namespace running out (another caller's request, for example).
    Stopped {
        /// The generator's slot.
        slot: usize,
        /// The code it was refused with.
        code: String,
    },
    /// A generator was refused for a full ledger while it held less than
    /// its share: another caller's flood starved it.
    Starved {
        /// The generator's slot.
        slot: usize,
    },
    /// The committed ledger holds more rows than the limits allow.
    OverBudget {
        /// Rows in all.
        rows: u64,
        /// The most rows one owner holds.
        most: u64,
    },
    /// An exact batch (`take_exact`) held another number of IDs than
    /// asked for.
    NotExact {
        /// The incarnation.
        incarnation: String,
        /// How many were asked for.
        asked: u64,
        /// How many came.
        got: u64,
    },
    /// An engine sent a retry while the attempt before it was still
    /// running: neither failed nor timed out (the retry storm of issue 7).
    PrematureRetry {
        /// The retry's request number.
        request: u64,
        /// The retry's attempt number.
        attempt: u32,
        /// How long after the previous attempt it went out, in ms.
        after_ms: u64,
    },
    /// An incarnation in slow start (younger than the time a rate needs to
    /// be trusted) had more committed to it than its reservation bound:
    /// `max(2 * min_range_size, 4 * issued)` plus a batch allowance.
    OverReserved {
        /// The incarnation.
        incarnation: String,
        /// IDs committed to it.
        reserved: u64,
        /// IDs it had issued.
        issued: u64,
        /// The bound.
        bound: u64,
    },
    /// The authority reported a rollback of its storage that did not
    /// happen (a raise whose answer was lost, taken for a restore).
    FalseRollback {
        /// The witness's mark it heard.
        mark: u128,
    },
    /// The authority reported its witness below its fence (and audited
    /// it) where no restore of the witness happened.
    FalseWitnessBehind {
        /// The witness's mark it heard.
        mark: u128,
    },
    /// A relay handed out a sub-range that lies in no range durably
    /// granted to that relay's incarnation.
    SubGrantOutside {
        /// The sub-range.
        range: Range,
        /// The relay incarnation it was handed out under.
        relay: String,
    },
    /// Two sub-ranges handed to different requests share IDs.
    OverlappingSubGrants {
        /// The sub-range handed out first.
        earlier: Range,
        /// The one that overlaps it.
        later: Range,
    },
    /// After a freeze or floor was acknowledged, a relay handed out a
    /// range from a grant committed before the act.
    StaleAfterAct {
        /// The sub-range.
        range: Range,
        /// When its root grant was committed (simulated ms).
        granted_at: u64,
        /// When the act committed and when it was acknowledged.
        act_at: u64,
        /// See `act_at`.
        acked_at: u64,
    },
    /// An engine issued an ID at or below one it issued before from the
    /// same range: its cursor went back.
    CursorReset {
        /// The ID.
        id: u64,
        /// The highest ID issued from that range before.
        high: u64,
    },
    /// An engine's count of IDs returned to callers (with the IDs of lent
    /// blocks its driver still held counted unreturned) is not what its
    /// callers were given.
    Miscounted {
        /// The incarnation.
        incarnation: String,
        /// The engine's count (`Stats::issued`).
        counted: u64,
        /// IDs its callers were given.
        given: u64,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::OverlappingGrants { earlier, later } => {
                write!(f, "committed grants overlap: {earlier} and {later}")
            }
            Violation::Duplicate { id } => write!(f, "ID {id} was issued twice"),
            Violation::NotGranted { id, incarnation } => {
                write!(
                    f,
                    "ID {id} is in no range committed to incarnation {incarnation}"
                )
            }
            Violation::UnknownAction { slot, action } => {
                write!(f, "generator {slot} was asked for an unknown action: {action}")
            }
            Violation::Stopped { slot, code } => {
                write!(f, "generator {slot} was refused for good: {code}")
            }
            Violation::Starved { slot } => write!(
                f,
                "generator {slot} was refused for a full ledger while below its own budget"
            ),
            Violation::OverBudget { rows, most } => write!(
                f,
                "the ledger holds {rows} rows, one owner {most}: past the limits"
            ),
            Violation::NotExact {
                incarnation,
                asked,
                got,
            } => write!(
                f,
                "incarnation {incarnation}: an exact batch of {asked} held {got} IDs"
            ),
            Violation::PrematureRetry {
                request,
                attempt,
                after_ms,
            } => write!(
                f,
                "r{request} attempt {attempt} went out {after_ms} ms after the attempt before it, \
                 which had neither failed nor timed out"
            ),
            Violation::OverReserved {
                incarnation,
                reserved,
                issued,
                bound,
            } => write!(
                f,
                "incarnation {incarnation} in slow start had {reserved} IDs committed after issuing {issued} (bound {bound})"
            ),
            Violation::FalseRollback { mark } => write!(
                f,
                "a rollback was reported at the witness's mark {mark}, with no restore since the last check"
            ),
            Violation::FalseWitnessBehind { mark } => write!(
                f,
                "the witness was reported behind at {mark}, with no restore of it unmended"
            ),
            Violation::SubGrantOutside { range, relay } => write!(
                f,
                "sub-range {range} lies in no range committed to relay incarnation {relay}"
            ),
            Violation::OverlappingSubGrants { earlier, later } => {
                write!(f, "sub-ranges overlap: {earlier} and {later}")
            }
            Violation::StaleAfterAct {
                range,
                granted_at,
                act_at,
                acked_at,
            } => write!(
                f,
                "sub-range {range} of a grant committed at {granted_at} ms handed out after an act \
                 committed at {act_at} ms was acknowledged at {acked_at} ms"
            ),
            Violation::CursorReset { id, high } => {
                write!(
                    f,
                    "cursor reset: {id} issued after {high} from the same range"
                )
            }
            Violation::Miscounted {
                incarnation,
                counted,
                given,
            } => write!(
                f,
                "incarnation {incarnation} counts {counted} IDs returned to callers, who were given {given}"
            ),
        }
    }
}

/// A run of consecutive IDs one engine issued from one range, not yet
/// merged into the issued set.
#[derive(Clone, Copy)]
struct Run {
    range: Range,
    first: u64,
    last: u64,
}

/// See the module documentation.
#[derive(Default)]
pub struct Checker {
    // Committed grants: start -> (range, holder).
    grants: BTreeMap<u64, (Range, Holder)>,
    // When each grant was committed (simulated ms), by start.
    commit_times: HashMap<u64, u64>,
    // Sub-ranges relays handed out: start -> (range, holder).
    subs: BTreeMap<u64, (Range, Holder)>,
    // Every issued ID, as disjoint intervals: first -> last (inclusive).
    issued: BTreeMap<u64, u64>,
    issued_count: u64,
    // The highest ID issued from each range, by range start.
    high: HashMap<u64, u64>,
    // The open run of each engine.
    runs: BTreeMap<u64, Run>,
}

impl Checker {
    /// An empty checker.
    pub fn new() -> Checker {
        Checker::default()
    }

    /// How many IDs were issued so far.
    pub fn issued(&self) -> u64 {
        self.issued_count
    }

    /// How many grants were committed so far.
    pub fn grants(&self) -> usize {
        self.grants.len()
    }

    /// Records a grant the authority committed durably to `holder`.
    pub fn committed(&mut self, range: Range, holder: Holder) -> Result<(), Violation> {
        let before = self.grants.range(..=range.last()).next_back();
        if let Some((_, (earlier, _))) = before {
            if earlier.overlaps(&range) {
                return Err(Violation::OverlappingGrants {
                    earlier: *earlier,
                    later: range,
                });
            }
        }
        self.grants.insert(range.start(), (range, holder));
        Ok(())
    }

    /// Records when the grant starting at `start` was committed.
    pub fn commit_time(&mut self, start: u64, at: u64) {
        self.commit_times.insert(start, at);
    }

    /// Records a sub-range a relay running as `relay` handed to `to`: it
    /// must lie inside one range committed to `relay`, and overlap no
    /// other sub-range (but the same one to the same holder, a replay).
    /// Returns when its root grant was committed.
    pub fn sub_granted(
        &mut self,
        range: Range,
        to: &Holder,
        relay: &Holder,
    ) -> Result<u64, Violation> {
        let parent = match self.grants.range(..=range.start()).next_back() {
            Some((start, (r, h)))
                if h == relay && r.contains(range.start()) && range.last() <= r.last() =>
            {
                *start
            }
            _ => {
                return Err(Violation::SubGrantOutside {
                    range,
                    relay: relay.1.to_string(),
                })
            }
        };
        if let Some((_, (earlier, h))) = self.subs.range(..=range.last()).next_back() {
            if earlier.overlaps(&range) && !(earlier == &range && h == to) {
                return Err(Violation::OverlappingSubGrants {
                    earlier: *earlier,
                    later: range,
                });
            }
        }
        self.subs.insert(range.start(), (range, *to));
        Ok(self.commit_times.get(&parent).copied().unwrap_or(0))
    }

    /// A sub-range a relay handed `to` again (a replay): it must be the
    /// very one it handed `to` before.
    pub fn sub_replayed(&self, range: Range, to: &Holder) -> Result<(), Violation> {
        match self.subs.get(&range.start()) {
            Some((r, h)) if *r == range && h == to => Ok(()),
            _ => Err(Violation::NotGranted {
                id: range.start(),
                incarnation: to.1.to_string(),
            }),
        }
    }

    /// Records the IDs `batch` that engine `engine` (running as `holder`)
    /// just issued.
    pub fn issued_batch(
        &mut self,
        engine: u64,
        holder: &Holder,
        batch: Range,
    ) -> Result<(), Violation> {
        if let Some(run) = self.runs.get_mut(&engine) {
            let continues = run.last.checked_add(1) == Some(batch.start());
            if continues && batch.last() <= run.range.last() {
                run.last = batch.last();
                self.issued_count += batch.count();
                return Ok(());
            }
        }
        self.flush(engine)?;
        let range = self.granted_range(batch.start(), holder)?;
        if batch.last() > range.last() {
            return Err(Violation::NotGranted {
                id: range.last().saturating_add(1),
                incarnation: holder.1.to_string(),
            });
        }
        if let Some(&high) = self.high.get(&range.start()) {
            if batch.start() <= high {
                return Err(Violation::CursorReset {
                    id: batch.start(),
                    high,
                });
            }
        }
        self.runs.insert(
            engine,
            Run {
                range,
                first: batch.start(),
                last: batch.last(),
            },
        );
        self.issued_count += batch.count();
        Ok(())
    }

    /// Merges every open run into the issued set; call before reading the
    /// final verdict.
    pub fn finish(&mut self) -> Result<(), Violation> {
        let engines: Vec<u64> = self.runs.keys().copied().collect();
        for engine in engines {
            self.flush(engine)?;
        }
        Ok(())
    }

    fn granted_range(&self, id: u64, holder: &Holder) -> Result<Range, Violation> {
        if let Some((_, (range, to))) = self.subs.range(..=id).next_back() {
            if range.contains(id) && to == holder {
                return Ok(*range);
            }
        }
        match self.grants.range(..=id).next_back() {
            Some((_, (range, to))) if range.contains(id) && to == holder => Ok(*range),
            _ => Err(Violation::NotGranted {
                id,
                incarnation: holder.1.to_string(),
            }),
        }
    }

    fn flush(&mut self, engine: u64) -> Result<(), Violation> {
        let Some(run) = self.runs.remove(&engine) else {
            return Ok(());
        };
        let high = self.high.entry(run.range.start()).or_insert(0);
        *high = (*high).max(run.last);
        self.insert_issued(run.first, run.last)
    }

    fn insert_issued(&mut self, first: u64, last: u64) -> Result<(), Violation> {
        // The interval starting at or before `last` is the only one that can
        // overlap; neighbours touching either end are merged.
        if let Some((&a, &b)) = self.issued.range(..=last).next_back() {
            if b >= first {
                return Err(Violation::Duplicate { id: first.max(a) });
            }
        }
        let mut lo = first;
        let mut hi = last;
        if let Some((&a, &b)) = self.issued.range(..first).next_back() {
            if b.checked_add(1) == Some(first) {
                self.issued.remove(&a);
                lo = a;
            }
        }
        if let Some(next) = last.checked_add(1) {
            if let Some(b) = self.issued.remove(&next) {
                hi = b;
            }
        }
        self.issued.insert(lo, hi);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inc(s: &str) -> Holder {
        (Owner::new("svc"), Incarnation::new(s).unwrap())
    }

    fn r(start: u64, end: u128) -> Range {
        Range::new(start, end).unwrap()
    }

    #[test]
    fn catches_each_kind_of_violation() {
        let mut c = Checker::new();
        c.committed(r(1, 11), inc("a")).unwrap();
        c.committed(r(11, 21), inc("b")).unwrap();
        // The same incarnation under another owner is another holder.
        let other = (Owner::new("insider"), Incarnation::new("b").unwrap());
        assert!(matches!(
            c.issued_batch(9, &other, r(11, 12)),
            Err(Violation::NotGranted { id: 11, .. })
        ));
        assert!(matches!(
            c.committed(r(20, 30), inc("c")),
            Err(Violation::OverlappingGrants { .. })
        ));
        c.issued_batch(1, &inc("a"), r(1, 4)).unwrap();
        assert_eq!(
            c.issued_batch(2, &inc("b"), r(5, 6)),
            Err(Violation::NotGranted {
                id: 5,
                incarnation: "b".into()
            })
        );
        assert_eq!(
            c.issued_batch(1, &inc("a"), r(2, 3)),
            Err(Violation::CursorReset { id: 2, high: 3 })
        );
        c.issued_batch(2, &inc("b"), r(11, 13)).unwrap();
        c.issued_batch(2, &inc("b"), r(13, 21)).unwrap();
        c.issued_batch(3, &inc("a"), r(4, 11)).unwrap();
        c.finish().unwrap();
        assert_eq!(c.issued(), 3 + 2 + 8 + 7);
    }

    #[test]
    fn a_second_engine_on_the_same_range_is_a_duplicate() {
        let mut c = Checker::new();
        c.committed(r(1, 11), inc("a")).unwrap();
        c.issued_batch(1, &inc("a"), r(1, 6)).unwrap();
        c.issued_batch(2, &inc("a"), r(6, 8)).unwrap();
        c.issued_batch(2, &inc("a"), r(8, 9)).unwrap();
        // Engine 3 shares the incarnation and starts over inside engine 2's run.
        c.issued_batch(3, &inc("a"), r(7, 8)).unwrap();
        assert_eq!(c.finish(), Err(Violation::Duplicate { id: 7 }));
    }
}
