//! The driver against a fault-injecting fake authority (tests/fake): the
//! faults the npm driver's tests cover, and issuing from many threads.

mod fake;

use std::collections::HashSet;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fake::{Fake, Fault};
use rangeid_client::{BoxError, ErrorKind, Generator, Options, Phase};

const PROXY_403: &str =
    "<html><body><h1>403 Forbidden</h1> request blocked by policy</body></html>";

fn options(fake: &Fake) -> Options {
    Options::new(&fake.url, "orders", "t0")
        .retry(Duration::from_millis(10), Duration::from_millis(40))
        .request_timeout(Duration::from_millis(400))
        .deadline(Duration::from_secs(3))
}

fn all_distinct(ids: &[u64]) -> bool {
    let set: HashSet<u64> = ids.iter().copied().collect();
    set.len() == ids.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_replies_and_many_threads_issue_every_id_once() {
    let fake = Fake::start().await;
    // Every other early request loses its reply: its replay installs it.
    fake.script([
        Fault::LoseReply,
        Fault::Answer(503, "<html>busy</html>", None),
        Fault::LoseReply,
        Fault::Refuse,
    ]);
    let ids = Generator::connect(options(&fake).min_range_size(100).max_range_size(5_000))
        .await
        .unwrap();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let ids = ids.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                while got.len() < 20_000 {
                    match if t % 2 == 0 {
                        ids.next_id()
                    } else {
                        ids.next_id_blocking()
                    } {
                        Ok(id) => got.push(id),
                        Err(e) => assert!(!e.is_final(), "{e}"),
                    }
                }
                got
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in threads {
        all.extend(
            tokio::task::spawn_blocking(move || t.join().unwrap())
                .await
                .unwrap(),
        );
    }
    assert_eq!(all.len(), 160_000);
    assert!(all_distinct(&all), "an ID was issued twice");
    let committed = fake.state.lock().unwrap().committed.clone();
    assert!(
        all.iter()
            .all(|id| committed.iter().any(|r| r.contains(*id))),
        "an ID outside every committed range"
    );
    let s = ids.stats();
    assert!(s.lease.replays_installed >= 1, "{s:?}");
    assert!(s.lease.retries >= 3, "{s:?}");
    // Exactly what callers got: an ID a reader lost to a block swap is
    // counted lost (abandoned), not issued.
    assert_eq!(s.lease.issued, 160_000, "{s:?}");
    let closed = ids.close();
    let s = ids.stats();
    assert_eq!(s.phase, Phase::Closed);
    assert_eq!(closed.abandoned + s.lost, s.lease.abandoned, "{s:?}");
    // Nothing else gone: every committed ID is issued, abandoned (by close,
    // or lost), or in a range given up while in flight. Read after close: a
    // prefetch may have been committed and installed since the first read.
    let committed = fake.state.lock().unwrap().committed.clone();
    let granted: u64 = committed.iter().map(|r| r.count()).sum();
    assert!(
        granted >= 160_000 + s.lease.abandoned,
        "{granted} {closed:?} {s:?}"
    );
    assert_eq!(ids.next_id().unwrap_err().kind(), ErrorKind::Closed);
}

#[tokio::test]
async fn a_rotated_token_is_asked_afresh_once_after_a_401() {
    let fake = Fake::start().await;
    fake.state.lock().unwrap().tokens = vec!["fresh".into()];
    let asked = Arc::new(AtomicUsize::new(0));
    let refreshes = Arc::new(AtomicUsize::new(0));
    let (a, r) = (Arc::clone(&asked), Arc::clone(&refreshes));
    let ids = Generator::connect(options(&fake).token_provider(move |refresh: bool| {
        a.fetch_add(1, Ordering::SeqCst);
        if refresh {
            r.fetch_add(1, Ordering::SeqCst);
        }
        async move {
            Ok::<_, BoxError>(if refresh {
                "fresh".into()
            } else {
                "stale".into()
            })
        }
    }))
    .await
    .unwrap();
    assert!(ids.next_id().is_ok());
    assert_eq!(refreshes.load(Ordering::SeqCst), 1);
    let seen: Vec<String> = fake
        .state
        .lock()
        .unwrap()
        .seen
        .iter()
        .map(|(t, _)| t.clone())
        .collect();
    assert_eq!(seen[..2], ["stale".to_owned(), "fresh".to_owned()]);
    // The retry replays the same request id.
    let st = fake.state.lock().unwrap();
    assert_eq!(st.seen[0].1.request_id, st.seen[1].1.request_id);
}

#[tokio::test]
async fn a_proxys_4xx_fails_waiting_calls_at_once_and_the_generator_recovers() {
    let fake = Fake::start().await;
    fake.script([Fault::Answer(403, PROXY_403, None)]);
    let started = std::time::Instant::now();
    let err = Generator::connect(options(&fake).range_size(10))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2), "failed at once");
    assert_eq!(
        (err.kind(), err.code(), err.status()),
        (ErrorKind::Blocked, "forbidden", Some(403))
    );
    assert!(!err.is_final());
    assert!(
        err.excerpt().unwrap().contains("request blocked by policy"),
        "{err}"
    );
    assert!(err.authority_code().is_none());
    assert!(
        err.message().contains("not a rangeid authority's answer"),
        "{err}"
    );
    // connect closed the generator it waited for: no promise of a retry.
    assert!(!err.message().contains("asks again by itself"), "{err}");
    assert!(
        err.message()
            .ends_with("; the generator closed before its first range, so nothing asks again: fix this and start a new one"),
        "{err}"
    );

    // Once running: a block mid-way fails waits at once, installed IDs
    // still issue, and the probe's replay ends it.
    let ids = Generator::connect(options(&fake).range_size(10))
        .await
        .unwrap();
    fake.script([Fault::CommitThenAnswer(403, PROXY_403)]);
    let mut got: Vec<u64> = Vec::new();
    let mut blocked = None;
    for _ in 0..40 {
        match ids.next_id_async().await {
            Ok(id) => got.push(id),
            Err(e) => {
                blocked = Some(e);
                break;
            }
        }
    }
    let e = blocked.expect("the block is seen");
    assert_eq!((e.kind(), e.status()), (ErrorKind::Blocked, Some(403)));
    // A running generator does ask again, and says so.
    assert!(
        e.message()
            .ends_with("; the generator asks again by itself"),
        "{e}"
    );
    assert_eq!(ids.stats().phase, Phase::Blocked);
    // The probe (after retryMaxMs) replays the committed grant.
    tokio::time::sleep(Duration::from_millis(300)).await;
    for _ in 0..30 {
        got.push(ids.next_id_async().await.unwrap());
    }
    assert!(all_distinct(&got));
    let s = ids.stats();
    assert_eq!((s.lease.blocks, s.lease.unblocks), (1, 1));
    assert!(s.lease.replays_installed >= 1);
}

