//! Raising a namespace's witness (the fence object) to a mark, as a state
//! machine the driver pumps: it records the mark asked for, asks the
//! witness, applies the answer, and asks again while the witness answers
//! below this object's fence (restored while the raise was on its way),
//! at most [`FENCE_TRIES`] times. No I/O here: the driver sends each
//! [`RaiseAction::Ask`] and hands the witness's answer to
//! [`Raising::handle_answer`]. A [`Flight`] is the one raise in flight
//! that every grant needing one shares: it goes on to the highest mark
//! asked while it flew before it lands.

use rangeid_core::fence::{Phase, Witnessed};

use super::grant::{self, Heard};
use crate::object::store::Sql;

/// How often a raise (or a grant, [`super::serve`]) may go back to the
/// witness before giving up: each time the witness answered below the
/// fence, or raised the mark that another grant may have used.
pub const FENCE_TRIES: usize = 8;

/// What the driver does next for a [`Raising`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RaiseAction {
    /// Ask the witness to raise its mark to at least `to`, then hand its
    /// answer to [`Raising::handle_answer`].
    Ask {
        /// The mark to ask for.
        to: u128,
    },
    /// Done: what the last answer showed, or `None` when the namespace
    /// does not exist.
    Done(Option<Heard>),
    /// The witness stayed below this object's fence for [`FENCE_TRIES`]
    /// raises; nothing more is asked.
    GaveUp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// The next raise: record `target`, then ask for it.
    Next {
        target: u128,
        was: Option<u128>,
    },
    /// Asked for `target`, the fence recorded being `sent_at`.
    Asked {
        target: u128,
        was: Option<u128>,
        sent_at: u128,
    },
    Done(Option<Heard>),
    GaveUp,
}

/// One raise of the witness to at least a mark, with its retries.
///
/// The mark asked for is recorded first ([`grant::record_asked`]), so an
/// answer lost after the witness's write is never taken for a rollback.
/// An answer below this object's fence is raised back at once, so no
/// caller ever relies on a witness below the fence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raising {
    state: State,
    asked: usize,
}

impl Raising {
    /// A raise to at least `target`. `was`, when given, is what the witness
    /// said it held just before (for a witness of an older build, whose
    /// answer does not say).
    pub fn new(target: u128, was: Option<u128>) -> Raising {
        Raising {
            state: State::Next { target, was },
            asked: 0,
        }
    }

    /// What to do next. Records the mark asked for before answering
    /// [`RaiseAction::Ask`] (a storage error is returned as its text).
    pub fn poll(&mut self, sql: &impl Sql) -> Result<RaiseAction, String> {
        match self.state {
            State::Next { target, was } => {
                if self.asked >= FENCE_TRIES {
                    self.state = State::GaveUp;
                    return Ok(RaiseAction::GaveUp);
                }
                let sent_at = grant::record_asked(sql, target).map_err(|e| e.to_string())?;
                let Some(sent_at) = sent_at else {
                    self.state = State::Done(None);
                    return Ok(RaiseAction::Done(None));
                };
                self.asked += 1;
                self.state = State::Asked {
                    target,
                    was,
                    sent_at,
                };
                Ok(RaiseAction::Ask { to: target })
            }
            State::Asked { target, .. } => Ok(RaiseAction::Ask { to: target }),
            State::Done(heard) => Ok(RaiseAction::Done(heard)),
            State::GaveUp => Ok(RaiseAction::GaveUp),
        }
    }

    /// Applies the witness's answer to the last [`RaiseAction::Ask`]
    /// ([`grant::witnessed`]) at `now`; returns what it showed, for the
    /// logs. An answer when none was asked for changes nothing.
    pub fn handle_answer(
        &mut self,
        sql: &impl Sql,
        mut answer: Witnessed,
        now: i64,
    ) -> Result<Option<Heard>, String> {
        let State::Asked { was, sent_at, .. } = self.state else {
            return Ok(None);
        };
        answer.was = answer.was.or(was);
        let heard = grant::witnessed(sql, sent_at, answer, Phase::Running, now)
            .map_err(|e| e.to_string())?;
        self.state = match heard {
            None => State::Done(None),
            Some(h) => match h.raise_back {
                None => State::Done(Some(h)),
                Some(mark) => State::Next {
                    target: mark,
                    was: Some(answer.mark),
                },
            },
        };
        Ok(heard)
    }

