#!/usr/bin/env node
// Benchmark of relays (docs/relays.md, issue 18 §4): on bare workerd with
// the production build (edge-authority/build/), one authority started here
// on a free loopback port with throw-away state and the default relay
// lease, two namespaces alike but for one setting:
//
// - `on`: relays on; generators spread over `?region=r0..rN-1`, so the
//   front Worker sends them to N relay objects, which answer from memory
//   with sub-ranges of what the namespace object granted each relay;
// - `off`: relays off; every generator request reaches the namespace
//   object, as before relays.
//
// Measured in the same run, in interleaved rounds (on, off and the two
// references below, in an order reversed from one round to the next; each
// figure is the median of the rounds). Each window runs its load
// `--warm-seconds` unmeasured, then `--round-seconds` measured: a relay
// sizes its ranges by its callers' rate over the last second, so after
// sitting idle through the other windows it starts again from its
// smallest ranges (10,000 IDs), which is not its steady state.
//
// 1. generator grants/s at each level of concurrent generators: each
//    generator a loop of back-to-back `POST /v1/ranges` with its own token
//    sub, its own incarnation and request ids r1, r2, ...
//    (docs/client-protocol.md), and the ratio relays/object;
// 2. namespace-object requests per 1,000 generator grants through the
//    relays at steady state: the relays' root grants (ledger entries under
//    subs `relay@*`, read by paging `GET /v1/namespaces/{ns}/grants` at
//    the start and the end of each measured part, the load going on), plus
//    report batches when the summary lists them (`ledger.relays[].batches`),
//    over the generator grants answered in between; and the same over the
//    whole run, ramps included;
// 3. p50 and p99 of a cold generator's first range (a new incarnation's
//    first request, one at a time, on and off alternating) with the relays
//    already warm.
//
// The references: `/healthz` (the front Worker alone) and an
// authenticated read of a namespace's summary (a token check and one call
// to an object: the least any request that reaches a relay does). On one
// workerd process every object shares one thread, so the read's rate is
// about the most a relayed grant can reach here.
//
// Speed goals (issue 18) are printed as met or not met and never fail the
// run. A wrong answer does: any answer but 200, a grant that is not the
// count asked, two grants of one namespace that share an ID, or a relayed
// range outside every range the namespace object granted its region's
// relay. Exits 1 then, after printing what it measured.
//
//   node edge-authority/scripts/bench-relays.mjs [--rounds 3]
//        [--round-seconds 3] [--warm-seconds 1.5] [--levels 8,64]
//        [--regions 4] [--cold 200] [--count 1000]
//
// Needs edge-authority/build/ (edge-authority/scripts/build.sh; `make
// bench` builds it).
import { Agent, request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { readFileSync } from 'node:fs';
import { Authority } from '../../tests/authority/harness.mjs';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

const rounds = Number(arg('rounds', '3'));
const roundSeconds = Number(arg('round-seconds', '3'));
const warmSeconds = Number(arg('warm-seconds', '1.5'));
const levels = arg('levels', '8,64').split(',').map(Number);
const regionCount = Number(arg('regions', '4'));
const cold = Number(arg('cold', '200'));
const count = Number(arg('count', '1000'));
if (!(rounds >= 1 && rounds <= 50) || !(roundSeconds > 0 && roundSeconds <= 60) || !(warmSeconds >= 0 && warmSeconds <= 60)
  || levels.some((l) => !(Number.isInteger(l) && l >= 1 && l <= 512))
  || !(Number.isInteger(regionCount) && regionCount >= 1 && regionCount <= 32)
  || !(Number.isInteger(cold) && cold >= 1 && cold <= 10_000)
  || !(Number.isInteger(count) && count >= 1 && count <= 1_000_000)) {
  console.error('usage: bench-relays.mjs [--rounds 1..50] [--round-seconds S] [--warm-seconds S] [--levels 8,64] [--regions 1..32] [--cold 1..10000] [--count 1..1000000]');
  process.exit(2);
}
const REGIONS = Array.from({ length: regionCount }, (_, i) => `r${i}`);
// The largest maxCount a namespace may have: a relay's own requests are
// bounded by it (docs/relays.md §5), so it must be well above `count`.
const MAX_COUNT = 2 ** 53 - 1;

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const percentile = (sorted, p) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);
const fmt = (n) => Math.round(n).toLocaleString('en-US');
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** Every wrong answer seen; the run fails if there is any. */
const wrong = [];
function fail(what) {
  if (wrong.length < 20) console.error(`bench-relays: WRONG: ${what}`);
  wrong.push(what);
}

