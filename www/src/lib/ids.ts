// A half-open range [start, end) of IDs as people read it: first to last.

export function idRange(start: string, end: string): string {
  const last = BigInt(end) - 1n;
  return last === BigInt(start) ? start : `${start} – ${last}`;
}