#[tokio::test]
async fn an_authoritys_final_answer_keeps_its_code_and_message() {
    let fake = Fake::start().await;
    fake.script([Fault::Answer(
        404,
        r#"{"error":{"code":"namespace_not_found","message":"no namespace \"orders\""}}"#,
        None,
    )]);
    let err = Generator::connect(options(&fake)).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert_eq!(err.code(), "namespace_not_found");
    assert_eq!(
        err.error_code(),
        Some(rangeid_client::ErrorCode::NamespaceNotFound)
    );
    assert_eq!(err.authority_code(), Some("namespace_not_found"));
    assert_eq!(err.authority_message(), Some("no namespace \"orders\""));
    assert_eq!(err.status(), Some(404));
    assert!(err.is_final());
    // The code once, then what the authority said.
    assert_eq!(
        err.to_string(),
        format!("namespace_not_found: the authority refused this generator: POST {}/v1/ranges answered 404: no namespace \"orders\"", fake.url.trim_end_matches('/'))
    );
    assert_eq!(fake.seen(), 1, "no probe after a final answer");
}

#[tokio::test]
async fn busy_answers_are_retried_with_retry_after_and_kept_in_errors() {
    let fake = Fake::start().await;
    fake.script([
        Fault::Answer(429, "<html>slow down</html>", None),
        Fault::Answer(
            503,
            r#"{"error":{"code":"unavailable","message":"busy"}}"#,
            Some(1),
        ),
    ]);
    let started = std::time::Instant::now();
    let ids = Generator::connect(options(&fake)).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(1000),
        "Retry-After was kept"
    );
    assert!(ids.next_id().is_ok());
    assert_eq!(ids.stats().lease.blocks, 0, "never a block");
    // A deadline shorter than Retry-After: the error says what answered.
    let fake = Fake::start().await;
    fake.script([Fault::Answer(
        503,
        r#"{"error":{"code":"unavailable","message":"busy"}}"#,
        Some(5),
    )]);
    let err = Generator::connect(options(&fake).deadline(Duration::from_millis(300)))
        .await
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.code(), err.status()),
        (ErrorKind::Unavailable, "unavailable", Some(503))
    );
    assert_eq!(err.retry_after(), Some(Duration::from_secs(5)));
    assert!(err.message().starts_with("no ID within 300 ms"), "{err}");
    assert_eq!(err.authority_message(), Some("busy"));
}

