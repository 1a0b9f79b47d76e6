//! How a namespace object serves one [`ObjectRequest`], as a state machine
//! the driver pumps: every decision is here, the driver only performs the
//! [`Action`]s that need the runtime (raising or reading the witness,
//! pushing the summary to the registry) and hands back what they gave.
//!
//! The order it keeps:
//! - a floor above the fence is first held by the witness
//!   ([`admin::floor_mark`]), and only then committed, so a restore of the
//!   object alone never goes back below it;
//! - a grant that would pass the fence ([`Step::RaiseFence`]) waits for the
//!   witness to rise and is handled again, at most [`FENCE_TRIES`] times;
//! - an export reads the witness, commits the freeze with the mark it read
//!   ([`transfer::export`]), pushes the summary, and answers the document
//!   only once the witness is raised past the last ID (retired);
//! - an admin change that succeeded is pushed to the registry at once
//!   ([`ObjectRequest::changes_admin_state`]);
//! - grants about to run their storage logic join a batch
//!   ([`Serving::joins_batch`]) that the driver polls back to back, with no
//!   await, so their writes share one SQLite commit and the output gate
//!   holds each reply until it is durable; a grant whose batch runs after
//!   the object went back to its start gate writes nothing and answers 503
//!   ([`Serving::poll_in_batch`]).

use std::rc::Rc;

use rangeid_core::fence::Witnessed;

use super::raise::FENCE_TRIES;
use super::{admin, handle, load_any, relays, transfer, Granted, ObjectRequest, Outcome, Step};
use crate::api::RelaysSetting;
use crate::object::store::Sql;
use crate::shared::logline;
use crate::shared::refusals::Counted;
use crate::shared::response::{ApiError, HttpReply};

/// Why the witness is raised, which decides how the driver raises it and
/// what a failure answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaiseFor {
    /// A floor, before it is committed (a raise of its own).
    Floor,
    /// A grant that would pass the fence: joins the raise in flight, if
    /// any (one at a time), counting `count` IDs waiting for it.
    Fence {
        /// The IDs the grant asks for.
        count: u64,
    },
    /// An export's retire: past the namespace's last ID (a raise of its
    /// own).
    Retire,
    /// Relays turned on for the first time, before it is committed (a
    /// raise of its own): a copy of the storage from before then is seen
    /// as a rollback at start ([`relays::first_on_mark`]).
    Relays,
}

/// What the driver does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Raise the witness to at least `target`, then hand the result to
    /// [`Serving::handle_raised`].
    Raise {
        /// The mark.
        target: u128,
        /// Why.
        purpose: RaiseFor,
    },
    /// Read the witness's mark, then hand it to [`Serving::handle_read`].
    ReadWitness,
    /// Push the summary to the registry, then poll again.
    PushSummary,
    /// Done: answer this.
    Finish(Finished),
}

/// A request served: the answer and what the driver does after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    /// The answer.
    pub reply: HttpReply,
    /// A refusal operators count.
    pub counted: Option<Counted>,
    /// Whether `counted` is core's refusal of a grant (logged, throttled),
    /// rather than the fence's (logged where the raise failed).
    pub refused_grant: bool,
    /// Set when a new grant row was committed: the driver raises the fence
    /// ahead of need and keeps an alarm to push and prune.
    pub granted: Option<Granted>,
    /// An admin change committed: push the summary to the registry now.
    pub push_summary: bool,
    /// An error line for the logs.
    pub log_error: Option<String>,
}

impl Finished {
    fn reply(reply: HttpReply) -> Finished {
        Finished {
            reply,
            counted: None,
            refused_grant: false,
            granted: None,
            push_summary: false,
            log_error: None,
        }
    }

    fn fenced(reply: HttpReply) -> Finished {
        Finished {
            counted: Some(Counted::Fenced),
            ..Finished::reply(reply)
        }
    }