    /// How many times the witness was asked.
    pub fn asked(&self) -> usize {
        self.asked
    }
}

/// How many raises one [`Flight`] makes at most before it lands, however
/// high the marks asked while it flies: the grants waiting for it then
/// handle their requests again (and start another if they must).
pub const FLIGHT_RAISES: usize = 4;

/// The one fence raise in flight, shared by every grant that needs one
/// while it flies: the highest mark any of them asked for. A grant that
/// joins a flight below its own mark raises its flight's aim instead of
/// waiting for a raise too low and asking again after it, so a burst of
/// grants on a new namespace (whose minute of grants, and so its chunk,
/// is still small) is covered by the flight it joins rather than each
/// grant racing the others through raise after raise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flight {
    aim: u128,
    reached: u128,
    raises: usize,
}

impl Flight {
    /// A new flight aiming at `target`.
    pub fn new(target: u128) -> Flight {
        Flight {
            aim: target,
            reached: 0,
            raises: 0,
        }
    }

    /// A grant joins the flight needing the mark at `target`.
    pub fn join(&mut self, target: u128) {
        self.aim = self.aim.max(target);
    }

    /// The mark to raise the witness to next, or `None` when the flight
    /// lands: it reached every mark asked, or made [`FLIGHT_RAISES`]
    /// raises.
    pub fn next_raise(&mut self) -> Option<u128> {
        if self.aim <= self.reached || self.raises >= FLIGHT_RAISES {
            return None;
        }
        self.raises += 1;
        Some(self.aim)
    }

    /// The raise to `mark` is done (the witness acknowledged it).
    pub fn handle_reached(&mut self, mark: u128) {
        self.reached = self.reached.max(mark);
    }

    /// The highest mark the flight reached.
    pub fn reached(&self) -> u128 {
        self.reached
    }

