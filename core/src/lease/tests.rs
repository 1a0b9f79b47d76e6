use super::*;
use crate::authority::{decide, Decision, NamespaceConfig, NamespaceState, Owner};
use crate::code::ErrorCode;
use crate::ledger::LedgerView;
use crate::names::{Incarnation, Namespace, RequestId};
use crate::protocol::{Capacity, Grant, GrantReply};
use crate::reply::{Message, Refused, Transient, TransientKind};
use crate::time::Instant;
use std::string::ToString;
use std::vec;
use std::vec::Vec;

fn ns() -> Namespace {
    Namespace::new("orders").unwrap()
}

fn config() -> LeaseConfig {
    let mut c = LeaseConfig::new(ns());
    c.min_range_size = 10;
    c.max_range_size = 1_000;
    c.max_outstanding = 1;
    c
}

fn lease(c: LeaseConfig) -> Lease {
    Lease::new(c, [7; 16], Instant::from_ms(0)).unwrap()
}

/// The next attempt to send at `now`, skipping cancellations.
fn send(l: &mut Lease, now: u64) -> Option<Outgoing> {
    loop {
        match l.poll(Instant::from_ms(now))? {
            Action::Send(out) => return Some(out),
            Action::Cancel(_) => {}
        }
    }
}

/// Every action at `now`.
fn actions(l: &mut Lease, now: u64) -> Vec<Action> {
    core::iter::from_fn(|| l.poll(Instant::from_ms(now))).collect()
}

fn grant_for(out: &Outgoing, start: u64) -> Grant {
    Grant {
        namespace: out.request.namespace,
        incarnation: out.request.incarnation,
        request_id: out.request.request_id,
        range: Range::with_count(start, out.request.count).unwrap(),
    }
}

fn granted(grant: Grant, replayed: bool) -> Reply {
    Reply::Grant(GrantReply {
        grant,
        replayed,
        capacity: Capacity::default(),
    })
}

/// Answers `out` with a range starting at `start`.
fn answer(l: &mut Lease, out: &Outgoing, start: u64, now: u64) -> Handled {
    l.handle_reply(
        out.ticket,
        &granted(grant_for(out, start), false),
        Instant::from_ms(now),
    )
}

fn refusal(code: ErrorCode, remaining: Option<u64>, retry_after_ms: Option<u64>) -> Reply {
    Reply::Refused(Refused {
        code: ReplyCode::Known(code),
        status: code.http_status(),
        message: Message::new("m"),
        remaining,
        max_count: None,
        retry_after_ms,
    })
}

fn drain(l: &mut Lease) -> ([u64; 2], u64) {
    let mut first_last = [0, 0];
    let mut n = 0;
    while let Ok(id) = l.next_id() {
        if n == 0 {
            first_last[0] = id;
        }
        first_last[1] = id;
        n += 1;
    }
    (first_last, n)
}

#[test]
fn first_poll_asks_and_grant_is_issued_in_order() {
    let mut l = lease(config());
    assert_eq!(l.next_id(), Err(IssueError::Unavailable));
    let out = send(&mut l, 0).unwrap();
    assert_eq!(
        out.ticket,
        Ticket {
            request: 1,
            attempt: 0
        }
    );
    assert_eq!(out.request.request_id.as_str(), "r1");
    assert_eq!(out.request.count, 10);
    assert!(!out.fresh_credentials);
    assert_eq!(out.request.incarnation.as_str().len(), 32);
    assert_eq!(send(&mut l, 0), None, "one outstanding at most");
    assert_eq!(answer(&mut l, &out, 1001, 5), Handled::Installed);
    assert_eq!(drain(&mut l), ([1001, 1010], 10));
    assert_eq!(l.next_id(), Err(IssueError::Unavailable));
    let s = l.stats(0);
    assert_eq!(
        (
            s.issued,
            s.ranges_installed,
            s.requests,
            s.starved,
            s.grant_ms.max
        ),
        (10, 1, 1, 3, 5)
    );
}

#[test]
fn prefetch_is_asked_for_before_running_out_and_used_only_after() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    answer(&mut l, &out, 1, 1);
    assert!(!l.should_poll());
    for expected in 1..=5 {
        assert_eq!(l.next_id(), Ok(expected));
    }
    assert!(l.should_poll(), "half the range used: time to ask");
    let out2 = send(&mut l, 2).unwrap();
    assert_eq!(out2.request.request_id.as_str(), "r2");
    assert!(!l.should_poll(), "a request is on its way");
    answer(&mut l, &out2, 500, 3);
    assert_eq!(drain(&mut l), ([6, 509], 15));
}

#[test]
fn lost_reply_is_retried_with_the_same_id_and_installed_once() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    assert_eq!(l.next_deadline().map(Instant::as_ms), Some(2_000));
    assert_eq!(send(&mut l, 1_999), None);
    let retry = send(&mut l, 2_000).unwrap();
    assert_eq!(retry.request, out.request, "same request id and count");
    assert_eq!(
        retry.ticket,
        Ticket {
            request: 1,
            attempt: 1
        }
    );
    let g = grant_for(&out, 100);
    assert_eq!(
        l.handle_reply(retry.ticket, &granted(g, true), Instant::from_ms(2_010)),
        Handled::Installed
    );
    assert_eq!(l.next_id(), Ok(100));
    assert_eq!(l.next_id(), Ok(101));
    // The first attempt's reply turns up late: ignored, the cursor does not
    // move back.
    assert_eq!(
        l.handle_reply(out.ticket, &granted(g, false), Instant::from_ms(2_020)),
        Handled::Duplicate
    );
    assert_eq!(l.next_id(), Ok(102));
    let s = l.stats(0);
    assert_eq!(
        (
            s.requests,
            s.retries,
            s.replays_installed,
            s.duplicates_ignored
        ),
        (1, 1, 1, 1)
    );
}

#[test]
fn a_slow_first_attempt_still_installs_after_its_retry_went_out() {
    let mut l = lease(config());
    let first = send(&mut l, 0).unwrap();
    let second = send(&mut l, 2_000).unwrap();
    assert_eq!(second.ticket.attempt, 1);
    assert_eq!(
        actions(&mut l, 2_000),
        vec![],
        "attempt 0 is not cancelled by its retry"
    );
    assert_eq!(answer(&mut l, &first, 7, 2_500), Handled::Installed);
    assert_eq!(
        actions(&mut l, 2_500),
        vec![Action::Cancel(second.ticket)],
        "settling cancels the attempts still running"
    );
    assert_eq!(l.next_id(), Ok(7));
    // The retry's answer, if it comes, is a duplicate.
    assert_eq!(answer(&mut l, &second, 7, 2_600), Handled::Duplicate);
}

#[test]
fn a_third_attempt_cancels_the_first() {
    let mut l = lease(config());
    send(&mut l, 0).unwrap();
    send(&mut l, 2_000).unwrap();
    let at_4000 = actions(&mut l, 4_000);
    assert_eq!(at_4000.len(), 2, "{at_4000:?}");
    assert!(matches!(
        at_4000[0],
        Action::Send(Outgoing {
            ticket: Ticket { attempt: 2, .. },
            ..
        })
    ));
    assert_eq!(
        at_4000[1],
        Action::Cancel(Ticket {
            request: 1,
            attempt: 0
        })
    );
}

#[test]
fn failures_of_superseded_attempts_are_ignored() {
    // The retry storm: attempt 0 times out, attempt 1 goes out, then attempt
    // 0's abort is reported as a failure. It must not reschedule attempt 1.
    let mut c = config();
    c.request_timeout_ms = 5_000;
    let mut l = lease(c);
    let first = send(&mut l, 0).unwrap();
    let second = send(&mut l, 5_000).unwrap();
    assert_eq!(l.next_deadline().map(Instant::as_ms), Some(10_000));
    assert_eq!(
        l.handle_reply(first.ticket, &Reply::no_answer(), Instant::from_ms(5_001)),
        Handled::Stale
    );
    let busy = refusal(ErrorCode::Unavailable, None, Some(1));
    assert_eq!(
        l.handle_reply(first.ticket, &busy, Instant::from_ms(5_002)),
        Handled::Stale
    );
    assert_eq!(
        l.next_deadline().map(Instant::as_ms),
        Some(10_000),
        "attempt 1 keeps its full timeout"
    );
    assert_eq!(send(&mut l, 9_999), None);
    assert_eq!(l.stats(0).stale_ignored, 2);
    assert_eq!(answer(&mut l, &second, 1, 7_500), Handled::Installed);
    assert_eq!(l.stats(0).requests + l.stats(0).retries, 2);
    // A failure for a settled request changes nothing either.
    assert_eq!(
        l.handle_reply(second.ticket, &Reply::no_answer(), Instant::from_ms(7_600)),
        Handled::Stale
    );
    assert_eq!(l.next_id(), Ok(1));
}

#[test]
fn foreign_grants_are_refused() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    let good = grant_for(&out, 1);
    let cases = [
        (
            Grant {
                namespace: Namespace::new("users").unwrap(),
                ..good
            },
            GrantRefusal::WrongNamespace,
        ),
        (
            Grant {
                incarnation: Incarnation::new("old").unwrap(),
                ..good
            },
            GrantRefusal::WrongIncarnation,
        ),
        (
            Grant {
                request_id: RequestId::numbered(9),
                ..good
            },
            GrantRefusal::Unsolicited,
        ),
        (
            Grant {
                request_id: RequestId::new("x1").unwrap(),
                ..good
            },
            GrantRefusal::Unsolicited,
        ),
        (
            Grant {
                range: Range::with_count(1, 9).unwrap(),
                ..good
            },
            GrantRefusal::WrongCount,
        ),
    ];
    for (g, why) in cases {
        assert_eq!(
            l.handle_reply(out.ticket, &granted(g, false), Instant::from_ms(1)),
            Handled::NotOurs(why)
        );
    }
    let other_ticket = Ticket {
        request: 2,
        attempt: 0,
    };
    assert_eq!(
        l.handle_reply(other_ticket, &granted(good, false), Instant::from_ms(1)),
        Handled::NotOurs(GrantRefusal::WrongTicket)
    );
    assert_eq!(
        l.next_id(),
        Err(IssueError::Unavailable),
        "nothing was installed"
    );
    assert_eq!(
        l.handle_reply(out.ticket, &granted(good, false), Instant::from_ms(1)),
        Handled::Installed
    );
    let moved = Grant {
        range: Range::with_count(50, 10).unwrap(),
        ..good
    };
    assert_eq!(
        l.handle_reply(out.ticket, &granted(moved, true), Instant::from_ms(2)),
        Handled::NotOurs(GrantRefusal::Mismatch)
    );
    assert_eq!(l.stats(0).grants_refused, 7);
    assert_eq!(l.next_id(), Ok(1));
}

