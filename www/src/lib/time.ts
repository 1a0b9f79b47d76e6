// Durations and timestamps as an operator reads them.

export const THIRTY_DAYS = 30 * 86400;

const UNITS: [string, number][] = [["d", 86400], ["h", 3600], ["min", 60], ["s", 1]];

/** The largest unit and, when not zero, the next: "3 d 4 h", "12 min", "< 1 s". */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "never";
  if (seconds < 1) return "< 1 s";
  const years = seconds / (365.25 * 86400);
  if (years >= 1000) return "> 1,000 years";
  if (years >= 2) return `${Math.floor(years)} years`;
  const i = UNITS.findIndex(([, size]) => seconds >= size);
  const [name, size] = UNITS[i]!;
  const text = `${Math.floor(seconds / size)} ${name}`;
  const next = UNITS[i + 1];
  const rest = next ? Math.floor((seconds % size) / next[1]) : 0;
  return rest > 0 && next ? `${text} ${rest} ${next[0]}` : text;
}

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