#[tokio::test]
async fn a_slow_answer_still_installs_and_is_not_granted_twice() {
    let fake = Fake::start().await;
    fake.script([Fault::Slow(Duration::from_millis(700))]);
    let ids = Generator::connect(options(&fake).range_size(50))
        .await
        .unwrap();
    let got = ids.next_ids(120).await.unwrap();
    assert_eq!(got.len(), 120);
    assert!(all_distinct(&got));
    let st = fake.state.lock().unwrap();
    // The slow attempt's retry replayed the same request: one range for it.
    assert!(st.seen.len() >= 2);
    assert_eq!(st.seen[0].1.request_id, st.seen[1].1.request_id);
    assert!(ids.stats().lease.retries >= 1);
}

#[tokio::test]
async fn refused_connections_and_no_server_are_unavailable_with_the_cause() {
    // Nothing listens there.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let err = Generator::connect(
        Options::new(format!("http://127.0.0.1:{port}"), "orders", "t")
            .deadline(Duration::from_millis(300)),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(err.message().contains("got no answer"), "{err}");
    // The root cause, which reqwest keeps in its sources, is in the message.
    assert!(err.message().contains("Connection refused"), "{err}");
    assert!(
        std::error::Error::source(&err).is_some(),
        "the network error is the source"
    );
}

#[tokio::test]
async fn a_failing_token_provider_is_retried_and_named() {
    let fake = Fake::start().await;
    let err = Generator::connect(
        options(&fake)
            .deadline(Duration::from_millis(200))
            .token_provider(|_refresh: bool| async {
                Err::<String, BoxError>("vault is down".into())
            }),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable);
    assert!(
        err.message()
            .contains("no request sent: the token provider failed: vault is down"),
        "{err}"
    );
    assert_eq!(fake.seen(), 0);
}

#[tokio::test]
async fn next_ids_is_exactly_n_across_ranges_and_all_or_nothing() {
    let fake = Fake::start().await;
    fake.state.lock().unwrap().capacity = Some(500);
    let ids = Generator::connect(options(&fake).range_size(100))
        .await
        .unwrap();
    let mut all = Vec::new();
    for n in [1, 7, 30, 31, 64, 200] {
        let got = ids.next_ids(n).await.unwrap();
        assert_eq!(got.len() as u64, n);
        all.extend(got);
        all.push(ids.next_id_async().await.unwrap());
    }
    assert!(all_distinct(&all));
    // More than the namespace has left: at once, nothing taken.
    let before = ids.stats().lease.issued;
    let err = ids.next_ids(300).await.unwrap_err();
    assert_eq!(
        (err.kind(), err.code(), err.is_final()),
        (ErrorKind::TooFew, "exhausted", false)
    );
    assert!(
        err.remaining().is_some() && err.available().is_some(),
        "{err}"
    );
    assert_eq!(ids.stats().lease.issued, before, "nothing was taken");
    // Above what one call gathers (8 of the largest range): the limit.
    let err = ids.next_ids(5_000).await.unwrap_err();
    assert_eq!(
        (err.kind(), err.code(), err.limit()),
        (ErrorKind::InvalidRequest, "invalid_request", Some(800))
    );
    assert_eq!(ids.stats().lease.issued, before, "nothing was taken");
    let err = ids.next_ids(0).await.unwrap_err();
    assert_eq!(
        (err.kind(), err.code()),
        (ErrorKind::InvalidRequest, "invalid_request")
    );
    // Drain the namespace: every ID once, then exhausted for good.
    loop {
        match ids.next_id_async().await {
            Ok(id) => all.push(id),
            Err(e) => {
                assert_eq!(
                    (e.kind(), e.code(), e.is_final()),
                    (ErrorKind::Exhausted, "exhausted", true),
                    "{e}"
                );
                break;
            }
        }
    }
    assert!(all_distinct(&all));
    assert_eq!(all.len(), 500);
}