const a = new Authority({ runtime: 'workerd' });
const loadAtStart = load();
await a.start();
// Plain node:http with kept-alive connections: lighter than fetch, so the
// load generator (on the same cores) takes less of the machine.
const agent = new Agent({ keepAlive: true, maxSockets: Math.max(...levels) + 8 });
const { port } = new URL(a.base);

/** One request (a POST of `payload` as JSON, or a GET); {status, body
 * (parsed, or the text), text}. */
function send(method, path, token, payload) {
  const data = payload === undefined ? '' : JSON.stringify(payload);
  const headers = { 'content-length': Buffer.byteLength(data) };
  if (token) headers.authorization = `Bearer ${token}`;
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let body = text;
        try { body = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, body, text });
      });
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error('no answer in 30 s')));
    req.on('error', reject);
    req.end(data);
  });
}

/** CPU µs used so far by this authority's workerd processes. */
function workerdCpu() {
  return a.workerdPids().reduce((sum, pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return sum + (Number(f[11]) + Number(f[12])) * 1e4; // USER_HZ = 100
    } catch {
      return sum;
    }
  }, 0);
}
const nodeCpu = () => { const u = process.cpuUsage(); return u.user + u.system; };

const admin = a.token('admin', ['*'], { sub: 'bench' });
const names = { on: `relays-on-${process.pid}`, off: `relays-off-${process.pid}` };
/** Every range each namespace answered, for the overlap check. */
const ranges = { on: [], off: [] };

