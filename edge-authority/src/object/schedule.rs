//! When a namespace object's alarm is due, and what it does then: pure
//! decisions the runtime driver follows.
//!
//! The alarm pushes the summary to the registry (at most every
//! [`PUSH_EVERY_MS`] while grants change it, then again as its minute and
//! hour rates decay), prunes grants past their retention, and checks in
//! every `check_every_ms` even when the namespace is idle: it reads its
//! witness (a witness that went back is raised back before a later restore
//! of this object can matter) and re-registers with the registry (a
//! registry restored to an older copy lists it again). [`AlarmSlot`] keeps
//! the stored alarm in memory, so moving it costs a storage call only when
//! it moves earlier.

/// A namespace object pushes its summary to the registry at most this
/// often, in ms.
pub const PUSH_EVERY_MS: i64 = 2_000;

/// After a grant, the registry's summary is refreshed again this long
/// after it (and an hour after that): its minute and hour rates decay.
pub const REFRESH_AFTER_MS: i64 = 61_000;

/// A check-in that failed (the witness could not be reached) is tried again
/// this soon, in ms, or at the usual interval if that is sooner.
pub const CHECK_RETRY_MS: i64 = 30_000;

/// What the object knows when it plans its next alarm (all times in ms
/// since the epoch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Now.
    pub now: i64,
    /// When the summary was last pushed to the registry (0: never).
    pub pushed_at: i64,
    /// Whether something the registry has not seen is waiting (refusals
    /// counted since the last push).
    pub unpushed: bool,
    /// The namespace's last grant, if any.
    pub last_grant_at: Option<i64>,
    /// When the witness was last heard from and the object last
    /// re-registered (0: not since this instance started).
    pub checked_at: i64,
    /// When a check-in last failed, if the last one did.
    pub failed_at: Option<i64>,
    /// How often an object checks in, idle or not.
    pub check_every_ms: i64,
}

impl Clock {
    /// When the registry's summary next needs a push though nothing else
    /// is due: soon when it lags a change, else when the rates decay.
    pub fn refresh_at(&self) -> Option<i64> {
        let last = self.last_grant_at;
        if self.unpushed || last.is_some_and(|l| l > self.pushed_at) {
            return Some((self.pushed_at + PUSH_EVERY_MS).max(self.now + 1));
        }
        let last = last?;
        [last + REFRESH_AFTER_MS, last + 3_600_000 + REFRESH_AFTER_MS]
            .into_iter()
            .find(|&at| at > self.now && at > self.pushed_at)
    }

    /// When the next check-in is due: an interval after the last one, or
    /// [`CHECK_RETRY_MS`] after a failed one if that is sooner.
    fn due_at(&self) -> i64 {
        let regular = self.checked_at.saturating_add(self.check_every_ms);
        match self.failed_at {
            Some(failed) => regular.min(failed.saturating_add(CHECK_RETRY_MS)),
            None => regular,
        }
    }

    /// Whether an alarm firing now should check in (read the witness,
    /// re-register).
    pub fn check_due(&self) -> bool {
        self.now >= self.due_at()
    }

    /// The next check-in (never in the past).
    pub fn check_at(&self) -> i64 {
        self.due_at().max(self.now + 1)
    }

    /// The next alarm after one that fired now: the earliest of the next
    /// prune (`prune_at`), the summary's refresh, the next check-in, and an
    /// alarm asked for meanwhile (`asked`). Always set: an idle object
    /// still checks in.
    pub fn next_alarm(&self, prune_at: Option<i64>, asked: Option<i64>) -> i64 {
        [prune_at, self.refresh_at(), Some(self.check_at()), asked]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(self.now + 1)
    }
}

/// When a change the registry has not seen must be pushed at the latest:
/// [`PUSH_EVERY_MS`] after the last push (a grant, a refusal counted).
pub fn push_due_by(pushed_at: i64) -> i64 {
    pushed_at.saturating_add(PUSH_EVERY_MS)
}

/// What a namespace object instance knows of its stored alarm: the stored
/// one is read once per instance, then kept in memory, so a request costs
/// no storage call unless it moves the alarm earlier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AlarmSlot {
    read: bool,
    at: Option<i64>,
}

impl AlarmSlot {
    /// Whether the stored alarm must be read first ([`AlarmSlot::handle_read`]).
    pub fn needs_read(&self) -> bool {
        !self.read
    }

    /// The stored alarm, as read.
    pub fn handle_read(&mut self, stored: Option<i64>) {
        self.read = true;
        self.at = stored;
    }

    /// The alarm to set so that one is due no later than `at`, or `None`
    /// when the one set is soon enough. Only after the stored one was read.
    pub fn to_set(&self, at: i64) -> Option<i64> {
        if !self.read || self.at.is_some_and(|t| t <= at) {
            return None;
        }
        Some(at)
    }

    /// The alarm at `at` was set.
    pub fn handle_set(&mut self, at: i64) {
        self.at = Some(at);
    }

