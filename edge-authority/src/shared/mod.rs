//! What the front Worker and the Durable Objects both use: answers and
//! errors, the namespace summary, refusal counts, log lines, settings, and
//! the runtime glue of their drivers.
//!
//! - [`response`]: an answer ([`response::HttpReply`]), error answers
//!   ([`response::ApiError`]) and CORS.
//! - [`summary`]: the namespace summary and grant rates.
//! - [`refusals`]: refusals counted for operators.
//! - [`logline`]: structured log lines for operators.
//! - [`settings`]: retention, audience, check-in interval: the
//!   environment, checked once.
//! - `runtime` (wasm32 only): SQL over a Durable Object's storage, calls
//!   to an object, the environment's texts, answers to the runtime.
//! - `test_switches`: test-only switches, only in the test build (the
//!   `test-switches` feature).

pub mod logline;
pub mod refusals;
pub mod response;
#[cfg(target_arch = "wasm32")]
pub(crate) mod runtime;
pub mod settings;
pub mod summary;
#[cfg(feature = "test-switches")]
pub mod test_switches;