#[test]
fn transport_failure_backs_off_then_retries_same_id() {
    let mut c = config();
    c.retry_initial_ms = 100;
    c.retry_max_ms = 400;
    let mut l = lease(c);
    let mut out = send(&mut l, 0).unwrap();
    let mut at = 0;
    for attempt in 1..=5u32 {
        assert_eq!(
            l.handle_reply(out.ticket, &Reply::no_answer(), Instant::from_ms(at)),
            Handled::WillRetry
        );
        let due = l.next_deadline().map(Instant::as_ms).unwrap();
        let cap = (100u64 << (attempt - 1)).min(400);
        assert!(
            due - at >= cap / 2 && due - at <= cap,
            "attempt {attempt}: waited {}",
            due - at
        );
        assert_eq!(send(&mut l, due - 1), None);
        let again = send(&mut l, due).unwrap();
        assert_eq!(
            (again.request, again.ticket.attempt),
            (out.request, attempt)
        );
        out = again;
        at = due;
    }
    assert!(matches!(
        l.last_failure(),
        Some(Reply::Transient(Transient {
            kind: TransientKind::NoAnswer,
            ..
        }))
    ));
}

#[test]
fn unavailable_waits_at_least_retry_after() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    let busy = refusal(ErrorCode::Unavailable, None, Some(5_000));
    assert_eq!(
        l.handle_reply(out.ticket, &busy, Instant::from_ms(10)),
        Handled::WillRetry
    );
    assert_eq!(l.next_deadline().map(Instant::as_ms), Some(5_010));
    assert_eq!(l.next_id(), Err(IssueError::Unavailable));
    assert_eq!(l.last_failure(), Some(&busy));
}

#[test]
fn an_expired_token_is_retried_once_with_fresh_credentials_then_blocks() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    let expired = refusal(ErrorCode::Unauthenticated, None, None);
    assert_eq!(
        l.handle_reply(out.ticket, &expired, Instant::from_ms(1)),
        Handled::WillRetry
    );
    assert_eq!(
        l.next_id(),
        Err(IssueError::Unavailable),
        "one fresh try first"
    );
    let again = send(&mut l, 1).unwrap();
    assert!(again.fresh_credentials);
    assert_eq!((again.request, again.ticket.attempt), (out.request, 1));
    // Refused again with fresh credentials: blocked, not final.
    assert_eq!(
        l.handle_reply(again.ticket, &expired, Instant::from_ms(2)),
        Handled::Blocked
    );
    let code = ReplyCode::Known(ErrorCode::Unauthenticated);
    assert_eq!(l.phase(), Phase::Running);
    let e = l.next_id().unwrap_err();
    assert_eq!(e, IssueError::Blocked(code));
    assert_eq!(
        (e.is_final(), e.waits(), e.client_code()),
        (false, false, "unauthenticated")
    );
    let b = l.blocked().unwrap();
    assert_eq!((b.code, b.answers), (code, 1));
    // The first wait is retry_max_ms (2 s), jittered in its upper half.
    assert!(
        (1_002..=2_002).contains(&b.until.as_ms()),
        "{}",
        b.until.as_ms()
    );
    assert_eq!(l.next_deadline().map(Instant::as_ms), Some(b.until.as_ms()));
    assert_eq!(
        send(&mut l, b.until.as_ms() - 1),
        None,
        "nothing before the backoff"
    );
    // Each probe asks for fresh credentials, so a mended token source is heard.
    let probe = send(&mut l, b.until.as_ms()).unwrap();
    assert!(probe.fresh_credentials);
    assert_eq!(probe.request, out.request, "the same request, under its id");
    assert_eq!(
        l.handle_reply(
            probe.ticket,
            &expired,
            Instant::from_ms(b.until.as_ms() + 1)
        ),
        Handled::Blocked
    );
    let b2 = l.blocked().unwrap();
    assert_eq!(b2.answers, 2);
    assert!((b.until.as_ms() + 1 + 2_000..=b.until.as_ms() + 1 + 4_000).contains(&b2.until.as_ms()));
    let probe = send(&mut l, b2.until.as_ms()).unwrap();
    assert!(probe.fresh_credentials);
    assert_eq!(
        answer(&mut l, &probe, 1, b2.until.as_ms() + 3),
        Handled::Installed
    );
    assert_eq!(l.blocked(), None);
    assert_eq!(l.next_id(), Ok(1));
    let s = l.stats(0);
    assert_eq!((s.blocks, s.unblocks), (1, 1));
}

fn foreign(status: u16, body: &str) -> Reply {
    Reply::not_rangeid(status, body.as_bytes(), None)
}

#[test]
fn a_foreign_4xx_blocks_callers_at_once_and_the_authority_ends_it() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    let waf = foreign(403, "<html>\n  <title>403 Forbidden</title>\n</html>");
    assert_eq!(
        l.handle_reply(out.ticket, &waf, Instant::from_ms(1)),
        Handled::Blocked
    );
    let e = l.next_id().unwrap_err();
    assert_eq!(
        e,
        IssueError::Blocked(ReplyCode::Known(ErrorCode::Forbidden))
    );
    assert!(!e.waits() && !e.is_final());
    match l.last_failure() {
        Some(Reply::Foreign(f)) => {
            assert_eq!(f.status, 403);
            assert_eq!(
                f.excerpt.as_str(),
                "<html> <title>403 Forbidden</title> </html>"
            );
        }
        other => panic!("{other:?}"),
    }
    let until = l.blocked().unwrap().until.as_ms();
    let probe = send(&mut l, until).unwrap();
    assert!(
        !probe.fresh_credentials,
        "a proxy's refusal is not about the token"
    );
    // The probe gets no answer: still blocked, and what blocked it stays
    // what a caller is told.
    assert_eq!(l.next_deadline().map(Instant::as_ms), Some(until + 2_000));
    let probe2 = send(&mut l, until + 2_000).unwrap();
    assert_eq!(probe2.ticket.attempt, probe.ticket.attempt + 1);
    assert_eq!(
        l.handle_reply(
            probe2.ticket,
            &Reply::no_answer(),
            Instant::from_ms(until + 2_001)
        ),
        Handled::WillRetry
    );
    assert!(matches!(l.last_failure(), Some(Reply::Foreign(_))));
    assert!(l.blocked().is_some());
    // The authority itself answers (busy): the way is open, callers wait again.
    let busy = refusal(ErrorCode::Unavailable, None, Some(100));
    let due = l.next_deadline().map(Instant::as_ms).unwrap();
    let probe3 = send(&mut l, due).unwrap();
    assert_eq!(
        l.handle_reply(probe3.ticket, &busy, Instant::from_ms(due + 1)),
        Handled::WillRetry
    );
    assert_eq!(l.blocked(), None);
    assert_eq!(l.next_id(), Err(IssueError::Unavailable));
    assert_eq!((l.stats(0).blocks, l.stats(0).unblocks), (1, 1));
}

#[test]
fn a_blocked_engine_backs_off_to_its_cap_and_honours_retry_after() {
    let mut c = config();
    c.retry_max_ms = 100;
    c.retry_initial_ms = 10;
    let mut l = lease(c);
    let mut now = 0;
    let mut waits = vec![];
    for _ in 0..8 {
        let out = send(&mut l, now).unwrap();
        assert_eq!(
            l.handle_reply(out.ticket, &foreign(404, "nope"), Instant::from_ms(now)),
            Handled::Blocked
        );
        let until = l.blocked().unwrap().until.as_ms();
        waits.push(until - now);
        now = until;
    }
    for (i, w) in waits.iter().enumerate() {
        let cap = (100u64 << i).min(100 * BLOCKED_BACKOFF_FACTOR);
        assert!(
            (cap / 2..=cap).contains(w),
            "wait {i}: {w} not in [{}, {cap}]",
            cap / 2
        );
    }
    assert_eq!(l.stats(0).blocks, 1, "one block, however many answers");
    let out = send(&mut l, now).unwrap();
    let later = Reply::not_rangeid(429, b"", None);
    assert!(matches!(later, Reply::Transient(_)), "429 is never a block");
    let slow_down = Reply::not_rangeid(403, b"<h1>blocked</h1>", Some(60_000));
    assert_eq!(
        l.handle_reply(out.ticket, &slow_down, Instant::from_ms(now)),
        Handled::Blocked
    );
    assert_eq!(
        l.blocked().unwrap().until.as_ms(),
        now + 60_000,
        "Retry-After is honoured"
    );
}

