//! `Generator`: the handle users hold.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rangeid_core::lease::IssueError;
use rangeid_core::Lease;
use tokio::sync::oneshot;

use crate::driver::{drive, Got, Shared, Want};
use crate::{Error, Options};

/// The most IDs one `next_ids` call may ask for: 2^32 - 1, as the npm
/// package's `nextIds`.
pub const MAX_BATCH: u64 = u32::MAX as u64;

/// One incarnation issuing IDs for one namespace. Cheap to clone: every
/// clone is the same generator (share it across threads and tasks); it
/// closes when the last clone is dropped, or at [`Generator::close`].
///
/// [`Generator::next_id`] never waits: from any thread, without a lock, it
/// takes the next ID of the block on hand (an `AtomicU64::fetch_sub`, plus
/// a check). Refills run in a background task on tokio, ahead of need.
#[derive(Clone)]
pub struct Generator {
    shared: Arc<Shared>,
    _owner: Arc<Owner>,
}

/// Closes the generator (and stops a runtime of its own) when the last
/// clone goes.
struct Owner {
    shared: Arc<Shared>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.shared.close();
        if let Some(rt) = self.runtime.take() {
            // Safe from inside another runtime too.
            rt.shutdown_background();
        }
    }
}

impl std::fmt::Debug for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generator")
            .field("namespace", &self.shared.namespace)
            .field("incarnation", &self.shared.incarnation)
            .finish_non_exhaustive()
    }
}

/// What [`Generator::close`] gave up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Closed {
    /// IDs reserved for this generator and never issued: on hand, or in
    /// ranges installed but not started. Gaps, never issued by anyone.
    pub abandoned: u64,
    /// Range requests that were in flight, now abandoned (their ranges,
    /// if committed, are never installed: counted in
    /// `Stats::lease.reserved`).
    pub requests_abandoned: u64,
}

/// Where the generator is in its life (the npm package's `stats().phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Issuing and asking for ranges.
    Running,
    /// Range requests are refused by something other than the authority,
    /// or the token even fresh; asking again by itself.
    Blocked,
    /// The namespace has no more IDs; issuing what is left.
    Exhausted,
    /// Refused for good, with this code; issuing what is left.
    Failed(&'static str),
    /// Closed.
    Closed,
}

/// Counters: core's, and the driver's.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Stats {
    /// The incarnation: 32 hex digits.
    pub incarnation: String,
    /// Where the generator is in its life.
    pub phase: Phase,
    /// The consumption rate the engine measured, IDs per second, over
    /// half-second windows: 0 until the generator has issued a minimum
    /// range's worth (`min_range_size`, 1,000 by default) across two of
    /// them, so a burst or a short try shows none.
    pub rate_per_second: u64,
    /// HTTP attempts whose answer is awaited.
    pub in_flight: u64,
    /// Calls that found no ID on hand (`next_id` errors, and waits).
    pub misses: u64,
    /// IDs taken for a caller that never reached it: a `next_id` caught
    /// between taking an ID and checking it by a block swap, or a waiting
    /// caller who stopped waiting (dropped its future) as its IDs were
    /// sent. Gaps, never issued by anyone: in `lease.abandoned`, not in
    /// `lease.issued`.
    pub lost: u64,
    /// The engine's counters (`issued`, `available`, `reserved`,
    /// `abandoned`, `requests`, `retries`, `grant_ms`, ...), counting the
    /// IDs on hand as not issued, and the `lost` ones as abandoned. (A
    /// `next_id` in progress counts as issued until it returns or loses
    /// its ID.)
    pub lease: rangeid_core::lease::Stats,
}

impl Generator {
    /// Starts a generator on the current tokio runtime (or the one given
    /// with [`Options::runtime`]) and waits (up to `deadlineMs`) for its
    /// first range, so a wrong URL, token or namespace fails here.
    pub async fn connect(options: Options) -> Result<Generator, Error> {
        let g = Generator::start(options, false)?;
        let got = g.shared.wait(Want::Warm).await;
        g.warm(got)
    }

