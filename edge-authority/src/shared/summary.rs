//! The namespace summary answered by `GET /v1/namespaces/{ns}` and listings.
//!
//! ```json
//! {"namespace":"orders","first":"1","next":"11001","max":"9007199254740991",
//!  "remaining":"9007199254729991","maxCount":10000000,"state":"active",
//!  "rangesGranted":1,"idsGranted":"11000","createdAt":"2026-11-29T15:00:00.000Z",
//!  "lastGrantAt":"2026-11-29T15:01:00.000Z",
//!  "grantRate":{"lastMinute":{"ranges":1,"idsPerSecond":183.3},
//!               "lastHour":{"ranges":1,"idsPerSecond":3.05}},
//!  "exhaustion":{"seconds":2.9e12,"at":"..."},
//!  "fence":{"mark":"31001","skipped":"0","rollbacks":0,"witnessBehind":0},
//!  "refusals":{"exhausted":0,"frozen":0,"conflict":0,"rateLimited":0,"ledgerFull":0,"fenced":0},
//!  "limits":{"grantsPerSecond":5000,"ledgerRows":32000000,"subLedgerRows":8000000},
//!  "relays":"off",
//!  "ledger":{"rows":1,"bytes":57344,"topSubs":[{"sub":"svc-orders","rows":1}]}}
//! ```
//!
//! ID-valued fields are decimal strings; `maxCount` and `rangesGranted` are
//! integers. Rates come from the per-minute buckets: a window counts the
//! whole minutes that overlap it and divides by the time they cover (at
//! most the namespace's age), so they are approximate. The estimate divides
//! `remaining` by the last hour's rate and is `null` with no grant in the
//! hour.

use rangeid_core::wire::{DecBound, DecU64};
use serde::Serialize;

use rangeid_core::ledger::Limits;

use crate::api::RelaysSetting;
use crate::object::store::{Minute, NamespaceRow};
use crate::shared::refusals::Refusals;

/// A minute, in milliseconds.
pub const MINUTE_MS: i64 = rangeid_core::fence::MINUTE_MS;
const HOUR_MS: i64 = 3_600_000;

/// The rate over one window.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rate {
    /// Ranges granted in the window.
    pub ranges: i64,
    /// IDs granted per second over the window.
    pub ids_per_second: f64,
}

/// Grant rates over the last minute and hour.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantRate {
    /// The last minute (with the current one, up to two buckets).
    pub last_minute: Rate,
    /// The last hour.
    pub last_hour: Rate,
}

/// When the namespace runs out at the last hour's rate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exhaustion {
    /// Seconds from now.
    pub seconds: f64,
    /// The moment, RFC 3339 UTC (absent when past year 9999).
    pub at: Option<String>,
}

/// The restore fence as the namespace object holds it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fence {
    /// The mark the witness acknowledged: no grant ends above it.
    pub mark: DecBound,
    /// IDs starts skipped to reach the witness's mark, in all.
    pub skipped: DecBound,
    /// Times the witness was found above every mark this object recorded
    /// or asked for: its storage was rolled back (audited `fence_forward`).
    pub rollbacks: u64,
    /// Times the witness was found below this object's fence (restored or
    /// wiped) and raised back (audited `witness_behind`).
    pub witness_behind: u64,
}

/// The limits on what callers add (see [`rangeid_core::ledger`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LimitsJson {
    /// New grants per second one caller (token `sub`) may take.
    pub grants_per_second: u64,
    /// Rows the whole ledger may hold.
    pub ledger_rows: u64,
    /// Rows one caller may hold.
    pub sub_ledger_rows: u64,
}

impl From<Limits> for LimitsJson {
    fn from(l: Limits) -> LimitsJson {
        LimitsJson {
            grants_per_second: l.grants_per_second(),
            ledger_rows: l.ledger_rows(),
            sub_ledger_rows: l.sub_ledger_rows(),
        }
    }
}

/// One caller's share of the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SubRows {
    /// The token `sub` (`null` for grants stored before owners were kept).
    pub sub: Option<String>,
    /// Ledger rows it holds.
    pub rows: u64,
}

/// What the grant ledger holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerJson {
    /// Rows it holds: spans of grants, and relays' reported sub-grants.
    pub rows: u64,
    /// The bytes of the namespace object's whole storage, where the
    /// runtime says.
    pub bytes: Option<u64>,
    /// The callers holding the most rows, most first (at most 3).
    pub top_subs: Vec<SubRows>,
    /// What relays reported of their sub-grants, the latest reported
    /// first (at most 16; docs/relays.md §6).
    pub relays: Vec<RelayReports>,
}