#[test]
fn a_blocked_engine_probes_with_one_request_and_a_replacement_waits_for_the_block() {
    let mut c = config();
    c.max_outstanding = 2;
    c.request_timeout_ms = 50;
    let mut l = lease(c);
    let out = send(&mut l, 0).unwrap();
    assert_eq!(
        l.handle_reply(out.ticket, &foreign(400, ""), Instant::from_ms(1)),
        Handled::Blocked
    );
    assert_eq!(send(&mut l, 2), None, "no second request while blocked");
    // The probe goes unanswered for longer than a request lives: it is
    // given up, and the request that replaces it waits for the block's time.
    let until = l.blocked().unwrap().until.as_ms();
    let probe = send(&mut l, until).unwrap();
    let mut now = until;
    while now < MAX_REQUEST_AGE_MS + 10 {
        now += 50;
        for a in actions(&mut l, now) {
            if let Action::Send(o) = a {
                l.handle_reply(o.ticket, &foreign(400, ""), Instant::from_ms(now));
            }
        }
    }
    assert_eq!(l.stats(0).requests_expired, 1, "{probe:?} was given up");
    let b = l.blocked().unwrap();
    assert!(b.until.as_ms() > now);
    // Its replacement is made, and waits for the block's time.
    assert_eq!(l.outstanding(), 1);
    assert_eq!(l.next_deadline().map(Instant::as_ms), Some(b.until.as_ms()));
    assert_eq!(send(&mut l, now + 1), None);
    // Closed now: the request that was never sent reserved nothing.
    let before = l.stats(0).reserved;
    l.close();
    assert_eq!(l.stats(0).reserved, before);
}

#[test]
fn the_authoritys_own_final_answer_stays_final_even_while_blocked() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    assert_eq!(
        l.handle_reply(out.ticket, &foreign(403, "waf"), Instant::from_ms(1)),
        Handled::Blocked
    );
    let until = l.blocked().unwrap().until.as_ms();
    let probe = send(&mut l, until).unwrap();
    let denied = refusal(ErrorCode::Forbidden, None, None);
    assert_eq!(
        l.handle_reply(probe.ticket, &denied, Instant::from_ms(until + 1)),
        Handled::Stopped
    );
    let code = ReplyCode::Known(ErrorCode::Forbidden);
    assert_eq!(l.phase(), Phase::Failed(code));
    assert_eq!(l.blocked(), None);
    assert_eq!(l.next_id(), Err(IssueError::Failed(code)));
    assert!(l.next_id().unwrap_err().is_final());
    assert_eq!(l.next_deadline().map(Instant::as_ms), None);
    // A bad request (no maxCount to mend it by) is final too, from the start.
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    let bad = refusal(ErrorCode::InvalidRequest, None, None);
    assert_eq!(
        l.handle_reply(out.ticket, &bad, Instant::from_ms(1)),
        Handled::Stopped
    );
    assert!(l.next_id().unwrap_err().is_final());
}

#[test]
fn a_foreign_answer_to_a_stopped_engine_changes_nothing_more() {
    let (mut l, a, b, now) = two_in_flight();
    let none_left = refusal(ErrorCode::NamespaceExhausted, Some(0), None);
    assert_eq!(
        l.handle_reply(a.ticket, &none_left, Instant::from_ms(now)),
        Handled::Stopped
    );
    assert_eq!(
        l.handle_reply(b.ticket, &foreign(403, "x"), Instant::from_ms(now)),
        Handled::Stopped
    );
    assert_eq!(l.blocked(), None);
    assert_eq!(l.next_id(), Err(IssueError::Exhausted));
}

#[test]
fn a_fresh_token_that_works_keeps_the_generator_going() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    let expired = refusal(ErrorCode::Unauthenticated, None, None);
    l.handle_reply(out.ticket, &expired, Instant::from_ms(1));
    let again = send(&mut l, 1).unwrap();
    assert_eq!(answer(&mut l, &again, 1, 2), Handled::Installed);
    assert_eq!(l.last_failure(), None, "a grant clears the last failure");
    // Later, the token expires again: one more fresh try is allowed.
    for _ in 0..6 {
        l.next_id().unwrap();
    }
    let next = send(&mut l, 3).unwrap();
    assert!(!next.fresh_credentials);
    assert_eq!(
        l.handle_reply(next.ticket, &expired, Instant::from_ms(4)),
        Handled::WillRetry
    );
    assert!(send(&mut l, 4).unwrap().fresh_credentials);
}

#[test]
fn exhaustion_asks_for_the_rest_then_stops_without_wrapping() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    let exhausted = refusal(ErrorCode::NamespaceExhausted, Some(3), None);
    assert_eq!(
        l.handle_reply(out.ticket, &exhausted, Instant::from_ms(1)),
        Handled::WillRetry
    );
    let rest = send(&mut l, 1).unwrap();
    assert_eq!(rest.request.count, 3, "asks for exactly what remains");
    assert_ne!(
        rest.request.request_id, out.request.request_id,
        "a new count needs a new id"
    );
    // The grant says nothing remains after it.
    let last = Reply::Grant(GrantReply {
        grant: grant_for(&rest, u64::MAX - 2),
        replayed: false,
        capacity: Capacity {
            max_count: Some(1_000),
            remaining: Some(0),
        },
    });
    assert_eq!(
        l.handle_reply(rest.ticket, &last, Instant::from_ms(2)),
        Handled::Installed
    );
    assert_eq!(drain(&mut l), ([u64::MAX - 2, u64::MAX], 3));
    assert_eq!(send(&mut l, 3), None);
    assert_eq!(l.phase(), Phase::Exhausted);
    assert_eq!(l.next_id(), Err(IssueError::Exhausted));
    assert_eq!(l.take(5), Err(IssueError::Exhausted));
}

#[test]
fn exhausted_at_zero_is_final() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    let none_left = refusal(ErrorCode::NamespaceExhausted, Some(0), None);
    assert_eq!(
        l.handle_reply(out.ticket, &none_left, Instant::from_ms(1)),
        Handled::Stopped
    );
    assert_eq!(l.phase(), Phase::Exhausted);
    assert_eq!(send(&mut l, 100), None);
    assert_eq!(l.next_deadline().map(Instant::as_ms), None);
    assert_eq!(l.next_id(), Err(IssueError::Exhausted));
}

#[test]
fn frozen_keeps_asking_and_thaws_on_a_grant() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    let frozen = refusal(ErrorCode::NamespaceFrozen, None, None);
    assert_eq!(
        l.handle_reply(out.ticket, &frozen, Instant::from_ms(1)),
        Handled::WillRetry
    );
    assert_eq!(l.next_id(), Err(IssueError::Frozen));
    assert!(!l.next_id().unwrap_err().is_final());
    let due = l.next_deadline().map(Instant::as_ms).unwrap();
    let again = send(&mut l, due).unwrap();
    assert_eq!(again.request, out.request);
    answer(&mut l, &again, 40, due + 1);
    assert_eq!(l.next_id(), Ok(40));
}

#[test]
fn final_codes_stop_requests_but_installed_ids_still_issue() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    answer(&mut l, &out, 1, 1);
    for _ in 0..6 {
        l.next_id().unwrap();
    }
    let out2 = send(&mut l, 2).unwrap();
    let denied = refusal(ErrorCode::Forbidden, None, None);
    assert_eq!(
        l.handle_reply(out2.ticket, &denied, Instant::from_ms(3)),
        Handled::Stopped
    );
    let code = ReplyCode::Known(ErrorCode::Forbidden);
    assert_eq!(l.phase(), Phase::Failed(code));
    assert_eq!(send(&mut l, 10_000), None);
    assert_eq!(drain(&mut l), ([7, 10], 4));
    assert_eq!(l.next_id(), Err(IssueError::Failed(code)));
}

#[test]
fn an_unknown_code_is_final_on_4xx_and_retried_on_5xx() {
    let unknown = |status| {
        Reply::Refused(Refused {
            code: ReplyCode::Unknown(crate::names::CodeText::new("brand_new").unwrap()),
            status,
            message: Message::new("m"),
            remaining: None,
            max_count: None,
            retry_after_ms: Some(300),
        })
    };
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    assert_eq!(
        l.handle_reply(out.ticket, &unknown(503), Instant::from_ms(0)),
        Handled::WillRetry
    );
    assert!(l.next_deadline().map(Instant::as_ms).unwrap() >= 300);
    let again = send(&mut l, 300).unwrap();
    assert_eq!(
        l.handle_reply(again.ticket, &unknown(409), Instant::from_ms(301)),
        Handled::Stopped
    );
    let e = l.next_id().unwrap_err();
    assert_eq!((e.client_code(), e.is_final()), ("refused", true));
}

#[test]
fn failures_for_unknown_requests_change_nothing() {
    let mut l = lease(config());
    send(&mut l, 0).unwrap();
    let denied = refusal(ErrorCode::Forbidden, None, None);
    assert_eq!(
        l.handle_reply(
            Ticket {
                request: 42,
                attempt: 0
            },
            &denied,
            Instant::from_ms(1)
        ),
        Handled::Stale
    );
    assert_eq!(
        l.handle_reply(
            Ticket {
                request: 1,
                attempt: 3
            },
            &denied,
            Instant::from_ms(1)
        ),
        Handled::Stale
    );
    assert_eq!(l.phase(), Phase::Running);
    assert_eq!(l.next_deadline().map(Instant::as_ms), Some(2_000));
    assert_eq!(l.outstanding(), 1);
}

#[test]
fn an_unanswered_request_is_given_up_before_any_retention_could_forget_it() {
    let mut c = config();
    c.request_timeout_ms = 60_000;
    let mut l = lease(c);
    let out = send(&mut l, 0).unwrap();
    let mut now = 0;
    let mut sent = vec![out.ticket];
    while now < MAX_REQUEST_AGE_MS {
        now = l.next_deadline().map(Instant::as_ms).unwrap();
        sent.extend(send(&mut l, now).map(|o| o.ticket));
    }
    assert_eq!(sent.len(), 11, "{sent:?}");
    assert_eq!(
        sent[9],
        Ticket {
            request: 1,
            attempt: 9
        }
    );
    assert_eq!(
        sent[10],
        Ticket {
            request: 2,
            attempt: 0
        },
        "a new request replaces it"
    );
    assert_eq!(l.stats(0).requests_expired, 1);
    assert_eq!(l.requests.slot(1), None, "r1 is never sent again");
    // Its grant, should it come after all, is not installed.
    assert_eq!(answer(&mut l, &out, 1, now), Handled::Duplicate);
    assert_eq!(l.next_id(), Err(IssueError::Unavailable));
}

