//! `Options`: what a generator is started with, by the npm package's
//! names, and `Token`: where its credentials come from.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rangeid_core::lease::{ClientConfig, LeaseOptions, OptionValue};
use reqwest::Url;

use crate::Error;

/// An error a token provider may fail with.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a token provider returns.
pub type TokenFuture = Pin<Box<dyn Future<Output = Result<String, BoxError>> + Send>>;

/// Gives the bearer token of each range request. `refresh` is true after
/// the authority refused the last one (`401 unauthenticated`): get a fresh
/// token then, not a cached one. A token that replaces another must keep
/// its `sub`, or retries are new requests. A provider that fails is
/// retried like a lost answer.
pub trait TokenProvider: Send + Sync + 'static {
    /// The token for the next attempt.
    fn token(&self, refresh: bool) -> TokenFuture;
}

impl<F, Fut, E> TokenProvider for F
where
    F: Fn(bool) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, E>> + Send + 'static,
    E: Into<BoxError>,
{
    fn token(&self, refresh: bool) -> TokenFuture {
        let fut = self(refresh);
        Box::pin(async move { fut.await.map_err(Into::into) })
    }
}

/// The generator's credentials: one token, or a provider asked before
/// every attempt.
#[derive(Clone)]
pub enum Token {
    /// The same token for every request.
    Fixed(String),
    /// A provider (see [`TokenProvider`]).
    Provider(Arc<dyn TokenProvider>),
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print a secret.
        match self {
            Token::Fixed(_) => f.write_str("Token::Fixed(..)"),
            Token::Provider(_) => f.write_str("Token::Provider(..)"),
        }
    }
}

impl From<String> for Token {
    fn from(s: String) -> Token {
        Token::Fixed(s)
    }
}

impl From<&str> for Token {
    fn from(s: &str) -> Token {
        Token::Fixed(s.to_owned())
    }
}

/// A generator's options: the authority's URL, the token, the namespace,
/// and the engine's options by the names the npm package uses
/// (`rangeSize`, `minRangeSize`, `maxRangeSize`, `targetLifetimeMs`,
/// `prefetchLeadMs`, `maxOutstanding`, `requestTimeoutMs`,
/// `retryInitialMs`, `retryMaxMs`, `deadlineMs`), checked by core when the
/// generator starts.
#[derive(Clone, Debug)]
pub struct Options {
    url: String,
    namespace: String,
    token: Token,
    engine: Vec<(String, u64)>,
    allow_insecure_http: bool,
    runtime: Option<tokio::runtime::Handle>,
    region: Option<String>,
}

/// What the driver runs with, checked.
pub(crate) struct Checked {
    pub endpoint: Url,
    pub token: Token,
    pub config: ClientConfig,
    pub namespace: String,
    pub runtime: Option<tokio::runtime::Handle>,
}

impl Options {
    /// Options for `namespace` at the authority `url` (its base, such as
    /// `https://ids.example.com`), with `token`: a string, or
    /// [`Token::Provider`] (see [`Options::token_provider`]).
    pub fn new(
        url: impl Into<String>,
        namespace: impl Into<String>,
        token: impl Into<Token>,
    ) -> Options {
        Options {
            url: url.into(),
            namespace: namespace.into(),
            token: token.into(),
            engine: Vec::new(),
            allow_insecure_http: false,
            runtime: None,
            region: None,
        }
    }

    /// Gets each request's token from `provider` (see [`TokenProvider`]):
    /// for example `|refresh: bool| async move { Ok::<_, BoxError>(fetch_token(refresh).await?) }`.
    pub fn token_provider(mut self, provider: impl TokenProvider) -> Options {
        self.token = Token::Provider(Arc::new(provider));
        self
    }

    /// Sets an engine option by its npm name (`minRangeSize`, ...). Checked
    /// when the generator starts: an unknown name or a bad value fails
    /// with `invalid_config`, naming the option.
    pub fn option(mut self, name: &str, value: u64) -> Options {
        self.engine.retain(|(n, _)| n != name);
        self.engine.push((name.to_owned(), value));
        self
    }

    /// `rangeSize`: one fixed size for every range.
    pub fn range_size(self, n: u64) -> Options {
        self.option("rangeSize", n)
    }

    /// `minRangeSize`: the first range's size (default 1,000).
    pub fn min_range_size(self, n: u64) -> Options {
        self.option("minRangeSize", n)
    }

    /// `maxRangeSize`: the largest range asked for.
    pub fn max_range_size(self, n: u64) -> Options {
        self.option("maxRangeSize", n)
    }

    /// `deadlineMs`: how long a waiting call waits for an ID (default 5 s).
    pub fn deadline(self, d: Duration) -> Options {
        self.option("deadlineMs", duration_ms(d))
    }

    /// `requestTimeoutMs`: how long an attempt goes unanswered before the
    /// next one is sent.
    pub fn request_timeout(self, d: Duration) -> Options {
        self.option("requestTimeoutMs", duration_ms(d))
    }

    /// `retryInitialMs` and `retryMaxMs`: the backoff between attempts.
    pub fn retry(self, initial: Duration, max: Duration) -> Options {
        self.option("retryInitialMs", duration_ms(initial))
            .option("retryMaxMs", duration_ms(max))
    }

    /// Allows plain `http:` to another machine, which sends the token in
    /// clear (plain `http:` is allowed without it only to `localhost`,
    /// 127.0.0.0/8 and `[::1]`).
    pub fn allow_insecure_http(mut self, allow: bool) -> Options {
        self.allow_insecure_http = allow;
        self
    }

