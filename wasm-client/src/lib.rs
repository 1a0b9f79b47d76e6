//! rangeid-wasm: wasm-bindgen bindings that drive rangeid's core lease
//! engine from JS (Node, browsers, Workers).
//!
//! - [`engine`]: `Engine`, which marshals between JS values and core's
//!   `Lease`, `LeaseOptions` and `Reply`; it decides nothing itself.
//!
//! The npm package `rangeid` wraps this with the timers, `fetch` and the
//! promise API; use that, not these bindings directly.

pub mod engine;

pub use engine::Engine;

/// The module's allocator: talc, which keeps the engine under its size
/// budget (dlmalloc, the default, costs about 5 KB more).
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