#[test]
fn take_is_contiguous_from_one_range_and_short_at_its_end() {
    let mut c = config();
    c.max_outstanding = 2;
    let mut l = lease(c);
    let a = send(&mut l, 0).unwrap();
    answer(&mut l, &a, 1, 1);
    assert_eq!(l.take(0), Err(IssueError::EmptyBatch));
    assert_eq!(l.take(5), Ok(Range::new(1, 6).unwrap()));
    let b = send(&mut l, 2).unwrap();
    answer(&mut l, &b, 101, 3);
    assert_eq!(
        l.take(100),
        Ok(Range::new(6, 11).unwrap()),
        "fewer at the range's end"
    );
    assert_eq!(
        l.take(3),
        Ok(Range::new(101, 104).unwrap()),
        "then moves on"
    );
    assert_eq!(l.stats(0).issued, 13);
    assert_eq!(b.request.count, 10);
}

#[test]
fn lent_blocks_count_as_returned_only_once_the_driver_moves_on() {
    let mut c = config();
    c.max_outstanding = 2;
    c.max_range_size = 10;
    let mut l = lease(c);
    let a = send(&mut l, 0).unwrap();
    answer(&mut l, &a, 1, 1);
    assert_eq!(l.lend(4), Ok(Range::new(1, 5).unwrap()));
    assert_eq!(l.stats(4).issued, 0, "nothing returned yet");
    assert_eq!(l.stats(3).issued, 1, "the driver returned 1 of 4");
    assert_eq!(l.stats(3).available, 6 + 3);
    // A batch continues the lent block contiguously, in the same range.
    assert_eq!(l.take_more(100), Some(Range::new(5, 11).unwrap()));
    assert_eq!(l.stats(0).issued, 10);
    assert_eq!(l.take_more(1), None, "never from another range");
    let b = send(&mut l, 2).unwrap();
    answer(&mut l, &b, 501, 3);
    assert_eq!(
        l.lend(100),
        Ok(Range::new(501, 506).unwrap()),
        "no further than the refill mark"
    );
    assert!(!l.should_poll(), "the lent block counts as on hand");
    assert_eq!(l.lend(100), Ok(Range::new(506, 511).unwrap()));
    assert!(l.should_poll(), "the refill mark is reached: time to ask");
    assert_eq!(l.close_with_unused(2), 2);
    let s = l.stats(0);
    assert_eq!((s.issued, s.abandoned), (18, 2));
}

#[test]
fn close_reports_and_abandons_the_tail() {
    let mut c = config();
    c.max_outstanding = 3;
    let mut l = lease(c);
    let a = send(&mut l, 0).unwrap();
    answer(&mut l, &a, 1, 1);
    assert_eq!(l.take(5).map(|r| r.count()), Ok(5));
    let b = send(&mut l, 2).unwrap();
    answer(&mut l, &b, 101, 3);
    assert_eq!(l.take(6).map(|r| r.count()), Ok(5));
    assert_eq!(l.take(5).map(|r| r.start()), Ok(101));
    let late = send(&mut l, 4).unwrap();
    assert_eq!(l.close(), 5);
    assert_eq!(l.close(), 0);
    assert_eq!(l.next_id(), Err(IssueError::Closed));
    assert_eq!(answer(&mut l, &late, 201, 2), Handled::Abandoned);
    assert_eq!(l.next_id(), Err(IssueError::Closed));
    assert_eq!(send(&mut l, 5_000), None);
    let s = l.stats(0);
    assert_eq!(s.abandoned, 5 + late.request.count);
    // Counted once, as abandoned: not also as a duplicate.
    assert_eq!(s.duplicates_ignored, 0);
}

#[test]
fn a_grant_after_close_is_abandoned_once_and_its_repeat_is_a_duplicate() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    assert_eq!(l.close(), 0);
    let count = out.request.count;
    assert_eq!(answer(&mut l, &out, 1, 1), Handled::Abandoned);
    let s = l.stats(0);
    assert_eq!(
        (s.abandoned, s.duplicates_ignored, s.ranges_installed),
        (count, 0, 0)
    );
    // The same grant again (a duplicated reply): a duplicate, whose IDs
    // were already counted as abandoned.
    assert_eq!(answer(&mut l, &out, 1, 2), Handled::Duplicate);
    let s = l.stats(0);
    assert_eq!(
        (s.abandoned, s.duplicates_ignored, s.ranges_installed),
        (count, 1, 0)
    );
}

#[test]
fn never_more_than_max_outstanding() {
    let mut c = config();
    c.max_outstanding = MAX_OUTSTANDING;
    c.min_range_size = 1;
    let mut l = lease(c);
    let mut sent = 0;
    for now in 0..50 {
        while send(&mut l, now).is_some() {
            sent += 1;
        }
        assert!(l.outstanding() <= MAX_OUTSTANDING);
    }
    assert!(sent >= 1);
}

#[test]
fn requests_are_sized_from_the_measured_rate() {
    let mut c = LeaseConfig::new(ns());
    c.min_range_size = 100;
    c.max_range_size = 1_000_000;
    c.target_lifetime_ms = 1_000;
    c.prefetch_lead_ms = 200;
    let mut l = Lease::new(c, [1; 16], Instant::from_ms(0)).unwrap();
    let mut state =
        NamespaceState::create(ns(), NamespaceConfig::new(None, None, None).unwrap()).unfenced();
    let mut sizes = [0u64; 64];
    let mut asked = 0;
    // 50,000 IDs per second: 50 per millisecond, for 4 seconds.
    for now in 0..4_000u64 {
        for _ in 0..50 {
            let _ = l.next_id();
        }
        while let Some(out) = send(&mut l, now) {
            sizes[asked % 64] = out.request.count;
            asked += 1;
            match decide(
                &state,
                &LedgerView::EMPTY,
                &out.request,
                &Owner::new("g"),
                0,
            ) {
                Ok(Decision::New {
                    grant, state: next, ..
                }) => {
                    state = next;
                    l.handle_reply(out.ticket, &granted(grant, false), Instant::from_ms(now));
                }
                other => panic!("{other:?}"),
            }
        }
    }
    let last = sizes[(asked - 1) % 64];
    assert!(
        (40_000..=60_000).contains(&last),
        "a 1 s range at 50k/s, got {last}"
    );
    assert!(asked < 20, "few requests once sized: {asked}");
    assert!(l.stats(0).starved < 2_000, "starved {}", l.stats(0).starved);
    assert!((45_000..=55_000).contains(&l.rate()), "rate {}", l.rate());
}

#[test]
fn config_is_checked() {
    let base = config();
    let bad = [
        (
            LeaseConfig {
                min_range_size: 0,
                ..base
            },
            OptionName::MinRangeSize,
        ),
        (
            LeaseConfig {
                max_range_size: MAX_RANGE + 1,
                ..base
            },
            OptionName::MaxRangeSize,
        ),
        (
            LeaseConfig {
                max_outstanding: 0,
                ..base
            },
            OptionName::MaxOutstanding,
        ),
        (
            LeaseConfig {
                max_outstanding: MAX_OUTSTANDING + 1,
                ..base
            },
            OptionName::MaxOutstanding,
        ),
        (
            LeaseConfig {
                request_timeout_ms: 0,
                ..base
            },
            OptionName::RequestTimeoutMs,
        ),
    ];
    for (c, option) in bad {
        assert!(
            matches!(Lease::new(c, [0; 16], Instant::from_ms(0)).err(), Some(ConfigError::OutOfBounds { option: o, .. }) if o == option),
            "{option:?}"
        );
    }
    let above = LeaseConfig {
        min_range_size: 2_000,
        ..base
    };
    assert_eq!(
        Lease::new(above, [0; 16], Instant::from_ms(0)).err(),
        Some(ConfigError::MinAboveMax)
    );
    let retry = LeaseConfig {
        retry_initial_ms: 5_000,
        retry_max_ms: 10,
        ..base
    };
    assert_eq!(
        Lease::new(retry, [0; 16], Instant::from_ms(0)).err(),
        Some(ConfigError::RetryBounds)
    );
}

#[test]
fn options_are_checked_by_name_and_build_a_config() {
    let mut o = LeaseOptions::default();
    assert_eq!(o.config(), Err(ConfigError::MissingNamespace));
    o.set("namespace", OptionValue::Text("orders")).unwrap();
    let c = o.config().unwrap();
    assert_eq!(
        (
            c.lease.min_range_size,
            c.lease.max_range_size,
            c.deadline_ms
        ),
        (1_000, 1_000_000, 5_000)
    );
    o.set("rangeSize", OptionValue::Number(500.0)).unwrap();
    o.set("retryInitialMs", OptionValue::Number(10.0)).unwrap();
    o.set("retryMaxMs", OptionValue::Number(20.0)).unwrap();
    o.set("deadlineMs", OptionValue::Number(100.0)).unwrap();
    let c = o.config().unwrap();
    assert_eq!((c.lease.min_range_size, c.lease.max_range_size), (500, 500));
    assert_eq!(
        (
            c.lease.retry_initial_ms,
            c.lease.retry_max_ms,
            c.deadline_ms
        ),
        (10, 20, 100)
    );
    o.set("maxRangeSize", OptionValue::Number(9_000.0)).unwrap();
    assert_eq!(o.config().unwrap().lease.max_range_size, 9_000);

    let mut o = LeaseOptions::default();
    o.set("namespace", OptionValue::Text("orders")).unwrap();
    o.set("minRangeSize", OptionValue::Number(5_000_000.0))
        .unwrap();
    assert_eq!(
        o.config().unwrap().lease.max_range_size,
        5_000_000,
        "max rises with an explicit min"
    );
    o.set("maxRangeSize", OptionValue::Number(10.0)).unwrap();
    assert_eq!(o.config(), Err(ConfigError::MinAboveMax));

    let mut o = LeaseOptions::default();
    let refused = [
        ("colour", OptionValue::Text("red")),
        ("namespace", OptionValue::Text("Orders")),
        ("namespace", OptionValue::Number(1.0)),
        ("rangeSize", OptionValue::Number(0.0)),
        ("rangeSize", OptionValue::Number(1.5)),
        ("rangeSize", OptionValue::Number(f64::NAN)),
        ("rangeSize", OptionValue::Text("10")),
        ("rangeSize", OptionValue::Number(9.1e15)),
        ("maxOutstanding", OptionValue::Number(9.0)),
        ("deadlineMs", OptionValue::Number(-1.0)),
        ("prefetchLeadMs", OptionValue::Other),
    ];
    for (name, value) in refused {
        let e = o.set(name, value).unwrap_err();
        let text = e.to_string();
        assert!(text.contains(name), "{name}: {text}");
    }
    assert_eq!(
        o,
        LeaseOptions::default(),
        "a refused option changes nothing"
    );
    o.set("prefetchLeadMs", OptionValue::Number(0.0)).unwrap();
}

