//! The refusals a namespace object counts for operators: what core decided
//! against a grant request (exhausted, frozen, conflict, a caller past its
//! grant rate or a row budget) and grants stopped at the fence because its
//! witness could not be reached. Counted in memory as they happen (a refused request writes
//! nothing), added to the object's storage when its summary is pushed, so
//! the totals the registry and `/v1/metrics` show never go backwards.

use rangeid_core::authority::Refusal;
use serde::{Deserialize, Serialize};

/// A counted kind of refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// `namespace_exhausted`.
    Exhausted,
    /// `namespace_frozen`.
    Frozen,
    /// `request_conflict`.
    Conflict,
    /// `rate_limited`: a caller past its grant rate.
    RateLimited,
    /// `ledger_full`: a grant that would need a row past a row budget.
    LedgerFull,
    /// `unavailable` because the fence's witness could not be reached.
    Fenced,
}

impl Counted {
    /// Every kind, in the order metrics list them.
    pub const ALL: [Counted; 6] = [
        Counted::Exhausted,
        Counted::Frozen,
        Counted::Conflict,
        Counted::RateLimited,
        Counted::LedgerFull,
        Counted::Fenced,
    ];

    /// Kinds storage may hold from an older release that are no longer
    /// counted (`owner`: another `sub`'s request id, before a request's
    /// identity included its `sub`); read and left out.
    pub const RETIRED: [&'static str; 1] = ["owner"];

    /// The counted kind of a decided refusal; `None` for malformed requests
    /// (bad count, wrong namespace), which are the caller's bug.
    pub const fn of(refusal: &Refusal) -> Option<Counted> {
        match refusal {
            Refusal::Exhausted { .. } => Some(Counted::Exhausted),
            Refusal::Frozen => Some(Counted::Frozen),
            Refusal::Conflict => Some(Counted::Conflict),
            Refusal::RateLimited { .. } => Some(Counted::RateLimited),
            Refusal::LedgerFull { .. } => Some(Counted::LedgerFull),
            _ => None,
        }
    }

    /// Its field in the summary's `refusals` (camelCase).
    pub const fn field(self) -> &'static str {
        match self {
            Counted::RateLimited => "rateLimited",
            Counted::LedgerFull => "ledgerFull",
            other => other.as_str(),
        }
    }

    /// Its name in storage, log lines and metric labels.
    pub const fn as_str(self) -> &'static str {
        match self {
            Counted::Exhausted => "exhausted",
            Counted::Frozen => "frozen",
            Counted::Conflict => "conflict",
            Counted::RateLimited => "rate_limited",
            Counted::LedgerFull => "ledger_full",
            Counted::Fenced => "fenced",
        }
    }
}

/// Counts of refusals by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Refusals {
    /// Refused: fewer IDs remain than asked for.
    pub exhausted: u64,
    /// Refused: the namespace is frozen.
    pub frozen: u64,
    /// Refused: the key was used with another count.
    pub conflict: u64,
    /// Refused for now: the caller took its grants of the last second.
    pub rate_limited: u64,
    /// Refused for now: a new row would pass a row budget.
    pub ledger_full: u64,
    /// Answered 503: the fence's witness could not be reached.
    pub fenced: u64,
}

impl Refusals {
    fn slot(&mut self, kind: Counted) -> &mut u64 {
        match kind {
            Counted::Exhausted => &mut self.exhausted,
            Counted::Frozen => &mut self.frozen,
            Counted::Conflict => &mut self.conflict,
            Counted::RateLimited => &mut self.rate_limited,
            Counted::LedgerFull => &mut self.ledger_full,
            Counted::Fenced => &mut self.fenced,
        }
    }

    /// The count of `kind`.
    pub fn get(&self, kind: Counted) -> u64 {
        let mut copy = *self;
        *copy.slot(kind)
    }

    /// Counts one refusal of `kind`.
    pub fn add(&mut self, kind: Counted) {
        let slot = self.slot(kind);
        *slot = slot.saturating_add(1);
    }

    /// Adds `n` refusals of `kind`.
    pub fn add_n(&mut self, kind: Counted, n: u64) {
        let slot = self.slot(kind);
        *slot = slot.saturating_add(n);
    }

    /// Whether nothing is counted.
    pub fn is_empty(&self) -> bool {
        *self == Refusals::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decided_refusals_map_to_their_counts() {
        assert_eq!(
            Counted::of(&Refusal::Exhausted { remaining: 3 }),
            Some(Counted::Exhausted)
        );
        assert_eq!(
            Counted::of(&Refusal::RateLimited {
                retry_after_ms: 1,
                per_second: 1
            }),
            Some(Counted::RateLimited)
        );
        assert_eq!(Counted::of(&Refusal::BadCount { max_count: 1 }), None);
        let json = serde_json::to_value(Refusals::default()).unwrap();
        for kind in Counted::ALL {
            assert!(json.get(kind.field()).is_some(), "{}", kind.field());
        }
        let mut r = Refusals::default();
        assert!(r.is_empty());
        for kind in Counted::ALL {
            r.add(kind);
        }
        r.add_n(Counted::Fenced, u64::MAX);
        assert_eq!(
            Counted::ALL.map(|k| r.get(k)),
            [1, 1, 1, 1, 1, u64::MAX],
            "saturating"
        );
    }
}