let failed = false;
try {
  for (const mode of ['on', 'off']) {
    const r = await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: names[mode], max: '18446744073709551615', maxCount: MAX_COUNT } });
    if (r.status !== 201) throw new Error(`create ${names[mode]}: ${r.status} ${r.text}`);
  }
  const on = await a.req('POST', `/v1/namespaces/${names.on}/relays`, { token: admin, body: { relays: 'on', reason: 'benchmark' } });
  if (on.status !== 200) throw new Error(`relays on: ${on.status} ${on.text}`);

  let serial = 0;
  /** A generator: its own sub (so its own token) and incarnation. */
  function generator(mode, region) {
    serial += 1;
    const sub = `gen-${serial}`;
    return { mode, region, sub, token: a.token('generator', [names[mode]], { sub }), incarnation: randomBytes(16).toString('hex'), n: 0 };
  }

  /** The generator's next request; checks the answer and records the range. */
  async function grant(g) {
    g.n += 1;
    const requestId = `r${g.n}`;
    const path = g.mode === 'on' ? `/v1/ranges?region=${g.region}` : '/v1/ranges';
    let r;
    try {
      r = await send('POST', path, g.token, { namespace: names[g.mode], incarnation: g.incarnation, requestId, count });
    } catch (e) {
      fail(`${g.mode} ${g.sub} ${requestId}: ${e.message}`);
      return false;
    }
    if (r.status !== 200) {
      fail(`${g.mode} ${g.sub} ${requestId}: ${r.status} ${r.text.slice(0, 300)}`);
      return false;
    }
    const b = r.body;
    let start;
    let end;
    try {
      start = BigInt(b.start);
      end = BigInt(b.end);
    } catch {
      fail(`${g.mode} ${g.sub} ${requestId}: unreadable grant ${r.text.slice(0, 300)}`);
      return false;
    }
    if (end - start !== BigInt(count) || b.count !== count || b.namespace !== names[g.mode]
      || b.incarnation !== g.incarnation || b.requestId !== requestId || b.replayed !== false) {
      fail(`${g.mode} ${g.sub} ${requestId}: not the grant asked for: ${r.text.slice(0, 300)}`);
    }
    ranges[g.mode].push({ start, end, region: g.region, sub: g.sub, requestId });
    return true;
  }

  // The front learns that relays are on from the namespace object's answer
  // to a first grant (docs/relays.md, routing): that one goes to the object.
  const teach = generator('on', REGIONS[0]);
  await grant(teach);
  ranges.on.at(-1).direct = true;

  /** The runtime's own figures for the same load, to read the grants
   * against: `/healthz` (the front Worker alone) and an authenticated read
   * of the `off` namespace's summary (the token check and one call to an
   * object, the least a relayed grant does). */
  async function reference(kind) {
    const r = kind === 'healthz' ? await send('GET', '/healthz') : await send('GET', `/v1/namespaces/${names.off}`, admin);
    if (r.status !== 200) fail(`${kind}: ${r.status} ${r.text.slice(0, 300)}`);
    return r.status === 200;
  }

  /** `level` callers of `mode` (`on`, `off`: generators of that namespace;
   * `healthz`, `read`: the references), back to back for `warm` seconds
   * unmeasured and then `secs` measured. `at(phase)`, if given, runs at
   * the start (`from`) and the end (`to`) of the measured part, the load
   * going on. Returns, for the measured part: {grants (requests answered
   * in it), perSecond, latencies (of requests sent in it), CPU µs per
   * request of workerd and of node, and what `at` returned}. */
  async function drive(mode, level, secs, warm, at) {
    const latencies = [];
    const t0 = performance.now();
    const from = t0 + warm * 1000;
    const deadline = from + secs * 1000;
    let answered = 0;
    const marks = {};
    const mark = (phase, when) => new Promise((resolve) => {
      setTimeout(async () => {
        const m = { workerd: workerdCpu(), node: nodeCpu(), answered };
        m.at = at ? await at(phase) : null;
        marks[phase] = m;
        resolve();
      }, Math.max(0, when - performance.now()));
    });
    const marked = Promise.all([mark('from', from), mark('to', deadline)]);
    await Promise.all(Array.from({ length: level }, async (_, i) => {
      const g = mode === 'on' || mode === 'off' ? generator(mode, REGIONS[i % REGIONS.length]) : null;
      while (performance.now() < deadline) {
        const t = performance.now();
        if (!(await (g ? grant(g) : reference(mode)))) return;
        answered += 1;
        if (t >= from) latencies.push(performance.now() - t);
      }
    }));
    await marked;
    latencies.sort((x, y) => x - y);
    const n = marks.to.answered - marks.from.answered;
    return {
      grants: n,
      perSecond: n / secs,
      latencies,
      workerdCpu: (marks.to.workerd - marks.from.workerd) / n,
      nodeCpu: (marks.to.node - marks.from.node) / n,
      from: marks.from.at,
      to: marks.to.at,
    };
  }

  /** Every grant in the namespace's ledger (all pages). */
  async function ledger(ns) {
    const all = [];
    let before = '';
    for (;;) {
      const r = await a.req('GET', `/v1/namespaces/${ns}/grants?limit=1000${before}`, { token: admin });
      if (r.status !== 200) throw new Error(`grants of ${ns}: ${r.status} ${r.text}`);
      all.push(...r.body.grants);
      if (!r.body.nextBefore) return all;
      before = `&before=${r.body.nextBefore}`;
    }
  }

  /** The namespace object's requests from relays so far: root grants
   * (ledger), and report batches if the summary lists them (else null). */
  async function objectRequests() {
    const roots = (await ledger(names.on)).filter((g) => g.sub?.startsWith('relay@')).length;
    const s = await a.req('GET', `/v1/namespaces/${names.on}`, { token: admin });
    if (s.status !== 200) throw new Error(`summary: ${s.status} ${s.text}`);
    const relays = s.body?.ledger?.relays;
    const batches = Array.isArray(relays) && relays.every((r) => Number.isFinite(r?.batches))
      ? relays.reduce((sum, r) => sum + r.batches, 0) : null;
    return { roots, batches };
  }

  // Warm up: every relay holds ranges and has seen the load's rate, and
  // the namespace object of `off` has served a while too.
  const top = Math.max(...levels);
  for (const mode of ['on', 'off']) await drive(mode, top, 1, 0);
  const atStart = await objectRequests();
  const grantsAtStart = ranges.on.length;

  // The interleaved rounds.
  const samples = {};
  const add = (key, v) => (samples[key] ??= []).push(v);
  const windows = [];
  for (let round = 0; round < rounds; round++) {
    for (const level of levels) {
      for (const mode of round % 2 === 0 ? ['on', 'off', 'healthz', 'read'] : ['read', 'healthz', 'off', 'on']) {
        const res = await drive(mode, level, roundSeconds, warmSeconds, mode === 'on' ? objectRequests : undefined);
        add(`${mode} ${level}`, res);
        if (mode === 'on') {
          const { from, to } = res;
          windows.push({ level, grants: res.grants, roots: to.roots - from.roots, batches: to.batches === null || from.batches === null ? null : to.batches - from.batches });
        }
      }
    }
    console.error(`bench-relays: round ${round + 1} of ${rounds} done (load ${load()})`);
  }
  const atEnd = await objectRequests();
  const grantsAtEnd = ranges.on.length;

  // Cold generators' first range, the relays warm: one at a time, on and
  // off alternating, each a new sub and incarnation.
  // The relays warmed first: the rounds' last windows left them idle.
  for (const mode of ['on', 'off']) await drive(mode, top, 1, 0);
  const coldFrom = await objectRequests();
  const firsts = { on: [], off: [] };
  for (let i = 0; i < cold; i++) {
    for (const mode of i % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
      const g = generator(mode, REGIONS[i % REGIONS.length]);
      const t = performance.now();
      if (await grant(g)) firsts[mode].push(performance.now() - t);
    }
  }
  for (const mode of ['on', 'off']) firsts[mode].sort((x, y) => x - y);
  const coldRoots = (await objectRequests()).roots - coldFrom.roots;

  // ---- Correctness: no ID twice in a namespace; every relayed range
  // inside a range the namespace object granted its region's relay. ----
  let overlaps = 0;
  for (const mode of ['on', 'off']) {
    const sorted = [...ranges[mode]].sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0));
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i - 1].end > sorted[i].start) {
        overlaps += 1;
        fail(`${mode}: overlap: ${sorted[i - 1].sub} ${sorted[i - 1].requestId} [${sorted[i - 1].start}, ${sorted[i - 1].end}) and ${sorted[i].sub} ${sorted[i].requestId} [${sorted[i].start}, ${sorted[i].end})`);
      }
    }
  }
  const roots = new Map(REGIONS.map((r) => [`relay@${r}`, []]));
  for (const g of await ledger(names.on)) {
    if (roots.has(g.sub)) roots.get(g.sub).push({ start: BigInt(g.start), end: BigInt(g.end) });
  }
  for (const list of roots.values()) list.sort((x, y) => (x.start < y.start ? -1 : 1));
  let outside = 0;
  for (const g of ranges.on) {
    if (g.direct) continue;
    const list = roots.get(`relay@${g.region}`);
    // The last root range starting at or below g.start (binary search).
    let lo = 0;
    let hi = list.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid].start <= g.start) { at = mid; lo = mid + 1; } else hi = mid - 1;
    }
    if (at < 0 || list[at].end < g.end) {
      outside += 1;
      fail(`on: ${g.sub} ${g.requestId} [${g.start}, ${g.end}) lies in no range granted to relay@${g.region}`);
    }
  }

  // ---- The report ----
  const loadAtEnd = load();
  console.log(`\nrelays on bare workerd, production build: ${REGIONS.length} regions, ${count} IDs per generator request, relay lease the default (10 s), median of ${rounds} interleaved rounds of ${warmSeconds} s unmeasured + ${roundSeconds} s measured per window, node ${process.version}`);
  console.log(`load average (1, 5, 15 min): ${loadAtStart} at the start, ${loadAtEnd} at the end`);
  const pick = (mode, level, f) => median(samples[`${mode} ${level}`].map(f));
  /** The median over rounds of `on`'s figure over `other`'s in that round. */
  const ratio = (level, other, f = (x) => x.perSecond) => median(samples[`on ${level}`].map((x, i) => f(x) / f(samples[`${other} ${level}`][i])));
  const m = {};
  console.log('\ngenerators  object alone grants/s  through relays grants/s  relays/object   /healthz/s  read/s  relays/read');
  for (const level of levels) {
    const [off, on, h, rd] = ['off', 'on', 'healthz', 'read'].map((mode) => pick(mode, level, (x) => x.perSecond));
    m[level] = ratio(level, 'off');
    console.log(`${String(level).padStart(10)}  ${fmt(off).padStart(21)}  ${fmt(on).padStart(23)}  ${m[level].toFixed(2).padStart(12)}x  ${fmt(h).padStart(11)}  ${fmt(rd).padStart(6)}  ${ratio(level, 'read').toFixed(2).padStart(10)}x`);
  }
  console.log('(relays/object and relays/read: the median of the rounds\' ratios; /healthz is the front Worker alone, read an authenticated GET of a namespace summary: a token check and one call to an object, as a relayed grant has)');
  console.log('\ngenerators  p50 ms object, relays  p99 ms object, relays  workerd CPU us per request: /healthz, read, object grant, relay grant  node CPU us per grant: object, relays');
  for (const level of levels) {
    const p = (q) => ['off', 'on'].map((mode) => pick(mode, level, (x) => percentile(x.latencies, q)).toFixed(1)).join(', ');
    const cpu = (k, modes) => modes.map((mode) => fmt(pick(mode, level, (x) => x[k]))).join(', ');
    console.log(`${String(level).padStart(10)}  ${p(50).padStart(21)}  ${p(99).padStart(21)}  ${cpu('workerdCpu', ['healthz', 'read', 'off', 'on']).padStart(66)}  ${cpu('nodeCpu', ['off', 'on']).padStart(36)}`);
  }
  const goalLevel = levels.includes(64) ? 64 : top;
  const speedMet = m[goalLevel] >= 2;
  console.log(`goal: through relays at 2x the namespace object alone or better at ${goalLevel} generators: ${m[goalLevel].toFixed(2)}x, ${speedMet ? 'met' : 'not met'}`);

  console.log('\nnamespace-object requests per 1,000 generator grants through the relays (root grants in the ledger; root requests refused or retried are not in the ledger):');
  console.log('  at steady state (root grants committed during each window\'s measured part, over the generator grants answered in it):');
  const per1000 = (w) => (1000 * (w.roots + (w.batches ?? 0))) / w.grants;
  for (const level of levels) {
    const ws = windows.filter((w) => w.level === level);
    console.log(`    at ${level} generators: ${median(ws.map(per1000)).toFixed(2)} (median of ${ws.length} windows: ${ws.map((w) => `${w.roots}${w.batches === null ? '' : `+${w.batches}`} for ${fmt(w.grants)}`).join('; ')})`);
  }
  const runGrants = grantsAtEnd - grantsAtStart;
  const runRoots = atEnd.roots - atStart.roots;
  const runBatches = atEnd.batches === null || atStart.batches === null ? null : atEnd.batches - atStart.batches;
  const whole = (1000 * (runRoots + (runBatches ?? 0))) / runGrants;
  console.log(`  the whole run, ramps included (each window's first second after the relays sat idle through the others): ${whole.toFixed(2)} (${runRoots} root grants${runBatches === null ? '' : ` + ${runBatches} report batches`} for ${fmt(runGrants)} generator grants)`);
  console.log(`  report batches: ${runBatches === null ? 'not reported by this authority' : `${runBatches} in the measured run (ledger.relays[].batches)`}`);
  const steady = Math.max(...levels.map((level) => median(windows.filter((w) => w.level === level).map(per1000))));
  const ratioMet = steady <= 20;
  console.log(`goal: at most 20 per 1,000 at steady state, report batches included: ${steady.toFixed(2)} (the worse level), ${ratioMet ? 'met' : 'not met'}${runBatches === null ? ' (without report batches, which this authority does not report)' : ''}`);

  console.log(`\nfirst range of a cold generator (a new sub and incarnation, request r1), relays warm, ${cold} each, one at a time, alternating:`);
  console.log('                 p50 ms  p99 ms');
  for (const [label, mode] of [['object alone', 'off'], ['through relays', 'on']]) {
    console.log(`${label.padEnd(15)} ${percentile(firsts[mode], 50).toFixed(2).padStart(7)}  ${percentile(firsts[mode], 99).toFixed(2).padStart(6)}`);
  }
  console.log(`relays/object: p50 ${(percentile(firsts.on, 50) / percentile(firsts.off, 50)).toFixed(2)}x, p99 ${(percentile(firsts.on, 99) / percentile(firsts.off, 99)).toFixed(2)}x (lower is faster); the relays took ${coldRoots} root grants meanwhile (a cold request that finds its relay's range used up or run out waits for one)`);

  const relayRoots = [...roots.values()].reduce((s, l) => s + l.length, 0);
  console.log(`\ncorrectness: ${fmt(ranges.on.length)} ranges through relays and ${fmt(ranges.off.length)} from the object alone, no ID twice in either: ${overlaps === 0 ? 'yes' : `NO (${overlaps} overlaps)`}; every relayed range inside one of the ${relayRoots} ranges granted to its region's relay: ${outside === 0 ? 'yes' : 'NO'}; wrong answers: ${wrong.length}`);
} catch (e) {
  failed = true;
  console.error(`bench-relays: ${e.stack ?? e}`);
} finally {
  agent.destroy();
  await a.stop();
  a.cleanup();
}
if (failed || wrong.length > 0) {
  console.error(`bench-relays: FAILED: ${wrong.length} wrong answers${failed ? ', and the run stopped early' : ''}`);
  process.exit(1);
}
