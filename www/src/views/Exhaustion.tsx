// Time to exhaustion at the current rate, flagged when under 30 days.
import type { Summary } from "../api/types";
import { duration, THIRTY_DAYS, timestamp } from "../lib/time";

export function Exhaustion({ summary }: { summary: Summary }) {
  if (summary.remaining === "0") return <span class="soon">exhausted</span>;
  const e = summary.exhaustion;
  if (!e) return <span class="muted" title="No grants recently: no rate to extrapolate">idle</span>;
  const soon = e.seconds < THIRTY_DAYS;
  return (
    <span class={soon ? "soon" : undefined} title={e.at ? `at ${timestamp(e.at)}` : undefined}>
      {duration(e.seconds)}
      {soon && <span class="visually-hidden"> (under 30 days)</span>}
    </span>
  );
}
