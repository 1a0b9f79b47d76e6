//! `Options`: the generator options JS passes as JSON, checked strictly into
//! a core `LeaseConfig`.

use rangeid_core::lease::LeaseConfig;
use rangeid_core::Namespace;
use serde::Deserialize;

/// The engine's options as JSON; every field but `namespace` is optional
/// and unknown fields are refused.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct OptionsJson {
    namespace: String,
    min_range_size: Option<u64>,
    max_range_size: Option<u64>,
    range_size: Option<u64>,
    target_lifetime_ms: Option<u64>,
    prefetch_lead_ms: Option<u64>,
    max_outstanding: Option<usize>,
    request_timeout_ms: Option<u64>,
    retry_initial_ms: Option<u64>,
    retry_max_ms: Option<u64>,
}

/// Parses the options JSON into a lease configuration, or says why not (the
/// message names the offending field).
pub fn parse(json: &str) -> Result<LeaseConfig, String> {
    let o: OptionsJson = serde_json::from_str(json).map_err(|e| format!("bad options: {e}"))?;
    let namespace = Namespace::new(&o.namespace)
        .map_err(|e| format!("namespace {:?} is not a valid name: {e}", o.namespace))?;
    let mut c = LeaseConfig::new(namespace);
    if let Some(v) = o.range_size {
        // A fixed size: the first request and both bounds, unless the
        // bounds are given too.
        c.initial_count = v;
        c.min_count = o.min_range_size.unwrap_or(v);
        c.max_count = o.max_range_size.unwrap_or(v);
    } else {
        c.min_count = o.min_range_size.unwrap_or(c.min_count);
        c.max_count = o.max_range_size.unwrap_or(c.max_count.max(c.min_count));
        c.initial_count = c
            .initial_count
            .clamp(c.min_count, c.max_count.max(c.min_count));
    }
    c.target_lifetime_ms = o.target_lifetime_ms.unwrap_or(c.target_lifetime_ms);
    c.prefetch_lead_ms = o.prefetch_lead_ms.unwrap_or(c.prefetch_lead_ms);
    c.max_outstanding = o.max_outstanding.unwrap_or(c.max_outstanding);
    c.request_timeout_ms = o.request_timeout_ms.unwrap_or(c.request_timeout_ms);
    c.retry_initial_ms = o.retry_initial_ms.unwrap_or(c.retry_initial_ms);
    c.retry_max_ms = o.retry_max_ms.unwrap_or(c.retry_max_ms);
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_fixed_size() {
        let c = parse(r#"{"namespace":"orders"}"#).unwrap();
        assert_eq!(
            (c.min_count, c.initial_count, c.max_count),
            (1_000, 1_000, 1_000_000)
        );
        let c = parse(r#"{"namespace":"orders","rangeSize":500}"#).unwrap();
        assert_eq!((c.min_count, c.initial_count, c.max_count), (500, 500, 500));
        let c = parse(r#"{"namespace":"orders","rangeSize":500,"maxRangeSize":9000}"#).unwrap();
        assert_eq!(
            (c.min_count, c.initial_count, c.max_count),
            (500, 500, 9000)
        );
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        assert!(parse(r#"{"namespace":"Orders"}"#)
            .unwrap_err()
            .contains("namespace"));
        assert!(parse(r#"{"namespace":"orders","rangesize":5}"#)
            .unwrap_err()
            .contains("unknown field"));
        assert!(parse(r#"{"namespace":"orders","rangeSize":-5}"#).is_err());
        assert!(parse(r#"{"namespace":"orders","rangeSize":1.5}"#).is_err());
        assert!(parse(r#"{}"#).is_err());
    }
}
