//! `LeaseConfig` and its limits, and `LeaseOptions`: the user-facing options
//! (as the JS package names them) checked into a configuration. The one
//! place a generator's configuration is validated.

use core::fmt;

use crate::names::Namespace;
use crate::reply::Text;

/// The most range requests one engine keeps outstanding at once.
pub const MAX_OUTSTANDING: usize = 4;

/// The largest range a client asks for: 2^53 - 1, so every count is exact
/// as a JS number (namespaces cap `maxCount` there too).
pub const MAX_RANGE: u64 = crate::protocol::MAX_COUNT;

/// `minRangeSize` when not given: a new generator's first request.
pub const DEFAULT_MIN_RANGE_SIZE: u64 = 1_000;

/// The longest time any option may name: 24 hours.
pub const MAX_TIME_MS: u64 = 86_400_000;

/// The longest a driver may wait for an ID (`deadlineMs`): 2^31 - 1 ms, the
/// longest JS timer.
pub const MAX_DEADLINE_MS: u64 = (1 << 31) - 1;

/// A request id is never sent again after this long since its first send:
/// 10 minutes, well below the authority's shortest grant retention (one
/// hour), so a retry can never reach an authority that forgot the grant and
/// be answered with a second range. The request is dropped (its range, if
/// committed, is a gap) and a new one is made.
pub const MAX_REQUEST_AGE_MS: u64 = 600_000;

/// A blocked engine (see [`crate::lease::Blocked`]) asks again after
/// `retry_max_ms`, doubling per blocked answer in a row up to this many
/// times `retry_max_ms` (default: 2 s, then 4, 8, 16 and 32 s), jittered in
/// the upper half, and never sooner than `Retry-After`.
pub const BLOCKED_BACKOFF_FACTOR: u64 = 16;

/// How an engine sizes and paces its requests. Build it with
/// [`LeaseConfig::new`] (defaults) or [`LeaseOptions::config`], adjust
/// fields, and let [`crate::Lease::new`] check it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseConfig {
    /// The namespace to issue from.
    pub namespace: Namespace,
    /// The smallest range to ask for, and the first request's size.
    pub min_range_size: u64,
    /// The largest range to ask for.
    pub max_range_size: u64,
    /// Once the rate is known, a range should last about this long.
    pub target_lifetime_ms: u64,
    /// Ask for the next range while this much time's worth of IDs is left.
    pub prefetch_lead_ms: u64,
    /// At most this many requests in flight (1 to [`MAX_OUTSTANDING`]).
    pub max_outstanding: usize,
    /// Send a request again, under the same request id, when an attempt got
    /// no answer within this long. The earlier attempt is not cancelled: a
    /// slow answer to it still installs.
    pub request_timeout_ms: u64,
    /// The first retry backoff after a failure; it doubles per attempt.
    pub retry_initial_ms: u64,
    /// The longest retry backoff.
    pub retry_max_ms: u64,
}

impl LeaseConfig {
    /// Defaults: ranges of 1,000 to 1,000,000 IDs sized to last 10 s,
    /// refilled 2 s ahead, two requests in flight, 2 s request timeout,
    /// retries backing off from 50 ms to 2 s.
    pub fn new(namespace: Namespace) -> LeaseConfig {
        LeaseConfig {
            namespace,
            min_range_size: DEFAULT_MIN_RANGE_SIZE,
            max_range_size: 1_000_000,
            target_lifetime_ms: 10_000,
            prefetch_lead_ms: 2_000,
            max_outstanding: 2,
            request_timeout_ms: 2_000,
            retry_initial_ms: 50,
            retry_max_ms: 2_000,
        }
    }

    /// Checks every limit; the error names the option at fault.
    pub fn check(&self) -> Result<(), ConfigError> {
        use OptionName as O;
        let within = |option, v: u64, min, max| {
            if v < min || v > max {
                Err(ConfigError::OutOfBounds { option, min, max })
            } else {
                Ok(())
            }
        };
        within(O::MinRangeSize, self.min_range_size, 1, MAX_RANGE)?;
        within(O::MaxRangeSize, self.max_range_size, 1, MAX_RANGE)?;
        if self.min_range_size > self.max_range_size {
            return Err(ConfigError::MinAboveMax);
        }
        within(O::TargetLifetimeMs, self.target_lifetime_ms, 1, MAX_TIME_MS)?;
        within(O::PrefetchLeadMs, self.prefetch_lead_ms, 0, MAX_TIME_MS)?;
        within(
            O::MaxOutstanding,
            self.max_outstanding as u64,
            1,
            MAX_OUTSTANDING as u64,
        )?;
        within(O::RequestTimeoutMs, self.request_timeout_ms, 1, MAX_TIME_MS)?;
        within(O::RetryInitialMs, self.retry_initial_ms, 1, MAX_TIME_MS)?;
        within(O::RetryMaxMs, self.retry_max_ms, 1, MAX_TIME_MS)?;
        if self.retry_initial_ms > self.retry_max_ms {
            return Err(ConfigError::RetryBounds);
        }
        Ok(())
    }
}

