#!/usr/bin/env node
// Benchmark: one namespace on the local authority (started here on a free
// loopback port with throw-away state) driven by 1, 8 and 32 concurrent
// generators, each taking grants back to back for a fixed time. Prints
// grants/s and p50/p99 grant latency, for each runtime asked for:
// `wrangler` (wrangler dev, as scripts/dev.sh runs it: a dev proxy in
// front of workerd) and `workerd` (the same workerd binary run directly).
// Each runtime runs the production build with the restore fence. (The
// former "no fence" baseline, RANGEID_TEST_ONLY_FENCE_OFF, is left out: its
// witness answers above the mark asked, which the object takes as a
// rollback, so it measured 409 refusals.)
//
// Then the grant path on bare workerd (--path): the production build's
// grants at 1 and 8 callers as a ratio of its own /healthz and of an
// authenticated read that reaches the object, in the same run; and the
// per-stage breakdown, from the test build run once unchanged and once per
// variant (RANGEID_TEST_ONLY_BENCH, src/shared/test_switches.rs `Bench`) that
// skips one stage, or repeats it REPEATS more times where it cannot be
// left out, all started together and measured in interleaved rounds (the
// median of the rounds), so each stage's cost is a difference within one
// run. With PostgreSQL installed (Debian's postgresql package:
// tests/bench/postgres-peer.sh --install, never by `make test`), its peer
// (UPDATE ... RETURNING plus a ledger insert in one transaction,
// synchronous_commit on, pgbench with 1 and 8 clients) runs in the same
// run too.
//
//   node edge-authority/scripts/bench.mjs [--seconds 10] [--count 10000]
//        [--levels 1,8,32] [--runtime wrangler,workerd]
//        [--path only|no] [--rounds 5] [--round-seconds 2]
//
// Needs edge-authority/build/ and build-test/ (`make bench` builds both).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Authority } from '../../tests/authority/harness.mjs';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

const seconds = Number(arg('seconds', '10'));
const count = Number(arg('count', '10000'));
const levels = arg('levels', '1,8,32').split(',').map(Number);
const runtimes = arg('runtime', 'wrangler,workerd').split(',');
const path = arg('path', 'yes');
const rounds = Number(arg('rounds', '5'));
const roundSeconds = Number(arg('round-seconds', '2'));
if (!(seconds > 0 && seconds <= 300) || !(count >= 1) || levels.some((l) => !(l >= 1 && l <= 256))
  || runtimes.some((r) => !['wrangler', 'workerd'].includes(r)) || !['yes', 'only', 'no'].includes(path)
  || !(rounds >= 1 && rounds <= 50) || !(roundSeconds > 0 && roundSeconds <= 60)) {
  console.error('usage: bench.mjs [--seconds 1..300] [--count N] [--levels 1,8,32] [--runtime wrangler,workerd] [--path yes|only|no] [--rounds 1..50] [--round-seconds S]');
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

for (const runtime of path === 'only' ? [] : runtimes) {
  // No "no fence" baseline: with RANGEID_TEST_ONLY_FENCE_OFF the witness
  // answers a mark above what the object asked, which fence::observe takes
  // as a rollback, so its grants become 409 namespace_exhausted and the
  // column measured refusals. It is left out until that switch answers
  // what a fence-free baseline needs.
  const fenced = await run(runtime, false);
  console.log(`\n${runtime}: one namespace, ${count} IDs per grant, ${seconds}s per level, node ${process.version}`);
  console.log('generators  fence grants/s  p50 ms  p99 ms  errors');
  fenced.results.forEach((f) => {
    console.log(
      `${String(f.level).padStart(10)}  ${f.perSecond.toFixed(0).padStart(14)}  ${f.p50.toFixed(2).padStart(6)}  ${f.p99.toFixed(2).padStart(6)}  ${String(f.errors).padStart(6)}`,
    );
  });
  console.log(`with the fence: next=${fenced.next} rangesGranted=${fenced.ranges} fence mark=${fenced.fence.mark} skipped=${fenced.fence.skipped}`);
}

// ---- The grant path on bare workerd: ratio to /healthz, and per stage ----

/** How many more times a repeated stage runs (src/shared/test_switches.rs REPEATS). */
const REPEATS = 8;

/** The test build's variants: [name, what it changes, how its cost is read]. */
const VARIANTS = [
  ['unbatched', 'one commit per grant (grants do not share commits)', 'extra'],
  ['no-call', 'front -> object call and everything in the object', 'skip'],
  ['no-storage', 'SQLite reads, writes, commit, fence, after-grant', 'skip'],
  ['no-commit', 'the SQLite commit (fsync of the WAL)', 'skip'],
  ['no-after', 'after-grant work (fence refill check, alarm check)', 'skip'],
  ['token', 'token verification (HS256), one', 'repeat'],
  ['json', 'JSON: object request encode+decode, reply decode, one', 'repeat'],
  ['metrics', 'metrics counters (minute bucket upsert), one', 'repeat'],
];

/** One started authority with a namespace, tokens and a request maker. */
async function serving(options) {
  const a = new Authority({ runtime: 'workerd', ...options });
  try {
    return await prepared(a);
  } catch (e) {
    await a.stop();
    a.cleanup();
    throw e;
  }
}

async function prepared(a) {
  await a.start();
  const ns = `path-${process.pid}`;
  const admin = a.token('admin', ['*']);
  const gen = a.token('generator', [ns]);
  const created = await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns, max: '18446744073709551615', maxCount: count } });
  if (created.status !== 201) throw new Error(`create: ${created.text}`);
  let serial = 0;
  const kinds = {
    healthz: () => ['GET', '/healthz', {}],
    read: () => ['GET', `/v1/namespaces/${ns}`, { token: admin }],
    grant: (g) => ['POST', '/v1/ranges', { token: gen, body: { namespace: ns, incarnation: `p${g}`, requestId: `r${serial++}`, count } }],
  };
  for (let i = 0; i < 50; i++) await a.req(...kinds.grant(0));
  return { a, kinds };
}

