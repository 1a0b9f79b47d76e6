//! The runtime drivers (wasm32 only), moved here whole; the next commit
//! splits them into the front driver and one driver per object class.

mod namespace;
