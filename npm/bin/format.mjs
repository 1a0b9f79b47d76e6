// Shares and durations as an operator reads them: the CLI (npm/bin) and the
// admin page (www/src/lib, which re-exports these) format them the same way
// because both use this one module.

/**
 * `part` of `whole` as a percentage with three decimals, rounded down so it
 * never overstates; "< 0.001 %" for a share that is small but not zero, and
 * "> 99.999 %" for one short of all. Exact (BigInt): IDs reach 2^64 - 1.
 * @param {bigint} part
 * @param {bigint} whole
 * @returns {string}
 */
export function percent(part, whole) {
  if (whole <= 0n || part <= 0n) return "0 %";
  if (part >= whole) return "100 %";
  const thousandths = (part * 100_000n) / whole;
  if (thousandths === 0n) return "< 0.001 %";
  if (thousandths === 99_999n && (part * 100_000n) % whole !== 0n) return "> 99.999 %";
  const units = thousandths / 1000n;
  const frac = (thousandths % 1000n).toString().padStart(3, "0");
  return `${units}.${frac} %`;
}

/** @type {[string, number][]} */
const UNITS = [["d", 86400], ["h", 3600], ["min", 60], ["s", 1]];

/**
 * A duration from seconds (a JS number: an estimate, never an ID): the
 * largest unit and, when not zero, the next ("3 d 4 h", "12 min", "< 1 s"),
 * whole years from two years on, "> 1,000 years" past that, and "never" for
 * an infinite or unknown span.
 * @param {number} seconds
 * @returns {string}
 */
export function duration(seconds) {
  if (!Number.isFinite(seconds)) return "never";
  if (seconds < 1) return "< 1 s";
  const years = seconds / (365.25 * 86400);
  if (years >= 1000) return "> 1,000 years";
  if (years >= 2) return `${Math.floor(years)} years`;
  const i = UNITS.findIndex(([, size]) => seconds >= size);
  const [name, size] = UNITS[i];
  const text = `${Math.floor(seconds / size)} ${name}`;
  const next = UNITS[i + 1];
  const rest = next ? Math.floor((seconds % size) / next[1]) : 0;
  return rest > 0 && next ? `${text} ${rest} ${next[0]}` : text;
}