    /// `region`: the relay region that serves this generator while the
    /// namespace's relays are on (sent as `POST /v1/ranges?region=NAME`;
    /// 1 to 32 of `a-z`, `0-9` and `-`, core's [`rangeid_core::Region`],
    /// checked when the generator starts). Without it the authority uses
    /// the region the request arrives in. Ignored while relays are off.
    /// See docs/relays.md, "The region".
    pub fn region(mut self, name: impl Into<String>) -> Options {
        self.region = Some(name.into());
        self
    }

    /// Runs the generator's background task (refills, timers, HTTP) on
    /// this runtime instead of the current one (for
    /// [`crate::Generator::connect_blocking`]: instead of a runtime of its
    /// own).
    pub fn runtime(mut self, handle: tokio::runtime::Handle) -> Options {
        self.runtime = Some(handle);
        self
    }

    pub(crate) fn check(self) -> Result<Checked, Error> {
        let base = Url::parse(&self.url).map_err(|e| {
            Error::invalid_config(format!("url is not a valid URL ({e}): {}", self.url))
        })?;
        match base.scheme() {
            "https" => {}
            "http" => {
                let loopback = match base.host() {
                    Some(url::Host::Domain(d)) => d == "localhost",
                    Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                    Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                    None => false,
                };
                if !loopback && !self.allow_insecure_http {
                    return Err(Error::invalid_config(format!(
                        "url {} sends the token unencrypted to another machine: use https:, or opt in with allow_insecure_http (plain http: is allowed without it only to localhost, 127.0.0.0/8 and [::1])",
                        base.origin().ascii_serialization()
                    )));
                }
            }
            _ => return Err(Error::invalid_config("url must be http: or https:")),
        }
        let mut base_text = base.to_string();
        if !base_text.ends_with('/') {
            base_text.push('/');
        }
        let mut endpoint = Url::parse(&base_text)
            .and_then(|b| b.join("v1/ranges"))
            .map_err(|e| Error::invalid_config(format!("url cannot take v1/ranges: {e}")))?;
        if let Some(region) = &self.region {
            let region = rangeid_core::Region::new(region).map_err(|e| {
                Error::invalid_config(format!(
                    "region must be 1 to {} characters of a-z, 0-9 and - ({e}): {region:?}",
                    rangeid_core::Region::MAX_LEN
                ))
            })?;
            endpoint
                .query_pairs_mut()
                .append_pair("region", region.as_str());
        }
        if let Token::Fixed(t) = &self.token {
            if t.is_empty() {
                return Err(Error::invalid_config(
                    "token must be a non-empty string or a provider",
                ));
            }
        }
        let mut o = LeaseOptions::default();
        o.set("namespace", OptionValue::Text(&self.namespace))
            .map_err(|e| Error::invalid_config(e.to_string()))?;
        for (name, value) in &self.engine {
            if name == "namespace" {
                return Err(Error::invalid_config("set the namespace in Options::new"));
            }
            // Exact: every limit core checks is below 2^53.
            let v = if *value > rangeid_core::protocol::MAX_COUNT {
                f64::INFINITY
            } else {
                *value as f64
            };
            o.set(name, OptionValue::Number(v))
                .map_err(|e| Error::invalid_config(e.to_string()))?;
        }
        let config = o
            .config()
            .map_err(|e| Error::invalid_config(e.to_string()))?;
        Ok(Checked {
            endpoint,
            token: self.token,
            config,
            namespace: self.namespace,
            runtime: self.runtime,
        })
    }
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(o: Options) -> String {
        match o.check() {
            Ok(_) => "ok".into(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn checks_like_the_npm_package() {
        assert_eq!(
            code(Options::new("http://127.0.0.1:8787", "orders", "t")),
            "ok"
        );
        assert_eq!(
            code(Options::new("http://localhost:1/base", "orders", "t")),
            "ok"
        );
        assert!(code(Options::new("http://ids.example.com", "orders", "t")).contains("unencrypted"));
        assert_eq!(
            code(Options::new("http://ids.example.com", "orders", "t").allow_insecure_http(true)),
            "ok"
        );
        assert!(code(Options::new("ftp://x", "orders", "t")).contains("http: or https:"));
        assert!(code(Options::new("not a url", "orders", "t")).starts_with("invalid_config"));
        assert!(code(Options::new("https://x", "Bad Name", "t")).contains("namespace"));
        assert!(code(Options::new("https://x", "orders", "")).contains("token"));
        assert!(
            code(Options::new("https://x", "orders", "t").option("rangeSiz", 5))
                .contains("rangeSiz")
        );
        assert!(code(Options::new("https://x", "orders", "t").range_size(0)).contains("rangeSize"));
        assert!(
            code(Options::new("https://x", "orders", "t").range_size(u64::MAX))
                .contains("rangeSize")
        );
    }

    #[test]
    fn the_endpoint_is_under_the_base() {
        let c = Options::new("https://x.example/base", "orders", "t")
            .check()
            .ok()
            .unwrap();
        assert_eq!(c.endpoint.as_str(), "https://x.example/base/v1/ranges");
        let c = Options::new("https://x.example", "orders", "t")
            .check()
            .ok()
            .unwrap();
        assert_eq!(c.endpoint.as_str(), "https://x.example/v1/ranges");
    }

    #[test]
    fn a_region_is_checked_by_core_and_sent_in_the_query() {
        let c = Options::new("https://x.example/base", "orders", "t")
            .region("eu-west-1")
            .check()
            .ok()
            .unwrap();
        assert_eq!(
            c.endpoint.as_str(),
            "https://x.example/base/v1/ranges?region=eu-west-1"
        );
        for bad in ["", "EU", "eu west", "eu/x", &"a".repeat(33)] {
            let e = code(Options::new("https://x", "orders", "t").region(bad));
            assert!(
                e.starts_with("invalid_config") && e.contains("region"),
                "{bad:?}: {e}"
            );
        }
    }
}
