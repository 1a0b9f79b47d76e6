//! rangeid-wasm: wasm-bindgen bindings that drive rangeid's core lease
//! engine from JS (Node, browsers, Workers).
//!
//! - [`engine`]: `Engine`, the engine JS drives (issue, poll, replies).
//! - [`options`]: the options JSON, checked into a core `LeaseConfig`.
//! - [`code`]: the stable JS error codes.
//!
//! The npm package `rangeid` wraps this with the timers, `fetch` and the
//! promise API; use that, not these bindings directly.

pub mod code;
pub mod engine;
pub mod options;

pub use engine::Engine;
