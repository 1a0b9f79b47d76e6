//! `GET /v1/metrics`: the namespaces' summaries, as the registry holds
//! them (pushed by each object, at most a couple of seconds old), in the
//! Prometheus text exposition format 0.0.4. One scrape reads the registry,
//! never one object per namespace; counters come from stored totals, so a
//! scrape after an authority restart never goes back.
//!
//! Rendered from typed views of the summaries ([`SummaryView`]), read with
//! serde. IDs are printed as the exact decimal the summary holds;
//! Prometheus reads every sample as a float64, exact up to 2^53.
//!
//! Written by hand rather than with `prometheus-client`: that crate writes
//! only the OpenMetrics 1.0 text (its content type, `# EOF`, counter
//! families named without `_total`), which would change what scrapers and
//! the drills read, and its gauges take no exact value above `u64` (`next`
//! reaches 2^64); what is left here is the family header, one sample line
//! and the label escaping.

use std::collections::HashMap;
use std::fmt::Write;

use serde::de::IgnoredAny;
use serde::Deserialize;

use crate::shared::refusals::Counted;

/// A sample's value as a summary holds it: an exact decimal (IDs, up to
/// 2^64, as a JSON string or integer) or a float. Anything else is read as
/// [`Number::Other`] and leaves its sample out, so one odd field never
/// fails a scrape.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Number {
    /// A JSON integer.
    Int(u64),
    /// A JSON number that is not a whole `u64`.
    Float(f64),
    /// A JSON string (a decimal, when it is one).
    Text(String),
    /// Anything else (`null`, an object...).
    Other(IgnoredAny),
}

impl Number {
    /// The sample text: the exact decimal, or a finite float; `None`
    /// otherwise.
    fn text(&self) -> Option<String> {
        match self {
            Number::Int(u) => Some(u.to_string()),
            Number::Float(f) => f.is_finite().then(|| f.to_string()),
            Number::Text(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                Some(s.clone())
            }
            _ => None,
        }
    }
}

/// One window's rate, as the metrics read it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RateView {
    /// IDs per second.
    pub ids_per_second: Option<Number>,
}

/// The grant rates, as the metrics read them.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantRateView {
    /// The last minute.
    pub last_minute: Option<RateView>,
    /// The last hour.
    pub last_hour: Option<RateView>,
}

/// The exhaustion estimate, as the metrics read it.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct ExhaustionView {
    /// Seconds from now.
    pub seconds: Option<Number>,
}

/// The fence, as the metrics read it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FenceView {
    /// IDs skipped by starts.
    pub skipped: Option<Number>,
    /// Rollbacks of the object seen.
    pub rollbacks: Option<Number>,
    /// Witnesses found behind and raised back.
    pub witness_behind: Option<Number>,
}

/// The ledger, as the metrics read it.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct LedgerView {
    /// Rows held.
    pub rows: Option<Number>,
    /// Storage bytes, where the runtime says.
    pub bytes: Option<Number>,
    /// What relays reported (absent before reports).
    pub relays: Option<Vec<RelayReportsView>>,
}

/// One relay's reports, as the metrics read them
/// ([`crate::shared::summary::RelayReports`]).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelayReportsView {
    /// `relay@REGION` (an entry without one is skipped).
    pub sub: Option<String>,
    /// IDs its live instances held at their latest reports.
    pub held: Option<Number>,
    /// IDs its instances abandoned, with what ended ones held.
    pub abandoned: Option<Number>,
    /// Sub-grants its instances handed out.
    pub sub_grants: Option<Number>,
    /// Sub-grants kept in the ledger.
    pub kept: Option<Number>,
    /// Sub-grants not kept for lack of room.
    pub dropped: Option<Number>,
    /// Sub-grants the relay's instances dropped from their backlogs.
    pub backlog_dropped: Option<Number>,
    /// Its live instances.
    pub live: Option<Number>,
    /// Generators' requests it refused, by code.
    pub refused: Option<RelayRefusedView>,
}

