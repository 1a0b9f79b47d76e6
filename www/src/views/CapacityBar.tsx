// The share of [first, max] used: a bar to glance at, exact figures to read.
import { grouped } from "../lib/decimal";
import type { Capacity } from "../lib/capacity";

export function CapacityBar({ capacity }: { capacity: Capacity }) {
  // A used sliver stays visible however small; the text says how small.
  const width = capacity.used > 0n ? Math.max(capacity.fraction * 100, 1) : 0;
  return (
    <div class="capacity">
      <div class="bar" aria-hidden="true">
        <div class="fill" style={{ width: `${width}%` }} />
      </div>
      <span class="percent" data-testid="capacity-percent">{capacity.percent}</span>
      <span class="of">
        <span data-testid="capacity-used">{grouped(capacity.used)}</span> of{" "}
        <span data-testid="capacity-total">{grouped(capacity.total)}</span>
      </span>
    </div>
  );
}
