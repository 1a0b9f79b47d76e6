//! The admin page's files under `/admin/`: which built file a path names,
//! and the headers every one of them is served with.
//!
//! The Worker fetches the file from its `ASSETS` binding (wrangler's static
//! assets on Cloudflare and under `wrangler dev`, a disk service on bare
//! workerd) and answers with these headers, so the page is served the same
//! way on every runtime and its security headers are decided here, once.

use crate::shared::response::{ApiError, HttpReply};
use rangeid_core::ErrorCode;

/// The page's Content-Security-Policy: only this origin's scripts, styles,
/// images and API; no inline script or style element (Preact and uPlot set
/// styles through the CSSOM, which `style-src` does not restrict); never
/// framed; no form posts or `<base>`.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; \
    connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// What a request for a page path gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageRoute {
    /// `/admin` without the slash: `308` to `/admin/`.
    Redirect(&'static str),
    /// A built file: its path under the assets root and how it is served.
    File {
        /// The file's path from the assets root, such as `/admin/index.html`.
        path: String,
        /// What it is.
        kind: FileKind,
    },
}

/// The kinds of file the page is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// `index.html`: revalidated on every load (it names the hashed files).
    Html,
    /// `app-<hash>.js`: immutable.
    Script,
    /// `app-<hash>.css`: immutable.
    Style,
    /// A source map of one of those: immutable.
    SourceMap,
    /// `favicon.svg`: cached for an hour.
    Icon,
}

impl FileKind {
    fn of(name: &str) -> Option<FileKind> {
        let (_, ext) = name.rsplit_once('.')?;
        Some(match ext {
            "html" => FileKind::Html,
            "js" => FileKind::Script,
            "css" => FileKind::Style,
            "map" => FileKind::SourceMap,
            "svg" => FileKind::Icon,
            _ => return None,
        })
    }

    /// The `Content-Type` it is served with.
    pub const fn content_type(self) -> &'static str {
        match self {
            FileKind::Html => "text/html; charset=utf-8",
            FileKind::Script => "text/javascript; charset=utf-8",
            FileKind::Style => "text/css; charset=utf-8",
            FileKind::SourceMap => "application/json",
            FileKind::Icon => "image/svg+xml",
        }
    }

    const fn cache_control(self) -> &'static str {
        match self {
            FileKind::Html => "no-cache",
            FileKind::Script | FileKind::Style | FileKind::SourceMap => {
                "public, max-age=31536000, immutable"
            }
            FileKind::Icon => "public, max-age=3600",
        }
    }
}

/// The page route of `method path`: `None` when the path is not the
/// page's (the API's, then); `Some(Err)` for a wrong method (`405`) or a
/// name no build produces (`404`). Names are one segment of
/// `[A-Za-z0-9._-]` below `/admin/`, so nothing outside the page's folder
/// can be named. A browser opening the authority's root (`GET /`) is sent
/// to the page; any other method there is the API's (`404`).
pub fn page_route(method: &str, path: &str) -> Option<Result<PageRoute, ApiError>> {
    if path == "/" && (method == "GET" || method == "HEAD") {
        return Some(Ok(PageRoute::Redirect("/admin/")));
    }
    let rest = match path.strip_prefix("/admin") {
        Some("") => "",
        Some(rest) if rest.starts_with('/') => rest,
        _ => return None,
    };
    if method != "GET" && method != "HEAD" {
        let mut e = ApiError::new(
            ErrorCode::MethodNotAllowed,
            format!("{method} is not allowed here; use GET"),
        );
        e.allow = Some("GET, HEAD");
        return Some(Err(e));
    }
    if rest.is_empty() {
        return Some(Ok(PageRoute::Redirect("/admin/")));
    }
    let name = match &rest[1..] {
        "" => "index.html",
        name => name,
    };
    let well_formed = !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    match FileKind::of(name).filter(|_| well_formed) {
        Some(kind) => Some(Ok(PageRoute::File {
            path: format!("/admin/{name}"),
            kind,
        })),
        None => Some(Err(ApiError::new(ErrorCode::NotFound, "no such file"))),
    }
}

/// Sets the headers a page file of `kind` is served with: its type, the
/// CSP, `nosniff`, no referrer, no framing, its own browsing context, and
/// its caching.
pub fn decorate(kind: FileKind, reply: &mut HttpReply) {
    reply.set_header("content-type", kind.content_type());
    reply.set_header("content-security-policy", CSP);
    reply.set_header("x-content-type-options", "nosniff");
    reply.set_header("referrer-policy", "no-referrer");
    reply.set_header("x-frame-options", "DENY");
    reply.set_header("cross-origin-opener-policy", "same-origin");
    reply.set_header("cache-control", kind.cache_control());
}

/// The `308` answer to [`PageRoute::Redirect`].
pub fn redirect(to: &str) -> HttpReply {
    let mut r = HttpReply::empty(308);
    r.set_header("location", to);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> (String, FileKind) {
        match page_route("GET", path) {
            Some(Ok(PageRoute::File { path, kind })) => (path, kind),
            other => panic!("{path}: {other:?}"),
        }
    }

    fn refused(method: &str, path: &str) -> u16 {
        match page_route(method, path) {
            Some(Err(e)) => e.code.http_status(),
            other => panic!("{method} {path}: {other:?}"),
        }
    }

    #[test]
    fn page_paths_name_built_files_only() {
        assert_eq!(
            file("/admin/"),
            ("/admin/index.html".into(), FileKind::Html)
        );
        assert_eq!(
            file("/admin/app-RZYEOOE4.js"),
            ("/admin/app-RZYEOOE4.js".into(), FileKind::Script)
        );
        assert_eq!(file("/admin/app-6IB455VY.css").1, FileKind::Style);
        assert_eq!(file("/admin/app-6IB455VY.css.map").1, FileKind::SourceMap);
        assert_eq!(file("/admin/favicon.svg").1, FileKind::Icon);
        assert_eq!(
            page_route("HEAD", "/admin"),
            Some(Ok(PageRoute::Redirect("/admin/")))
        );
        for bad in [
            "/admin/../_headers",
            "/admin/%2e%2e/x.js",
            "/admin/.env.js",
            "/admin/sub/app.js",
            "/admin/app.exe",
            "/admin/noext",
        ] {
            assert_eq!(refused("GET", bad), 404, "{bad}");
        }
        assert_eq!(refused("POST", "/admin/"), 405);
        for api in ["/v1/ranges", "/administer", "", "/adminx/a.js"] {
            assert!(page_route("GET", api).is_none(), "{api}");
        }
        // The root sends a browser to the page; other methods stay the API's.
        for m in ["GET", "HEAD"] {
            assert_eq!(page_route(m, "/"), Some(Ok(PageRoute::Redirect("/admin/"))));
        }
        assert!(page_route("POST", "/").is_none());
    }

    #[test]
    fn every_file_gets_the_csp_and_nosniff() {
        for kind in [
            FileKind::Html,
            FileKind::Script,
            FileKind::Style,
            FileKind::SourceMap,
            FileKind::Icon,
        ] {
            let mut r = HttpReply::empty(200);
            decorate(kind, &mut r);
            assert_eq!(r.header("content-security-policy"), Some(CSP));
            assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
            assert_eq!(r.header("content-type"), Some(kind.content_type()));
        }
        assert!(!CSP.contains("unsafe") && CSP.contains("frame-ancestors 'none'"));
    }
}
