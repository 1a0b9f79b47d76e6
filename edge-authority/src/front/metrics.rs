//! `GET /v1/metrics`: the namespaces' summaries, as the registry holds
//! them (pushed by each object, at most a couple of seconds old), in the
//! Prometheus text exposition format 0.0.4. One scrape reads the registry,
//! never one object per namespace; counters come from stored totals, so a
//! scrape after an authority restart never goes back.
//!
//! IDs are printed as the exact decimal the summary holds; Prometheus reads
//! every sample as a float64, exact up to 2^53.

use std::fmt::Write;

use serde_json::Value;

use crate::shared::refusals::Counted;

/// The `Content-Type` of the answer.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One metric family: name, type and help, then its samples.
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    samples: String,
}

impl Family {
    fn new(name: &'static str, kind: &'static str, help: &'static str) -> Family {
        Family {
            name,
            kind,
            help,
            samples: String::new(),
        }
    }

    fn sample(&mut self, ns: &str, labels: &[(&str, &str)], value: &str) {
        let _ = write!(self.samples, "{}{{namespace=\"{}\"", self.name, escape(ns));
        for (k, v) in labels {
            let _ = write!(self.samples, ",{k}=\"{}\"", escape(v));
        }
        let _ = writeln!(self.samples, "}} {value}");
    }
}

/// A label value with `\`, `"` and newlines escaped as the format asks.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A JSON number or decimal string as sample text; `None` when absent or
/// not a finite number.
fn number(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            Some(s.clone())
        }
        Value::Number(n) => n
            .as_u64()
            .map(|u| u.to_string())
            .or_else(|| n.as_f64().filter(|f| f.is_finite()).map(|f| f.to_string())),
        _ => None,
    }
}