/// A relay's refusals, as the metrics read them.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct RelayRefusedView {
    /// `namespace_frozen`.
    pub frozen: Option<Number>,
    /// `namespace_exhausted`.
    pub exhausted: Option<Number>,
    /// `request_conflict`.
    pub conflict: Option<Number>,
}

/// The limits, as the metrics read them.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitsView {
    /// The ledger's row budget.
    pub ledger_rows: Option<Number>,
}

/// What the metrics read of one namespace summary
/// ([`crate::shared::summary::Summary`], as its object pushed it to the
/// registry). Every field is optional: a summary pushed by an older build
/// that lacks one leaves that sample out. A test checks that every field
/// here is found in the summary this build writes.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryView {
    /// The namespace (a summary without one is skipped).
    pub namespace: Option<String>,
    /// The start of its next grant.
    pub next: Option<Number>,
    /// IDs left.
    pub remaining: Option<Number>,
    /// IDs granted so far.
    pub ids_granted: Option<Number>,
    /// Ranges granted so far.
    pub ranges_granted: Option<Number>,
    /// `active` or `frozen`.
    pub state: Option<String>,
    /// Grant rates.
    pub grant_rate: Option<GrantRateView>,
    /// The exhaustion estimate.
    pub exhaustion: Option<ExhaustionView>,
    /// Refusals by kind ([`Counted::field`]).
    pub refusals: Option<HashMap<String, Number>>,
    /// The fence.
    pub fence: Option<FenceView>,
    /// The ledger.
    pub ledger: Option<LedgerView>,
    /// The limits.
    pub limits: Option<LimitsView>,
}

impl SummaryView {
    /// Reads a summary's JSON text.
    pub fn parse(text: &str) -> Result<SummaryView, serde_json::Error> {
        serde_json::from_str(text)
    }
}

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

