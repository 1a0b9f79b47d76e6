//! Where a generator's range request goes (docs/relays.md): to the relay
//! object of its namespace and region when the namespace's relays are on,
//! else straight to the namespace object, as always.
//!
//! The front Worker learns whether a namespace's relays are on from the
//! namespace object itself: every answer it gives a generator's range
//! request says so ([`RELAYS_HEADER`]), and [`Routes`] keeps the latest
//! word per namespace in the isolate's memory. A relay the namespace
//! object stopped for good (relays turned off) answers with
//! [`ROUTE_HEADER`] `object`: the front sends that same request to the
//! namespace object at once, and the namespace's next requests too.
//!
//! Routing is never a question of safety, only of speed: a request sent
//! to the namespace object instead of a relay, or to another relay, is a
//! new request there, and the generator's install-once turns a sub-range
//! it never saw into a gap (docs/relays.md §3). A token with the `relay`
//! role is never routed to a relay object: it is a relay itself.
//!
//! The region is the one a generator names (`?region=`), else the
//! continent the request arrives from (`request.cf.continent`), else its
//! data center (`colo`), else `default` (workerd, which has no `cf`). The
//! relay object is made near it ([`location_hint`]).

use std::collections::HashMap;

use rangeid_core::Namespace;

use crate::api::Region;
use crate::shared::response::HttpReply;

pub use crate::object::relay::ROUTE_HEADER;
pub use crate::object::relays::RELAYS_HEADER;

/// The most namespaces whose setting an isolate remembers; past it, it
/// forgets them all and learns again (each costs one request to the
/// namespace object).
pub const MAX_REMEMBERED: usize = 4_096;

/// The region of a request that names none and arrives without `cf`.
pub const DEFAULT_REGION: &str = "default";

/// What an isolate knows of namespaces' relay settings.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    on: HashMap<Namespace, bool>,
}

/// Where to send a generator's request next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hop {
    /// To the relay object named `name`, made near `hint` if given.
    Relay {
        /// Its `idFromName`.
        name: String,
        /// Its location hint.
        hint: Option<&'static str>,
    },
    /// To the namespace object.
    Object,
}

impl Routes {
    /// Where `namespace`'s request for `region` goes first.
    pub fn first_hop(&self, namespace: &Namespace, region: &Region) -> Hop {
        if self.on.get(namespace).copied().unwrap_or(false) {
            Hop::Relay {
                name: crate::object::relay::object_name(namespace, region),
                hint: location_hint(region),
            }
        } else {
            Hop::Object
        }
    }

    fn set(&mut self, namespace: Namespace, on: bool) {
        if self.on.len() >= MAX_REMEMBERED && !self.on.contains_key(&namespace) {
            self.on.clear();
        }
        self.on.insert(namespace, on);
    }

    /// The relay's answer: `Some` to pass on (internal headers removed),
    /// or `None` when the relay says the namespace object must answer this
    /// request (its relays are off); then the namespace's next requests go
    /// there too.
    pub fn after_relay(&mut self, namespace: Namespace, mut reply: HttpReply) -> Option<HttpReply> {
        if reply.header(ROUTE_HEADER) == Some("object") {
            self.set(namespace, false);
            return None;
        }
        strip(&mut reply);
        Some(reply)
    }

    /// The namespace object's answer to a generator's request: what it says
    /// of the relay setting is kept; the answer is passed on without it.
    pub fn after_object(&mut self, namespace: Namespace, mut reply: HttpReply) -> HttpReply {
        match reply.header(RELAYS_HEADER) {
            Some("on") => self.set(namespace, true),
            Some("off") => self.set(namespace, false),
            _ => {}
        }
        strip(&mut reply);
        reply
    }
}

/// Removes the headers only the Worker's parts speak.
pub fn strip(reply: &mut HttpReply) {
    reply
        .headers
        .retain(|(n, _)| n != RELAYS_HEADER && n != ROUTE_HEADER);
}

/// The region of a request: the one named, else its continent, else its
/// data center, else [`DEFAULT_REGION`].
pub fn region_of(named: Option<Region>, continent: Option<&str>, colo: Option<&str>) -> Region {
    let from = |text: Option<&str>| text.and_then(|t| Region::new(&t.to_ascii_lowercase()).ok());
    named
        .or_else(|| from(continent))
        .or_else(|| from(colo))
        .unwrap_or_else(|| Region::new(DEFAULT_REGION).unwrap_or_else(|_| unreachable!()))
}

