// The chaos run's checker: pure functions over what callers were given and
// what the authority's ledger says it granted. IDs are decimal strings on
// input and BigInt inside; ranges are half-open [start, end).

/** `[start, end)` pairs (strings or BigInts) as sorted BigInt pairs, merged
 * where they touch or overlap. */
export function union(ranges) {
  const sorted = ranges
    .map(([s, e]) => [BigInt(s), BigInt(e)])
    .filter(([s, e]) => e > s)
    .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const out = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) {
      if (e > last[1]) last[1] = e;
    } else {
      out.push([s, e]);
    }
  }
  return out;
}

/** How many IDs merged ranges hold. */
export function size(merged) {
  let n = 0n;
  for (const [s, e] of merged) n += e - s;
  return n;
}

/** How many IDs two merged range lists share. */
export function sharedSize(a, b) {
  let n = 0n;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = a[i][0] > b[j][0] ? a[i][0] : b[j][0];
    const hi = a[i][1] < b[j][1] ? a[i][1] : b[j][1];
    if (hi > lo) n += hi - lo;
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return n;
}

/** Up to `limit` places where ranges owned by different owners (or the
 * same owner twice, for `sameOwnerCounts`) overlap: {start, end, owners}. */
function overlaps(items, limit, sameOwnerCounts) {
  const sorted = items
    .map((x) => ({ s: BigInt(x.start), e: BigInt(x.end), owner: x.owner }))
    .sort((x, y) => (x.s < y.s ? -1 : x.s > y.s ? 1 : 0));
  const found = [];
  let reach = null;
  for (const x of sorted) {
    if (reach && x.s < reach.e && (sameOwnerCounts || reach.owner !== x.owner)) {
      const end = x.e < reach.e ? x.e : reach.e;
      found.push({ start: String(x.s), end: String(end), owners: [reach.owner, x.owner] });
      if (found.length >= limit) break;
    }
    if (!reach || x.e > reach.e) reach = x;
  }
  return found;
}

function groupBy(items, key) {
  const m = new Map();
  for (const x of items) {
    const k = key(x);
    if (!m.has(k)) m.set(k, []);
    m.get(k).push(x);
  }
  return m;
}

/**
 * Checks one run. `issued`: `{ns, incarnation, runs: [[start, end], ...]}`
 * per generator incarnation, every ID a caller was given, as runs of
 * consecutive IDs in the order issued. `ledger`: grant entries
 * `{ns, incarnation, start, end}` read from the authority (every read of
 * the run: an entry may appear more than once). `wire`: the grants the
 * authority acknowledged on the wire, same shape.
 *
 * Returns per-namespace and total figures: `duplicates` (IDs given to
 * callers more than once), `unaccounted` (IDs given to an incarnation
 * outside every range the ledger says was granted to it), `ledgerOverlap`
 * (IDs the ledger says were granted to more than one incarnation),
 * `wireMissing` (acknowledged grants the ledger never showed), `gap`
 * (granted IDs no caller was given), with examples of each failure.
 */
export function check({ issued, ledger, wire = [] }) {
  const namespaces = [...new Set([...issued, ...ledger, ...wire].map((x) => x.ns))].sort();
  const per = {};
  const total = {
    issued: 0n, duplicates: 0n, granted: 0n, ledgerOverlap: 0n, unaccounted: 0n,
    gap: 0n, wireGrants: 0, wireMissing: 0, incarnations: 0, runs: 0,
  };
  const examples = { duplicates: [], unaccounted: [], ledgerOverlap: [], wireMissing: [] };
  for (const ns of namespaces) {
    const mine = issued.filter((x) => x.ns === ns);
    const runs = mine.flatMap((x) => x.runs.map(([start, end]) => ({ start, end, owner: x.incarnation })));
    const issuedUnion = union(runs.map((r) => [r.start, r.end]));
    let issuedCount = 0n;
    for (const r of runs) issuedCount += BigInt(r.end) - BigInt(r.start);
    const duplicates = issuedCount - size(issuedUnion);
    if (duplicates > 0n) examples.duplicates.push(...overlaps(runs, 5, true).map((o) => ({ ns, ...o })));

    const grants = ledger.filter((x) => x.ns === ns);
    const byInc = groupBy(grants, (g) => g.incarnation);
    const grantedTo = new Map();
    let perIncTotal = 0n;
    for (const [inc, gs] of byInc) {
      const u = union(gs.map((g) => [g.start, g.end]));
      grantedTo.set(inc, u);
      perIncTotal += size(u);
    }
    const grantedUnion = union(grants.map((g) => [g.start, g.end]));
    const ledgerOverlap = perIncTotal - size(grantedUnion);
    if (ledgerOverlap > 0n) {
      const spans = [...grantedTo].flatMap(([inc, u]) => u.map(([s, e]) => ({ start: s, end: e, owner: inc })));
      examples.ledgerOverlap.push(...overlaps(spans, 5, false).map((o) => ({ ns, ...o })));
    }

    let unaccounted = 0n;
    for (const x of mine) {
      const u = union(x.runs);
      const covered = sharedSize(u, grantedTo.get(x.incarnation) ?? []);
      const outside = size(u) - covered;
      if (outside > 0n) {
        unaccounted += outside;
        if (examples.unaccounted.length < 5) {
          examples.unaccounted.push({ ns, incarnation: x.incarnation, ids: String(outside), firstRun: x.runs[0] });
        }
      }
    }

    const acked = wire.filter((x) => x.ns === ns);
    let wireMissing = 0;
    for (const g of acked) {
      const u = union([[g.start, g.end]]);
      if (sharedSize(u, grantedTo.get(g.incarnation) ?? []) !== size(u)) {
        wireMissing += 1;
        if (examples.wireMissing.length < 5) examples.wireMissing.push({ ns, ...g });
      }
    }

    const granted = size(grantedUnion);
    const gap = granted - sharedSize(grantedUnion, issuedUnion);
    per[ns] = {
      issued: issuedCount, duplicates, granted, ledgerOverlap, unaccounted, gap,
      wireGrants: acked.length, wireMissing, incarnations: mine.length, runs: runs.length,
    };
    for (const k of Object.keys(total)) total[k] += per[ns][k];
  }
  const ok = total.duplicates === 0n && total.unaccounted === 0n && total.ledgerOverlap === 0n && total.wireMissing === 0;
  return { ok, total, per, examples };
}
