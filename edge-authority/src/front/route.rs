//! Routing: method and path to a [`Route`].
//!
//! Paths are matched exactly (no trailing slash, no percent-decoding: a
//! namespace name never needs escaping). A known path with another method
//! is [`RouteError::MethodNotAllowed`] with the methods it takes (`405` and
//! `Allow`); any other path is [`RouteError::NotFound`] (`404 not_found`).
//! `OPTIONS` is answered by the CORS layer before routing.

/// An API endpoint. Namespace path segments are carried unvalidated: the
/// handler checks them after authentication, so an invalid name cannot be
/// told apart from an unknown one without a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// `GET /healthz`
    Healthz,
    /// `GET /v1/openapi.json`
    OpenApi,
    /// `POST /v1/ranges`
    Grant,
    /// `GET /v1/namespaces`
    ListNamespaces,
    /// `POST /v1/namespaces`
    CreateNamespace,
    /// `GET /v1/namespaces/{ns}`
    Summary(String),
    /// `GET /v1/namespaces/{ns}/grants`
    Grants(String),
    /// `GET /v1/namespaces/{ns}/lookup`
    Lookup(String),
    /// `POST /v1/namespaces/{ns}/floor`
    Floor(String),
    /// `POST /v1/namespaces/{ns}/freeze`
    Freeze(String),
    /// `POST /v1/namespaces/{ns}/unfreeze`
    Unfreeze(String),
    /// `POST /v1/namespaces/{ns}/limits`
    Limits(String),
    /// `POST /v1/namespaces/{ns}/relays`: turn relays on or off.
    Relays(String),
    /// `GET /v1/namespaces/{ns}/audit`
    Audit(String),
    /// `POST /v1/namespaces/{ns}/export`
    Export(String),
    /// `POST /v1/namespaces/{ns}/import`
    Import(String),
    /// `GET /v1/namespaces/{ns}/rates`
    Rates(String),
    /// `GET /v1/session`: the caller's verified claims.
    Session,
    /// `GET /v1/metrics`: Prometheus text.
    Metrics,
}

impl Route {
    /// Whether the route reads a JSON request body.
    pub fn has_body(&self) -> bool {
        matches!(
            self,
            Route::Grant
                | Route::CreateNamespace
                | Route::Floor(_)
                | Route::Freeze(_)
                | Route::Unfreeze(_)
                | Route::Export(_)
                | Route::Import(_)
                | Route::Limits(_)
                | Route::Relays(_)
        )
    }
}

/// Why no route matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteError {
    /// No such path.
    NotFound,
    /// The path exists; `allow` is the value of the `Allow` header.
    MethodNotAllowed {
        /// The methods the path takes, comma-separated.
        allow: &'static str,
    },
}

/// The methods a path takes (for `Allow` and preflight), or `None` when the
/// path is unknown.
pub fn allowed_methods(path: &str) -> Option<&'static str> {
    let segments: Vec<&str> = path.strip_prefix('/')?.split('/').collect();
    let allow = match segments.as_slice() {
        ["healthz"] | ["v1", "openapi.json"] | ["v1", "session"] | ["v1", "metrics"] => "GET, HEAD",
        ["v1", "ranges"] => "POST",
        ["v1", "namespaces"] => "GET, HEAD, POST",
        ["v1", "namespaces", ns] if !ns.is_empty() => "GET, HEAD",
        ["v1", "namespaces", ns, "grants" | "lookup" | "audit" | "rates"] if !ns.is_empty() => {
            "GET, HEAD"
        }
        ["v1", "namespaces", ns, "floor" | "freeze" | "unfreeze" | "export" | "import" | "limits" | "relays"]
            if !ns.is_empty() =>
        {
            "POST"
        }
        _ => return None,
    };
    Some(allow)
}

