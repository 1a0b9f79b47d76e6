//! The drill tests/rust-client/ runs against the real local authority:
//! `THREADS` threads issue through one generator for `SECONDS`, by
//! `next_id` (retrying at once) and `next_id_blocking` in turn, and the
//! drill prints one JSON line: IDs issued, distinct, errors by code, how
//! often the token was refreshed, and the generator's counters.
//!
//! Environment: RANGEID_URL, RANGEID_NAMESPACE, RANGEID_TOKEN_FILE (read
//! once, and again each time the generator asks for a fresh token after a
//! 401), RANGEID_RANGE_SIZE (optional). Arguments: THREADS SECONDS.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rangeid_client::{BoxError, Generator, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = |k: &str| std::env::var(k).map_err(|_| format!("set {k}"));
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = args.get(1).map_or(Ok(4), |s| s.parse())?;
    let seconds: u64 = args.get(2).map_or(Ok(5), |s| s.parse())?;
    let file = env("RANGEID_TOKEN_FILE")?;
    let refreshes = Arc::new(AtomicU64::new(0));
    let cached = Arc::new(Mutex::new(
        std::fs::read_to_string(&file)?.trim().to_owned(),
    ));
    let provider = {
        let (refreshes, cached) = (Arc::clone(&refreshes), Arc::clone(&cached));
        move |refresh: bool| {
            let (refreshes, cached, file) =
                (Arc::clone(&refreshes), Arc::clone(&cached), file.clone());
            async move {
                if refresh {
                    refreshes.fetch_add(1, Ordering::SeqCst);
                    let fresh = std::fs::read_to_string(&file)?.trim().to_owned();
                    *cached.lock().map_err(|_| "poisoned")? = fresh;
                }
                let token = cached.lock().map_err(|_| "poisoned")?.clone();
                Ok::<_, BoxError>(token)
            }
        }
    };
    let mut options = Options::new(env("RANGEID_URL")?, env("RANGEID_NAMESPACE")?, "unused")
        .token_provider(provider)
        .deadline(Duration::from_secs(20));
    if let Ok(n) = env("RANGEID_RANGE_SIZE") {
        options = options.range_size(n.parse()?);
    }
    let ids = Generator::connect_blocking(options)?;
    let until = Instant::now() + Duration::from_secs(seconds);
    let errors: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (ids, errors) = (ids.clone(), Arc::clone(&errors));
            std::thread::spawn(move || {
                let mut got = Vec::new();
                while Instant::now() < until {
                    let r = if t % 2 == 0 {
                        ids.next_id()
                    } else {
                        ids.next_id_blocking()
                    };
                    match r {
                        Ok(id) => got.push(id),
                        Err(e) => {
                            if e.is_final() {
                                eprintln!("final: {e}");
                                break;
                            }
                            // `next_id` misses while a range is on its way
                            // are expected; count what waited in vain.
                            if t % 2 == 1 {
                                eprintln!("{e}");
                            }
                            let key =
                                format!("{}{}", if t % 2 == 0 { "now:" } else { "" }, e.code());
                            *errors.lock().unwrap().entry(key).or_default() += 1;
                            std::thread::yield_now();
                        }
                    }
                }
                got
            })
        })
        .collect();
    let mut all = Vec::new();
    for h in handles {
        all.extend(h.join().map_err(|_| "a thread panicked")?);
    }
    let distinct = all.iter().collect::<HashSet<_>>().len();
    let s = ids.stats();
    let closed = ids.close();
    let errors = errors.lock().map_err(|_| "poisoned")?;
    let errors: Vec<String> = errors.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    println!(
        "{{\"issued\":{},\"distinct\":{distinct},\"min\":\"{}\",\"max\":\"{}\",\"errors\":{{{}}},\"refreshes\":{},\"retries\":{},\"requests\":{},\"rangesInstalled\":{},\"abandoned\":\"{}\",\"incarnation\":\"{}\"}}",
        all.len(),
        all.iter().min().unwrap_or(&0),
        all.iter().max().unwrap_or(&0),
        errors.join(","),
        refreshes.load(Ordering::SeqCst),
        s.lease.retries,
        s.lease.requests,
        s.lease.ranges_installed,
        closed.abandoned,
        s.incarnation,
    );
    Ok(())
}