/// What one relay's reports brought to the ledger.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RelayReports {
    /// The relay's `sub` on the ledger: `relay@REGION`.
    pub sub: String,
    /// Batches received.
    pub batches: u64,
    /// Sub-grants kept.
    pub kept: u64,
    /// Sub-grants not kept for lack of room in the ledger's budgets.
    pub dropped: u64,
    /// Sub-grants its instances dropped from their full report backlogs.
    pub backlog_dropped: u64,
    /// Sub-grants reported that lay in none of the relay's retained
    /// grants (a report that came after its grant was pruned, or a wrong
    /// one): not kept.
    pub unmatched: u64,
    /// When the latest batch arrived.
    pub last_at: String,
    /// The relay's incarnation at its latest batch.
    pub incarnation: String,
    /// IDs its live instances held at their latest reports, ready to hand
    /// out.
    pub held: DecU64,
    /// IDs its instances abandoned (expired, revoked, or arrived too
    /// late), and what each ended instance held at its last report (lost
    /// at its restart or eviction; an upper bound, as sub-grants it handed
    /// out after that report and never reported count too).
    pub abandoned: DecU64,
    /// Sub-grants its instances handed out, by their latest reports.
    pub sub_grants: u64,
    /// Its instances that reported within the retention (a restart, an
    /// eviction or a deploy starts a new one).
    pub instances: u64,
    /// Of those, the live ones: the latest to report, and any that
    /// reported within a relay lease (two at once: a split).
    pub live: u64,
    /// Generators' requests its instances refused, by code (a relay's
    /// refusals are not in the namespace's `refusals`, which count the
    /// namespace object's own).
    pub refused: RelayRefused,
}

/// What a relay refused generators, by the code it answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct RelayRefused {
    /// `namespace_frozen`.
    pub frozen: u64,
    /// `namespace_exhausted`.
    pub exhausted: u64,
    /// `request_conflict`.
    pub conflict: u64,
}

/// The summary of one namespace.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Its name.
    pub namespace: String,
    /// The first ID it ever grants.
    pub first: DecU64,
    /// The start of its next grant (up to 2^64).
    pub next: DecBound,
    /// The largest ID it may grant.
    pub max: DecU64,
    /// IDs left to grant.
    pub remaining: DecU64,
    /// The largest count one request may ask for.
    pub max_count: u64,
    /// `active` or `frozen`.
    pub state: &'static str,
    /// Ranges granted so far.
    pub ranges_granted: u64,
    /// IDs granted so far (floors excluded).
    pub ids_granted: DecBound,
    /// Creation time, RFC 3339 UTC.
    pub created_at: String,
    /// The last new grant's time, if any.
    pub last_grant_at: Option<String>,
    /// Recent grant rates.
    pub grant_rate: GrantRate,
    /// The estimated exhaustion at the last hour's rate, if it granted.
    pub exhaustion: Option<Exhaustion>,
    /// The restore fence.
    pub fence: Fence,
    /// Refusals this namespace's object decided, by kind, since it was
    /// created (never going back).
    pub refusals: Refusals,
    /// The limits on what callers add.
    pub limits: LimitsJson,
    /// Whether relays may take ranges for the namespace (docs/relays.md).
    pub relays: RelaysSetting,
    /// What the grant ledger holds.
    pub ledger: LedgerJson,
}

/// The rate over the `span` ms before `now`, from the minute buckets that
/// overlap it.
fn window(minutes: &[Minute], now: i64, span: i64, age: i64) -> Rate {
    let from = (now - span).div_euclid(MINUTE_MS);
    let (ranges, ids) = minutes
        .iter()
        .filter(|m| m.minute >= from)
        .fold((0, 0u128), |(r, i), m| (r + m.ranges, i + m.ids));
    // The buckets cover from the start of the first one to now, at most
    // the namespace's age and at least a second.
    let covered = (now - from * MINUTE_MS).min(age).max(1_000);
    Rate {
        ranges,
        ids_per_second: ids as f64 / (covered as f64 / 1_000.0),
    }
}

/// Builds the summary of `row` at `now` (ms) from its minute buckets of
/// the last hour, its refusal counts, its limits and its ledger; `relays`
/// is `off` (the object sets the stored setting).
pub fn summarize(
    row: &NamespaceRow,
    minutes: &[Minute],
    (refusals, limits, ledger): (Refusals, Limits, LedgerJson),
    now: i64,
) -> Summary {
    let s = &row.state;
    let c = s.config();
    let age = now - row.created_at;
    let grant_rate = GrantRate {
        last_minute: window(minutes, now, MINUTE_MS, age),
        last_hour: window(minutes, now, HOUR_MS, age),
    };
    let rate = grant_rate.last_hour.ids_per_second;
    let exhaustion = (rate > 0.0).then(|| {
        let seconds = s.remaining() as f64 / rate;
        let at_ms = now as f64 + seconds * 1_000.0;
        Exhaustion {
            seconds,
            at: (at_ms < 253_402_300_800_000.0).then(|| rfc3339(at_ms as i64)),
        }
    });
    Summary {
        namespace: s.name().as_str().to_owned(),
        first: DecU64(c.first()),
        next: DecBound(s.next()),
        max: DecU64(c.max()),
        remaining: DecU64(s.remaining()),
        max_count: c.max_count(),
        state: s.status().as_str(),
        ranges_granted: row.ranges_granted,
        ids_granted: DecBound(row.ids_granted),
        created_at: rfc3339(row.created_at),
        last_grant_at: row.last_grant_at.map(rfc3339),
        grant_rate,
        exhaustion,
        fence: Fence {
            mark: DecBound(s.fence()),
            skipped: DecBound(row.fence_skipped),
            rollbacks: row.fence_forwards,
            witness_behind: row.witness_behinds,
        },
        refusals,
        limits: limits.into(),
        relays: RelaysSetting::Off,
        ledger,
    }
}