    /// Like [`Generator::connect`], for code outside async: on the runtime
    /// given with [`Options::runtime`], or on a runtime of its own (one
    /// worker thread, stopped with the generator). Blocks the calling
    /// thread, which must not be a runtime's worker.
    pub fn connect_blocking(options: Options) -> Result<Generator, Error> {
        let g = Generator::start(options, true)?;
        let got = g.shared.wait(Want::Warm).blocking_recv();
        g.warm(got)
    }

    fn warm(
        self,
        got: Result<Result<Got, Error>, oneshot::error::RecvError>,
    ) -> Result<Generator, Error> {
        match got {
            Ok(Ok(_)) => Ok(self),
            Ok(Err(e)) => {
                self.close();
                Err(e.gave_up_connecting())
            }
            Err(_) => Err(Error::closed()),
        }
    }

    fn start(options: Options, blocking: bool) -> Result<Generator, Error> {
        let checked = options.check()?;
        let mut random = [0u8; 16];
        getrandom::getrandom(&mut random)
            .map_err(|e| Error::invalid_config(format!("no secure random source: {e}")))?;
        let lease = Lease::new(checked.config.lease, random, rangeid_core::Instant::ZERO)
            .map_err(|e| Error::invalid_config(e.to_string()))?;
        let (handle, runtime) = match (checked.runtime, blocking) {
            (Some(h), _) => (h, None),
            (None, false) => (
                tokio::runtime::Handle::try_current().map_err(|_| {
                    Error::invalid_config(
                        "Generator::connect needs a tokio runtime: call it from one, pass Options::runtime, or use Generator::connect_blocking",
                    )
                })?,
                None,
            ),
            (None, true) => {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("rangeid-client")
                    .enable_all()
                    .build()
                    .map_err(|e| Error::invalid_config(format!("no runtime: {e}")))?;
                (rt.handle().clone(), Some(rt))
            }
        };
        let shared = Arc::new(Shared::new(
            lease,
            checked.endpoint,
            checked.namespace,
            checked.token,
            checked.config.deadline_ms,
        )?);
        handle.spawn(drive(Arc::clone(&shared)));
        Ok(Generator {
            _owner: Arc::new(Owner {
                shared: Arc::clone(&shared),
                runtime,
            }),
            shared,
        })
    }

    /// The next ID, at once: lock-free, from any thread, never waiting.
    /// When none is on hand (the next range has not come yet, the
    /// generator is blocked, exhausted, refused or closed), the error says
    /// why; [`Generator::next_id_async`] waits instead.
    #[inline]
    pub fn next_id(&self) -> Result<u64, Error> {
        match self.shared.shelf.next_id() {
            Some(id) => Ok(id),
            None => Err(self.miss()),
        }
    }

    #[cold]
    fn miss(&self) -> Error {
        // The driver refills the shelf when a reader finds it used up.
        self.shared.shelf.wake.notify_one();
        self.shared.empty_error()
    }

    /// The next ID; waits for a range up to `deadlineMs` (default 5 s).
    /// Fails at once when waiting cannot help (blocked, exhausted, refused,
    /// closed). Dropping the future stops the wait.
    pub async fn next_id_async(&self) -> Result<u64, Error> {
        if let Some(id) = self.shared.shelf.next_id() {
            return Ok(id);
        }
        self.shared.misses.fetch_add(1, Ordering::Relaxed);
        match self.shared.wait(Want::One).await {
            Ok(Ok(Got::One(id))) => Ok(id),
            Ok(Err(e)) => Err(e),
            _ => Err(Error::closed()),
        }
    }

    /// Like [`Generator::next_id_async`], blocking the calling thread
    /// (which must not be a runtime's worker): for code outside async.
    pub fn next_id_blocking(&self) -> Result<u64, Error> {
        if let Some(id) = self.shared.shelf.next_id() {
            return Ok(id);
        }
        self.shared.misses.fetch_add(1, Ordering::Relaxed);
        match self.shared.wait(Want::One).blocking_recv() {
            Ok(Ok(Got::One(id))) => Ok(id),
            Ok(Err(e)) => Err(e),
            _ => Err(Error::closed()),
        }
    }

