//! The Durable Object drivers (wasm32 only), one per class: the namespace
//! object ([`namespace`]), its fence's witness ([`fence`]), the registry
//! ([`registry`]) and the relays ([`relay`], in memory only). They pump the host-tested logic of [`crate::object`]
//! ([`crate::object::serve::Serving`], [`crate::object::raise::Raising`],
//! [`crate::object::schedule`]) and add only what needs the runtime:
//! reaching another object, the start gate (`blockConcurrencyWhile`), one
//! fence raise at a time, alarms. The output gate holds each reply until its
//! writes are durable.

mod fence;
mod namespace;
mod registry;
mod relay;
