// The authority's documents as text: tables, key-value pairs, a namespace's
// summary. Shares and durations come from format.mjs, as on the admin page.
import { duration, percent } from "./format.mjs";

/** Columns padded to their widest cell; the last column is not padded. */
export function table(header, rows) {
  const all = [header, ...rows].map((r) => r.map((c) => String(c ?? "")));
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ").trimEnd()).join("\n");
}

export function pairs(list) {
  const width = Math.max(...list.map(([k]) => k.length));
  return list.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n");
}

/** A rate for reading (3 significant digits). */
export function rate(n) {
  if (typeof n !== "number") return String(n);
  return n >= 100 || Number.isInteger(n) ? String(Math.round(n)) : String(Number(n.toPrecision(3)));
}

/** remaining / (max - first + 1) as the admin page shows shares (BigInt). */
export function percentLeft(summary) {
  const size = BigInt(summary.max) - BigInt(summary.first) + 1n;
  if (size <= 0n) return "-";
  return percent(BigInt(summary.remaining), size);
}

export function exhaustionText(summary) {
  const e = summary.exhaustion;
  if (summary.remaining === "0") return "exhausted";
  if (!e) return "no grants lately";
  const d = duration(e.seconds);
  return `${d === "never" || d.startsWith(">") ? d : `in ${d}`}${e.at ? ` (${e.at})` : ""}`;
}

export const SUMMARY_FIELDS = new Set(["namespace", "state", "first", "next", "max", "remaining", "maxCount", "rangesGranted", "idsGranted", "createdAt", "lastGrantAt", "grantRate", "exhaustion", "fence", "limits", "ledger"]);

/** A namespace's limits and ledger, on one line each (authorities before them have neither). */
export function limitsPairs(s) {
  const out = [];
  if (s.limits) out.push(["limits", `${s.limits.grantsPerSecond} grants/s per sub, ${s.limits.ledgerRows} ledger rows, ${s.limits.subLedgerRows} per sub`]);
  if (s.ledger) {
    const top = s.ledger.topSubs.map((t) => `${t.sub ?? "(before subs)"} ${t.rows}`).join(", ");
    out.push(["ledger", `${s.ledger.rows} rows${s.ledger.bytes === null ? "" : `, ${s.ledger.bytes} bytes of storage`}${top ? `; most: ${top}` : ""}`]);
    // What relays reported (authorities with relays' reports).
    for (const r of s.ledger.relays ?? []) {
      const lost = [[r.dropped, "no room"], [r.backlogDropped, "relay backlog"], [r.unmatched, "unmatched"]]
        .filter(([n]) => n > 0).map(([n, why]) => `${n} ${why}`).join(", ");
      const instances = r.live === undefined ? "" : `, ${r.live} of ${r.instances} instances live`;
      const refused = r.refused === undefined ? [] : [[r.refused.frozen, "frozen"], [r.refused.exhausted, "exhausted"], [r.refused.conflict, "conflict"]].filter(([n]) => n > 0);
      const refusedText = refused.length ? `, refused ${refused.map(([n, why]) => `${n} ${why}`).join(", ")}` : "";
      out.push([r.sub, `holds ${r.held} IDs, ${r.subGrants} sub-grants, abandoned ${r.abandoned} IDs${instances}${refusedText}; reports: ${r.kept} kept in ${r.batches} batches${lost ? `, not kept: ${lost}` : ""}; last ${r.lastAt}`]);
    }
  }
  return out;
}

export function summaryText(s) {
  const window = (w) => `${w.ranges} ranges, ${rate(w.idsPerSecond)} IDs/s`;
  return pairs([
    ["namespace", s.namespace],
    ["state", s.state],
    ["first", s.first],
    ["next", s.next],
    ["max", s.max],
    ["remaining", `${s.remaining} (${percentLeft(s)} left)`],
    ["maxCount", String(s.maxCount)],
    ["rangesGranted", String(s.rangesGranted)],
    ["idsGranted", s.idsGranted],
    ["createdAt", s.createdAt],
    ["lastGrantAt", s.lastGrantAt ?? "never"],
    ["last minute", window(s.grantRate.lastMinute)],
    ["last hour", window(s.grantRate.lastHour)],
    ["exhaustion", exhaustionText(s)],
    ["fence", `mark ${s.fence.mark}, skipped ${s.fence.skipped}, rollbacks ${s.fence.rollbacks}, witness behind ${s.fence.witnessBehind}`],
    ...limitsPairs(s),
    // Fields a newer authority adds are shown as they come.
    ...Object.entries(s)
      .filter(([k]) => !SUMMARY_FIELDS.has(k))
      .map(([k, v]) => [k, v !== null && typeof v === "object" ? Object.entries(v).map(([a, b]) => `${a} ${typeof b === "object" ? JSON.stringify(b) : b}`).join(", ") : String(v)]),
  ]);
}

export const compact = (v) => (v === null || v === undefined ? "-" : JSON.stringify(v));
