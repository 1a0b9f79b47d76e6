//! rangeid's authority: grants disjoint ID ranges per namespace, as a
//! Cloudflare Worker with one Durable Object per namespace on SQLite.
//!
//! The front Worker authenticates, validates and routes ([`front`]); each
//! namespace is one Durable Object (`idFromName(namespace)`) holding its
//! state, grant ledger and audit log ([`object`], [`store`]); a registry
//! object lists the namespaces. Every decision about a grant is
//! [`rangeid_core::decide`]'s; this crate stores what it decides.
//!
//! Everything but the thin runtime drivers (`worker_entry`, wasm32 only)
//! builds and is tested on the host:
//!
//! - [`token`]: HS256 and EdDSA bearer tokens, roles and namespace scopes.
//! - [`route`]: method and path to a route; 404 and 405.
//! - [`api`]: request bodies and queries; 400 and 413.
//! - [`store`]: the SQLite schema and the 20-digit TEXT row codec.
//! - [`object`]: the namespace, fence (witness) and registry objects'
//!   handlers.
//! - [`summary`]: the namespace summary and grant rates.
//! - [`logline`]: structured log lines for operators.
//! - [`metrics`]: `/v1/metrics` in the Prometheus text format.
//! - [`openapi`]: the OpenAPI 3.1 document.
//! - [`page`]: the admin page's files and the headers they are served with.
//! - [`refusals`]: refusals counted for operators.
//! - [`response`]: error answers and CORS.
//! - [`front`]: the front Worker's request plan.
//! - [`settings`]: retention, audience: the environment, checked once.
//! - `test_switches`: test-only switches, only in the test build (the
//!   `test-switches` feature).
#![deny(missing_docs)]
// The OpenAPI document is one `json!` literal per part; its schemas nest
// deeper than the macro's default recursion allows.
#![recursion_limit = "256"]

pub mod api;
pub mod front;
pub mod logline;
pub mod metrics;
pub mod object;
pub mod openapi;
pub mod page;
pub mod refusals;
pub mod response;
pub mod route;
pub mod settings;
pub mod store;
pub mod summary;
#[cfg(feature = "test-switches")]
pub mod test_switches;
pub mod token;

#[cfg(target_arch = "wasm32")]
mod worker_entry;