#[test]
fn the_last_u64_is_issued_once_and_nothing_wraps() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    answer(&mut l, &out, u64::MAX - 9, 1);
    assert_eq!(l.take(9), Ok(Range::with_count(u64::MAX - 9, 9).unwrap()));
    assert_eq!(l.next_id(), Ok(u64::MAX));
    assert_eq!(l.next_id(), Err(IssueError::Unavailable));
    assert_eq!(l.take(1), Err(IssueError::Unavailable));
}

#[test]
fn max_outstanding_is_honoured_and_every_grant_has_a_place() {
    for max_outstanding in 1..=MAX_OUTSTANDING {
        let mut c = config();
        c.max_outstanding = max_outstanding;
        c.min_range_size = 10;
        c.max_range_size = 10;
        c.prefetch_lead_ms = 100_000;
        let mut l = lease(c);
        let mut next_start = 1;
        let mut issued = 0;
        // A burst long enough to be a trusted rate, then a caller that
        // takes nothing while grants keep arriving: ranges pile up waiting,
        // and the engine must stop asking before they outgrow their places.
        for now in 0..1_500 {
            while now < 1_100 && l.next_id().is_ok() {
                issued += 1;
            }
            let mut sent = 0;
            while let Some(out) = send(&mut l, now) {
                sent += 1;
                assert!(l.outstanding() <= max_outstanding);
                assert_eq!(answer(&mut l, &out, next_start, now), Handled::Installed);
                next_start += 10;
            }
            assert!(sent <= WAITING + 1, "sent {sent}");
        }
        assert!(l.rate() > 0);
        assert_eq!(
            l.stats(0).abandoned,
            0,
            "no grant was dropped for want of a place"
        );
        assert!(
            l.available() >= 10 * (WAITING as u64 - 1),
            "it did pile up: {}",
            l.available()
        );
        assert!(l.available() <= 10 * (WAITING as u64 + 1));
        while l.next_id().is_ok() {
            issued += 1;
        }
        assert_eq!(issued, next_start - 1);
    }
}

/// A lease against an in-memory authority (core's own decision), with a
/// ledger of every range granted to it.
struct Bench {
    lease: Lease,
    state: NamespaceState,
    granted: Vec<Range>,
}

impl Bench {
    fn new(c: LeaseConfig, space: NamespaceConfig) -> Bench {
        Bench {
            lease: Lease::new(c, [5; 16], Instant::from_ms(0)).unwrap(),
            state: NamespaceState::create(ns(), space).unfenced(),
            granted: Vec::new(),
        }
    }

    fn defaults() -> Bench {
        let space = NamespaceConfig::new(None, None, None).unwrap();
        Bench::new(LeaseConfig::new(ns()), space)
    }

    /// Answers every request at once, as the authority would.
    fn serve(&mut self, now: u64) {
        while let Some(out) = send(&mut self.lease, now) {
            let reply = match decide(
                &self.state,
                &LedgerView::EMPTY,
                &out.request,
                &Owner::new("g"),
                0,
            ) {
                Ok(Decision::New { grant, state, .. }) => {
                    self.state = state;
                    self.granted.push(grant.range);
                    Reply::Grant(GrantReply {
                        grant,
                        replayed: false,
                        capacity: Capacity {
                            max_count: Some(state.config().max_count()),
                            remaining: Some(state.remaining()),
                        },
                    })
                }
                Err(r) => Reply::Refused(Refused {
                    code: ReplyCode::Known(r.code()),
                    status: r.code().http_status(),
                    message: Message::EMPTY,
                    remaining: match r {
                        crate::authority::Refusal::Exhausted { remaining } => Some(remaining),
                        _ => None,
                    },
                    max_count: match r {
                        crate::authority::Refusal::BadCount { max_count } => Some(max_count),
                        _ => None,
                    },
                    retry_after_ms: None,
                }),
                other => panic!("{other:?}"),
            };
            self.lease
                .handle_reply(out.ticket, &reply, Instant::from_ms(now));
        }
    }

    fn reserved(&self) -> u64 {
        self.granted.iter().map(|r| r.count()).sum()
    }

    /// Takes up to `n` IDs at `now` one at a time; returns how many came.
    fn take_ids(&mut self, n: u64, now: u64) -> u64 {
        let mut got = 0;
        while got < n && self.lease.next_id().is_ok() {
            got += 1;
        }
        self.serve(now);
        got
    }
}

#[test]
fn slow_start_grows_at_most_twofold_within_the_reservation_bound() {
    let mut b = Bench::defaults();
    let min = b.lease.config().min_range_size;
    b.serve(0);
    assert_eq!(
        b.granted,
        vec![Range::new(1, 1 + min as u128).unwrap()],
        "the first range is minRangeSize"
    );
    let mut returned = 0;
    // 200 IDs per ms for 900 ms: fast, but not yet a trusted rate.
    for now in 0..900 {
        returned += b.take_ids(200, now);
        let bound = (2 * min).max(4 * returned);
        assert!(
            b.reserved() <= bound,
            "at {now} ms: reserved {} > {bound}",
            b.reserved()
        );
    }
    for pair in b.granted.windows(2) {
        assert!(
            pair[1].count() <= 2 * pair[0].count().max(returned),
            "{pair:?}"
        );
    }
    assert!(b.granted.len() >= 4, "it grew: {:?}", b.granted);
    assert_eq!(b.lease.rate(), 0, "not trusted before a second");
    // After a whole second the rate is trusted and sizes the ranges: 10 s
    // at 200,000 IDs/s, capped at the default 1,000,000.
    for now in 900..1_500 {
        b.take_ids(200, now);
    }
    assert!(
        (150_000..=250_000).contains(&b.lease.rate()),
        "rate {}",
        b.lease.rate()
    );
    assert_eq!(b.granted.last().unwrap().count(), 1_000_000);
}

#[test]
fn a_burst_within_a_millisecond_is_not_a_rate() {
    let mut b = Bench::defaults();
    b.serve(0);
    let mut returned = 0;
    // A tight loop: everything at t = 1 ms.
    for _ in 0..200 {
        returned += b.take_ids(1_000_000, 1);
    }
    assert!(returned > 10_000);
    assert_eq!(b.lease.rate(), 0);
    assert!(
        b.reserved() <= 4 * returned,
        "reserved {} for {returned}",
        b.reserved()
    );
    // The caller stops: nothing more is asked for, however fast it was.
    let before = b.granted.len();
    for now in 2..3_000 {
        b.serve(now);
    }
    assert!(b.granted.len() <= before + 1, "{:?}", &b.granted[before..]);
    let s = b.lease.stats(0);
    assert_eq!(s.reserved, b.reserved());
    assert_eq!(s.reserved_ahead, b.reserved() - returned);
}

#[test]
fn lifetimes_reserve_at_most_twice_the_minimum_or_four_times_what_they_returned() {
    for n in [1u64, 10, 100, 10_000, 1_000_000] {
        let mut b = Bench::defaults();
        let min = b.lease.config().min_range_size;
        let mut returned = 0;
        let mut now = 0;
        b.serve(now);
        // 20,000 IDs per second, the seed's rate per process, in 1 ms ticks.
        while returned < n {
            returned += b.take_ids((n - returned).min(20), now);
            now += 1;
        }
        let bound = (2 * min).max(4 * n);
        assert!(
            b.reserved() <= bound,
            "returned {n}: reserved {} > {bound}",
            b.reserved()
        );
        let abandoned = b.lease.close();
        assert_eq!(abandoned, b.reserved() - n);
    }
}

#[test]
fn a_batch_larger_than_the_range_sizes_the_next_one() {
    let mut b = Bench::defaults();
    b.serve(0);
    assert_eq!(
        b.lease.take(5_000).map(|r| r.count()),
        Ok(1_000),
        "one range at most"
    );
    b.serve(1);
    let next = b.granted.last().unwrap().count();
    assert!(next >= 5_000, "the next range holds the batch: {next}");
    assert!(b.lease.take(5_000).map(|r| r.count()).unwrap_or(0) >= 4_000);
    // Capped by maxRangeSize.
    let mut c = LeaseConfig::new(ns());
    c.max_range_size = 2_000;
    let mut b = Bench::new(c, NamespaceConfig::new(None, None, None).unwrap());
    b.serve(0);
    let _ = b.lease.take(50_000);
    b.serve(1);
    assert_eq!(b.granted.last().unwrap().count(), 2_000);
}

