// User Timing marks that keep only the latest entry of each name, so a
// page left open does not accumulate them (scripts/bench.mjs reads them).

export function mark(name: string): void {
  performance.clearMarks(name);
  performance.mark(name);
}

export function measure(name: string, since: string): void {
  performance.clearMeasures(name);
  performance.measure(name, since);
}
