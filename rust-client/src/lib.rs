//! rangeid-client: unique IDs for a Rust service, from a rangeid authority.
//!
//! A [`Generator`] holds ranges of IDs that the authority committed to it,
//! and issues from them locally: [`Generator::next_id`] is synchronous and
//! lock-free, from any thread, one atomic `fetch_sub` plus a check. A background
//! task on tokio asks for the next range ahead of need, retries, refreshes
//! the token after a 401 and installs each grant once. Every one of those
//! decisions is made by [`rangeid_core`]'s `Lease`, the engine the npm
//! package and the simulation run too; this crate carries them out (HTTP
//! with reqwest over rustls, timers, the OS's randomness for the
//! incarnation).
//!
//! ```no_run
//! # async fn demo() -> Result<(), rangeid_client::Error> {
//! use rangeid_client::{Generator, Options};
//!
//! let ids = Generator::connect(Options::new(
//!     "https://ids.example.com",
//!     "orders",
//!     std::env::var("RANGEID_TOKEN").unwrap_or_default(),
//! ))
//! .await?;
//! let id: u64 = ids.next_id()?; // at once, or an error saying why not
//! let id: u64 = ids.next_id_async().await?; // waits for a range up to deadlineMs
//! let batch: Vec<u64> = ids.next_ids(100).await?; // exactly 100
//! println!("{id} {batch:?} {:?}", ids.stats());
//! let closed = ids.close();
//! println!("abandoned {} IDs", closed.abandoned);
//! # Ok(()) }
//! ```
//!
//! Guaranteed: no ID is issued twice in a namespace, whatever the network
//! does (lost, repeated or late answers, authority restarts), across any
//! number of threads. Not guaranteed: any order between IDs, or that every
//! ID is used (gaps, counted in [`Stats`]).
//!
//! Outside async code (a thread pool, a Python binding), use
//! [`Generator::connect_blocking`], [`Generator::next_id_blocking`] and
//! [`Generator::next_ids_blocking`]; the generator then runs its task on a
//! runtime of its own, or on one given with [`Options::runtime`].
#![deny(missing_docs)]

mod driver;
mod error;
mod generator;
mod options;
mod shelf;

pub use error::{Error, ErrorKind};
pub use generator::{Closed, Generator, Phase, Stats, MAX_BATCH};
pub use options::{BoxError, Options, Token, TokenFuture, TokenProvider};
/// The engine's counters ([`Stats::lease`]) and the stable error codes.
pub use rangeid_core::{lease::Stats as LeaseStats, ErrorCode};
