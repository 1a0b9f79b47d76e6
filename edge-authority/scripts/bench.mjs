#!/usr/bin/env node
// Benchmark: one namespace on the local authority (started here on a free
// loopback port with throw-away state) driven by 1, 8 and 32 concurrent
// generators, each taking grants back to back for a fixed time. Prints
// grants/s and p50/p99 grant latency, for each runtime asked for:
// `wrangler` (wrangler dev, as scripts/dev.sh runs it: a dev proxy in
// front of workerd) and `workerd` (the same workerd binary run directly).
// Each runtime runs twice: with the restore fence, and with a witness that
// marks the whole namespace at once (no fence round trips); the ratio is
// the fence's cost. The baseline's witness is a test switch, so it runs
// the test build (edge-authority/build-test, scripts/build.sh
// --test-switches), which differs from the production build only by the
// switches' code; the fenced runs use the production build.
//
//   node edge-authority/scripts/bench.mjs [--seconds 10] [--count 10000]
//        [--levels 1,8,32] [--runtime wrangler,workerd]
//
// Needs edge-authority/build/ and build-test/ (`make bench` builds both).
import { Authority } from '../../tests/authority/harness.mjs';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

const seconds = Number(arg('seconds', '10'));
const count = Number(arg('count', '10000'));
const levels = arg('levels', '1,8,32').split(',').map(Number);
const runtimes = arg('runtime', 'wrangler,workerd').split(',');
if (!(seconds > 0 && seconds <= 300) || !(count >= 1) || levels.some((l) => !(l >= 1 && l <= 256))
  || runtimes.some((r) => !['wrangler', 'workerd'].includes(r))) {
  console.error('usage: bench.mjs [--seconds 1..300] [--count N] [--levels 1,8,32] [--runtime wrangler,workerd]');
  process.exit(2);
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Drives one namespace on a fresh authority; returns per-level results. */
async function run(runtime, fenceOff) {
  const a = new Authority({ runtime, testBuild: fenceOff, vars: fenceOff ? { RANGEID_TEST_ONLY_FENCE_OFF: '1' } : {} });
  try {
    await a.start();
    const ns = `bench-${process.pid}`;
    const admin = a.token('admin', ['*']);
    const gen = a.token('generator', [ns]);
    const created = await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns, max: '18446744073709551615', maxCount: count } });
    if (created.status !== 201) throw new Error(`create: ${created.text}`);
    // Warm up the object.
    for (let i = 0; i < 50; i++) {
      await a.req('POST', '/v1/ranges', { token: gen, body: { namespace: ns, incarnation: 'warm', requestId: `r${i}`, count } });
    }
    const results = [];
    for (const level of levels) {
      const latencies = [];
      let errors = 0;
      const deadline = performance.now() + seconds * 1000;
      const t0 = performance.now();
      await Promise.all(Array.from({ length: level }, async (_, g) => {
        const incarnation = `bench-${level}-${g}`;
        for (let i = 0; performance.now() < deadline; i++) {
          const body = { namespace: ns, incarnation, requestId: `r${i}`, count };
          const t = performance.now();
          const r = await a.req('POST', '/v1/ranges', { token: gen, body });
          if (r.status === 200) latencies.push(performance.now() - t);
          else errors += 1;
        }
      }));
      const elapsed = (performance.now() - t0) / 1000;
      latencies.sort((x, y) => x - y);
      results.push({ level, grants: latencies.length, perSecond: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors });
    }
    const s = await a.req('GET', `/v1/namespaces/${ns}`, { token: admin });
    const audit = await a.req('GET', `/v1/namespaces/${ns}/audit`, { token: admin });
    return { results, next: s.body.next, ranges: s.body.rangesGranted, fence: s.body.fence, audit: audit.body.audit.length };
  } finally {
    await a.stop();
    a.cleanup();
  }
}

for (const runtime of runtimes) {
  // The same load with the restore fence, and with a witness that marks the
  // whole namespace at its first raise (test-only RANGEID_TEST_ONLY_FENCE_OFF):
  // the baseline without the fence's round trips, in the same run.
  const fenced = await run(runtime, false);
  const bare = await run(runtime, true);
  console.log(`\n${runtime}: one namespace, ${count} IDs per grant, ${seconds}s per level, node ${process.version}`);
  console.log('generators  fence grants/s  p50 ms  p99 ms  errors  no fence grants/s  p50 ms  p99 ms   ratio');
  fenced.results.forEach((f, i) => {
    const b = bare.results[i];
    console.log(
      `${String(f.level).padStart(10)}  ${f.perSecond.toFixed(0).padStart(14)}  ${f.p50.toFixed(2).padStart(6)}  ${f.p99.toFixed(2).padStart(6)}  ${String(f.errors).padStart(6)}  `
      + `${b.perSecond.toFixed(0).padStart(17)}  ${b.p50.toFixed(2).padStart(6)}  ${b.p99.toFixed(2).padStart(6)}  ${(f.perSecond / b.perSecond).toFixed(2).padStart(6)}x`,
    );
  });
  console.log(`with the fence: next=${fenced.next} rangesGranted=${fenced.ranges} fence mark=${fenced.fence.mark} skipped=${fenced.fence.skipped}`);
}
