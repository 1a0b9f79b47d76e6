//! rangeid's authority: grants disjoint ID ranges per namespace, as a
//! Cloudflare Worker with one Durable Object per namespace on SQLite.
//!
//! The front Worker authenticates, validates and routes ([`front`]); each
//! namespace is one Durable Object (`idFromName(namespace)`) holding its
//! state, grant ledger and audit log ([`object`], [`store`]); a registry
//! object lists the namespaces. Every decision about a grant is
//! [`rangeid_core::decide`]'s; this crate stores what it decides.
//!
//! The source tree shows the layers. Everything but the runtime drivers
//! (wasm32 only) builds and is tested on the host; the drivers only pump
//! the host-tested state machines and move bytes.
//!
//! - [`front`]: the front Worker, HTTP in front: [`front::route`] (method
//!   and path), [`front::token`] (bearer tokens, roles, scopes), the
//!   request plan ([`front::plan`]), the listing and the metrics scrape
//!   ([`front::listing`], [`front::metrics`]), and its driver
//!   (`front::driver`: the `fetch` event, the admin page's files).
//! - [`object`]: the Durable Objects: the namespace object's handlers and
//!   how it serves a request ([`object::serve`]), the witness raise
//!   ([`object::raise`]), the alarm's schedule ([`object::schedule`]), the
//!   fence and registry objects, the SQLite schema ([`object::store`]), and
//!   one driver per class (`object::driver`).
//! - [`shared`]: what both use: answers and errors ([`shared::response`]),
//!   the namespace summary, refusal counts, log lines, settings, and the
//!   drivers' runtime glue (`shared::runtime`: SQL storage, calls to an
//!   object).
//! - [`api`]: the API's request bodies and queries (400 and 413), which
//!   the front parses and the objects are handed; described by
//!   [`front::openapi`], the OpenAPI 3.1 document. The admin page's files
//!   and their headers are [`front::page`].
#![deny(missing_docs)]
// The OpenAPI document is one `json!` literal per part; its schemas nest
// deeper than the macro's default recursion allows.
#![recursion_limit = "256"]

pub mod api;
pub mod front;
pub mod object;
pub mod shared;