#[test]
fn a_max_count_below_the_minimum_range_is_learned_from_the_refusal() {
    // Default options ask for 1,000 first; the namespace allows 100 per
    // grant, which no grant has said yet. The refusal says it; the engine
    // asks again within it and issues, instead of failing.
    let space = NamespaceConfig::new(Some(1), Some(5_000), Some(100)).unwrap();
    let mut b = Bench::new(LeaseConfig::new(ns()), space);
    b.serve(0);
    let mut returned = 0;
    for now in 1..1_000 {
        returned += b.take_ids(50, now);
    }
    assert!(!b.granted.is_empty(), "no range was granted");
    assert!(
        b.granted.iter().all(|r| r.count() <= 100),
        "{:?}",
        b.granted
    );
    assert_eq!(returned, 5_000, "every ID is issued");
    assert_eq!(b.lease.phase(), Phase::Exhausted);
}

#[test]
fn a_count_refusal_retires_the_request_and_reserved_never_goes_back() {
    let mut c = LeaseConfig::new(ns());
    c.max_outstanding = 1;
    let mut l = lease(c);
    let first = send(&mut l, 0).unwrap();
    assert!(first.request.count > 100);
    assert_eq!(l.stats(0).reserved, 0, "in flight is not reserved yet");
    let too_large = Reply::Refused(Refused {
        code: ReplyCode::Known(ErrorCode::InvalidRequest),
        status: 400,
        message: Message::new("count must be between 1 and 100"),
        remaining: None,
        max_count: Some(100),
        retry_after_ms: None,
    });
    assert_eq!(
        l.handle_reply(first.ticket, &too_large, Instant::from_ms(1)),
        Handled::WillRetry
    );
    assert_eq!(l.stats(0).reserved, 0);
    let second = send(&mut l, 1).unwrap();
    assert_ne!(
        second.request.request_id, first.request.request_id,
        "a new request"
    );
    assert!(second.request.count <= 100, "{}", second.request.count);
    answer(&mut l, &second, 1, 2);
    assert_eq!(l.stats(0).reserved, second.request.count);
    // The same refusal for a request within maxCount is not retried.
    let mut l = lease(c);
    let out = send(&mut l, 0).unwrap();
    let within = Reply::Refused(Refused {
        max_count: Some(out.request.count),
        ..match too_large {
            Reply::Refused(r) => r,
            _ => unreachable!(),
        }
    });
    assert_eq!(
        l.handle_reply(out.ticket, &within, Instant::from_ms(1)),
        Handled::Stopped
    );
}

#[test]
fn closing_with_a_request_in_flight_counts_it_as_reserved() {
    // Closing with a request in flight counts it as reserved (given up).
    let mut l = lease(config());
    let e = send(&mut l, 0).unwrap();
    assert_eq!(l.stats(0).reserved, 0);
    l.close();
    let s = l.stats(0);
    assert_eq!(s.reserved, e.request.count);
    assert_eq!(
        (s.outstanding, s.reserved_ahead),
        (0, 0),
        "nothing is ahead once closed"
    );
}

#[test]
fn a_small_namespace_is_not_eaten_by_starts() {
    // A 32-bit namespace with a maxCount of 300: each start asks for what
    // the grants allow, never more than maxCount or 0.1 % of what remains
    // (but minRangeSize).
    let space = NamespaceConfig::new(None, Some((1 << 31) - 1), Some(300)).unwrap();
    let mut c = LeaseConfig::new(ns());
    c.min_range_size = 100;
    let mut b = Bench::new(c, space);
    b.serve(0);
    for now in 1..200 {
        b.take_ids(100, now);
    }
    assert!(
        b.granted.iter().skip(1).all(|r| r.count() <= 300),
        "{:?}",
        b.granted
    );
    // Near exhaustion: what remains bounds the request.
    let space = NamespaceConfig::new(Some(1), Some(250_000), None).unwrap();
    let mut b = Bench::new(LeaseConfig::new(ns()), space);
    b.serve(0);
    let mut returned = 0;
    for now in 1..5_000 {
        returned += b.take_ids(300, now);
    }
    assert!(
        b.granted.iter().all(|r| r.count() <= 1_000),
        "0.1 % of 250,000 is below the minimum: {:?}",
        b.granted
    );
    assert_eq!(returned, 250_000, "and every ID is still issued");
    assert_eq!(b.lease.phase(), Phase::Exhausted);
}

#[test]
fn a_batch_never_continues_a_lent_block_into_another_range() {
    // Review finding: a grant arriving while the lent block is out must not
    // become current, or take_more would join two ranges.
    let mut c = config();
    c.max_outstanding = 2;
    c.max_range_size = 10;
    let mut l = lease(c);
    let a = send(&mut l, 0).unwrap();
    answer(&mut l, &a, 1, 1);
    assert_eq!(l.lend(100), Ok(Range::new(1, 6).unwrap()));
    assert_eq!(
        l.lend(100),
        Ok(Range::new(6, 11).unwrap()),
        "the rest of the range"
    );
    let b = send(&mut l, 2).unwrap();
    answer(&mut l, &b, 501, 3);
    assert_eq!(
        l.take_more(3),
        None,
        "the block's range is used up: never from [501, 511)"
    );
    assert_eq!(
        l.lend(3),
        Ok(Range::new(501, 504).unwrap()),
        "the next block starts the new range"
    );
}

#[test]
fn a_freeze_longer_than_a_request_lives_does_not_stop_the_engine() {
    let mut l = lease(config());
    let mut out = send(&mut l, 0).unwrap();
    let frozen = refusal(ErrorCode::NamespaceFrozen, None, None);
    let mut now = 0;
    // Frozen for 20 minutes: the probing request expires and is replaced.
    while now < 2 * MAX_REQUEST_AGE_MS {
        l.handle_reply(out.ticket, &frozen, Instant::from_ms(now));
        now = l
            .next_deadline()
            .map(Instant::as_ms)
            .expect("the engine keeps probing");
        out = send(&mut l, now).expect("a probe is due");
    }
    assert!(l.stats(0).requests_expired >= 1);
    // The thaw: the probe is granted.
    assert_eq!(answer(&mut l, &out, 1, now + 1), Handled::Installed);
    assert_eq!(l.next_id(), Ok(1));
}

#[test]
fn an_outage_longer_than_two_request_lives_does_not_stop_a_new_engine() {
    let mut c = config();
    c.request_timeout_ms = 60_000;
    let mut l = lease(c);
    send(&mut l, 0).unwrap();
    let mut now = 0;
    let mut last = None;
    while now <= 3 * MAX_REQUEST_AGE_MS {
        now = l
            .next_deadline()
            .map(Instant::as_ms)
            .expect("the engine keeps asking");
        last = send(&mut l, now).or(last);
    }
    assert!(l.stats(0).requests_expired >= 2, "{:?}", l.stats(0));
    let out = last.unwrap();
    assert!(
        out.ticket.request >= 3,
        "new requests replaced the expired ones"
    );
    assert_eq!(answer(&mut l, &out, 1, now), Handled::Installed);
}

/// An engine whose rate is trusted (50,000 IDs/s) and which wants more
/// ranges than it may have in flight; returns it with two requests just
/// sent and not answered, and the next free start.
fn two_in_flight() -> (Lease, Outgoing, Outgoing, u64) {
    let mut c = config();
    c.max_outstanding = 2;
    c.min_range_size = 1_000;
    c.max_range_size = 1_000;
    let mut l = lease(c);
    let mut next = 1;
    for now in 0..1_200 {
        for _ in 0..50 {
            let _ = l.next_id();
        }
        while let Some(out) = send(&mut l, now) {
            answer(&mut l, &out, next, now);
            next += out.request.count;
        }
    }
    while l.next_id().is_ok() {}
    let b = send(&mut l, 1_200).unwrap();
    let c = send(&mut l, 1_200).unwrap();
    (l, b, c, next)
}

#[test]
fn a_final_refusal_keeps_grants_already_on_their_way() {
    let (mut l, b, c, next) = two_in_flight();
    // c is refused (none left) while b's committed grant is still coming.
    let none_left = refusal(ErrorCode::NamespaceExhausted, Some(0), None);
    assert_eq!(
        l.handle_reply(c.ticket, &none_left, Instant::from_ms(1_201)),
        Handled::Stopped
    );
    assert_eq!(
        answer(&mut l, &b, next, 1_202),
        Handled::Installed,
        "the last IDs are not lost"
    );
    let (_, n) = drain(&mut l);
    assert_eq!(n, b.request.count);
    assert_eq!(l.next_id(), Err(IssueError::Exhausted));
    assert_eq!(send(&mut l, 10_000), None);
}

#[test]
fn a_stopped_engine_waits_for_grants_on_their_way_and_times_them_out() {
    let (mut l, b, c, next) = two_in_flight();
    // b times out while the engine still runs: attempt 1 goes out, attempt
    // 0 stays open.
    let b1 = (1_201..10_000)
        .find_map(|now| {
            actions(&mut l, now).into_iter().find_map(|a| match a {
                Action::Send(o) if o.ticket.request == b.ticket.request => Some(o),
                _ => None,
            })
        })
        .expect("b is retried");
    assert_eq!(b1.ticket.attempt, 1);
    let c_latest = Ticket {
        request: c.ticket.request,
        attempt: l
            .requests
            .pending
            .iter()
            .flatten()
            .find(|p| p.number == c.ticket.request)
            .unwrap()
            .attempt,
    };
    let none_left = refusal(ErrorCode::NamespaceExhausted, Some(0), None);
    let t = 20_000;
    assert_eq!(
        l.handle_reply(c_latest, &none_left, Instant::from_ms(t)),
        Handled::Stopped
    );
    assert_eq!(
        l.next_id(),
        Err(IssueError::Unavailable),
        "b may still bring IDs: not final yet"
    );
    // b's superseded attempt fails: nothing changes, stopped or not.
    assert_eq!(
        l.handle_reply(b.ticket, &Reply::no_answer(), Instant::from_ms(t + 1)),
        Handled::Stale
    );
    assert_eq!(
        answer(&mut l, &b1, next, t + 2),
        Handled::Installed,
        "the committed range is kept"
    );
    let (_, n) = drain(&mut l);
    assert_eq!(n, b.request.count);
    assert_eq!(
        l.next_id(),
        Err(IssueError::Exhausted),
        "final once nothing is on its way"
    );

    // Another stop with a request whose answer never comes: at its
    // deadline it is given up (still reserved) and its attempt cancelled.
    let (mut l, b, c, _) = two_in_flight();
    assert_eq!(
        l.handle_reply(c.ticket, &none_left, Instant::from_ms(1_201)),
        Handled::Stopped
    );
    let deadline = l
        .next_deadline()
        .map(Instant::as_ms)
        .expect("b still times out");
    let acts = actions(&mut l, deadline);
    assert!(acts.contains(&Action::Cancel(b.ticket)), "{acts:?}");
    assert!(
        !acts.iter().any(|a| matches!(a, Action::Send(_))),
        "never sent again"
    );
    let s = l.stats(0);
    assert_eq!(s.outstanding, 0);
    assert!(s.reserved >= b.request.count);
    assert_eq!(l.next_deadline().map(Instant::as_ms), None);
    assert_eq!(l.next_id(), Err(IssueError::Exhausted));
}