/// Cloudflare's location hint for a region: a region named after one
/// (`wnam`, `enam`, `sam`, `weur`, `eeur`, `apac`, `oc`, `afr`, `me`) is
/// it; a continent code maps to the hint nearest it; anything else has
/// none (the object is made near its first caller).
pub fn location_hint(region: &Region) -> Option<&'static str> {
    const HINTS: [&str; 9] = [
        "wnam", "enam", "sam", "weur", "eeur", "apac", "oc", "afr", "me",
    ];
    if let Some(h) = HINTS.iter().find(|h| **h == region.as_str()) {
        return Some(h);
    }
    match region.as_str() {
        "na" => Some("enam"),
        "sa" => Some("sam"),
        "eu" => Some("weur"),
        "af" => Some("afr"),
        "as" => Some("apac"),
        "oc" => Some("oc"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(s: &str) -> Namespace {
        Namespace::new(s).unwrap()
    }

    fn r(s: &str) -> Region {
        Region::new(s).unwrap()
    }

    fn object_says(on: &str) -> HttpReply {
        let mut reply = HttpReply::json(200, &serde_json::json!({"start": "1"}));
        reply.set_header(RELAYS_HEADER, on);
        reply
    }

    #[test]
    fn grants_go_to_a_relay_only_once_the_namespace_object_said_relays_are_on() {
        let mut routes = Routes::default();
        let (orders, other) = (ns("orders"), ns("other"));
        assert_eq!(routes.first_hop(&orders, &r("eu")), Hop::Object);
        let passed = routes.after_object(orders, object_says("on"));
        assert_eq!(
            passed.header(RELAYS_HEADER),
            None,
            "never passed to the caller"
        );
        assert_eq!(
            routes.first_hop(&orders, &r("eu")),
            Hop::Relay {
                name: "eu/orders".into(),
                hint: Some("weur")
            }
        );
        assert_eq!(routes.first_hop(&other, &r("eu")), Hop::Object);
        // An answer without the header (a 503 from the runtime) changes nothing.
        routes.after_object(orders, HttpReply::empty(503));
        assert!(matches!(
            routes.first_hop(&orders, &r("eu")),
            Hop::Relay { .. }
        ));
        routes.after_object(orders, object_says("off"));
        assert_eq!(routes.first_hop(&orders, &r("eu")), Hop::Object);
    }

    #[test]
    fn a_stopped_relay_sends_the_request_and_the_next_ones_to_the_object() {
        let mut routes = Routes::default();
        let orders = ns("orders");
        routes.after_object(orders, object_says("on"));
        let mut stopped = HttpReply::empty(503);
        stopped.set_header(ROUTE_HEADER, "object");
        assert_eq!(routes.after_relay(orders, stopped), None);
        assert_eq!(routes.first_hop(&orders, &r("eu")), Hop::Object);
        // Any other relay answer passes (a 503 of a relay still waiting too).
        routes.after_object(orders, object_says("on"));
        let waiting = HttpReply::empty(503);
        assert_eq!(routes.after_relay(orders, waiting.clone()), Some(waiting));
        assert!(matches!(
            routes.first_hop(&orders, &r("eu")),
            Hop::Relay { .. }
        ));
    }

    #[test]
    fn the_memory_is_bounded() {
        let mut routes = Routes::default();
        for i in 0..MAX_REMEMBERED + 10 {
            routes.after_object(ns(&format!("n{i}")), object_says("on"));
        }
        assert!(routes.on.len() <= MAX_REMEMBERED);
    }

    #[test]
    fn the_region_is_the_named_one_then_the_continent_then_the_colo() {
        assert_eq!(region_of(Some(r("r2")), Some("EU"), Some("LHR")), r("r2"));
        assert_eq!(region_of(None, Some("EU"), Some("LHR")), r("eu"));
        assert_eq!(region_of(None, None, Some("LHR")), r("lhr"));
        assert_eq!(region_of(None, Some("??"), None), r(DEFAULT_REGION));
        assert_eq!(region_of(None, None, None), r(DEFAULT_REGION));
        assert_eq!(location_hint(&r("eu")), Some("weur"));
        assert_eq!(location_hint(&r("apac")), Some("apac"));
        assert_eq!(location_hint(&r("an")), None);
        assert_eq!(location_hint(&r("r1")), None);
    }
}