    /// The answer to a grant, floor or export that arrived while the object
    /// has not heard from its witness since it started, and could not
    /// (a grant is counted as fenced).
    pub fn witness_unreached(request: &ObjectRequest) -> Finished {
        let reply =
            ApiError::unavailable("the fence's witness cannot be reached; nothing was changed")
                .reply();
        match request {
            ObjectRequest::Grant { .. } => Finished::fenced(reply),
            _ => Finished::reply(reply),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    Start,
    /// Handle the request (again).
    Handling,
    /// A raise is asked for (and in flight until [`Serving::handle_raised`]).
    Raising {
        target: u128,
        purpose: RaiseFor,
        /// An export's document, answered once the retire is done.
        reply: Option<HttpReply>,
    },
    /// An export's read of the witness, sent when the fence was `sent_at`.
    Reading {
        sent_at: u128,
    },
    /// Exported: push the summary, then retire.
    Exported {
        reply: HttpReply,
        retire: u128,
    },
    /// Served: answer this at the next poll.
    Finished(Finished),
    /// Answered.
    Done,
}

/// One request being served. It owns its request, so a driver can hand it
/// to the batch that shares one commit and take it back.
#[derive(Clone, Debug)]
pub struct Serving {
    request: Rc<ObjectRequest>,
    state: State,
    handled: usize,
}

impl Serving {
    /// Starts serving `request` (after the start gate).
    pub fn new(request: &ObjectRequest) -> Serving {
        Serving {
            request: Rc::new(request.clone()),
            state: State::Start,
            handled: 0,
        }
    }

    /// Whether the next poll joins the batch of grants that share one
    /// commit: a grant ([`ObjectRequest::joins_batch`]) about to run its
    /// storage logic (first, or again after its fence rose). The driver
    /// gathers such requests until its event loop goes idle, then polls
    /// them all with [`Serving::poll_in_batch`], back to back, no await in
    /// between.
    pub fn joins_batch(&self) -> bool {
        self.request.joins_batch() && matches!(self.state, State::Start | State::Handling)
    }

    /// [`Serving::poll`] inside a batch; `started` is whether the object's
    /// start gate is still open. A check-in that found the witness behind
    /// closes it again while the batch was gathered: a grant then writes
    /// nothing and answers 503 (counted as fenced), as one that found the
    /// gate closed would. A namespace that does not exist has no witness to
    /// wait for (its gate never opens): its grant goes on to its 404.
    pub fn poll_in_batch(
        &mut self,
        sql: &impl Sql,
        waiting: u64,
        now: i64,
        started: bool,
    ) -> Action {
        let absent = || matches!(load_any(sql), Ok(None));
        if !started && self.joins_batch() && !absent() {
            self.finish(Finished::fenced(
                ApiError::unavailable("the fence's witness is being checked; nothing was granted")
                    .reply(),
            ));
        }
        self.poll(sql, waiting, now)
    }

    /// The next action at `now`; `waiting` is what other grants, waiting
    /// for the fence to rise, asked for in all (see
    /// [`super::grant::grant`]). Runs the storage logic synchronously.
    /// Polled again before the driver handed back what an action gave, it
    /// answers the same action.
    pub fn poll(&mut self, sql: &impl Sql, waiting: u64, now: i64) -> Action {
        loop {
            match std::mem::replace(&mut self.state, State::Done) {
                State::Start => {
                    self.state = State::Handling;
                    let request = Rc::clone(&self.request);
                    if let ObjectRequest::Floor {
                        namespace, floor, ..
                    } = &*request
                    {
                        match admin::floor_mark(sql, namespace, floor.0) {
                            Err(e) => self.state = State::Finished(Finished::reply(e.reply())),
                            Ok(None) => {}
                            Ok(Some(mark)) => self.raise(mark, RaiseFor::Floor, None),
                        }
                    }
                    if let ObjectRequest::SetRelays {
                        namespace,
                        relays: RelaysSetting::On,
                        ..
                    } = &*request
                    {
                        match relays::first_on_mark(sql, namespace) {
                            Err(e) => self.state = State::Finished(Finished::reply(e.reply())),
                            Ok(None) => {}
                            Ok(Some(mark)) => self.raise(mark, RaiseFor::Relays, None),
                        }
                    }
                }
                State::Handling => self.handle(sql, waiting, now),
                State::Exported { reply, retire } => {
                    self.raise(retire, RaiseFor::Retire, Some(reply));
                    return Action::PushSummary;
                }
                state @ State::Raising {
                    target, purpose, ..
                } => {
                    self.state = state;
                    return Action::Raise { target, purpose };
                }
                state @ State::Reading { .. } => {
                    self.state = state;
                    return Action::ReadWitness;
                }
                State::Finished(finished) => return Action::Finish(finished),
                State::Done => {
                    return Action::Finish(Finished::reply(
                        ApiError::unavailable("this request was answered already").reply(),
                    ))
                }
            }
        }
    }

    /// Raises the target of a fence raise it asked for to `target`, when
    /// that is higher.
    fn raise_fence_to(&mut self, top: u128) {
        if let State::Raising {
            target,
            purpose: RaiseFor::Fence { .. },
            ..
        } = &mut self.state
        {
            *target = (*target).max(top);
        }
    }

    fn raise(&mut self, target: u128, purpose: RaiseFor, reply: Option<HttpReply>) {
        self.state = State::Raising {
            target,
            purpose,
            reply,
        };
    }

    fn finish(&mut self, finished: Finished) {
        self.state = State::Finished(finished);
    }

    /// Handles the request once more (the storage logic, synchronously).
    fn handle(&mut self, sql: &impl Sql, waiting: u64, now: i64) {
        let request = Rc::clone(&self.request);
        let request = &*request;
        if self.handled >= FENCE_TRIES {
            let log = logline::fence_unreachable(
                request.namespace().as_str(),
                "the fence moved too often",
            );
            let mut done = Finished::fenced(
                ApiError::unavailable("the fence moved under this grant too often; retry").reply(),
            );
            done.log_error = Some(log);
            return self.finish(done);
        }
        self.handled += 1;
        // --- synchronous: one coalesced write, no await ---
        match handle(sql, request, waiting, now) {
            Step::Reply(Outcome {
                reply,
                granted,
                refused,
            }) => {
                let push_summary =
                    granted.is_none() && reply.status < 300 && request.changes_admin_state();
                self.finish(Finished {
                    counted: refused,
                    refused_grant: refused.is_some(),
                    granted,
                    push_summary,
                    ..Finished::reply(reply)
                })
            }
            Step::RaiseFence { target } => {
                let count = match request {
                    ObjectRequest::Grant { request, .. } => request.count,
                    _ => 0,
                };
                self.raise(target, RaiseFor::Fence { count }, None)
            }
            Step::ReadWitness => {
                if !matches!(request, ObjectRequest::Export { .. }) {
                    return self.finish(Finished::reply(
                        ApiError::unavailable("only an export reads the witness").reply(),
                    ));
                }
                // The fence the read is sent at (a witness found below it
                // went back), then the mark as it is now, just before the
                // freeze commits.
                match load_any(sql) {
                    Ok(Some(row)) => {
                        self.state = State::Reading {
                            sent_at: row.state.fence(),
                        }
                    }
                    // The export itself answers namespace_not_found.
                    Ok(None) => self.state = State::Reading { sent_at: 0 },
                    Err(e) => self.finish(Finished::reply(
                        ApiError::unavailable(e.to_string()).reply(),
                    )),
                }
            }
        }
    }

    /// What the raise asked for by the last [`Action::Raise`] gave: `Ok`
    /// with whether the namespace exists, or why it failed. Ignored when no
    /// raise was asked for.
    pub fn handle_raised(&mut self, raised: Result<bool, String>) {
        let State::Raising { purpose, reply, .. } = std::mem::replace(&mut self.state, State::Done)
        else {
            return;
        };
        let unavailable = |text: String| ApiError::unavailable(text).reply();
        self.state = match (purpose, raised) {
            (RaiseFor::Floor | RaiseFor::Relays | RaiseFor::Fence { .. }, Ok(_)) => State::Handling,
            (RaiseFor::Relays, Err(e)) => State::Finished(Finished::reply(unavailable(format!(
                "the fence's witness cannot be reached ({e}); relays were not turned on"
            )))),
            (RaiseFor::Floor, Err(e)) => State::Finished(Finished::reply(unavailable(format!(
                "the fence's witness cannot be reached ({e}); the floor was not raised"
            )))),
            (RaiseFor::Fence { .. }, Err(e)) => State::Finished(Finished::fenced(unavailable(
                format!("the fence's witness cannot be reached ({e}); nothing was granted"),
            ))),
            (RaiseFor::Retire, Ok(true)) => {
                State::Finished(Finished::reply(reply.unwrap_or_else(|| {
                    unavailable("the export's document was lost".into())
                })))
            }
            (RaiseFor::Retire, Ok(false)) => {
                State::Finished(Finished::reply(unavailable("no namespace here".into())))
            }
            (RaiseFor::Retire, Err(e)) => State::Finished(Finished::reply(unavailable(format!(
                "the namespace is frozen and exported, but its witness could not be \
                 retired ({e}); export again to get the document"
            )))),
        };
    }

    /// What the read asked for by [`Action::ReadWitness`] gave; at `now`,
    /// commits the export (the freeze and its audit entry, one commit) when
    /// the witness was read. Ignored when no read was asked for.
    pub fn handle_read(&mut self, sql: &impl Sql, got: Result<Witnessed, String>, now: i64) {
        let state = std::mem::replace(&mut self.state, State::Done);
        let request = Rc::clone(&self.request);
        let (
            State::Reading { sent_at },
            ObjectRequest::Export {
                namespace,
                reason,
                actor,
                source,
            },
        ) = (&state, &*request)
        else {
            self.state = state;
            return;
        };
        let got = match got {
            Ok(got) => got,
            Err(e) => {
                return self.finish(Finished::reply(
                    ApiError::unavailable(format!(
                        "the fence's witness cannot be reached ({e}); nothing was exported"
                    ))
                    .reply(),
                ))
            }
        };
        // --- synchronous: the freeze and its audit entry, one commit ---
        match transfer::export(
            sql,
            namespace,
            (*sent_at, got),
            (reason, actor, source),
            now,
        ) {
            Err(e) => self.finish(Finished::reply(e.reply())),
            Ok((reply, retire)) => self.state = State::Exported { reply, retire },
        }
    }
}

/// Polls a batch of grants ([`Serving::joins_batch`]) back to back, with
/// no await, so their writes share one commit: the action for each, in
/// order. `waiting` is what grants already waiting for the fence asked for.
/// Grants of the batch that pass the fence ask for one raise that covers
/// them all (each counts those before it as waiting, and all get the
/// highest target), so they are granted together once it lands rather than
/// one more per raise.
pub fn poll_batch(
    servings: &mut [Serving],
    sql: &impl Sql,
    waiting: u64,
    now: i64,
    started: bool,
) -> Vec<Action> {
    let mut waiting = waiting;
    let mut actions: Vec<Action> = servings
        .iter_mut()
        .map(|s| {
            let action = s.poll_in_batch(sql, waiting, now, started);
            if let Action::Raise {
                purpose: RaiseFor::Fence { count },
                ..
            } = action
            {
                waiting = waiting.saturating_add(count);
            }
            action
        })
        .collect();
    let fence = |a: &Action| match a {
        Action::Raise {
            target,
            purpose: RaiseFor::Fence { .. },
        } => Some(*target),
        _ => None,
    };
    if let Some(top) = actions.iter().filter_map(fence).max() {
        for (s, a) in servings.iter_mut().zip(&mut actions) {
            if let Action::Raise {
                target,
                purpose: RaiseFor::Fence { .. },
            } = a
            {
                *target = top;
                s.raise_fence_to(top);
            }
        }
    }
    actions
}

#[cfg(test)]
mod tests {
    use rangeid_core::wire::DecU64;

    use super::super::tests::{
        create_req, db, grant_req, ns, raise, relay_grant_as, run, witness_raise, T0,
    };
    use super::*;
    use crate::object::ObjectRequest;

    fn next(db: &impl Sql) -> u128 {
        load_any(db).unwrap().unwrap().state.next()
    }

    fn floor(to: u64) -> ObjectRequest {
        ObjectRequest::Floor {
            namespace: ns("orders"),
            floor: DecU64(to),
            actor: "ops".into(),
        }
    }

    fn finished(a: Action) -> Finished {
        match a {
            Action::Finish(f) => f,
            other => panic!("not finished: {other:?}"),
        }
    }

    #[test]
    fn relays_first_turned_on_raise_the_witness_first_and_nothing_commits_without_it() {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let on = ObjectRequest::SetRelays {
            namespace: ns("orders"),
            relays: RelaysSetting::On,
            reason: "edge".into(),
            actor: "ops".into(),
        };
        let fence = load_any(&db).unwrap().unwrap().state.fence();
        // The witness cannot be reached: relays stay off (stored `off`,
        // "were on at some time", before the raise was sent).
        let mut s = Serving::new(&on);
        assert_eq!(
            s.poll(&db, 0, T0),
            Action::Raise {
                target: fence + 1,
                purpose: RaiseFor::Relays
            }
        );
        s.handle_raised(Err("down".into()));
        let done = finished(s.poll(&db, 0, T0));
        assert_eq!(done.reply.status, 503, "{}", done.reply.body);
        assert_eq!(relays::stored(&db), Ok(relays::Stored::Off));
        // Reached: on, and a second turn on raises nothing.
        let mut s = Serving::new(&on);
        assert!(matches!(s.poll(&db, 0, T0), Action::Raise { .. }));
        raise(&db, fence + 1);
        s.handle_raised(Ok(true));
        assert_eq!(finished(s.poll(&db, 0, T0)).reply.status, 200);
        assert_eq!(relays::stored(&db), Ok(relays::Stored::On));
        let mut s = Serving::new(&on);
        assert_eq!(finished(s.poll(&db, 0, T0)).reply.status, 200);
    }

    #[test]
    fn a_floor_is_held_by_the_witness_before_it_is_committed() {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let request = floor(5_000_000);
        let mut s = Serving::new(&request);
        assert_eq!(
            s.poll(&db, 0, T0),
            Action::Raise {
                target: 5_000_000,
                purpose: RaiseFor::Floor
            }
        );
        assert_eq!(
            next(&db),
            1,
            "nothing committed before the witness holds it"
        );
        // Polled again while the raise is in flight: the same raise.
        assert!(matches!(s.poll(&db, 0, T0), Action::Raise { .. }));
        raise(&db, 5_000_000);
        s.handle_raised(Ok(true));
        let done = finished(s.poll(&db, 0, T0));
        assert_eq!(done.reply.status, 200, "{}", done.reply.body);
        assert!(done.push_summary, "an admin change is pushed at once");
        assert_eq!(next(&db), 5_000_000);
    }

    #[test]
    fn a_floor_whose_witness_cannot_be_raised_changes_nothing() {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let request = floor(5_000_000);
        let mut s = Serving::new(&request);
        assert!(matches!(s.poll(&db, 0, T0), Action::Raise { .. }));
        s.handle_raised(Err("down".into()));
        let done = finished(s.poll(&db, 0, T0));
        assert_eq!(done.reply.status, 503);
        assert!(done.reply.body.contains("the floor was not raised"));
        assert!(!done.push_summary);
        assert_eq!(done.counted, None, "a floor is not a refused grant");
        assert_eq!(next(&db), 1);
    }

    #[test]
    fn a_refused_floor_asks_no_raise() {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let request = floor(20_000_000);
        let done = finished(Serving::new(&request).poll(&db, 0, T0));
        assert_eq!(done.reply.status, 400, "{}", done.reply.body);
    }

    #[test]
    fn a_grant_waits_for_the_fence_then_is_granted() {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let request = grant_req("orders", "a", "r1", 100);
        let mut s = Serving::new(&request);
        let Action::Raise { target, purpose } = s.poll(&db, 0, T0) else {
            panic!("a new namespace's first grant passes the fence");
        };
        assert_eq!(purpose, RaiseFor::Fence { count: 100 });
        raise(&db, target);
        s.handle_raised(Ok(true));
        let done = finished(s.poll(&db, 0, T0));
        assert_eq!(done.reply.status, 200, "{}", done.reply.body);
        assert_eq!(done.granted.map(|g| g.at), Some(T0));
        assert!(!done.push_summary, "a grant is pushed by the alarm");
    }

    #[test]
    fn a_grant_gives_up_after_fence_tries() {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let request = grant_req("orders", "a", "r1", 100);
        let mut s = Serving::new(&request);
        let mut raises = 0;
        let done = loop {
            match s.poll(&db, 0, T0) {
                // The raise "succeeds", but another grant used the mark:
                // the fence is no higher.
                Action::Raise { .. } => {
                    raises += 1;
                    s.handle_raised(Ok(true));
                }
                Action::Finish(f) => break f,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(raises, FENCE_TRIES);
        assert_eq!(done.reply.status, 503);
        assert_eq!(done.counted, Some(Counted::Fenced));
        assert!(!done.refused_grant, "the fence's refusal, not core's");
        assert!(done.log_error.unwrap().contains("too often"));
        assert_eq!(next(&db), 1);
    }

    #[test]
    fn a_grant_whose_fence_cannot_rise_is_counted_as_fenced() {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let request = grant_req("orders", "a", "r1", 100);
        let mut s = Serving::new(&request);
        assert!(matches!(s.poll(&db, 0, T0), Action::Raise { .. }));
        s.handle_raised(Err("down".into()));
        let done = finished(s.poll(&db, 0, T0));
        assert_eq!(done.reply.status, 503);
        assert!(done.reply.body.contains("nothing was granted"));
        assert_eq!(done.counted, Some(Counted::Fenced));
    }

    #[test]
    fn an_export_answers_its_document_only_once_the_witness_is_retired() {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let request = ObjectRequest::Export {
            namespace: ns("orders"),
            reason: "moving".into(),
            actor: "ops".into(),
            source: "http://127.0.0.1:8787".into(),
        };
        let mut s = Serving::new(&request);
        assert_eq!(s.poll(&db, 0, T0), Action::ReadWitness);
        s.handle_read(&db, Ok(witness_raise(0)), T0);
        assert_eq!(s.poll(&db, 0, T0), Action::PushSummary, "frozen: pushed");
        let Action::Raise { target, purpose } = s.poll(&db, 0, T0) else {
            panic!("the document before the retire");
        };
        assert_eq!((target, purpose), (10_000_001, RaiseFor::Retire));
        s.handle_raised(Err("down".into()));
        let done = finished(s.poll(&db, 0, T0));
        assert_eq!(done.reply.status, 503);
        assert!(done.reply.body.contains("export again"));

        // Again, with the witness up: the document.
        let mut s = Serving::new(&request);
        assert_eq!(s.poll(&db, 0, T0), Action::ReadWitness);
        s.handle_read(&db, Ok(witness_raise(0)), T0);
        assert_eq!(s.poll(&db, 0, T0), Action::PushSummary);
        assert!(matches!(s.poll(&db, 0, T0), Action::Raise { .. }));
        raise(&db, 10_000_001);
        s.handle_raised(Ok(true));
        let done = finished(s.poll(&db, 0, T0));
        assert_eq!(done.reply.status, 200, "{}", done.reply.body);
        assert!(done.reply.body.contains("\"check\""));
    }

    #[test]
    fn an_export_whose_witness_cannot_be_read_exports_nothing() {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let request = ObjectRequest::Export {
            namespace: ns("orders"),
            reason: "moving".into(),
            actor: "ops".into(),
            source: "http://127.0.0.1:8787".into(),
        };
        let mut s = Serving::new(&request);
        assert_eq!(s.poll(&db, 0, T0), Action::ReadWitness);
        s.handle_read(&db, Err("down".into()), T0);
        let done = finished(s.poll(&db, 0, T0));
        assert!(done.reply.body.contains("nothing was exported"));
        assert_eq!(
            load_any(&db).unwrap().unwrap().state.status().as_str(),
            "active"
        );
    }

    #[test]
    fn reads_push_nothing_and_admin_changes_push_at_once() {
        let db = db();
        let create = create_req("orders", 1, 10_000_000, 1_000);
        assert!(finished(Serving::new(&create).poll(&db, 0, T0)).push_summary);
        for read in [
            ObjectRequest::Summary {
                namespace: ns("orders"),
            },
            ObjectRequest::Lookup {
                namespace: ns("orders"),
                id: DecU64(1),
            },
        ] {
            let done = finished(Serving::new(&read).poll(&db, 0, T0));
            assert!(!done.push_summary, "{read:?}");
        }
        // A refused change pushes nothing either.
        let again = create_req("orders", 1, 20_000_000, 1_000);
        let done = finished(Serving::new(&again).poll(&db, 0, T0));
        assert_eq!(done.reply.status, 409);
        assert!(!done.push_summary);
    }

    #[test]
    fn a_gate_that_stayed_closed_counts_only_grants() {
        let grant = grant_req("orders", "a", "r1", 1);
        assert_eq!(
            Finished::witness_unreached(&grant).counted,
            Some(Counted::Fenced)
        );
        assert_eq!(Finished::witness_unreached(&floor(5)).counted, None);
    }

    /// Raises the fence far enough for every grant below, so a batch is
    /// decided without a raise.
    fn started_namespace() -> MemSqlDb {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let request = grant_req("orders", "a", "warm", 1);
        let mut s = Serving::new(&request);
        if let Action::Raise { .. } = s.poll(&db, 0, T0) {
            raise(&db, 1_000_000);
            s.handle_raised(Ok(true));
        }
        assert_eq!(finished(s.poll(&db, 0, T0)).reply.status, 200);
        db
    }

    type MemSqlDb = crate::object::store::mem::MemSql;

    #[test]
    fn only_grants_about_to_run_their_storage_logic_join_a_batch() {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let grant = grant_req("orders", "a", "r1", 100);
        let mut s = Serving::new(&grant);
        assert!(s.joins_batch(), "a new grant");
        let Action::Raise { target, .. } = s.poll_in_batch(&db, 0, T0, true) else {
            panic!("the first grant passes the fence");
        };
        assert!(!s.joins_batch(), "waiting for its raise");
        raise(&db, target);
        s.handle_raised(Ok(true));
        assert!(s.joins_batch(), "handled again after the raise: in a batch");
        assert_eq!(
            finished(s.poll_in_batch(&db, 0, T0, true)).reply.status,
            200
        );
        assert!(!s.joins_batch(), "answered");
        // A relay's grant is decided alone: the relay gate records it in the
        // step of its decision, which a batch's run would split by an await.
        let relayed = relay_grant_as("relay-1", "orders", "r", "r1", 100);
        for other in [
            relayed,
            create_req("other", 1, 10, 1),
            floor(5),
            ObjectRequest::Summary {
                namespace: ns("orders"),
            },
            ObjectRequest::Export {
                namespace: ns("orders"),
                reason: "moving".into(),
                actor: "ops".into(),
                source: "http://127.0.0.1:8787".into(),
            },
        ] {
            assert!(!other.joins_batch(), "{other:?}");
            assert!(!Serving::new(&other).joins_batch(), "{other:?}");
        }
    }

    #[test]
    fn a_relay_grant_raising_the_fence_is_refused_once_relays_were_turned_off() {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let set = |relays| ObjectRequest::SetRelays {
            namespace: ns("orders"),
            relays,
            reason: "r".into(),
            actor: "ops".into(),
        };
        assert_eq!(
            run(&db, &set(crate::api::RelaysSetting::On), T0)
                .reply
                .status,
            200
        );
        let relayed = relay_grant_as("relay-1", "orders", "relay-1", "r1", 100);
        let mut s = Serving::new(&relayed);
        let Action::Raise { target, .. } = s.poll(&db, 0, T0) else {
            panic!("the first grant raises the fence");
        };
        // While the raise is awaited, relays are turned off (and that act
        // acknowledged: no relay was granted anything).
        assert_eq!(
            run(&db, &set(crate::api::RelaysSetting::Off), T0)
                .reply
                .status,
            200
        );
        let before = next(&db);
        raise(&db, target);
        s.handle_raised(Ok(true));
        let done = finished(s.poll(&db, 0, T0));
        assert_eq!(done.reply.status, 403, "{}", done.reply.body);
        assert!(
            done.reply.body.contains("turned off"),
            "{}",
            done.reply.body
        );
        assert_eq!(next(&db), before, "nothing granted");
    }

    #[test]
    fn a_batch_grant_to_no_namespace_is_404_with_the_gate_closed() {
        // An object whose namespace does not exist never opens its gate (no
        // witness to hear from); its grants are 404, not 503 for ever.
        let db = db();
        let request = grant_req("nope", "a", "r1", 10);
        let done = finished(Serving::new(&request).poll_in_batch(&db, 0, T0, false));
        assert_eq!(done.reply.status, 404, "{}", done.reply.body);
        assert!(done.reply.body.contains("namespace_not_found"));
    }

    #[test]
    fn a_batch_run_after_the_start_gate_closed_writes_nothing() {
        let db = started_namespace();
        let before = next(&db);
        let request = grant_req("orders", "a", "r2", 10);
        let mut s = Serving::new(&request);
        let done = finished(s.poll_in_batch(&db, 0, T0, false));
        assert_eq!(done.reply.status, 503, "{}", done.reply.body);
        assert!(done.reply.body.contains("nothing was granted"));
        assert_eq!(done.counted, Some(Counted::Fenced));
        assert_eq!(done.granted, None);
        assert_eq!(next(&db), before, "nothing written");
        // The same request id, once the gate is open again, is granted
        // afresh (nothing of it was recorded).
        let done = finished(Serving::new(&request).poll_in_batch(&db, 0, T0, true));
        assert_eq!(done.reply.status, 200, "{}", done.reply.body);
        assert!(
            done.reply.body.contains("\"replayed\":false"),
            "{}",
            done.reply.body
        );
    }

    #[test]
    fn a_batch_decides_its_grants_back_to_back_in_one_commit() {
        let db = started_namespace();
        let requests: Vec<_> = (0..5)
            .map(|i| grant_req("orders", "a", &format!("b{i}"), 10))
            .collect();
        let mut servings: Vec<_> = requests.iter().map(Serving::new).collect();
        assert!(servings.iter().all(Serving::joins_batch));
        // The driver's run: every grant polled inside one transaction.
        let mut done = Vec::new();
        db.atomically(&mut || {
            done = servings
                .iter_mut()
                .map(|s| finished(s.poll_in_batch(&db, 0, T0, true)))
                .collect();
            Ok(())
        })
        .unwrap();
        let mut starts: Vec<String> = done
            .iter()
            .map(|d| {
                assert_eq!(d.reply.status, 200, "{}", d.reply.body);
                assert_eq!(d.granted.map(|g| g.at), Some(T0));
                let v: serde_json::Value = serde_json::from_str(&d.reply.body).unwrap();
                v["start"].as_str().unwrap().to_owned()
            })
            .collect();
        starts.sort();
        starts.dedup();
        assert_eq!(starts.len(), 5, "five disjoint ranges: {starts:?}");
    }

    #[test]
    fn grants_of_a_batch_that_pass_the_fence_share_one_raise_covering_them_all() {
        let db = db();
        run(&db, &create_req("orders", 1, 10_000_000, 1_000), T0);
        let requests: Vec<_> = (0..8)
            .map(|i| grant_req("orders", "a", &format!("f{i}"), 900))
            .collect();
        let mut servings: Vec<_> = requests.iter().map(Serving::new).collect();
        let actions = poll_batch(&mut servings, &db, 0, T0, true);
        let targets: Vec<u128> = actions
            .iter()
            .map(|a| match a {
                Action::Raise {
                    target,
                    purpose: RaiseFor::Fence { .. },
                } => *target,
                other => panic!("a new namespace's grants pass the fence: {other:?}"),
            })
            .collect();
        assert!(targets.iter().all(|t| *t == targets[0]), "{targets:?}");
        assert!(targets[0] > 8 * 900, "covers all eight: {targets:?}");
        // Polled again while the raise is in flight: the same target.
        assert_eq!(
            servings[0].poll(&db, 0, T0),
            Action::Raise {
                target: targets[0],
                purpose: RaiseFor::Fence { count: 900 }
            }
        );
        // One raise, then every grant of the batch is granted in the next.
        raise(&db, targets[0]);
        for s in &mut servings {
            s.handle_raised(Ok(true));
        }
        for a in poll_batch(&mut servings, &db, 0, T0, true) {
            assert_eq!(finished(a).reply.status, 200);
        }
    }
}
