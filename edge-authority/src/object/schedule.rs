//! When a namespace object's alarm is due, and what it does then: pure
//! decisions the runtime driver follows.
//!
//! The alarm pushes the summary to the registry (at most every
//! [`PUSH_EVERY_MS`] while grants change it, then again as its minute and
//! hour rates decay), prunes grants past their retention, and checks in
//! every `check_every_ms` even when the namespace is idle: it reads its
//! witness (a witness that went back is raised back before a later restore
//! of this object can matter) and re-registers with the registry (a
//! registry restored to an older copy lists it again).

/// A namespace object pushes its summary to the registry at most this
/// often, in ms.
pub const PUSH_EVERY_MS: i64 = 2_000;

/// After a grant, the registry's summary is refreshed again this long
/// after it (and an hour after that): its minute and hour rates decay.
pub const REFRESH_AFTER_MS: i64 = 61_000;

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

    /// Whether an alarm firing now should check in (read the witness,
    /// re-register).
    pub fn check_due(&self) -> bool {
        self.now >= self.checked_at.saturating_add(self.check_every_ms)
    }

    /// The next check-in.
    pub fn check_at(&self) -> i64 {
        self.checked_at
            .saturating_add(self.check_every_ms)
            .max(self.now + 1)
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
}
