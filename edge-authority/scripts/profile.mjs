#!/usr/bin/env node
// Where a grant's time goes inside the runtime: the production build on
// bare workerd, started with the V8 inspector (`--inspector-addr`, a workerd
// command-line option: nothing in the build changes), one namespace driven
// by `--callers` concurrent generators taking grants back to back, under
// V8's sampling CPU profiler. Every request of the process (the front
// Worker and every Durable Object) runs on the one isolate profiled, so
// its samples divided by the grants served are the isolate's time per
// grant. Each sample is put in the first category, walking from the
// sampled function out to its callers, whose rule matches (CATEGORIES);
// the table prints µs per grant and the share, and the rate reached.
//
//   node edge-authority/scripts/profile.mjs [--callers 8] [--seconds 6]
//        [--mode grant|read|healthz] [--top N] [--save FILE.cpuprofile]
//
// `--top N` adds the N functions with the most inclusive time; `--save`
// keeps the profile for Chrome DevTools or speedscope. Needs
// edge-authority/build/ (`make build`). The sampler itself costs a little:
// compare rates within one run of this script, not with bench.mjs.
import { writeFileSync } from 'node:fs';
import { Authority } from '../../tests/authority/harness.mjs';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

const callers = Number(arg('callers', '8'));
const seconds = Number(arg('seconds', '6'));
const mode = arg('mode', 'grant');
const top = Number(arg('top', '0'));
const save = arg('save', '');
if (!(callers >= 1 && callers <= 256) || !(seconds > 0 && seconds <= 120)
  || !['grant', 'read', 'healthz'].includes(mode) || !(top >= 0)) {
  console.error('usage: profile.mjs [--callers 1..256] [--seconds S] [--mode grant|read|healthz] [--top N] [--save FILE]');
  process.exit(2);
}

/** [category, test on one stack frame's function name], first match wins
 * for each frame, frames tried from the sampled one outwards. */
const CATEGORIES = [
  ['SQLite statements (storage.sql.exec and reading rows)', (f) => f === 'exec' || /SqlCursorRawIterator|__wbg_exec_/.test(f)],
  ['SQLite transaction around the writes (transactionSync)', (f) => f === 'transactionSync'],
  ['the call to the object (stub.fetch), runtime side', (f) => /RawStub::fetch|__wbg_fetch_/.test(f)],
  ['request and response objects and bodies', (f) => /^(arrayBuffer|text|Response|Request|Headers)$|gen_Response|gen_Request|Headers|worker::response|worker::request|to_response|object_body/.test(f)],
  ['token verification', (f) => /front::authenticate|jsonwebtoken|hmac|sha2/.test(f)],
  ['JSON', (f) => /serde_json|serde_core|serde::/.test(f)],
  ['rangeid\'s own code, and the small JS calls it makes', (f) => /^<?rangeid_/.test(f)],
  ['promises, microtasks and wakers (async Rust over JS promises)', (f) => /queueMicrotask|js_sys::futures|JsFuture|raw_wake|Promise|^then$|into_fn_mut/.test(f)],
  ['the JS shim (worker-build, minified) and the runtime\'s entry', (f) => f === '(anonymous)' || f === 'WorkerEntrypoint' || /^[A-Za-z]{1,2}$/.test(f)],
  ['garbage collector', (f) => f === '(garbage collector)'],
  ['idle (the isolate waited: fsync, I/O, the load generator)', (f) => f === '(idle)'],
  ['runtime, unattributed ((program))', (f) => f === '(program)'],
];

const a = new Authority({ runtime: 'workerd', inspect: true });
try {
  await a.start();
  const ns = `profile-${process.pid}`;
  const admin = a.token('admin', ['*']);
  const gen = a.token('generator', [ns]);
  const created = await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns, max: '18446744073709551615', maxCount: 10000 } });
  if (created.status !== 201) throw new Error(`create: ${created.text}`);
  const request = (g, i) => (mode === 'grant'
    ? a.req('POST', '/v1/ranges', { token: gen, body: { namespace: ns, incarnation: `p${g}`, requestId: `r${i}`, count: 10000 } })
    : mode === 'read' ? a.req('GET', `/v1/namespaces/${ns}`, { token: admin }) : a.req('GET', '/healthz', {}));
  // Warm up: the object started, the fence raised, the JIT settled.
  await Promise.all(Array.from({ length: callers }, async (_, g) => {
    for (let i = 0; i < 40; i++) await request(g, `w${i}`);
  }));

  const ws = new WebSocket(`ws://127.0.0.1:${a.inspectorPort}/main`);
  await new Promise((ok, fail) => { ws.onopen = ok; ws.onerror = fail; });
  let id = 0;
  const waiting = new Map();
  ws.onmessage = (m) => {
    const d = JSON.parse(m.data);
    if (d.id && waiting.has(d.id)) {
      waiting.get(d.id)(d);
      waiting.delete(d.id);
    }
  };
  const send = (method, params = {}) => new Promise((ok) => {
    id += 1;
    waiting.set(id, ok);
    ws.send(JSON.stringify({ id, method, params }));
  });
  await send('Profiler.enable');
  await send('Profiler.setSamplingInterval', { interval: 100 });
  await send('Profiler.start');
  let served = 0;
  let failed = 0;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  await Promise.all(Array.from({ length: callers }, async (_, g) => {
    for (let i = 0; performance.now() < deadline; i++) {
      const r = await request(g, i);
      if (r.status < 300) served += 1;
      else failed += 1;
    }
  }));
  const elapsed = (performance.now() - t0) / 1000;
  const { profile } = (await send('Profiler.stop')).result;
  ws.close();
  if (save) writeFileSync(save, JSON.stringify(profile));

  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n) => (n.callFrame.functionName || '(anonymous)').replace(/::h[0-9a-f]{16}/g, '');
  const spent = new Map(CATEGORIES.map(([c]) => [c, 0]));
  spent.set('other', 0);
  const inclusive = new Map();
  let total = 0;
  profile.samples.forEach((sample, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    let category = null;
    const seen = new Set();
    for (let at = sample; at !== undefined; at = parent.get(at)) {
      const f = name(byId.get(at));
      if (!category) category = CATEGORIES.find(([, test]) => test(f))?.[0] ?? null;
      if (!seen.has(f)) {
        seen.add(f);
        inclusive.set(f, (inclusive.get(f) ?? 0) + dt);
      }
    }
    spent.set(category ?? 'other', spent.get(category ?? 'other') + dt);

  });

  const per = (us) => (served > 0 ? us / served : NaN);
  console.log(`bare workerd, production build, ${callers} callers, ${mode} for ${seconds}s under the V8 sampling profiler: ${(served / elapsed).toFixed(0)}/s (${failed} failed); the isolate's time per ${mode}: ${per(total).toFixed(0)} µs`);
  console.log('category                                                        µs per request  share');
  for (const [c, us] of [...spent].sort((x, y) => y[1] - x[1])) {
    if (us === 0) continue;
    console.log(`${c.padEnd(62)}  ${per(us).toFixed(0).padStart(14)}  ${((100 * us) / total).toFixed(1).padStart(4)}%`);
  }
  if (top > 0) {
    console.log(`\nthe ${top} functions with the most inclusive time (µs per request):`);
    [...inclusive].sort((x, y) => y[1] - x[1]).slice(0, top)
      .forEach(([f, us]) => console.log(`${per(us).toFixed(0).padStart(6)}  ${f.slice(0, 140)}`));
  }
} finally {
  await a.stop();
  a.cleanup();
}