/// Formats milliseconds since the Unix epoch as RFC 3339 UTC with
/// milliseconds, e.g. `2026-11-29T15:39:25.123Z`. Valid for years 1970
/// to 9999.
pub fn rfc3339(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1_000 % 60,
        rem % 1_000
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rangeid_core::authority::NamespaceConfig;
    use rangeid_core::Namespace;

    fn empty() -> LedgerJson {
        LedgerJson {
            rows: 0,
            bytes: None,
            top_subs: Vec::new(),
            relays: Vec::new(),
        }
    }

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(rfc3339(253_402_300_799_999), "9999-12-31T23:59:59.999Z");
    }

    #[test]
    fn summary_fields_and_rates() {
        let config = NamespaceConfig::new(Some(1), Some(1_000_000), Some(1000)).unwrap();
        let mut row = NamespaceRow::create(Namespace::new("orders").unwrap(), config, 0);
        // Now is 30 s into a minute: the last minute's window covers the
        // previous whole minute and this one, 90 s.
        let now = 2 * HOUR_MS + 30_000;
        row.last_grant_at = Some(now - 1);
        row.ranges_granted = 4;
        row.ids_granted = 3600;
        let at = |ms: i64| ms.div_euclid(MINUTE_MS);
        let minutes = [
            Minute {
                minute: at(now - 1_800_000),
                ranges: 2,
                ids: 900,
                largest: 450,
            },
            Minute {
                minute: at(now - 60_000),
                ranges: 1,
                ids: 900,
                largest: 900,
            },
            Minute {
                minute: at(now),
                ranges: 1,
                ids: 1_800,
                largest: 1_800,
            },
        ];
        let s = summarize(
            &row,
            &minutes,
            (Refusals::default(), Limits::DEFAULT, empty()),
            now,
        );
        assert_eq!(s.grant_rate.last_minute.ranges, 2);
        assert_eq!(s.grant_rate.last_minute.ids_per_second, 30.0);
        assert_eq!(s.grant_rate.last_hour.ranges, 4);
        assert_eq!(s.grant_rate.last_hour.ids_per_second, 3600.0 / 3630.0);
        let e = s.exhaustion.clone().unwrap();
        assert!((e.seconds - 1_000_000.0 * 3630.0 / 3600.0).abs() < 1e-6);
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["namespace"], "orders");
        assert_eq!(v["first"], "1");
        assert_eq!(v["next"], "1");
        assert_eq!(v["max"], "1000000");
        assert_eq!(v["remaining"], "1000000");
        assert_eq!(v["maxCount"], 1000);
        assert_eq!(v["state"], "active");
        assert_eq!(v["rangesGranted"], 4);
        assert_eq!(v["idsGranted"], "3600");
        assert_eq!(v["createdAt"], "1970-01-01T00:00:00.000Z");
        assert!(v["lastGrantAt"].is_string());
        assert_eq!(v["fence"]["mark"], "1");
        assert_eq!(v["fence"]["rollbacks"], 0);
        assert_eq!(v["limits"]["grantsPerSecond"], 5_000);
        assert_eq!(v["refusals"]["rateLimited"], 0);
        assert_eq!(
            v["ledger"],
            serde_json::json!({"rows": 0, "bytes": null, "topSubs": [], "relays": []})
        );
    }

    #[test]
    fn no_grants_means_no_estimate() {
        let config = NamespaceConfig::new(None, None, None).unwrap();
        let row = NamespaceRow::create(Namespace::new("idle").unwrap(), config, 5);
        let s = summarize(
            &row,
            &[],
            (Refusals::default(), Limits::DEFAULT, empty()),
            10,
        );
        assert_eq!(s.exhaustion, None);
        assert_eq!(s.last_grant_at, None);
        assert_eq!(s.grant_rate.last_hour.ids_per_second, 0.0);
        let v = serde_json::to_value(&s).unwrap();
        assert!(v["exhaustion"].is_null() && v["lastGrantAt"].is_null());
    }
}
