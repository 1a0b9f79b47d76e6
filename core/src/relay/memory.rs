//! The relay's memory of recent sub-grants, so that a retried request gets
//! the same sub-range: bounded by a count and an age, in memory only.

use alloc::collections::{BTreeMap, VecDeque};

use crate::authority::Owner;
use crate::names::{Incarnation, RequestId};
use crate::range::Range;

/// A request's identity: who asked (`sub`), its incarnation, its id.
pub(super) type Key = (Owner, Incarnation, RequestId);

/// See the module documentation.
#[derive(Debug)]
pub(super) struct Memory {
    entries: usize,
    max_age_ms: u64,
    map: BTreeMap<Key, (Range, u64)>,
    order: VecDeque<(Key, u64)>,
    /// Sub-grants forgotten for the count bound (not for age).
    pub evicted: u64,
}

impl Memory {
    pub fn new(entries: usize, max_age_ms: u64) -> Memory {
        Memory {
            entries,
            max_age_ms,
            map: BTreeMap::new(),
            order: VecDeque::new(),
            evicted: 0,
        }
    }

    /// The sub-range handed out for `key`, if it is still remembered.
    pub fn get(&self, key: &Key) -> Option<Range> {
        self.map.get(key).map(|(r, _)| *r)
    }

    /// Remembers `range` for `key`, handed out at `now`.
    pub fn insert(&mut self, key: Key, range: Range, now: u64) {
        if self.entries == 0 {
            return;
        }
        while self.map.len() >= self.entries {
            match self.order.pop_front() {
                Some((old, at)) => {
                    if self.map.get(&old).is_some_and(|(_, t)| *t == at) {
                        self.map.remove(&old);
                        self.evicted += 1;
                    }
                }
                None => break,
            }
        }
        self.map.insert(key, (range, now));
        self.order.push_back((key, now));
    }

    /// Forgets what is `max_age_ms` old or older at `now`.
    pub fn age(&mut self, now: u64) {
        while let Some(&(key, at)) = self.order.front() {
            if now.saturating_sub(at) < self.max_age_ms {
                break;
            }
            self.order.pop_front();
            if self.map.get(&key).is_some_and(|(_, t)| *t == at) {
                self.map.remove(&key);
            }
        }
    }

    /// How many sub-grants are remembered.
    pub fn len(&self) -> usize {
        self.map.len()
    }
}