/// An option of [`LeaseOptions`], by the name users write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionName {
    /// `namespace`
    Namespace,
    /// `rangeSize`: a fixed size (both bounds, unless they are given).
    RangeSize,
    /// `minRangeSize`
    MinRangeSize,
    /// `maxRangeSize`
    MaxRangeSize,
    /// `targetLifetimeMs`
    TargetLifetimeMs,
    /// `prefetchLeadMs`
    PrefetchLeadMs,
    /// `maxOutstanding`
    MaxOutstanding,
    /// `requestTimeoutMs`
    RequestTimeoutMs,
    /// `retryInitialMs`
    RetryInitialMs,
    /// `retryMaxMs`
    RetryMaxMs,
    /// `deadlineMs`: how long a caller waits for an ID (the driver's).
    DeadlineMs,
}

impl OptionName {
    /// Every option.
    pub const ALL: &'static [OptionName] = &[
        OptionName::Namespace,
        OptionName::RangeSize,
        OptionName::MinRangeSize,
        OptionName::MaxRangeSize,
        OptionName::TargetLifetimeMs,
        OptionName::PrefetchLeadMs,
        OptionName::MaxOutstanding,
        OptionName::RequestTimeoutMs,
        OptionName::RetryInitialMs,
        OptionName::RetryMaxMs,
        OptionName::DeadlineMs,
    ];

    /// The name as users write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            OptionName::Namespace => "namespace",
            OptionName::RangeSize => "rangeSize",
            OptionName::MinRangeSize => "minRangeSize",
            OptionName::MaxRangeSize => "maxRangeSize",
            OptionName::TargetLifetimeMs => "targetLifetimeMs",
            OptionName::PrefetchLeadMs => "prefetchLeadMs",
            OptionName::MaxOutstanding => "maxOutstanding",
            OptionName::RequestTimeoutMs => "requestTimeoutMs",
            OptionName::RetryInitialMs => "retryInitialMs",
            OptionName::RetryMaxMs => "retryMaxMs",
            OptionName::DeadlineMs => "deadlineMs",
        }
    }

    /// The option called `name`, if there is one.
    pub fn parse(name: &str) -> Option<OptionName> {
        OptionName::ALL.iter().copied().find(|o| o.as_str() == name)
    }
}

/// Why options or a configuration are refused. Nothing was built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// No option has this name (shown cut to 40 bytes).
    Unknown(Text<40>),
    /// The option needs a number.
    NotANumber(OptionName),
    /// The option needs a whole number.
    NotWhole(OptionName),
    /// The option is outside its bounds (inclusive).
    OutOfBounds {
        /// The option.
        option: OptionName,
        /// Its smallest value.
        min: u64,
        /// Its largest value.
        max: u64,
    },
    /// `namespace` is missing.
    MissingNamespace,
    /// `namespace` is not a valid namespace name.
    BadNamespace(crate::names::NameError),
    /// `minRangeSize` is above `maxRangeSize`.
    MinAboveMax,
    /// `retryInitialMs` is above `retryMaxMs`.
    RetryBounds,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Unknown(name) => write!(f, "unknown option \"{name}\""),
            ConfigError::NotANumber(o) => write!(f, "{} must be a number", o.as_str()),
            ConfigError::NotWhole(o) => write!(f, "{} must be a whole number", o.as_str()),
            ConfigError::OutOfBounds { option, min, max } => {
                write!(f, "{} must be from {min} to {max}", option.as_str())
            }
            ConfigError::MissingNamespace => f.write_str("namespace is required"),
            ConfigError::BadNamespace(e) => write!(
                f,
                "namespace is not a valid name ({e}): use 1 to 63 of a-z, 0-9, '.', '_', '-', starting with a letter or digit"
            ),
            ConfigError::MinAboveMax => write!(
                f,
                "minRangeSize is above maxRangeSize (minRangeSize defaults to {DEFAULT_MIN_RANGE_SIZE}: lower it too, or set rangeSize for one fixed size)"
            ),
            ConfigError::RetryBounds => f.write_str("retryInitialMs is above retryMaxMs"),
        }
    }
}