    /// A raise of this flight failed: `Some(reached)` when an earlier one
    /// was acknowledged, so the flight lands on that mark (its grants
    /// decide again against it, and one it does not cover starts a raise
    /// of its own); `None` when none was, so the failure is the flight's.
    pub fn after_failure(&self) -> Option<u128> {
        (self.reached > 0).then_some(self.reached)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{create_req, db, run, T0};
    use super::*;
    use crate::object::load_any;

    fn fence(db: &impl Sql) -> u128 {
        load_any(db).unwrap().unwrap().state.fence()
    }

    #[test]
    fn a_raise_records_the_mark_asked_before_asking() {
        let db = db();
        run(&db, &create_req("orders", 1, 1_000_000, 1_000), T0);
        let mut r = Raising::new(5_000, None);
        assert_eq!(r.poll(&db).unwrap(), RaiseAction::Ask { to: 5_000 });
        assert_eq!(load_any(&db).unwrap().unwrap().fence_asked, 5_000);
        // Asking again before an answer asks the same.
        assert_eq!(r.poll(&db).unwrap(), RaiseAction::Ask { to: 5_000 });
        let heard = r
            .handle_answer(&db, Witnessed::read(5_000), T0)
            .unwrap()
            .unwrap();
        assert_eq!(heard.raise_back, None);
        assert!(matches!(r.poll(&db).unwrap(), RaiseAction::Done(Some(_))));
        assert_eq!(fence(&db), 5_000);
        assert_eq!(r.asked(), 1);
    }

    #[test]
    fn a_witness_answering_below_the_fence_is_raised_back() {
        let db = db();
        run(&db, &create_req("orders", 1, 1_000_000, 1_000), T0);
        let mut r = Raising::new(5_000, None);
        r.poll(&db).unwrap();
        r.handle_answer(&db, Witnessed::read(5_000), T0).unwrap();
        // A second raise finds the witness restored below the fence.
        let mut r = Raising::new(6_000, None);
        assert_eq!(r.poll(&db).unwrap(), RaiseAction::Ask { to: 6_000 });
        let heard = r
            .handle_answer(
                &db,
                Witnessed {
                    mark: 10,
                    was: Some(0),
                },
                T0,
            )
            .unwrap()
            .unwrap();
        let back = heard.raise_back.expect("below the fence: raised back");
        assert_eq!(r.poll(&db).unwrap(), RaiseAction::Ask { to: back });
        r.handle_answer(
            &db,
            Witnessed {
                mark: back,
                was: Some(10),
            },
            T0,
        )
        .unwrap();
        assert!(matches!(r.poll(&db).unwrap(), RaiseAction::Done(Some(_))));
        assert_eq!(r.asked(), 2);
    }

    #[test]
    fn a_witness_that_stays_below_the_fence_is_given_up_after_fence_tries() {
        let db = db();
        run(&db, &create_req("orders", 1, 1_000_000, 1_000), T0);
        let mut r = Raising::new(5_000, None);
        r.poll(&db).unwrap();
        r.handle_answer(&db, Witnessed::read(5_000), T0).unwrap();
        let mut r = Raising::new(6_000, None);
        let mut asks = 0;
        loop {
            match r.poll(&db).unwrap() {
                RaiseAction::Ask { .. } => {
                    asks += 1;
                    // The witness keeps losing what it acknowledged.
                    let answer = Witnessed {
                        mark: 10,
                        was: Some(0),
                    };
                    r.handle_answer(&db, answer, T0).unwrap();
                }
                RaiseAction::GaveUp => break,
                RaiseAction::Done(h) => panic!("done below the fence: {h:?}"),
            }
        }
        assert_eq!(asks, FENCE_TRIES);
        assert_eq!(r.poll(&db).unwrap(), RaiseAction::GaveUp, "stays given up");
    }

    #[test]
    fn no_namespace_asks_nothing() {
        let db = db();
        let mut r = Raising::new(5_000, None);
        assert_eq!(r.poll(&db).unwrap(), RaiseAction::Done(None));
        assert_eq!(r.asked(), 0);
        // An answer nobody asked for changes nothing.
        assert_eq!(r.handle_answer(&db, Witnessed::read(9), T0).unwrap(), None);
    }

    #[test]
    fn a_flight_goes_on_to_the_highest_mark_joined_before_it_lands() {
        let mut f = Flight::new(100);
        assert_eq!(f.next_raise(), Some(100));
        // Two grants join while the first raise flies.
        f.join(150);
        f.join(120);
        f.handle_reached(100);
        assert_eq!(f.next_raise(), Some(150));
        f.handle_reached(150);
        assert_eq!(f.next_raise(), None, "every mark asked is reached");
        assert_eq!(f.reached(), 150);
        // Joining below what was reached asks nothing more.
        f.join(140);
        assert_eq!(f.next_raise(), None);
    }

    #[test]
    fn a_later_raise_that_fails_lands_the_flight_on_the_mark_reached() {
        let mut f = Flight::new(1_000);
        assert_eq!(f.next_raise(), Some(1_000));
        // The first raise fails: nothing was acknowledged, the flight fails.
        assert_eq!(f.after_failure(), None);
        f.handle_reached(1_000);
        f.join(1_500);
        assert_eq!(f.next_raise(), Some(1_500));
        // The raise to 1,500 fails: the grants 1,000 covers still land.
        assert_eq!(f.after_failure(), Some(1_000));
    }

    #[test]
    fn a_flight_lands_after_flight_raises_however_high_the_joins() {
        let mut f = Flight::new(1);
        let mut raises = 0;
        while let Some(mark) = f.next_raise() {
            raises += 1;
            f.handle_reached(mark);
            f.join(mark + 1);
        }
        assert_eq!(raises, FLIGHT_RAISES);
        assert_eq!(f.reached(), FLIGHT_RAISES as u128);
    }
}