#[test]
fn what_remains_is_never_counted_twice() {
    let (mut l, b, c, next) = two_in_flight();
    // The authority committed b, then refused c with what is left after b;
    // the refusal arrives first.
    let five_left = refusal(ErrorCode::NamespaceExhausted, Some(5), None);
    assert_eq!(
        l.handle_reply(c.ticket, &five_left, Instant::from_ms(1_201)),
        Handled::WillRetry
    );
    let g = Reply::Grant(GrantReply {
        grant: grant_for(&b, next),
        replayed: false,
        capacity: Capacity {
            max_count: Some(1_000),
            remaining: Some(5),
        },
    });
    assert_eq!(
        l.handle_reply(b.ticket, &g, Instant::from_ms(1_202)),
        Handled::Installed
    );
    assert_eq!(l.phase(), Phase::Running, "5 IDs remain: not exhausted");
    let rest = send(&mut l, 1_203).unwrap();
    assert_eq!(rest.request.count, 5);
}

#[test]
fn an_exhaustion_without_a_remaining_count_is_retried_not_final() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    let vague = refusal(ErrorCode::NamespaceExhausted, None, None);
    assert_eq!(
        l.handle_reply(out.ticket, &vague, Instant::from_ms(1)),
        Handled::WillRetry
    );
    assert_eq!(l.phase(), Phase::Running);
}

#[test]
fn a_batch_above_the_largest_range_does_not_stick() {
    let mut c = config();
    c.max_range_size = 50;
    let mut b = Bench::new(c, NamespaceConfig::new(None, None, None).unwrap());
    b.serve(0);
    let _ = b.lease.take(10_000);
    b.serve(1);
    assert_eq!(
        b.granted.last().unwrap().count(),
        50,
        "capped by maxRangeSize"
    );
    assert_eq!(
        b.lease.sizing.batch, 0,
        "the batch was served as far as a range can"
    );
}

/// The IDs of a batch, with the driver's lent block `[block, ...)` first.
fn batch_ids(b: &Batch, block: u64) -> Vec<u64> {
    let mut ids: Vec<u64> = (block..block + b.from_lent).collect();
    for r in b.pieces() {
        ids.extend(r.start()..=r.last());
    }
    ids
}

#[test]
fn an_exact_batch_crosses_ranges_or_takes_nothing() {
    let mut c = config();
    c.max_outstanding = 2;
    let mut l = lease(c);
    let a = send(&mut l, 0).unwrap();
    answer(&mut l, &a, 1, 1);
    l.set_demand(15, 0);
    let b = send(&mut l, 1).unwrap();
    answer(&mut l, &b, 100, 2);
    let batch = l.take_exact(15, 0).unwrap();
    assert_eq!(batch.count(), 15);
    let ids = batch_ids(&batch, 0);
    assert_eq!(ids[..10], (1..=10).collect::<Vec<_>>()[..]);
    assert_eq!(ids[10..], [100, 101, 102, 103, 104]);
    assert_eq!(l.stats(0).issued, 15);
    // Five left, six asked: nothing is taken, and the engine says why.
    assert_eq!(l.take_exact(6, 0), Err(IssueError::Unavailable));
    assert_eq!(l.available(), 5);
    assert_eq!(l.stats(0).issued, 15);
    assert_eq!(l.take_exact(5, 0).map(|b| b.count()), Ok(5));
    assert_eq!(l.take_exact(0, 0), Err(IssueError::EmptyBatch));
}

#[test]
fn an_exact_batch_takes_the_lent_block_first() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    answer(&mut l, &out, 1, 1);
    let block = l.lend(4).unwrap();
    assert_eq!(block, Range::new(1, 5).unwrap());
    // All from the block: the engine changes nothing, the block stays lent.
    let b = l.take_exact(3, 4).unwrap();
    assert_eq!((b.from_lent, b.pieces().count()), (3, 0));
    assert_eq!(
        l.stats(1).issued,
        3,
        "the block's one unused ID is not issued"
    );
    // The block's last ID, then the range's rest, contiguous with it.
    let b = l.take_exact(4, 1).unwrap();
    assert_eq!(batch_ids(&b, 4), vec![4, 5, 6, 7]);
    assert_eq!(l.stats(0).issued, 7);
    // More than the block and the engine hold: nothing, not even the block;
    // check_exact says so first and changes nothing, not even `starved`.
    let block = l.lend(2).unwrap();
    assert_eq!(block, Range::new(8, 10).unwrap());
    let before = l.stats(2);
    assert_eq!(l.check_exact(5, 2), Err(IssueError::Unavailable));
    assert_eq!(l.stats(2), before);
    assert_eq!(l.check_exact(3, 2), Ok(()), "two lent and one installed");
    assert_eq!(l.check_exact(2, 2), Ok(()));
    assert_eq!(l.check_exact(0, 2), Err(IssueError::EmptyBatch));
    assert_eq!(l.take_exact(5, 2), Err(IssueError::Unavailable));
    assert_eq!(l.stats(2).issued, 7);
    assert_eq!(l.available(), 1);
}

#[test]
fn demand_asks_for_the_shortfall_whatever_the_rate() {
    let mut c = config();
    c.max_outstanding = 2;
    let mut l = lease(c);
    let out = send(&mut l, 0).unwrap();
    answer(&mut l, &out, 1, 1);
    // Ten on hand, above the low water: nothing would be asked.
    assert_eq!(send(&mut l, 2), None);
    l.set_demand(500, 0);
    let more = send(&mut l, 2).expect("a caller waits for 500");
    assert_eq!(more.request.count, 490, "the shortfall, no more");
    assert_eq!(send(&mut l, 2), None, "covered once it is on its way");
    answer(&mut l, &more, 1_000, 3);
    assert_eq!(l.take_exact(500, 0).map(|b| b.count()), Ok(500));
    l.set_demand(0, 0);
    // Capped by max_range_size: two requests for 2,500.
    let mut l = lease(c);
    let out = send(&mut l, 0).unwrap();
    answer(&mut l, &out, 1, 1);
    l.set_demand(2_500, 0);
    let a = send(&mut l, 2).unwrap();
    let b = send(&mut l, 2).unwrap();
    assert_eq!((a.request.count, b.request.count), (1_000, 1_000));
}

#[test]
fn a_batch_the_namespace_cannot_supply_fails_at_once_taking_nothing() {
    let space = NamespaceConfig::new(Some(1), Some(25), None).unwrap();
    let mut c = LeaseConfig::new(ns());
    c.min_range_size = 10;
    let mut b = Bench::new(c, space);
    b.serve(0);
    assert_eq!(b.lease.available(), 10);
    // The grant said 15 remain: 10 held + 15 < 30.
    assert_eq!(
        b.lease.take_exact(30, 0),
        Err(IssueError::TooFew {
            remaining: 15,
            available: 10
        })
    );
    let e = b.lease.take_exact(30, 0).unwrap_err();
    assert_eq!(
        (e.client_code(), e.is_final(), e.waits(), e.remaining()),
        ("exhausted", false, false, Some(15))
    );
    assert_eq!(b.lease.available(), 10, "nothing taken");
    // 25 can still be gathered.
    b.lease.set_demand(25, 0);
    assert_eq!(b.lease.take_exact(25, 0), Err(IssueError::Unavailable));
    b.serve(1);
    assert_eq!(b.lease.take_exact(25, 0).map(|x| x.count()), Ok(25));
    // Nothing left, and the engine stops asking: a batch is told so.
    b.lease.set_demand(0, 0);
    b.serve(2);
    assert_eq!(
        b.lease.take_exact(1, 0),
        Err(IssueError::TooFew {
            remaining: 0,
            available: 0
        })
    );
}

#[test]
fn a_batch_above_what_the_engine_gathers_is_refused() {
    let mut c = config();
    c.max_range_size = 1_000;
    let mut b = Bench::new(c, NamespaceConfig::new(None, None, Some(100)).unwrap());
    assert_eq!(b.lease.batch_limit(), 8_000);
    assert_eq!(
        b.lease.take_exact(8_001, 0),
        Err(IssueError::BatchTooLarge { limit: 8_000 })
    );
    b.serve(0);
    assert_eq!(
        b.lease.batch_limit(),
        800,
        "the namespace's maxCount, once known"
    );
    let e = b.lease.take_exact(801, 0).unwrap_err();
    assert_eq!((e.client_code(), e.is_final()), ("invalid_request", false));
    // The limit, from nothing on hand: ranges of 100 fill the places.
    b.lease.take_exact(b.lease.available(), 0).unwrap();
    b.lease.set_demand(800, 0);
    for now in 1..20 {
        b.serve(now);
    }
    assert_eq!(b.lease.take_exact(800, 0).map(|x| x.count()), Ok(800));
}