/// Renders the summaries as Prometheus text. A summary without a name is
/// skipped; a field it lacks leaves that sample out.
pub fn render(summaries: &[SummaryView]) -> String {
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
    let mut relay_held = Family::new(
        "rangeid_relay_held_ids",
        "gauge",
        "IDs a relay's live instances held, ready to hand out, at their latest reports (relay label: relay@REGION).",
    );
    let mut relay_sub_grants = Family::new(
        "rangeid_relay_sub_grants_total",
        "counter",
        "Sub-grants the relay's instances handed out, by their latest reports (instances are kept for the retention).",
    );
    let mut relay_abandoned = Family::new(
        "rangeid_relay_abandoned_ids_total",
        "counter",
        "IDs the relay's instances abandoned (expired, revoked, late), and what each ended instance held at its last report (lost at its restart; an upper bound).",
    );
    let mut relay_kept = Family::new(
        "rangeid_relay_reported_sub_grants_total",
        "counter",
        "Sub-grants of the relay kept in the namespace's ledger from its reports.",
    );
    let mut relay_lost = Family::new(
        "rangeid_relay_report_lost_sub_grants_total",
        "counter",
        "Sub-grants of the relay reported but not kept for lack of room in the ledger's budgets.",
    );
    let mut relay_backlog = Family::new(
        "rangeid_relay_backlog_dropped_sub_grants_total",
        "counter",
        "Sub-grants the relay's instances dropped from their full report backlogs.",
    );
    let mut relay_refusals = Family::new(
        "rangeid_relay_refusals_total",
        "counter",
        "Generators' requests the relay's instances refused, by reason (frozen, exhausted, conflict); not in rangeid_namespace_refusals_total.",
    );
    let mut relay_live = Family::new(
        "rangeid_relay_live_instances",
        "gauge",
        "The relay's live instances: the latest to report and any that reported within a relay lease (2 or more: a split).",
    );
    for s in summaries {
        let Some(ns) = s.namespace.as_deref() else {
            continue;
        };
        let put = |family: &mut Family, labels: &[(&str, &str)], v: Option<&Number>| {
            if let Some(text) = v.and_then(Number::text) {
                family.sample(ns, labels, &text);
            }
        };
        put(&mut next, &[], s.next.as_ref());
        put(&mut remaining, &[], s.remaining.as_ref());
        put(&mut ids, &[], s.ids_granted.as_ref());
        put(&mut ranges, &[], s.ranges_granted.as_ref());
        let rate_of = |r: &Option<RateView>| r.as_ref().and_then(|r| r.ids_per_second.clone());
        let grant_rate = s.grant_rate.clone().unwrap_or_default();
        put(
            &mut rate,
            &[("window", "1m")],
            rate_of(&grant_rate.last_minute).as_ref(),
        );
        put(
            &mut rate,
            &[("window", "1h")],
            rate_of(&grant_rate.last_hour).as_ref(),
        );
        let is_frozen = Number::Int(u64::from(s.state.as_deref() == Some("frozen")));
        put(&mut frozen, &[], Some(&is_frozen));
        let seconds = s.exhaustion.as_ref().and_then(|e| e.seconds.as_ref());
        put(&mut exhaustion, &[], seconds);
        for kind in Counted::ALL {
            let count = s.refusals.as_ref().and_then(|r| r.get(kind.field()));
            put(&mut refusals, &[("reason", kind.as_str())], count);
        }
        let fence = s.fence.clone().unwrap_or_default();
        put(&mut skipped, &[], fence.skipped.as_ref());
        put(&mut rollbacks, &[], fence.rollbacks.as_ref());
        let ledger = s.ledger.clone().unwrap_or_default();
        put(&mut ledger_rows, &[], ledger.rows.as_ref());
        let budget = s.limits.as_ref().and_then(|l| l.ledger_rows.as_ref());
        put(&mut ledger_budget, &[], budget);
        put(&mut storage, &[], ledger.bytes.as_ref());
        put(&mut behind, &[], fence.witness_behind.as_ref());
        for r in ledger.relays.iter().flatten() {
            let Some(relay) = r.sub.as_deref() else {
                continue;
            };
            let labels = [("relay", relay)];
            put(&mut relay_held, &labels, r.held.as_ref());
            put(&mut relay_sub_grants, &labels, r.sub_grants.as_ref());
            put(&mut relay_abandoned, &labels, r.abandoned.as_ref());
            put(&mut relay_kept, &labels, r.kept.as_ref());
            put(&mut relay_lost, &labels, r.dropped.as_ref());
            put(&mut relay_backlog, &labels, r.backlog_dropped.as_ref());
            put(&mut relay_live, &labels, r.live.as_ref());
            let refused = r.refused.clone().unwrap_or_default();
            for (reason, n) in [
                ("frozen", refused.frozen.as_ref()),
                ("exhausted", refused.exhausted.as_ref()),
                ("conflict", refused.conflict.as_ref()),
            ] {
                put(
                    &mut relay_refusals,
                    &[("relay", relay), ("reason", reason)],
                    n,
                );
            }
        }
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
        relay_held,
        relay_sub_grants,
        relay_abandoned,
        relay_kept,
        relay_lost,
        relay_backlog,
        relay_live,
        relay_refusals,
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
    use crate::shared::summary::{summarize, LedgerJson, RelayReports};
    use rangeid_core::authority::NamespaceConfig;
    use rangeid_core::ledger::Limits;
    use rangeid_core::wire::DecU64;
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
            relays: Vec::new(),
        };
        let parts = (counted, Limits::DEFAULT, ledger);
        let orders = serde_json::to_string(&summarize(&row, &[], parts, 1_000)).unwrap();
        let quiet = r#"{"namespace": "q\"uiet", "state": "frozen", "next": null}"#;
        let views: Vec<SummaryView> = [orders.as_str(), quiet, r#"{"no": "name"}"#]
            .iter()
            .map(|t| SummaryView::parse(t).unwrap())
            .collect();
        let text = render(&views);
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
        assert_eq!(text.matches("# HELP").count(), 22);
        assert!(
            !text.contains("rangeid_namespace_next{namespace=\"q"),
            "a null is no sample"
        );
        // Every sample line is `name{labels} value`.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (_, value) = line.rsplit_once(' ').unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }

    /// Every field the metrics read is in the summary this build writes: a
    /// renamed summary field fails here, not silently in a scrape.
    #[test]
    fn the_view_reads_every_field_of_the_summary() {
        let config = NamespaceConfig::new(Some(1), Some(1_000_000), Some(1000)).unwrap();
        let row = NamespaceRow::create(Namespace::new("orders").unwrap(), config, 0);
        let minutes = [crate::object::store::Minute {
            minute: 0,
            ranges: 1,
            ids: 600,
            largest: 600,
        }];
        let ledger = LedgerJson {
            rows: 1,
            bytes: Some(1),
            top_subs: Vec::new(),
            relays: vec![RelayReports {
                sub: "relay@weur".into(),
                batches: 2,
                kept: 3,
                dropped: 4,
                backlog_dropped: 8,
                unmatched: 9,
                last_at: "2026-12-03T00:00:00.000Z".into(),
                incarnation: "a".repeat(32),
                held: DecU64(18_446_744_073_709_551_615),
                abandoned: DecU64(6),
                sub_grants: 7,
                instances: 3,
                live: 2,
                refused: crate::shared::summary::RelayRefused {
                    frozen: 11,
                    exhausted: 0,
                    conflict: 1,
                },
            }],
        };
        let parts = (Refusals::default(), Limits::DEFAULT, ledger);
        let text = serde_json::to_string(&summarize(&row, &minutes, parts, 30_000)).unwrap();
        let rendered = render(&[SummaryView::parse(&text).unwrap()]);
        for line in [
            "rangeid_relay_held_ids{namespace=\"orders\",relay=\"relay@weur\"} 18446744073709551615\n",
            "rangeid_relay_sub_grants_total{namespace=\"orders\",relay=\"relay@weur\"} 7\n",
            "rangeid_relay_abandoned_ids_total{namespace=\"orders\",relay=\"relay@weur\"} 6\n",
            "rangeid_relay_reported_sub_grants_total{namespace=\"orders\",relay=\"relay@weur\"} 3\n",
            "rangeid_relay_report_lost_sub_grants_total{namespace=\"orders\",relay=\"relay@weur\"} 4\n",
            "rangeid_relay_backlog_dropped_sub_grants_total{namespace=\"orders\",relay=\"relay@weur\"} 8\n",
            "rangeid_relay_live_instances{namespace=\"orders\",relay=\"relay@weur\"} 2\n",
            "rangeid_relay_refusals_total{namespace=\"orders\",relay=\"relay@weur\",reason=\"frozen\"} 11\n",
            "rangeid_relay_refusals_total{namespace=\"orders\",relay=\"relay@weur\",reason=\"conflict\"} 1\n",
        ] {
            assert!(rendered.contains(line), "{line} in {rendered}");
        }
        let v = SummaryView::parse(&text).unwrap();
        let rate = v.grant_rate.unwrap();
        let fence = v.fence.unwrap();
        let ledger = v.ledger.unwrap();
        let refusals = v.refusals.unwrap();
        for (field, n) in [
            ("next", v.next),
            ("remaining", v.remaining),
            ("idsGranted", v.ids_granted),
            ("rangesGranted", v.ranges_granted),
            ("lastMinute", rate.last_minute.unwrap().ids_per_second),
            ("lastHour", rate.last_hour.unwrap().ids_per_second),
            ("exhaustion", v.exhaustion.unwrap().seconds),
            ("skipped", fence.skipped),
            ("rollbacks", fence.rollbacks),
            ("witnessBehind", fence.witness_behind),
            ("rows", ledger.rows),
            ("bytes", ledger.bytes),
            ("ledgerRows", v.limits.unwrap().ledger_rows),
        ] {
            assert!(n.and_then(|n| n.text()).is_some(), "{field} in {text}");
        }
        assert_eq!(v.namespace.as_deref(), Some("orders"));
        assert_eq!(v.state.as_deref(), Some("active"));
        for kind in Counted::ALL {
            assert!(refusals.contains_key(kind.field()), "{}", kind.field());
        }
    }
}
