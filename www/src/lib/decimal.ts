// Exact arithmetic and display of decimal-string IDs and counts (BigInt).

export const MAX_SAFE = 9007199254740991n; // 2^53 - 1
export const MAX_U64 = 18446744073709551615n; // 2^64 - 1

const DIGITS = /^(0|[1-9][0-9]*)$/;

/** The value of a canonical decimal string, or null if it is not one. */
export function parseDecimal(text: string): bigint | null {
  const t = text.trim();
  return DIGITS.test(t) ? BigInt(t) : null;
}

/** Digits grouped by thousands: "9,007,199,254,740,991". */
export function grouped(value: bigint | string): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

// Shares are formatted by the module the CLI uses too (one rule for both).
export { percent } from "../../../npm/bin/format.mjs";

/** `part / whole` in [0, 1] for drawing; exact to one part in a million. */
export function fraction(part: bigint, whole: bigint): number {
  if (whole <= 0n || part <= 0n) return 0;
  if (part >= whole) return 1;
  return Number((part * 1_000_000n) / whole) / 1_000_000;
}
