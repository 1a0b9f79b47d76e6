// A namespace's figures: capacity, boundaries, totals, rates, fence.
import type { ComponentChildren } from "preact";
import type { Summary } from "../api/types";
import { capacity } from "../lib/capacity";
import { grouped } from "../lib/decimal";
import { idsPerSecond } from "../lib/rate";
import { CapacityBar } from "./CapacityBar";
import { Exhaustion } from "./Exhaustion";
import { Timestamp } from "./Timestamp";

export function SummaryFigures({ summary: s }: { summary: Summary }) {
  const figure = (label: string, value: ComponentChildren, testid?: string) => (
    <div class="figure">
      <dt>{label}</dt>
      <dd data-testid={testid}>{value}</dd>
    </div>
  );
  return (
    <section aria-labelledby="figures-h">
      <h2 id="figures-h">Capacity</h2>
      <CapacityBar capacity={capacity(s)} />
      <dl class="figures">
        {figure("Remaining", grouped(s.remaining), "remaining")}
        {figure("Runs out in", <Exhaustion summary={s} />)}
        {figure("Next ID", s.next, "next")}
        {figure("First ID", s.first, "first")}
        {figure("Max ID", s.max, "max")}
        {figure("Largest request", grouped(String(s.maxCount)))}
        {figure("IDs granted", grouped(s.idsGranted))}
        {figure("Ranges granted", grouped(String(s.rangesGranted)))}
        {figure("Last minute", `${idsPerSecond(s.grantRate.lastMinute.idsPerSecond)} IDs/s, ${s.grantRate.lastMinute.ranges} ranges`)}
        {figure("Last hour", `${idsPerSecond(s.grantRate.lastHour.idsPerSecond)} IDs/s, ${s.grantRate.lastHour.ranges} ranges`)}
        {figure("Last grant", <Timestamp at={s.lastGrantAt} />)}
        {figure("Created", <Timestamp at={s.createdAt} />)}
        {s.fence && figure("Fence mark", s.fence.mark)}
        {s.fence && figure("Fence skipped", grouped(s.fence.skipped))}
        {s.fence && figure("Fence rollbacks", grouped(String(s.fence.rollbacks)))}
        {s.fence && figure("Witness restores", grouped(String(s.fence.witnessBehind)))}
        {s.limits && figure("Grants/s per sub", grouped(String(s.limits.grantsPerSecond)), "limit-rate")}
        {s.ledger && s.limits && figure("Ledger rows", `${grouped(String(s.ledger.rows))} of ${grouped(String(s.limits.ledgerRows))} (${grouped(String(s.limits.subLedgerRows))} per sub)`, "ledger-rows")}
        {s.ledger && s.ledger.bytes !== null && figure("Storage", `${grouped(String(s.ledger.bytes))} bytes`)}
      </dl>
    </section>
  );
}