/// Renders the summaries (each the JSON of a namespace summary) as
/// Prometheus text. A summary without a name is skipped; a field it lacks
/// leaves that sample out.
pub fn render(summaries: &[Value]) -> String {
    let mut next = Family::new(
        "rangeid_namespace_next",
        "gauge",
        "The start of the namespace's next grant.",
    );
    let mut remaining = Family::new(
        "rangeid_namespace_remaining_ids",
        "gauge",
        "IDs left in the namespace.",
    );
    let mut ids = Family::new(
        "rangeid_namespace_ids_granted_total",
        "counter",
        "IDs granted in ranges since the namespace was created.",
    );
    let mut ranges = Family::new(
        "rangeid_namespace_ranges_granted_total",
        "counter",
        "Ranges granted since the namespace was created.",
    );
    let mut rate = Family::new(
        "rangeid_namespace_grant_rate_ids_per_second",
        "gauge",
        "IDs granted per second over the last minute or hour (window label).",
    );
    let mut frozen = Family::new(
        "rangeid_namespace_frozen",
        "gauge",
        "1 when the namespace is frozen (refuses new grants), else 0.",
    );
    let mut exhaustion = Family::new(
        "rangeid_namespace_exhaustion_seconds",
        "gauge",
        "Seconds until the namespace runs out at the last hour's rate (absent without grants).",
    );
    let mut refusals = Family::new(
        "rangeid_namespace_refusals_total",
        "counter",
        "Grant requests the namespace refused, by reason (exhausted, frozen, conflict, rate_limited, ledger_full, fenced).",
    );
    let mut ledger_rows = Family::new(
        "rangeid_namespace_ledger_rows",
        "gauge",
        "Rows the grant ledger holds (each a span of one or more grants).",
    );
    let mut ledger_budget = Family::new(
        "rangeid_namespace_ledger_budget_rows",
        "gauge",
        "Rows the grant ledger may hold (its ledgerRows limit).",
    );
    let mut storage = Family::new(
        "rangeid_namespace_storage_bytes",
        "gauge",
        "Bytes the namespace object's storage takes (absent where the runtime does not say).",
    );
    let mut skipped = Family::new(
        "rangeid_namespace_fence_skipped_ids_total",
        "counter",
        "IDs skipped by starts that moved up to the restore fence's mark.",
    );
    let mut rollbacks = Family::new(
        "rangeid_namespace_fence_rollbacks_total",
        "counter",
        "Times the fence's witness was found ahead of the object's storage (a restore of the object).",
    );
    let mut behind = Family::new(
        "rangeid_namespace_witness_behind_total",
        "counter",
        "Times the fence's witness was found below the object's fence (a restore of the witness) and raised back.",
    );
    for s in summaries {
        let Some(ns) = s["namespace"].as_str() else {
            continue;
        };
        let put = |family: &mut Family, labels: &[(&str, &str)], v: &Value| {
            if let Some(text) = number(v) {
                family.sample(ns, labels, &text);
            }
        };
        put(&mut next, &[], &s["next"]);
        put(&mut remaining, &[], &s["remaining"]);
        put(&mut ids, &[], &s["idsGranted"]);
        put(&mut ranges, &[], &s["rangesGranted"]);
        put(
            &mut rate,
            &[("window", "1m")],
            &s["grantRate"]["lastMinute"]["idsPerSecond"],
        );
        put(
            &mut rate,
            &[("window", "1h")],
            &s["grantRate"]["lastHour"]["idsPerSecond"],
        );
        let is_frozen = Value::from(u64::from(s["state"] == "frozen"));
        put(&mut frozen, &[], &is_frozen);
        put(&mut exhaustion, &[], &s["exhaustion"]["seconds"]);
        for kind in Counted::ALL {
            let reason = kind.as_str();
            put(
                &mut refusals,
                &[("reason", reason)],
                &s["refusals"][kind.field()],
            );
        }
        put(&mut skipped, &[], &s["fence"]["skipped"]);
        put(&mut rollbacks, &[], &s["fence"]["rollbacks"]);
        put(&mut ledger_rows, &[], &s["ledger"]["rows"]);
        put(&mut ledger_budget, &[], &s["limits"]["ledgerRows"]);
        put(&mut storage, &[], &s["ledger"]["bytes"]);
        put(&mut behind, &[], &s["fence"]["witnessBehind"]);
    }
    let mut out = String::new();
    for f in [
        next,
        remaining,
        ids,
        ranges,
        rate,
        frozen,
        exhaustion,
        refusals,
        skipped,
        rollbacks,
        behind,
        ledger_rows,
        ledger_budget,
        storage,
    ] {
        let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
        let _ = writeln!(out, "# TYPE {} {}", f.name, f.kind);
        out.push_str(&f.samples);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::store::NamespaceRow;
    use crate::shared::refusals::Refusals;
    use crate::shared::summary::{summarize, LedgerJson};
    use rangeid_core::authority::NamespaceConfig;
    use rangeid_core::ledger::Limits;
    use rangeid_core::Namespace;

    #[test]
    fn summaries_become_prometheus_text() {
        let config = NamespaceConfig::new(Some(1), Some(u64::MAX), Some(1000)).unwrap();
        let mut row = NamespaceRow::create(Namespace::new("orders").unwrap(), config, 0);
        row.ranges_granted = 7;
        row.ids_granted = u64::MAX.into();
        let mut counted = Refusals::default();
        counted.add(Counted::Frozen);
        counted.add_n(Counted::RateLimited, 3);
        let ledger = LedgerJson {
            rows: 12,
            bytes: Some(65_536),
            top_subs: Vec::new(),
        };
        let parts = (counted, Limits::DEFAULT, ledger);
        let orders = serde_json::to_value(summarize(&row, &[], parts, 1_000)).unwrap();
        let quiet = serde_json::json!({"namespace": "q\"uiet", "state": "frozen"});
        let text = render(&[orders, quiet, serde_json::json!({"no": "name"})]);
        assert!(text.contains("# TYPE rangeid_namespace_ids_granted_total counter\n"));
        assert!(text.contains(
            "rangeid_namespace_ids_granted_total{namespace=\"orders\"} 18446744073709551615\n"
        ));
        assert!(text.contains("rangeid_namespace_ranges_granted_total{namespace=\"orders\"} 7\n"));
        assert!(text.contains(
            "rangeid_namespace_refusals_total{namespace=\"orders\",reason=\"frozen\"} 1\n"
        ));
        assert!(text.contains(
            "rangeid_namespace_grant_rate_ids_per_second{namespace=\"orders\",window=\"1h\"} 0\n"
        ));
        assert!(text.contains("rangeid_namespace_frozen{namespace=\"q\\\"uiet\"} 1\n"));
        assert!(text.contains(
            "rangeid_namespace_refusals_total{namespace=\"orders\",reason=\"rate_limited\"} 3\n"
        ));
        assert!(text.contains("rangeid_namespace_ledger_rows{namespace=\"orders\"} 12\n"));
        assert!(
            text.contains("rangeid_namespace_ledger_budget_rows{namespace=\"orders\"} 32000000\n")
        );
        assert!(text.contains("rangeid_namespace_storage_bytes{namespace=\"orders\"} 65536\n"));
        assert!(
            !text.contains("rangeid_namespace_exhaustion_seconds{"),
            "no rate, no estimate"
        );
        assert_eq!(text.matches("# HELP").count(), 14);
        // Every sample line is `name{labels} value`.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (_, value) = line.rsplit_once(' ').unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }
}