/** CPU time (user + system, µs) workerd's processes of `a` have used. */
function cpuMicros(a) {
  const tick = 1e6 / 100; // USER_HZ
  return a.workerdPids().reduce((sum, pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return sum + (Number(f[11]) + Number(f[12])) * tick;
    } catch {
      return sum;
    }
  }, 0);
}

/** Requests/s of `kind` from `level` callers back to back for `secs`, and
 * workerd's CPU µs per request meanwhile. */
async function rate({ a, kinds }, kind, level, secs) {
  let ok = 0;
  let errors = 0;
  let failed;
  const cpu0 = cpuMicros(a);
  const deadline = performance.now() + secs * 1000;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: level }, async (_, g) => {
    while (performance.now() < deadline) {
      const r = await a.req(...kinds[kind](g));
      if (r.status === 200) ok += 1;
      else {
        errors += 1;
        failed = `${r.status} ${r.text}`;
      }
    }
  }));
  if (errors > 0) throw new Error(`${kind}: ${errors} requests failed, the last with ${failed}`);
  return { rate: ok / ((performance.now() - t0) / 1000), cpu: (cpuMicros(a) - cpu0) / ok };
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const fmt = (n) => Math.round(n).toLocaleString('en-US');

/** The PostgreSQL peer's rates at 1 and 8 clients, or why there are none. */
function postgresPeer() {
  const script = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'tests', 'bench', 'postgres-peer.sh');
  const r = spawnSync(script, ['--seconds', String(Math.max(5, rounds * roundSeconds))], { encoding: 'utf8' });
  if (r.status === 3) return { missing: r.stderr.trim() };
  if (r.status !== 0) throw new Error(`postgres-peer.sh failed:\n${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

async function grantPath() {
  const prod = await serving({});
  const variants = [];
  try {
    variants.push(['base', await serving({ testBuild: true })]);
    for (const [name] of VARIANTS) {
      console.error(`bench: starting the test build as ${name}`);
      variants.push([name, await serving({ testBuild: true, vars: { RANGEID_TEST_ONLY_BENCH: name } })]);
    }
    const samples = {};
    const add = (key, v) => (samples[key] ??= []).push(v);
    for (let r = 0; r < rounds; r++) {
      for (const level of [1, 8]) {
        for (const kind of ['healthz', 'read', 'grant']) add(`prod ${kind} ${level}`, await rate(prod, kind, level, roundSeconds));
        for (const [name, s] of variants) {
          try {
            add(`${name} ${level}`, await rate(s, 'grant', level, roundSeconds));
          } catch (e) {
            throw new Error(`variant ${name}: ${e.message}`);
          }
        }
      }
    }
    // Medians of the rates, and of workerd's CPU µs per request.
    const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v.map((x) => x.rate))]));
    const c = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v.map((x) => x.cpu))]));
    console.log(`\nbare workerd, production build: one namespace, ${count} IDs per grant, median of ${rounds} interleaved rounds of ${roundSeconds}s, node ${process.version}`);
    console.log('callers  /healthz/s  read/s  grants/s  grants vs /healthz  grants vs read  workerd CPU us per /healthz, read, grant');
    for (const level of [1, 8]) {
      const [h, rd, g] = ['healthz', 'read', 'grant'].map((k) => m[`prod ${k} ${level}`]);
      const cpu = ['healthz', 'read', 'grant'].map((k) => c[`prod ${k} ${level}`].toFixed(0)).join(', ');
      console.log(`${String(level).padStart(7)}  ${fmt(h).padStart(10)}  ${fmt(rd).padStart(6)}  ${fmt(g).padStart(8)}  ${(g / h).toFixed(2).padStart(17)}x  ${(g / rd).toFixed(2).padStart(13)}x  ${cpu}`);
    }
    console.log('\nper-stage breakdown (test build, same run): a stage\'s share of one grant at 8 callers, from each variant against the unchanged test build:');
    console.log('wall us = the runtime thread\'s time per grant (1e6 / grants/s); CPU us = workerd\'s CPU time per grant (blocking fsync waits are not CPU)');
    console.log(`unchanged test build: ${fmt(m['base 8'])} grants/s at 8 callers (${(1e6 / m['base 8']).toFixed(0)} wall us, ${c['base 8'].toFixed(0)} CPU us per grant), ${fmt(m['base 1'])}/s at 1`);
    console.log('stage                                                          wall us   CPU us   variant grants/s at 8, at 1');
    for (const [name, what, how] of VARIANTS) {
      const share = (base, v) => (how === 'skip' ? base - v : how === 'repeat' ? (v - base) / REPEATS : v - base);
      const wall = share(1e6 / m['base 8'], 1e6 / m[`${name} 8`]);
      const cpu = share(c['base 8'], c[`${name} 8`]);
      const label = how === 'extra' ? `${what} (added)` : what;
      console.log(`${label.padEnd(62)} ${wall.toFixed(0).padStart(7)}  ${cpu.toFixed(0).padStart(7)}   ${fmt(m[`${name} 8`])}, ${fmt(m[`${name} 1`])}`);
    }
    const pg = postgresPeer();
    if (pg.missing) console.log(`\nPostgreSQL peer: not measured (${pg.missing})`);
    else {
      console.log(`\nPostgreSQL ${pg.version} peer (UPDATE ... RETURNING + ledger INSERT, one transaction, synchronous_commit=${pg.synchronous_commit}, pgbench ${pg.seconds}s): `
        + `${fmt(pg.tps[1])}/s at 1 client, ${fmt(pg.tps[8])}/s at 8; grants vs PostgreSQL: ${(m['prod grant 1'] / pg.tps[1]).toFixed(2)}x at 1, ${(m['prod grant 8'] / pg.tps[8]).toFixed(2)}x at 8 (pgbench runs after the rounds above, not interleaved)`);
    }
  } finally {
    for (const s of [prod, ...variants.map(([, v]) => v)]) {
      await s.a.stop();
      s.a.cleanup();
    }
  }
}

if (path !== 'no') await grantPath();