#[tokio::test]
async fn close_reports_what_it_abandons_and_fails_waiters() {
    let fake = Fake::start().await;
    let ids = Generator::connect(options(&fake).range_size(100))
        .await
        .unwrap();
    for _ in 0..30 {
        ids.next_id().unwrap();
    }
    // A waiter for more than is on hand, then close.
    fake.script([Fault::Slow(Duration::from_secs(5))]);
    let waiting = {
        let ids = ids.clone();
        tokio::spawn(async move { ids.next_ids(500).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let closed = ids.close();
    assert!(closed.abandoned >= 70, "{closed:?}");
    let s = ids.stats();
    assert_eq!(s.lease.abandoned, closed.abandoned);
    assert_eq!(s.lease.issued, 30);
    assert_eq!(
        waiting.await.unwrap().unwrap_err().kind(),
        ErrorKind::Closed
    );
    assert_eq!(ids.close(), rangeid_client::Closed::default());
    assert_eq!(ids.next_id_async().await.unwrap_err().code(), "closed");
}

#[test]
fn bad_options_fail_with_invalid_config_and_start_nothing() {
    let err = Generator::connect_blocking(Options::new("http://ids.example.com", "orders", "t"))
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.code()),
        (ErrorKind::InvalidConfig, "invalid_config")
    );
    assert!(err.message().contains("unencrypted"));
    let err =
        Generator::connect_blocking(Options::new("https://x", "orders", "t").option("rangeSiz", 5))
            .unwrap_err();
    assert!(err.message().contains("rangeSiz"), "{err}");
}

#[test]
fn a_blocking_caller_gets_ids_from_a_runtime_of_its_own() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fake = rt.block_on(Fake::start());
    let ids = Generator::connect_blocking(options(&fake).range_size(10)).unwrap();
    let mut got: Vec<u64> = (0..25).map(|_| ids.next_id_blocking().unwrap()).collect();
    got.extend(ids.next_ids_blocking(25).unwrap());
    assert!(all_distinct(&got));
    assert_eq!(got.len(), 50);
    drop(ids);
}

