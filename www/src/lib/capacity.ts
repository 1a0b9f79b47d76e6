// How much of a namespace's ID space [first, max] is used.
import type { Summary } from "../api/types";
import { fraction, percent } from "./decimal";

export interface Capacity {
  /** IDs in [first, max]. */
  total: bigint;
  /** IDs in [first, next): granted, skipped by a floor or abandoned. */
  used: bigint;
  remaining: bigint;
  /** "12.345 %", "< 0.001 %", ... (rounded down). */
  percent: string;
  /** For the bar's width. */
  fraction: number;
}

export function capacity(s: Pick<Summary, "first" | "next" | "max" | "remaining">): Capacity {
  const first = BigInt(s.first);
  const total = BigInt(s.max) - first + 1n;
  const used = BigInt(s.next) - first;
  return { total, used, remaining: BigInt(s.remaining), percent: percent(used, total), fraction: fraction(used, total) };
}