/// Routes `method` (upper-case, as sent) and `path` (without the query).
/// `HEAD` is routed like `GET`.
pub fn route(method: &str, path: &str) -> Result<Route, RouteError> {
    let allow = allowed_methods(path).ok_or(RouteError::NotFound)?;
    let get = matches!(method, "GET" | "HEAD");
    let post = method == "POST";
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let owned = |s: &&str| (*s).to_owned();
    let found = match segments.as_slice() {
        ["healthz"] if get => Some(Route::Healthz),
        ["v1", "openapi.json"] if get => Some(Route::OpenApi),
        ["v1", "session"] if get => Some(Route::Session),
        ["v1", "metrics"] if get => Some(Route::Metrics),
        ["v1", "ranges"] if post => Some(Route::Grant),
        ["v1", "namespaces"] if get => Some(Route::ListNamespaces),
        ["v1", "namespaces"] if post => Some(Route::CreateNamespace),
        ["v1", "namespaces", ns] if get => Some(Route::Summary(owned(ns))),
        ["v1", "namespaces", ns, "grants"] if get => Some(Route::Grants(owned(ns))),
        ["v1", "namespaces", ns, "lookup"] if get => Some(Route::Lookup(owned(ns))),
        ["v1", "namespaces", ns, "audit"] if get => Some(Route::Audit(owned(ns))),
        ["v1", "namespaces", ns, "rates"] if get => Some(Route::Rates(owned(ns))),
        ["v1", "namespaces", ns, "floor"] if post => Some(Route::Floor(owned(ns))),
        ["v1", "namespaces", ns, "freeze"] if post => Some(Route::Freeze(owned(ns))),
        ["v1", "namespaces", ns, "unfreeze"] if post => Some(Route::Unfreeze(owned(ns))),
        ["v1", "namespaces", ns, "export"] if post => Some(Route::Export(owned(ns))),
        ["v1", "namespaces", ns, "import"] if post => Some(Route::Import(owned(ns))),
        ["v1", "namespaces", ns, "limits"] if post => Some(Route::Limits(owned(ns))),
        ["v1", "namespaces", ns, "relays"] if post => Some(Route::Relays(owned(ns))),
        _ => None,
    };
    found.ok_or(RouteError::MethodNotAllowed { allow })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(method: &str, path: &str) -> Route {
        route(method, path).unwrap_or_else(|e| panic!("{method} {path}: {e:?}"))
    }

    #[test]
    fn every_endpoint_routes() {
        let o = || "orders".to_owned();
        assert_eq!(ok("GET", "/healthz"), Route::Healthz);
        assert_eq!(ok("HEAD", "/healthz"), Route::Healthz);
        assert_eq!(ok("GET", "/v1/openapi.json"), Route::OpenApi);
        assert_eq!(ok("POST", "/v1/ranges"), Route::Grant);
        assert_eq!(ok("GET", "/v1/namespaces"), Route::ListNamespaces);
        assert_eq!(ok("POST", "/v1/namespaces"), Route::CreateNamespace);
        assert_eq!(ok("GET", "/v1/namespaces/orders"), Route::Summary(o()));
        assert_eq!(
            ok("GET", "/v1/namespaces/orders/grants"),
            Route::Grants(o())
        );
        assert_eq!(
            ok("GET", "/v1/namespaces/orders/lookup"),
            Route::Lookup(o())
        );
        assert_eq!(ok("GET", "/v1/namespaces/orders/audit"), Route::Audit(o()));
        assert_eq!(ok("GET", "/v1/namespaces/orders/rates"), Route::Rates(o()));
        assert_eq!(ok("GET", "/v1/session"), Route::Session);
        assert_eq!(ok("GET", "/v1/metrics"), Route::Metrics);
        assert_eq!(ok("POST", "/v1/namespaces/orders/floor"), Route::Floor(o()));
        assert_eq!(
            ok("POST", "/v1/namespaces/orders/freeze"),
            Route::Freeze(o())
        );
        assert_eq!(
            ok("POST", "/v1/namespaces/orders/unfreeze"),
            Route::Unfreeze(o())
        );
        assert_eq!(
            ok("POST", "/v1/namespaces/orders/export"),
            Route::Export(o())
        );
        assert_eq!(
            ok("POST", "/v1/namespaces/orders/import"),
            Route::Import(o())
        );
        assert_eq!(
            ok("POST", "/v1/namespaces/orders/limits"),
            Route::Limits(o())
        );
        assert_eq!(
            ok("POST", "/v1/namespaces/orders/relays"),
            Route::Relays(o())
        );
        // Segments are not validated here: the handler does that after auth.
        assert_eq!(
            ok("GET", "/v1/namespaces/BAD%20NAME"),
            Route::Summary("BAD%20NAME".into())
        );
    }

    #[test]
    fn wrong_methods_get_allow() {
        let cases = [
            ("GET", "/v1/ranges", "POST"),
            ("PUT", "/v1/ranges", "POST"),
            ("DELETE", "/v1/namespaces", "GET, HEAD, POST"),
            ("POST", "/v1/namespaces/orders", "GET, HEAD"),
            ("POST", "/v1/namespaces/orders/grants", "GET, HEAD"),
            ("GET", "/v1/namespaces/orders/floor", "POST"),
            ("GET", "/v1/namespaces/orders/export", "POST"),
            ("PUT", "/v1/namespaces/orders/import", "POST"),
            ("GET", "/v1/namespaces/orders/limits", "POST"),
            ("PATCH", "/v1/namespaces/orders/relays", "POST"),
            ("PATCH", "/healthz", "GET, HEAD"),
            ("post", "/v1/ranges", "POST"),
        ];
        for (m, p, allow) in cases {
            assert_eq!(
                route(m, p),
                Err(RouteError::MethodNotAllowed { allow }),
                "{m} {p}"
            );
        }
    }

    #[test]
    fn unknown_paths_are_not_found() {
        for p in [
            "",
            "/",
            "/v1",
            "/v1/",
            "/v1/ranges/",
            "/v2/ranges",
            "/v1/namespaces/",
            "/v1/namespaces//grants",
            "/v1/namespaces/orders/",
            "/v1/namespaces/orders/nope",
            "/v1/namespaces/orders/grants/x",
            "//v1/ranges",
            "healthz",
            "/HEALTHZ",
        ] {
            assert_eq!(route("GET", p), Err(RouteError::NotFound), "{p:?}");
            assert_eq!(allowed_methods(p), None, "{p:?}");
        }
    }
}
