// IDs per second, compactly: "0", "0.25", "12.3", "4.56 k", "1.2 M".

export function idsPerSecond(rate: number): string {
  if (rate === 0) return "0";
  if (rate < 0.01) return "< 0.01";
  const units: [string, number][] = [["G", 1e9], ["M", 1e6], ["k", 1e3]];
  for (const [name, size] of units) if (rate >= size) return `${trim(rate / size)} ${name}`;
  return trim(rate);
}

const trim = (n: number) => String(Number(n.toPrecision(3)));
