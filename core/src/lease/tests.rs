use super::*;
use crate::authority::{decide, Decision, NamespaceConfig, NamespaceState};

fn ns() -> Namespace {
    Namespace::new("orders").unwrap()
}

fn config() -> LeaseConfig {
    let mut c = LeaseConfig::new(ns());
    c.min_count = 10;
    c.initial_count = 10;
    c.max_count = 1_000;
    c.max_outstanding = 1;
    c
}

fn lease(c: LeaseConfig) -> Lease {
    Lease::new(c, [7; 16], 0).unwrap()
}

fn grant_for(out: &Outgoing, start: u64) -> Grant {
    Grant {
        namespace: out.request.namespace,
        incarnation: out.request.incarnation,
        request_id: out.request.request_id,
        range: Range::with_count(start, out.request.count).unwrap(),
    }
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
    let out = l.poll_request(0).unwrap();
    assert_eq!(out.attempt, 0);
    assert_eq!(out.request.request_id.as_str(), "r1");
    assert_eq!(out.request.count, 10);
    assert_eq!(out.request.incarnation.as_str().len(), 32);
    assert_eq!(l.poll_request(0), None, "one outstanding at most");
    assert_eq!(
        l.handle_grant(&grant_for(&out, 1001), false, 5),
        GrantOutcome::Installed
    );
    assert_eq!(drain(&mut l), ([1001, 1010], 10));
    assert_eq!(l.next_id(), Err(IssueError::Unavailable));
    let s = l.stats();
    assert_eq!(
        (
            s.issued,
            s.ranges_installed,
            s.requests,
            s.starved,
            s.last_grant_ms
        ),
        (10, 1, 1, 3, 5)
    );
}

#[test]
fn prefetch_is_asked_for_before_running_out_and_used_only_after() {
    let mut l = lease(config());
    let out = l.poll_request(0).unwrap();
    l.handle_grant(&grant_for(&out, 1), false, 1);
    assert!(!l.should_poll());
    for expected in 1..=5 {
        assert_eq!(l.next_id(), Ok(expected));
    }
    assert!(l.should_poll(), "half the range used: time to ask");
    let out2 = l.poll_request(2).unwrap();
    assert_eq!(out2.request.request_id.as_str(), "r2");
    assert!(!l.should_poll(), "a request is on its way");
    l.handle_grant(&grant_for(&out2, 500), false, 3);
    assert_eq!(drain(&mut l), ([6, 509], 15));
}