    /// The alarm fired: none is due now (an alarm asked for while its
    /// handler runs is kept: [`AlarmSlot::asked`]).
    pub fn handle_fired(&mut self) {
        self.read = true;
        self.at = None;
    }

    /// The alarm set in memory, if any: after one fired, one asked for
    /// since.
    pub fn asked(&self) -> Option<i64> {
        self.at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_800_000_000_000;
    const CHECK: i64 = 600_000;

    fn clock(now: i64) -> Clock {
        Clock {
            now,
            pushed_at: 0,
            unpushed: false,
            last_grant_at: None,
            checked_at: T,
            failed_at: None,
            check_every_ms: CHECK,
        }
    }

    #[test]
    fn an_idle_object_still_checks_in() {
        let c = clock(T + 1);
        assert_eq!(c.refresh_at(), None);
        assert!(!c.check_due());
        assert_eq!(c.next_alarm(None, None), T + CHECK);
        let later = clock(T + CHECK);
        assert!(later.check_due());
        assert_eq!(
            later.next_alarm(None, None),
            T + CHECK + 1,
            "never in the past"
        );
    }

    #[test]
    fn a_failed_check_in_is_tried_again_soon() {
        let failed = Clock {
            failed_at: Some(T + 100),
            ..clock(T + 200)
        };
        assert!(!failed.check_due());
        assert_eq!(failed.check_at(), T + 100 + CHECK_RETRY_MS);
        let later = Clock {
            now: T + 100 + CHECK_RETRY_MS,
            ..failed
        };
        assert!(later.check_due());
        // Never later than the regular interval.
        let short = Clock {
            check_every_ms: 5_000,
            ..failed
        };
        assert_eq!(short.check_at(), T + 5_000);
    }

    #[test]
    fn a_changed_summary_is_pushed_within_push_every() {
        let c = Clock {
            pushed_at: T,
            last_grant_at: Some(T + 500),
            ..clock(T + 600)
        };
        assert_eq!(c.refresh_at(), Some(T + PUSH_EVERY_MS));
        let unpushed = Clock {
            unpushed: true,
            pushed_at: T - 10_000,
            ..clock(T)
        };
        assert_eq!(unpushed.refresh_at(), Some(T + 1), "overdue: at once");
    }

    #[test]
    fn rates_are_refreshed_as_they_decay() {
        let c = Clock {
            pushed_at: T + 2_000,
            last_grant_at: Some(T),
            ..clock(T + 3_000)
        };
        assert_eq!(c.refresh_at(), Some(T + REFRESH_AFTER_MS));
        let after_minute = Clock {
            pushed_at: T + REFRESH_AFTER_MS,
            ..c
        };
        let after_minute = Clock {
            now: T + REFRESH_AFTER_MS + 1,
            ..after_minute
        };
        assert_eq!(
            after_minute.refresh_at(),
            Some(T + 3_600_000 + REFRESH_AFTER_MS)
        );
        // The earliest wins: a prune, a refresh, the check, an alarm asked for.
        assert_eq!(c.next_alarm(Some(T + 5_000), None), T + 5_000);
        assert_eq!(c.next_alarm(None, Some(T + 4_000)), T + 4_000);
        assert_eq!(c.next_alarm(None, None), T + REFRESH_AFTER_MS);
    }

    #[test]
    fn the_stored_alarm_is_read_once_and_only_moved_earlier() {
        let mut slot = AlarmSlot::default();
        assert!(slot.needs_read());
        assert_eq!(slot.to_set(T), None, "not before the stored one is read");
        slot.handle_read(Some(T + 5_000));
        assert!(!slot.needs_read());
        assert_eq!(slot.to_set(T + 9_000), None, "the one set is sooner");
        assert_eq!(slot.to_set(T + 5_000), None);
        assert_eq!(slot.to_set(T + 1_000), Some(T + 1_000));
        slot.handle_set(T + 1_000);
        assert_eq!(slot.to_set(T + 2_000), None);
        // Fired: nothing set until asked again, and the read is not repeated.
        slot.handle_fired();
        assert_eq!(slot.asked(), None);
        assert!(!slot.needs_read());
        assert_eq!(slot.to_set(T + 60_000), Some(T + 60_000));
        slot.handle_set(T + 60_000);
        assert_eq!(slot.asked(), Some(T + 60_000), "kept for the next alarm");
        // None stored: the first ask sets one.
        let mut empty = AlarmSlot::default();
        empty.handle_read(None);
        assert_eq!(empty.to_set(T), Some(T));
    }

    #[test]
    fn a_change_is_pushed_within_push_every() {
        assert_eq!(push_due_by(T), T + PUSH_EVERY_MS);
        assert_eq!(push_due_by(0), PUSH_EVERY_MS, "never pushed: at once");
        assert_eq!(push_due_by(i64::MAX), i64::MAX);
    }
}