impl core::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ConfigError::BadNamespace(e) => Some(e),
            _ => None,
        }
    }
}

/// An option's value as a driver hands it over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OptionValue<'a> {
    /// A number (JS numbers are doubles; whole numbers are checked here).
    Number(f64),
    /// A string.
    Text(&'a str),
    /// Anything else (`null`, an object, ...); refused.
    Other,
}

/// A generator's options as users write them, each optional but
/// `namespace`. [`LeaseOptions::set`] takes them one by name;
/// [`LeaseOptions::config`] checks them together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeaseOptions {
    namespace: Option<Namespace>,
    values: [Option<u64>; 10],
}

/// The configuration a driver runs with: the engine's, and how long its
/// callers wait for an ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    /// The engine's configuration.
    pub lease: LeaseConfig,
    /// How long a caller waits for an ID before the driver rejects it
    /// (default 5,000 ms).
    pub deadline_ms: u64,
}

impl LeaseOptions {
    /// Sets option `name` to `value`, or says why not.
    pub fn set(&mut self, name: &str, value: OptionValue<'_>) -> Result<(), ConfigError> {
        let option = OptionName::parse(name).ok_or(ConfigError::Unknown(Text::new(name)))?;
        if option == OptionName::Namespace {
            let OptionValue::Text(text) = value else {
                return Err(ConfigError::MissingNamespace);
            };
            self.namespace = Some(Namespace::new(text).map_err(ConfigError::BadNamespace)?);
            return Ok(());
        }
        let OptionValue::Number(n) = value else {
            return Err(ConfigError::NotANumber(option));
        };
        if !n.is_finite() {
            return Err(ConfigError::NotWhole(option));
        }
        let (min, max) = match option {
            OptionName::RangeSize | OptionName::MinRangeSize | OptionName::MaxRangeSize => {
                (1, MAX_RANGE)
            }
            OptionName::MaxOutstanding => (1, MAX_OUTSTANDING as u64),
            OptionName::PrefetchLeadMs => (0, MAX_TIME_MS),
            OptionName::DeadlineMs => (1, MAX_DEADLINE_MS),
            _ => (1, MAX_TIME_MS),
        };
        if n < min as f64 || n > max as f64 {
            return Err(ConfigError::OutOfBounds { option, min, max });
        }
        // Within bounds, truncation round-trips exactly only for whole
        // numbers (no_std has no `f64::fract`).
        if (n as u64) as f64 != n {
            return Err(ConfigError::NotWhole(option));
        }
        self.values[Self::slot(option)] = Some(n as u64);
        Ok(())
    }

    fn slot(option: OptionName) -> usize {
        // Namespace has no slot; the rest follow in declaration order.
        (option as usize).saturating_sub(1)
    }

    fn get(&self, option: OptionName) -> Option<u64> {
        self.values[Self::slot(option)]
    }

    /// The configuration these options describe, checked.
    ///
    /// `rangeSize` fixes the size: both bounds, unless `minRangeSize` or
    /// `maxRangeSize` are given too. Without it, an explicit
    /// `minRangeSize` above the default maximum raises the maximum with it.
    pub fn config(&self) -> Result<ClientConfig, ConfigError> {
        use OptionName as O;
        let namespace = self.namespace.ok_or(ConfigError::MissingNamespace)?;
        let mut c = LeaseConfig::new(namespace);
        if let Some(fixed) = self.get(O::RangeSize) {
            c.min_range_size = self.get(O::MinRangeSize).unwrap_or(fixed);
            c.max_range_size = self.get(O::MaxRangeSize).unwrap_or(fixed);
        } else {
            c.min_range_size = self.get(O::MinRangeSize).unwrap_or(c.min_range_size);
            c.max_range_size = self
                .get(O::MaxRangeSize)
                .unwrap_or(c.max_range_size.max(c.min_range_size));
        }
        let set = |field: &mut u64, option| {
            if let Some(v) = self.get(option) {
                *field = v;
            }
        };
        set(&mut c.target_lifetime_ms, O::TargetLifetimeMs);
        set(&mut c.prefetch_lead_ms, O::PrefetchLeadMs);
        set(&mut c.request_timeout_ms, O::RequestTimeoutMs);
        set(&mut c.retry_initial_ms, O::RetryInitialMs);
        set(&mut c.retry_max_ms, O::RetryMaxMs);
        if let Some(v) = self.get(O::MaxOutstanding) {
            c.max_outstanding = v as usize;
        }
        c.check()?;
        Ok(ClientConfig {
            lease: c,
            deadline_ms: self.get(O::DeadlineMs).unwrap_or(5_000),
        })
    }
}