#[test]
fn lost_reply_is_retried_with_the_same_id_and_installed_once() {
    let mut l = lease(config());
    let out = l.poll_request(0).unwrap();
    assert_eq!(l.next_deadline(), Some(2_000));
    assert_eq!(l.poll_request(1_999), None);
    let retry = l.poll_request(2_000).unwrap();
    assert_eq!(retry.request, out.request, "same request id and count");
    assert_eq!(retry.attempt, 1);
    let g = grant_for(&out, 100);
    assert_eq!(l.handle_grant(&g, true, 2_010), GrantOutcome::Installed);
    assert_eq!(l.next_id(), Ok(100));
    assert_eq!(l.next_id(), Ok(101));
    // The first reply turns up late: ignored, the cursor does not move back.
    assert_eq!(l.handle_grant(&g, false, 2_020), GrantOutcome::Duplicate);
    assert_eq!(l.next_id(), Ok(102));
    let s = l.stats();
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
fn foreign_grants_are_refused() {
    let mut l = lease(config());
    let out = l.poll_request(0).unwrap();
    let good = grant_for(&out, 1);
    let other_ns = Grant {
        namespace: Namespace::new("users").unwrap(),
        ..good
    };
    let other_inc = Grant {
        incarnation: Incarnation::new("old").unwrap(),
        ..good
    };
    let never = Grant {
        request_id: RequestId::numbered(9),
        ..good
    };
    let unnumbered = Grant {
        request_id: RequestId::new("x1").unwrap(),
        ..good
    };
    let short = Grant {
        range: Range::with_count(1, 9).unwrap(),
        ..good
    };
    assert_eq!(
        l.handle_grant(&other_ns, false, 1),
        GrantOutcome::Refused(GrantRefusal::WrongNamespace)
    );
    assert_eq!(
        l.handle_grant(&other_inc, false, 1),
        GrantOutcome::Refused(GrantRefusal::WrongIncarnation)
    );
    assert_eq!(
        l.handle_grant(&never, false, 1),
        GrantOutcome::Refused(GrantRefusal::Unsolicited)
    );
    assert_eq!(
        l.handle_grant(&unnumbered, false, 1),
        GrantOutcome::Refused(GrantRefusal::Unsolicited)
    );
    assert_eq!(
        l.handle_grant(&short, false, 1),
        GrantOutcome::Refused(GrantRefusal::WrongCount)
    );
    assert_eq!(
        l.next_id(),
        Err(IssueError::Unavailable),
        "nothing was installed"
    );
    assert_eq!(l.handle_grant(&good, false, 1), GrantOutcome::Installed);
    let moved = Grant {
        range: Range::with_count(50, 10).unwrap(),
        ..good
    };
    assert_eq!(
        l.handle_grant(&moved, true, 2),
        GrantOutcome::Refused(GrantRefusal::Mismatch)
    );
    assert_eq!(l.stats().grants_refused, 6);
    assert_eq!(l.next_id(), Ok(1));
}

#[test]
fn transport_failure_backs_off_then_retries_same_id() {
    let mut c = config();
    c.retry_initial_ms = 100;
    c.retry_max_ms = 400;
    let mut l = lease(c);
    let out = l.poll_request(0).unwrap();
    let mut at = 0;
    for attempt in 1..=5u32 {
        l.handle_error(&out.request.request_id, Failure::Transport, at);
        let due = l.next_deadline().unwrap();
        let cap = (100u64 << (attempt - 1)).min(400);
        assert!(
            due - at >= cap / 2 && due - at <= cap,
            "attempt {attempt}: waited {}",
            due - at
        );
        assert_eq!(l.poll_request(due - 1), None);
        let again = l.poll_request(due).unwrap();
        assert_eq!((again.request, again.attempt), (out.request, attempt));
        at = due;
    }
}

#[test]
fn unavailable_waits_at_least_retry_after() {
    let mut l = lease(config());
    let out = l.poll_request(0).unwrap();
    let failure = Failure::Refused {
        code: ErrorCode::Unavailable,
        remaining: None,
        retry_after_ms: Some(5_000),
    };
    l.handle_error(&out.request.request_id, failure, 10);
    assert_eq!(l.next_deadline(), Some(5_010));
    assert_eq!(l.next_id(), Err(IssueError::Unavailable));
}

#[test]
fn exhaustion_asks_for_the_rest_then_stops_without_wrapping() {
    let mut l = lease(config());
    let out = l.poll_request(0).unwrap();
    let exhausted = |remaining| Failure::Refused {
        code: ErrorCode::NamespaceExhausted,
        remaining: Some(remaining),
        retry_after_ms: None,
    };
    l.handle_error(&out.request.request_id, exhausted(3), 1);
    let rest = l.poll_request(1).unwrap();
    assert_eq!(rest.request.count, 3, "asks for exactly what remains");
    assert_ne!(
        rest.request.request_id, out.request.request_id,
        "a new count needs a new id"
    );
    l.handle_grant(&grant_for(&rest, u64::MAX - 2), false, 2);
    assert_eq!(drain(&mut l), ([u64::MAX - 2, u64::MAX], 3));
    assert_eq!(l.poll_request(3), None);
    assert_eq!(l.phase(), Phase::Exhausted);
    assert_eq!(l.next_id(), Err(IssueError::Exhausted));
    assert_eq!(l.take(5), Err(IssueError::Exhausted));
}

#[test]
fn exhausted_at_zero_is_final() {
    let mut l = lease(config());
    let out = l.poll_request(0).unwrap();
    let failure = Failure::Refused {
        code: ErrorCode::NamespaceExhausted,
        remaining: Some(0),
        retry_after_ms: None,
    };
    l.handle_error(&out.request.request_id, failure, 1);
    assert_eq!(l.phase(), Phase::Exhausted);
    assert_eq!(l.poll_request(100), None);
    assert_eq!(l.next_deadline(), None);
    assert_eq!(l.next_id(), Err(IssueError::Exhausted));
}

#[test]
fn frozen_keeps_asking_and_thaws_on_a_grant() {
    let mut l = lease(config());
    let out = l.poll_request(0).unwrap();
    let frozen = Failure::Refused {
        code: ErrorCode::NamespaceFrozen,
        remaining: None,
        retry_after_ms: None,
    };
    l.handle_error(&out.request.request_id, frozen, 1);
    assert_eq!(l.next_id(), Err(IssueError::Frozen));
    let due = l.next_deadline().unwrap();
    let again = l.poll_request(due).unwrap();
    assert_eq!(again.request, out.request);
    l.handle_grant(&grant_for(&again, 40), false, due + 1);
    assert_eq!(l.next_id(), Ok(40));
}

#[test]
fn fatal_codes_stop_requests_but_installed_ids_still_issue() {
    let mut l = lease(config());
    let out = l.poll_request(0).unwrap();
    l.handle_grant(&grant_for(&out, 1), false, 1);
    for _ in 0..6 {
        l.next_id().unwrap();
    }
    let out2 = l.poll_request(2).unwrap();
    let denied = Failure::Refused {
        code: ErrorCode::Unauthenticated,
        remaining: None,
        retry_after_ms: None,
    };
    l.handle_error(&out2.request.request_id, denied, 3);
    assert_eq!(l.phase(), Phase::Failed(ErrorCode::Unauthenticated));
    assert_eq!(l.poll_request(10_000), None);
    assert_eq!(drain(&mut l), ([7, 10], 4));
    assert_eq!(
        l.next_id(),
        Err(IssueError::Failed(ErrorCode::Unauthenticated))
    );
}

#[test]
fn errors_for_unknown_requests_change_nothing() {
    let mut l = lease(config());
    let out = l.poll_request(0).unwrap();
    let denied = Failure::Refused {
        code: ErrorCode::Forbidden,
        remaining: None,
        retry_after_ms: None,
    };
    l.handle_error(&RequestId::numbered(42), denied, 1);
    l.handle_error(&RequestId::new("zz").unwrap(), denied, 1);
    assert_eq!(l.phase(), Phase::Running);
    assert_eq!(l.next_deadline(), Some(2_000));
    assert_eq!(l.outstanding(), 1);
    let _ = out;
}

#[test]
fn take_is_contiguous_from_one_range_and_short_at_its_end() {
    let mut c = config();
    c.max_outstanding = 2;
    let mut l = lease(c);
    let a = l.poll_request(0).unwrap();
    l.handle_grant(&grant_for(&a, 1), false, 1);
    assert_eq!(l.take(0), Err(IssueError::EmptyBatch));
    assert_eq!(l.take(5), Ok(Range::new(1, 6).unwrap()));
    let b = l.poll_request(2).unwrap();
    l.handle_grant(&grant_for(&b, 101), false, 3);
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
    assert_eq!(l.stats().issued, 13);
    assert_eq!(b.request.count, 10);
}

#[test]
fn close_reports_and_abandons_the_tail() {
    let mut c = config();
    c.max_outstanding = 3;
    let mut l = lease(c);
    let a = l.poll_request(0).unwrap();
    l.handle_grant(&grant_for(&a, 1), false, 1);
    assert_eq!(l.take(5).map(|r| r.count()), Ok(5));
    let b = l.poll_request(2).unwrap();
    l.handle_grant(&grant_for(&b, 101), false, 3);
    assert_eq!(l.take(6).map(|r| r.count()), Ok(5));
    assert_eq!(l.take(5).map(|r| r.start()), Ok(101));
    let late = l.poll_request(4).unwrap();
    assert_eq!(l.close(), 5);
    assert_eq!(l.close(), 0);
    assert_eq!(l.next_id(), Err(IssueError::Closed));
    assert_eq!(
        l.handle_grant(&grant_for(&late, 201), false, 2),
        GrantOutcome::Duplicate
    );
    assert_eq!(l.next_id(), Err(IssueError::Closed));
    assert_eq!(l.poll_request(5_000), None);
    assert_eq!(l.stats().abandoned, 5 + late.request.count);
}

#[test]
fn never_more_than_max_outstanding() {
    let mut c = config();
    c.max_outstanding = MAX_OUTSTANDING;
    c.min_count = 1;
    c.initial_count = 1;
    let mut l = lease(c);
    let mut sent = 0;
    for now in 0..50 {
        while l.poll_request(now).is_some() {
            sent += 1;
        }
        assert!(l.outstanding() <= MAX_OUTSTANDING);
    }
    assert!(sent >= 1);
}

#[test]
fn requests_are_sized_from_the_measured_rate() {
    let mut c = LeaseConfig::new(ns());
    c.min_count = 100;
    c.initial_count = 100;
    c.max_count = 1_000_000;
    c.target_lifetime_ms = 1_000;
    c.prefetch_lead_ms = 200;
    let mut l = Lease::new(c, [1; 16], 0).unwrap();
    let mut state = NamespaceState::create(ns(), NamespaceConfig::new(None, None, None).unwrap());
    let mut sizes = [0u64; 64];
    let mut asked = 0;
    // 50,000 IDs per second: 50 per millisecond, for 4 seconds.
    for now in 0..4_000u64 {
        for _ in 0..50 {
            let _ = l.next_id();
        }
        while let Some(out) = l.poll_request(now) {
            sizes[asked % 64] = out.request.count;
            asked += 1;
            match decide(&state, None, &out.request) {
                Ok(Decision::New { grant, state: next }) => {
                    state = next;
                    l.handle_grant(&grant, false, now);
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
    assert!(l.stats().starved < 2_000, "starved {}", l.stats().starved);
    assert!((45_000..=55_000).contains(&l.rate()), "rate {}", l.rate());
}

#[test]
fn config_is_checked() {
    let base = config();
    let bad = [
        LeaseConfig {
            min_count: 0,
            ..base
        },
        LeaseConfig {
            min_count: 2_000,
            ..base
        },
        LeaseConfig {
            initial_count: 5,
            ..base
        },
        LeaseConfig {
            max_outstanding: 0,
            ..base
        },
        LeaseConfig {
            max_outstanding: MAX_OUTSTANDING + 1,
            ..base
        },
        LeaseConfig {
            request_timeout_ms: 0,
            ..base
        },
        LeaseConfig {
            retry_initial_ms: 5_000,
            retry_max_ms: 10,
            ..base
        },
    ];
    let expected = [
        LeaseConfigError::ZeroMinCount,
        LeaseConfigError::MinAboveMax,
        LeaseConfigError::InitialOutOfBounds,
        LeaseConfigError::Outstanding,
        LeaseConfigError::Outstanding,
        LeaseConfigError::ZeroTime,
        LeaseConfigError::RetryBounds,
    ];
    for (c, e) in bad.into_iter().zip(expected) {
        assert_eq!(Lease::new(c, [0; 16], 0).err(), Some(e));
    }
}

#[test]
fn the_last_u64_is_issued_once_and_nothing_wraps() {
    let mut l = lease(config());
    let out = l.poll_request(0).unwrap();
    l.handle_grant(&grant_for(&out, u64::MAX - 9), false, 1);
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
        c.min_count = 10;
        c.initial_count = 10;
        c.max_count = 10;
        c.prefetch_lead_ms = 100_000;
        let mut l = lease(c);
        let mut next_start = 1;
        let mut issued = 0;
        // A burst that makes the measured rate high, then a caller that
        // takes nothing while grants keep arriving: ranges pile up waiting,
        // and the engine must stop asking before they outgrow their places.
        for now in 0..400 {
            while now < 100 && l.next_id().is_ok() {
                issued += 1;
            }
            let mut sent = 0;
            while let Some(out) = l.poll_request(now) {
                sent += 1;
                assert!(l.outstanding() <= max_outstanding);
                assert_eq!(
                    l.handle_grant(&grant_for(&out, next_start), false, now),
                    GrantOutcome::Installed
                );
                next_start += 10;
            }
            assert!(sent <= WAITING + 1, "sent {sent}");
        }
        assert!(l.rate() > 0);
        assert_eq!(
            l.stats().abandoned,
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
