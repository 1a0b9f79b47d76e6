// The rates endpoint's sparse buckets as a dense series for the chart:
// one point per bucket from `from` to `to`, 0 where no grant was made.
import type { Rates } from "../api/types";

export interface Series {
  /** Bucket starts, Unix seconds. */
  times: number[];
  /** IDs granted in each bucket (a chart needs numbers; exact to 2^53). */
  ids: number[];
  totalIds: bigint;
  totalRanges: number;
}

export function denseSeries(rates: Rates): Series {
  const step = rates.bucketSeconds;
  const byTime = new Map<number, number>();
  let totalIds = 0n;
  let totalRanges = 0;
  for (const b of rates.buckets) {
    byTime.set(Math.floor(Date.parse(b.minute) / 1000), Number(b.ids));
    totalIds += BigInt(b.ids);
    totalRanges += b.ranges;
  }
  const bucketTimes = [...byTime.keys()];
  const start = Math.min(alignDown(Date.parse(rates.from) / 1000, step), ...bucketTimes);
  const end = Math.max(Date.parse(rates.to) / 1000, ...bucketTimes);
  const times: number[] = [];
  const ids: number[] = [];
  for (let t = start; t <= end; t += step) {
    times.push(t);
    ids.push(byTime.get(t) ?? 0);
  }
  return { times, ids, totalIds, totalRanges };
}

const alignDown = (seconds: number, step: number) => Math.floor(seconds / step) * step;