    /// Exactly `n` IDs (1 to [`MAX_BATCH`]), as the npm package's
    /// `nextIds(n)`: across ranges when it must, not necessarily
    /// contiguous; waits like [`Generator::next_id_async`]. All or nothing:
    /// a call that fails (deadline, too few left in the namespace, too
    /// large) takes no ID.
    pub async fn next_ids(&self, n: u64) -> Result<Vec<u64>, Error> {
        match self.try_batch(n)? {
            Some(ids) => Ok(ids),
            None => batch(self.shared.wait(Want::Batch(n)).await),
        }
    }

    /// Like [`Generator::next_ids`], blocking the calling thread (which
    /// must not be a runtime's worker).
    pub fn next_ids_blocking(&self, n: u64) -> Result<Vec<u64>, Error> {
        match self.try_batch(n)? {
            Some(ids) => Ok(ids),
            None => batch(self.shared.wait(Want::Batch(n)).blocking_recv()),
        }
    }

    /// The batch now, `None` to wait, or why never.
    fn try_batch(&self, n: u64) -> Result<Option<Vec<u64>>, Error> {
        if n == 0 || n > MAX_BATCH {
            return Err(Error::invalid_request(format!(
                "n must be a whole number from 1 to {MAX_BATCH}, not {n}"
            )));
        }
        if let Some(r) = self.shared.shelf.take(n) {
            return Ok(Some((r.start()..=r.last()).collect()));
        }
        let mut st = self.shared.lock();
        if st.closed {
            return Err(Error::closed());
        }
        match self.shared.take_batch(&mut st, n) {
            Ok(taken) => {
                drop(st);
                // The shelf may need a refill now.
                self.shared.shelf.wake.notify_one();
                Ok(Some(taken.ids()))
            }
            Err(e) if e.waits() => Ok(None),
            Err(e) => {
                let prefix = match e {
                    IssueError::TooFew {
                        remaining,
                        available,
                    } => Some(format!(
                        "next_ids({n}): namespace {} has {remaining} IDs left to grant and this generator holds {available}, fewer than {n}; no ID was taken (a smaller batch or next_id can still have them)",
                        self.shared.namespace
                    )),
                    IssueError::BatchTooLarge { limit } => Some(format!(
                        "next_ids({n}): at most {limit} IDs per call here (the largest range it asks for: maxRangeSize, and the namespace's maxCount); no ID was taken"
                    )),
                    _ => None,
                };
                Err(self.shared.error(&st, e, prefix.as_deref()))
            }
        }
    }

    /// Counters from the engine and the driver.
    pub fn stats(&self) -> Stats {
        let st = self.shared.lock();
        let held = if st.closed {
            0
        } else {
            self.shared.shelf.unused()
        };
        let lost = self.shared.lost();
        let mut lease = st.lease.stats(held);
        lease.issued = lease.issued.saturating_sub(lost);
        lease.abandoned = lease.abandoned.saturating_add(lost);
        Stats {
            incarnation: self.shared.incarnation.clone(),
            phase: Shared::phase(&st),
            rate_per_second: st.lease.rate(),
            in_flight: Shared::in_flight(&st),
            misses: self.shared.misses.load(Ordering::Relaxed),
            lost,
            lease,
        }
    }

    /// The incarnation: 32 hex digits, fresh for each generator.
    pub fn incarnation(&self) -> &str {
        &self.shared.incarnation
    }

    /// The namespace it issues for.
    pub fn namespace(&self) -> &str {
        &self.shared.namespace
    }

    /// Stops: abandons the unused IDs, aborts requests in flight, fails
    /// waiting calls with `closed`; every later call fails with `closed`.
    /// Says what was given up (nothing the second time).
    pub fn close(&self) -> Closed {
        let (abandoned, requests_abandoned) = self.shared.close();
        Closed {
            abandoned,
            requests_abandoned,
        }
    }
}

fn batch(got: Result<Result<Got, Error>, oneshot::error::RecvError>) -> Result<Vec<u64>, Error> {
    match got {
        Ok(Ok(Got::Batch(taken))) => Ok(taken.ids()),
        Ok(Err(e)) => Err(e),
        _ => Err(Error::closed()),
    }
}