#[test]
fn a_batch_is_gathered_however_small_the_ranges_on_hand() {
    // Every place for a waiting range is taken by a small one (a prefetch
    // that ran ahead); the place kept for what callers wait for still
    // lets the engine ask, so a batch up to the limit always comes.
    let mut c = config();
    c.max_outstanding = 4;
    c.min_range_size = 10;
    c.max_range_size = 1_000;
    c.prefetch_lead_ms = 10_000;
    let mut l = lease(c);
    let mut start = 1;
    // Callers arrive for a few IDs at a time and give up before their
    // ranges come: small ranges, unconsumed, fill every ordinary place.
    let mut now = 0;
    while l.available() < 10 * (WAITING as u64 + 1) {
        l.set_demand(l.available() + 10, 0);
        let o = send(&mut l, now).unwrap();
        l.set_demand(0, 0);
        answer(&mut l, &o, start, now);
        start += 10_000;
        now += 1;
    }
    let held = l.available();
    assert_eq!(
        held,
        10 * (WAITING as u64 + 1),
        "current + every ordinary place, 10 each"
    );
    assert_eq!(send(&mut l, now), None, "no place for an ordinary prefetch");
    assert_eq!(l.take_exact(1_000, 0), Err(IssueError::Unavailable));
    l.set_demand(1_000, 0);
    let out = send(&mut l, now).expect("the kept place lets the engine ask");
    assert_eq!(out.request.count, 1_000 - held);
    assert_eq!(send(&mut l, now), None, "one request in the kept place");
    answer(&mut l, &out, 500_000, now);
    let batch = l.take_exact(1_000, 0).unwrap();
    assert_eq!(batch.count(), 1_000);
    assert_eq!(batch.pieces().count(), WAITING + 2);
}

#[test]
fn demand_outweighs_the_share_of_what_remains() {
    // 100,000 left: a start may ask for 0.1 % (100), but minRangeSize 10;
    // a caller waiting for 5,000 gets them.
    let space = NamespaceConfig::new(Some(1), Some(100_000), None).unwrap();
    let mut c = LeaseConfig::new(ns());
    c.min_range_size = 10;
    c.max_range_size = 10_000;
    let mut b = Bench::new(c, space);
    b.serve(0);
    b.lease.set_demand(5_000, 0);
    b.serve(1);
    assert_eq!(b.granted[1].count(), 4_990);
    assert_eq!(b.lease.take_exact(5_000, 0).map(|x| x.count()), Ok(5_000));
}

#[test]
fn exact_batches_lent_blocks_and_single_ids_never_overlap() {
    // A seeded mix of every way to issue, against the real decision.
    let space = NamespaceConfig::new(Some(1), Some(200_000), Some(50)).unwrap();
    let mut c = LeaseConfig::new(ns());
    c.min_range_size = 7;
    c.max_range_size = 50;
    c.max_outstanding = 4;
    let mut b = Bench::new(c, space);
    let mut seen = std::collections::BTreeSet::new();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut block, mut block_left) = (0u64, 0u64);
    let mut exact = 0;
    for now in 0..20_000 {
        let n = next() % 120 + 1;
        match next() % 3 {
            0 => match b.lease.take_exact(n, block_left) {
                Ok(batch) => {
                    let ids = batch_ids(&batch, block);
                    assert_eq!(ids.len() as u64, n);
                    block += batch.from_lent;
                    block_left -= batch.from_lent;
                    if batch.pieces().count() > 0 {
                        assert_eq!(block_left, 0, "the block is used up first");
                    }
                    for id in ids {
                        assert!(seen.insert(id), "{id} twice");
                    }
                    exact += 1;
                    b.lease.set_demand(0, 0);
                }
                Err(e) => {
                    assert!(!e.is_final(), "{e:?}");
                    b.lease.set_demand(n, 0);
                }
            },
            1 if block_left > 0 => {
                assert!(seen.insert(block));
                block += 1;
                block_left -= 1;
            }
            1 => {
                if let Ok(r) = b.lease.lend(n) {
                    (block, block_left) = (r.start(), r.count());
                }
            }
            _ => {
                if block_left == 0 {
                    if let Ok(id) = b.lease.next_id() {
                        assert!(seen.insert(id));
                    }
                }
            }
        }
        if now % 3 == 0 {
            b.serve(now);
        }
    }
    assert!(exact > 1_000, "{exact} exact batches");
    assert!(seen
        .iter()
        .all(|id| b.granted.iter().any(|r| r.contains(*id))));
}

#[test]
fn demand_counts_only_the_unused_part_of_the_lent_block() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    answer(&mut l, &out, 1, 1);
    // A block of 5 is lent and 4 of it returned to callers: 1 in hand,
    // 5 installed. A caller waits for 10: 4 are missing.
    assert_eq!(l.lend(5), Ok(Range::new(1, 6).unwrap()));
    assert_eq!(l.take_exact(10, 1), Err(IssueError::Unavailable));
    l.set_demand(10, 1);
    let more = send(&mut l, 2).expect("the used part of the block does not count");
    assert!(more.request.count >= 4, "{}", more.request.count);
    answer(&mut l, &more, 100, 3);
    assert_eq!(l.take_exact(10, 1).map(|b| b.count()), Ok(10));
}

#[test]
fn take_whole_is_contiguous_and_exact_or_nothing() {
    let mut c = config();
    c.max_outstanding = 2;
    let mut l = lease(c);
    let a = send(&mut l, 0).unwrap();
    assert_eq!(answer(&mut l, &a, 100, 1), Handled::Installed);
    // 10 held in [100, 110): 7 fit, then 3 are left in the current range.
    assert_eq!(
        l.take_whole(7, Instant::from_ms(2))
            .map(|r| (r.start(), r.count())),
        Ok((100, 7))
    );
    assert_eq!(l.largest_whole(), 3);
    // 5 do not fit anywhere: nothing is taken, and the next range holds 5.
    assert_eq!(
        l.take_whole(5, Instant::from_ms(2)),
        Err(IssueError::Unavailable)
    );
    assert_eq!(l.available(), 3);
    let b = send(&mut l, 2).unwrap();
    assert!(b.request.count >= 5);
    assert_eq!(answer(&mut l, &b, 500, 3), Handled::Installed);
    // Taken from the waiting range; the current range keeps its 3.
    assert_eq!(
        l.take_whole(5, Instant::from_ms(3)).map(|r| r.start()),
        Ok(500)
    );
    assert_eq!(
        l.take_whole(3, Instant::from_ms(3)).map(|r| r.start()),
        Ok(107)
    );
    assert_eq!(
        l.take_whole(0, Instant::from_ms(3)),
        Err(IssueError::EmptyBatch)
    );
}

#[test]
fn ranges_with_a_lifetime_expire_from_their_first_send() {
    let mut l = lease(config());
    l.set_range_lifetime(100);
    let a = send(&mut l, 10).unwrap();
    assert_eq!(answer(&mut l, &a, 1, 50), Handled::Installed);
    assert_eq!(l.next_expiry(), Some(Instant::from_ms(110)));
    assert!(l.take_whole(2, Instant::from_ms(109)).is_ok());
    assert_eq!(
        l.take_whole(2, Instant::from_ms(110)),
        Err(IssueError::Unavailable)
    );
    assert_eq!(l.available(), 0);
    assert_eq!(l.stats(0).abandoned, 8);
    // A grant that comes after its lifetime is not installed.
    let b = send(&mut l, 110).unwrap();
    assert_eq!(answer(&mut l, &b, 500, 210), Handled::Expired);
    assert_eq!(
        (l.available(), l.stats(0).abandoned),
        (0, 8 + b.request.count)
    );
    // Without a lifetime nothing expires.
    let mut plain = lease(config());
    let c = send(&mut plain, 0).unwrap();
    answer(&mut plain, &c, 1, 1);
    assert_eq!(plain.expire_ranges(Instant::from_ms(u64::MAX - 1)), 0);
    assert_eq!(plain.next_expiry(), None);
}

#[test]
fn lend_keeping_keeps_a_standby_block_lent() {
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    answer(&mut l, &out, 1, 1);
    // One block issuing, one ready behind it: neither counts as returned.
    let a = l.lend_keeping(4, 0).unwrap();
    assert_eq!(a, Range::new(1, 5).unwrap());
    let b = l.lend_keeping(3, 4).unwrap();
    assert_eq!(b.start(), 5);
    let k = b.count();
    assert_eq!(l.stats(4 + k).issued, 0);
    assert_eq!(l.stats(4 + k).available, 10);
    // Three of the first block issued: 1 + k held by the driver.
    assert_eq!(l.stats(1 + k).issued, 3);
    // The first block used up, the second untouched: the next lend keeps
    // the second lent and counts the first as returned.
    let c = l.lend_keeping(100, k).unwrap();
    assert_eq!(c, Range::new(5 + k, 11).unwrap());
    let held = k + c.count();
    assert_eq!(l.stats(held).issued, 4);
    // Nothing installed: the error, and what was kept stays lent.
    assert_eq!(l.lend_keeping(5, held), Err(IssueError::Unavailable));
    assert_eq!(l.stats(held).issued, 4);
    // A batch takes from the held blocks first, then they count as returned.
    let batch = l.take_exact(6, held).unwrap();
    assert_eq!(batch.from_lent, 6);
    assert_eq!(l.stats(0).issued, 10);
    // Closing with blocks held abandons exactly what they hold.
    let mut l = lease(config());
    let out = send(&mut l, 0).unwrap();
    answer(&mut l, &out, 1, 1);
    l.lend_keeping(4, 0).unwrap();
    let b = l.lend_keeping(3, 4).unwrap();
    assert_eq!(l.close_with_unused(2 + b.count()), 10 - 2);
    let s = l.stats(0);
    assert_eq!((s.issued, s.abandoned), (2, 8));
}
