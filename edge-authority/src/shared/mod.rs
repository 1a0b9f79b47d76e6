//! What the front Worker and the Durable Objects both use: answers and
//! errors, the namespace summary, refusal counts, log lines, and settings.
//!
//! - [`response`]: an answer ([`response::HttpReply`]), error answers
//!   ([`response::ApiError`]) and CORS.
//! - [`summary`]: the namespace summary and grant rates.
//! - [`refusals`]: refusals counted for operators.
//! - [`logline`]: structured log lines for operators.
//! - [`settings`]: retention, audience, check-in interval: the
//!   environment, checked once.
//! - `test_switches`: test-only switches, only in the test build (the
//!   `test-switches` feature).

pub mod logline;
pub mod refusals;
pub mod response;
pub mod settings;
pub mod summary;
#[cfg(feature = "test-switches")]
pub mod test_switches;
