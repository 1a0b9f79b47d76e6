// Durations and timestamps as an operator reads them.

export const THIRTY_DAYS = 30 * 86400;

// Durations are formatted by the module the CLI uses too (one rule for both).
export { duration } from "../../../npm/bin/format.mjs";

const pad = (n: number) => String(n).padStart(2, "0");

/** Local "YYYY-MM-DD HH:MM:SS" of an RFC 3339 time (the raw value in a title). */
export function timestamp(rfc3339: string): string {
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Local "HH:MM:SS" of a Date. */
export function clock(d: Date): string {
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