/// A batch that must wait stops no reader. While `next_ids` waits for more
/// than the generator holds (the next range's request is held), `next_id`
/// on other threads keeps issuing what the shelf holds: every call is Ok.
/// (Before, every service pass and every `next_ids` try sealed both blocks
/// to count them, and a reader then found none and got `unavailable`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_that_must_wait_stops_no_reader() {
    let fake = Fake::start().await;
    // The first range at once, every later request held past the test.
    fake.script(
        std::iter::once(Fault::Slow(Duration::ZERO))
            .chain((0..32).map(|_| Fault::Slow(Duration::from_secs(120)))),
    );
    let ids = Generator::connect(
        options(&fake)
            .range_size(1 << 30)
            .request_timeout(Duration::from_secs(60))
            .deadline(Duration::from_secs(60)),
    )
    .await
    .unwrap();
    let want = 3 << 30;
    let held = ids.stats().lease.available;
    assert!(held > 1 << 29 && held < want, "{held}");
    // One batch waits at the head of the queue; another caller tries again
    // and again, giving up each time.
    let waiting = {
        let ids = ids.clone();
        tokio::spawn(async move { ids.next_ids(want).await })
    };
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (ids, stop) = (ids.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    if let Err(e) = ids.next_id() {
                        return Err((n, e));
                    }
                    n += 1;
                }
                Ok(n)
            })
        })
        .collect();
    for _ in 0..100 {
        let _ = tokio::time::timeout(Duration::from_millis(2), ids.next_ids(want)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut taken = 0;
    for r in readers {
        let got = tokio::task::spawn_blocking(move || r.join().unwrap())
            .await
            .unwrap();
        match got {
            Ok(n) => taken += n,
            Err((n, e)) => panic!("a reader failed after {n} IDs while the shelf held IDs: {e}"),
        }
    }
    assert!(taken > 0 && taken < held);
    let s = ids.stats();
    assert!(s.lease.available > 0, "{s:?}");
    assert_eq!(s.misses, 0, "{s:?}");
    assert!(!waiting.is_finished(), "the batch still waits");
    waiting.abort();
}

/// A caller who wants one ID is not held up by a batch ahead of it that
/// must wait: when a range smaller than the batch comes, `next_id_async`
/// gets an ID of it at once. (Before, the batch at the head of the queue
/// stopped the queue, and the caller behind it failed at its deadline
/// while the shelf held IDs.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_id_is_not_queued_behind_a_batch_that_must_wait() {
    let fake = Fake::start().await;
    // The first range at once, the next after 300 ms, later ones held past
    // the test.
    fake.script(
        [
            Fault::Slow(Duration::ZERO),
            Fault::Slow(Duration::from_millis(300)),
        ]
        .into_iter()
        .chain((0..32).map(|_| Fault::Slow(Duration::from_secs(120)))),
    );
    let ids = Generator::connect(
        options(&fake)
            .range_size(10)
            .request_timeout(Duration::from_secs(60))
            .deadline(Duration::from_millis(1_500)),
    )
    .await
    .unwrap();
    let mut got = Vec::new();
    while let Ok(id) = ids.next_id() {
        got.push(id);
    }
    assert_eq!(got.len(), 10, "the shelf is dry");
    let batch = {
        let ids = ids.clone();
        tokio::spawn(async move { ids.next_ids(50).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    let started = std::time::Instant::now();
    let one = tokio::time::timeout(Duration::from_millis(1_200), ids.next_id_async())
        .await
        .expect("served when the next range came, not at the deadline")
        .unwrap();
    assert!(started.elapsed() < Duration::from_millis(1_000));
    got.push(one);
    assert!(all_distinct(&got));
    assert!(!batch.is_finished(), "the batch still waits for 50");
    batch.abort();
}

/// An ID sent to a caller who stopped waiting (dropped its future) before
/// reading it is lost, and counted so: abandoned, not issued. `issued`
/// stays exactly what callers got.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_id_sent_to_a_caller_who_stopped_waiting_is_not_issued() {
    let fake = Fake::start().await;
    fake.script(
        [
            Fault::Slow(Duration::ZERO),
            Fault::Slow(Duration::from_millis(200)),
        ]
        .into_iter()
        .chain((0..32).map(|_| Fault::Slow(Duration::from_secs(120)))),
    );
    let ids = Generator::connect(
        options(&fake)
            .range_size(10)
            .request_timeout(Duration::from_secs(60)),
    )
    .await
    .unwrap();
    let mut got = Vec::new();
    while let Ok(id) = ids.next_id() {
        got.push(id);
    }
    assert_eq!(ids.stats().lease.issued, 10);
    // Waits (polled once), is sent an ID when the next range comes, and is
    // dropped without reading it.
    let mut waiting = Box::pin(ids.next_id_async());
    std::future::poll_fn(|cx| {
        assert!(waiting.as_mut().poll(cx).is_pending());
        std::task::Poll::Ready(())
    })
    .await;
    let sent = std::time::Instant::now();
    while ids.stats().lease.available == 0 && sent.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(waiting);
    got.push(ids.next_id().unwrap());
    let s = ids.stats();
    assert_eq!(s.lease.available, 8, "{s:?}");
    assert_eq!(s.lease.issued, got.len() as u64, "{s:?}");
    assert_eq!((s.lost, s.lease.abandoned), (1, 1), "{s:?}");
}
