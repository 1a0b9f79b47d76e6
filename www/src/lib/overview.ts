// The overview's rows: derived once per summary (BigInt parsing, shares),
// reused while a namespace's summary is unchanged, then filtered and
// sorted without touching the DOM.
import type { Summary } from "../api/types";
import { type Capacity, capacity } from "./capacity";
import { THIRTY_DAYS } from "./time";

export interface Row {
  summary: Summary;
  /** The summary's JSON: equal signatures mean an unchanged row. */
  signature: string;
  capacity: Capacity;
  /** Seconds to exhaustion at the current rate; Infinity when idle. */
  exhaustionSeconds: number;
  soon: boolean;
}

export type SortKey = "name" | "state" | "used" | "remaining" | "exhaustion" | "rateMinute" | "rateHour" | "lastGrant";

export interface Filter {
  text: string;
  state: "all" | "active" | "frozen";
  soonOnly: boolean;
}

export interface Sort {
  key: SortKey;
  descending: boolean;
}

/** Rows for `summaries`, reusing `previous` rows whose summary is unchanged. */
export function toRows(summaries: Summary[], previous: Map<string, Row>): Map<string, Row> {
  const rows = new Map<string, Row>();
  for (const summary of summaries) {
    const signature = JSON.stringify(summary);
    const old = previous.get(summary.namespace);
    if (old && old.signature === signature) {
      rows.set(summary.namespace, old);
      continue;
    }
    const cap = capacity(summary);
    const exhaustionSeconds = cap.remaining === 0n ? 0 : (summary.exhaustion?.seconds ?? Infinity);
    rows.set(summary.namespace, {
      summary,
      signature,
      capacity: cap,
      exhaustionSeconds,
      soon: exhaustionSeconds < THIRTY_DAYS,
    });
  }
  return rows;
}

export function matches(row: Row, f: Filter): boolean {
  const s = row.summary;
  if (f.state !== "all" && s.state !== f.state) return false;
  if (f.soonOnly && !row.soon) return false;
  return f.text === "" || s.namespace.includes(f.text.trim().toLowerCase());
}

const cmp = <T,>(a: T, b: T) => (a < b ? -1 : a > b ? 1 : 0);

const compare: Record<SortKey, (a: Row, b: Row) => number> = {
  name: () => 0,
  state: (a, b) => cmp(a.summary.state, b.summary.state),
  // used/total compared exactly: ua * tb against ub * ta.
  used: (a, b) => cmp(a.capacity.used * b.capacity.total, b.capacity.used * a.capacity.total),
  remaining: (a, b) => cmp(a.capacity.remaining, b.capacity.remaining),
  exhaustion: (a, b) => cmp(a.exhaustionSeconds, b.exhaustionSeconds),
  rateMinute: (a, b) => cmp(a.summary.grantRate.lastMinute.idsPerSecond, b.summary.grantRate.lastMinute.idsPerSecond),
  rateHour: (a, b) => cmp(a.summary.grantRate.lastHour.idsPerSecond, b.summary.grantRate.lastHour.idsPerSecond),
  lastGrant: (a, b) => cmp(a.summary.lastGrantAt ?? "", b.summary.lastGrantAt ?? ""),
};

/** Filtered and sorted; ties (and the name key) fall back to the name. */
export function arrange(rows: Iterable<Row>, filter: Filter, sort: Sort): Row[] {
  const dir = sort.descending ? -1 : 1;
  const byKey = compare[sort.key];
  return [...rows]
    .filter((r) => matches(r, filter))
    .sort((a, b) => dir * (byKey(a, b) || cmp(a.summary.namespace, b.summary.namespace)));
}
