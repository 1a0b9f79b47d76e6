#!/usr/bin/env node
// Benchmark: one namespace on the local authority (started here on a free
// loopback port with throw-away state) driven by 1, 8 and 32 concurrent
// generators, each taking grants back to back for a fixed time. Prints
// grants/s and p50/p99 grant latency, for each runtime asked for:
// `wrangler` (wrangler dev, as scripts/dev.sh runs it: a dev proxy in
// front of workerd) and `workerd` (the same workerd binary run directly).
//
//   node edge-authority/scripts/bench.mjs [--seconds 10] [--count 10000]
//        [--levels 1,8,32] [--runtime wrangler,workerd]
//
// Needs edge-authority/build/ (scripts/build.sh).
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

for (const runtime of runtimes) {
const a = new Authority({ runtime });
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
  console.log(`\n${runtime}: one namespace, ${count} IDs per grant, ${seconds}s per level, node ${process.version}`);
  console.log('generators  grants  grants/s   p50 ms   p99 ms  errors');
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
    console.log(
      `${String(level).padStart(10)}  ${String(latencies.length).padStart(6)}  ${(latencies.length / elapsed).toFixed(0).padStart(8)}  `
      + `${percentile(latencies, 50).toFixed(2).padStart(7)}  ${percentile(latencies, 99).toFixed(2).padStart(7)}  ${String(errors).padStart(6)}`,
    );
  }
  const s = await a.req('GET', `/v1/namespaces/${ns}`, { token: admin });
  console.log(`namespace after: next=${s.body.next} rangesGranted=${s.body.rangesGranted}`);
} finally {
  await a.stop();
  a.cleanup();
}
}
