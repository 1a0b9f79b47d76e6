//! The authority's settings from its environment, checked once: grant
//! retention, the idle check interval, the token audience. The allowed
//! origins are parsed with the CORS policy, in `response`; test-only
//! settings are in `test_switches`, compiled only into the test build.

/// The shortest grant retention accepted: one hour, well above the
/// client's longest retry of one request id (10 minutes), so a retry never
/// reaches an authority that forgot the grant.
pub const MIN_RETENTION_SECS: u64 = 3_600;

/// The default grant retention: 24 hours.
pub const DEFAULT_RETENTION_SECS: u64 = 86_400;

/// The longest grant retention accepted: ten years (longer would overflow
/// the alarm's millisecond arithmetic long before it meant anything).
pub const MAX_RETENTION_SECS: u64 = 10 * 365 * 86_400;

/// A whole number of seconds, 1 to [`MAX_RETENTION_SECS`], from the
/// variable `name`'s text `v`.
pub(crate) fn seconds(name: &str, v: &str) -> Result<u64, String> {
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|&s| s > 0 && s <= MAX_RETENTION_SECS)
        .ok_or_else(|| {
            format!(
                "{name} must be a whole number of seconds up to {MAX_RETENTION_SECS}, got {v:?}"
            )
        })
}

/// The grant retention from `RANGEID_GRANT_RETENTION_SECONDS`: 24 hours
/// when unset or empty, at least an hour.
pub fn grant_retention(configured: Option<&str>) -> Result<u64, String> {
    let Some(v) = configured.filter(|v| !v.trim().is_empty()) else {
        return Ok(DEFAULT_RETENTION_SECS);
    };
    let secs = seconds("RANGEID_GRANT_RETENTION_SECONDS", v)?;
    if secs < MIN_RETENTION_SECS {
        return Err(format!(
            "RANGEID_GRANT_RETENTION_SECONDS is {secs}; it must be at least {MIN_RETENTION_SECS} \
             (an hour), longer than any client retries a request"
        ));
    }
    Ok(secs)
}

/// How often an idle namespace object checks in by default: 10 minutes.
pub const DEFAULT_CHECK_SECS: u64 = 600;

/// The check-in interval's bounds, in seconds.
pub const CHECK_SECS: std::ops::RangeInclusive<u64> = 5..=86_400;

/// How often each namespace object checks in, idle or not, from
/// `RANGEID_CHECK_SECONDS` (default 10 minutes, 5 s to a day): it reads its
/// fence's witness (raising it back if it went back) and re-registers with
/// the registry. The interval bounds how long a restored registry misses an
/// idle namespace, and how long a restored witness goes unnoticed by an idle
/// one; each check is one alarm and one witness read.
pub fn check_interval(configured: Option<&str>) -> Result<u64, String> {
    let Some(v) = configured.filter(|v| !v.trim().is_empty()) else {
        return Ok(DEFAULT_CHECK_SECS);
    };
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|s| CHECK_SECS.contains(s))
        .ok_or_else(|| {
            format!(
                "RANGEID_CHECK_SECONDS must be a whole number of seconds from {} to {}, got {v:?}",
                CHECK_SECS.start(),
                CHECK_SECS.end()
            )
        })
}

/// The relay lease (docs/relays.md §4) from `RANGEID_RELAY_LEASE_MS`:
/// how long a relay may serve a range after it asked for it, and so how
/// long a freeze, a floor, an export or relays turned off may wait for a
/// relay it cannot reach. Default 10 s; 100 ms to 10 minutes, as core's
/// `RelayTerms` accepts. Every relay and the namespace objects must run
/// with the same value: a deploy that changes it restarts both, and a
/// restarted relay abandons what it held.
pub fn relay_lease_ms(configured: Option<&str>) -> Result<u64, String> {
    use rangeid_core::relay::{RelayTerms, MAX_RELAY_LEASE_MS, MIN_RELAY_LEASE_MS};
    let Some(v) = configured.filter(|v| !v.trim().is_empty()) else {
        return Ok(RelayTerms::DEFAULT.lease_ms());
    };
    v.trim()
        .parse::<u64>()
        .ok()
        .filter(|&ms| RelayTerms::new(ms).is_ok())
        .ok_or_else(|| {
            format!(
                "RANGEID_RELAY_LEASE_MS must be a whole number of milliseconds from \
                 {MIN_RELAY_LEASE_MS} to {MAX_RELAY_LEASE_MS}, got {v:?}"
            )
        })
}

/// The audience tokens must name, from `RANGEID_TOKEN_AUDIENCE` (none when
/// unset or empty).
pub fn audience(configured: Option<&str>) -> Option<String> {
    configured
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_is_at_least_an_hour() {
        assert_eq!(grant_retention(None), Ok(86_400));
        assert_eq!(grant_retention(Some(" ")), Ok(86_400));
        assert_eq!(grant_retention(Some("7200")), Ok(7_200));
        assert!(grant_retention(Some("1"))
            .unwrap_err()
            .contains("at least 3600"));
        assert!(grant_retention(Some("3599")).is_err());
        assert_eq!(
            grant_retention(Some(&MAX_RETENTION_SECS.to_string())),
            Ok(MAX_RETENTION_SECS)
        );
        for huge in ["315360001", "9223372036854775808", "18446744073709551615"] {
            assert!(grant_retention(Some(huge)).is_err(), "{huge}");
        }
        assert!(grant_retention(Some("-5")).is_err());
        assert!(grant_retention(Some("1d")).is_err());
        assert_eq!(audience(Some(" rangeid ")), Some("rangeid".into()));
        assert_eq!(audience(Some("")), None);
    }

    #[test]
    fn the_relay_lease_is_one_core_accepts() {
        assert_eq!(relay_lease_ms(None), Ok(10_000));
        assert_eq!(relay_lease_ms(Some(" ")), Ok(10_000));
        assert_eq!(relay_lease_ms(Some("100")), Ok(100));
        assert_eq!(relay_lease_ms(Some("600000")), Ok(600_000));
        for bad in ["99", "0", "600001", "-1", "1s", "1.5"] {
            assert!(relay_lease_ms(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_check_in_interval_is_bounded() {
        assert_eq!(check_interval(None), Ok(600));
        assert_eq!(check_interval(Some(" ")), Ok(600));
        assert_eq!(check_interval(Some("5")), Ok(5));
        assert_eq!(check_interval(Some("86400")), Ok(86_400));
        for bad in ["4", "0", "86401", "-1", "1m", "1.5"] {
            assert!(check_interval(Some(bad)).is_err(), "{bad}");
        }
    }
}
