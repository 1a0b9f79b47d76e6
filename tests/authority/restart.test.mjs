// Restart drills on the real local workerd: a graceful stop keeps every
// namespace and boundary; a SIGKILL of workerd under load loses no
// acknowledged grant, and nothing granted before the kill is granted again.
// Also: the retention alarm prunes old grants, and a replay after that gets
// a fresh range.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Authority, assertDisjoint, uniqueNs } from './harness.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const started = [];

after(async () => {
  for (const a of started) {
    await a.stop();
    a.cleanup();
  }
});

for (const runtime of ['wrangler', 'workerd']) test(`SIGKILL of workerd under load (${runtime}): no acknowledged range is lost or granted again`, async () => {
  const a = new Authority({ runtime });
  started.push(a);
  await a.start();
  const ns = uniqueNs('kill');
  const admin = a.token('admin', ['*']);
  const gen = a.token('generator', [ns]);
  const c = await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns, maxCount: 100000 } });
  assert.equal(c.status, 201);

  // Graceful stop and start first: the namespace and its boundary survive.
  const g0 = await a.req('POST', '/v1/ranges', { token: gen, body: { namespace: ns, incarnation: 'pre', requestId: 'r0', count: 10 } });
  assert.equal(g0.status, 200);
  await a.stop();
  await a.start();
  const s0 = await a.req('GET', `/v1/namespaces/${ns}`, { token: admin });
  // The restart skipped the rest of the fence's chunk (a gap, counted).
  assert.equal(BigInt(s0.body.next), 11n + BigInt(s0.body.fence.skipped), s0.text);
  assert.equal(s0.body.fence.mark, s0.body.next);

  // Load: 16 generators take grants until the kill.
  const acked = [];
  const inflight = new Map();
  let stop = false;
  const workers = Array.from({ length: 16 }, async (_, g) => {
    for (let i = 0; !stop; i++) {
      const body = { namespace: ns, incarnation: `load-${g}`, requestId: `r${i}`, count: 1 + ((g * 31 + i) % 500) };
      inflight.set(g, body);
      try {
        const r = await a.req('POST', '/v1/ranges', { token: gen, body });
        if (r.status === 200) {
          acked.push({ body, start: BigInt(r.body.start), end: BigInt(r.body.end) });
          inflight.delete(g);
        } else {
          return;
        }
      } catch {
        return; // the authority went away mid-request
      }
    }
  });
  // The kill comes once LOADED grants are acknowledged, with all 16 still
  // taking more: how long that takes is the machine's business (a loaded
  // 2-core machine under wrangler dev needs several seconds), what is
  // checked is the same.
  const LOADED = 40;
  const deadline = Date.now() + 120_000;
  let running = workers.length;
  for (const w of workers) w.finally(() => running--);
  while (acked.length < LOADED && Date.now() < deadline && running > 0) await sleep(20);
  assert.ok(acked.length >= LOADED, `load ran (${acked.length} grants acknowledged, ${running} generators left)`);
  assert.equal(running, 16, 'every generator still taking grants at the kill');
  assert.ok(a.workerdPids().length > 0, 'workerd is running');
  await a.kill();
  stop = true;
  await Promise.all(workers);

  // Start again on the same state.
  await a.start();
  // Every acknowledged grant was committed: its replay returns it.
  for (const x of acked) {
    const r = await a.req('POST', '/v1/ranges', { token: gen, body: x.body });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.replayed, true);
    assert.equal(BigInt(r.body.start), x.start);
  }
  // Requests in flight at the kill, retried with the same key, are either
  // replays of a committed grant or new ranges: never an overlap.
  const retried = [];
  for (const body of inflight.values()) {
    const r = await a.req('POST', '/v1/ranges', { token: gen, body });
    assert.equal(r.status, 200, r.text);
    retried.push({ body, start: BigInt(r.body.start), end: BigInt(r.body.end) });
  }
  // New incarnations after the restart get fresh ranges.
  const fresh = [];
  for (let i = 0; i < 20; i++) {
    const body = { namespace: ns, incarnation: 'after', requestId: `r${i}`, count: 100 };
    const r = await a.req('POST', '/v1/ranges', { token: gen, body });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.replayed, false);
    fresh.push({ body, start: BigInt(r.body.start), end: BigInt(r.body.end) });
  }
  const maxAcked = acked.reduce((m, x) => (x.end > m ? x.end : m), 0n);
  for (const f of fresh) assert.ok(f.start >= maxAcked, 'a new grant starts past everything acknowledged before the kill');
  const everything = [{ start: 1n, end: 11n }, ...acked, ...retried, ...fresh];
  assertDisjoint(everything);
  const s = await a.req('GET', `/v1/namespaces/${ns}`, { token: admin });
  assert.ok(BigInt(s.body.next) >= everything.reduce((m, x) => (x.end > m ? x.end : m), 0n));

  // The ledger itself: boundary and grant rows commit together, so the
  // retained grants tile [first, next) with no overlap, and the holes are
  // exactly what starts skipped to the fence's mark.
  const ledger = [];
  let before = '';
  for (;;) {
    const page = await a.req('GET', `/v1/namespaces/${ns}/grants?limit=1000${before}`, { token: admin });
    assert.equal(page.status, 200, page.text);
    for (const g of page.body.grants) ledger.push({ start: BigInt(g.start), end: BigInt(g.end) });
    if (!page.body.nextBefore) break;
    before = `&before=${page.body.nextBefore}`;
  }
  ledger.reverse();
  assert.equal(ledger[0].start, 1n);
  let holes = 0n;
  for (let i = 1; i < ledger.length; i++) {
    assert.ok(ledger[i].start >= ledger[i - 1].end, 'no overlap');
    holes += ledger[i].start - ledger[i - 1].end;
  }
  holes += BigInt(s.body.next) - ledger[ledger.length - 1].end;
  assert.equal(holes, BigInt(s.body.fence.skipped), 'every hole is a counted skip');
  assert.equal(ledger.length, s.body.rangesGranted);
});

// Grants share SQLite commits (edge-authority/src/object/driver/namespace.rs,
// a batch per commit): the output gate must still hold every reply until its
// commit is durable. workerd is SIGKILLed the moment a reply arrives, while
// the rest of its batch and the next are in flight, five times; after each
// restart the ledger holds every range acknowledged before the kill, and
// its replay answers it.
test('SIGKILL of workerd right after a reply (workerd): the ledger covers every acknowledged range', async () => {
  const a = new Authority({ runtime: 'workerd' });
  started.push(a);
  await a.start();
  const ns = uniqueNs('killreply');
  const admin = a.token('admin', ['*']);
  const gen = a.token('generator', [ns]);
  const c = await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns, maxCount: 100000 } });
  assert.equal(c.status, 201, c.text);
  const acked = [];
  for (let cycle = 0; cycle < 5; cycle++) {
    let killing = false;
    // Killed once the load is running: 16 replies into the cycle.
    let replies = 0;
    await Promise.all(Array.from({ length: 8 }, async (_, g) => {
      for (let i = 0; !killing; i++) {
        const body = { namespace: ns, incarnation: `k${cycle}-${g}`, requestId: `r${i}`, count: 1 + ((g * 37 + i) % 1000) };
        let r;
        try {
          r = await a.req('POST', '/v1/ranges', { token: gen, body });
        } catch {
          return; // workerd went away mid-request
        }
        if (r.status !== 200) return;
        // Acknowledged: it counts whether or not the kill comes next.
        acked.push({ body, start: BigInt(r.body.start), end: BigInt(r.body.end) });
        replies += 1;
        if (replies >= 16 && !killing) {
          killing = true;
          // SIGKILL now, before anything else runs here.
          await a.kill();
        }
      }
    }));
    assert.ok(killing, `cycle ${cycle}: the load ran until the kill`);
    await a.start();
  }
  assert.ok(acked.length >= 80, `load ran (${acked.length} grants acknowledged)`);
  const ledger = [];
  let before = '';
  for (;;) {
    const page = await a.req('GET', `/v1/namespaces/${ns}/grants?limit=1000${before}`, { token: admin });
    assert.equal(page.status, 200, page.text);
    for (const g of page.body.grants) ledger.push({ start: BigInt(g.start), end: BigInt(g.end) });
    if (!page.body.nextBefore) break;
    before = `&before=${page.body.nextBefore}`;
  }
  const missing = acked.filter((x) => !ledger.some((l) => l.start <= x.start && x.end <= l.end));
  assert.deepEqual(missing.map((x) => `${x.body.incarnation}/${x.body.requestId} [${x.start}, ${x.end})`), [],
    `acknowledged ranges missing from the ledger (of ${acked.length})`);
  assertDisjoint(ledger);
  for (const x of acked) {
    const r = await a.req('POST', '/v1/ranges', { token: gen, body: x.body });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.replayed, true, `${x.body.incarnation}/${x.body.requestId} replays`);
    assert.equal(BigInt(r.body.start), x.start);
  }
});

test('the retention alarm prunes old grants; a replay after it gets a fresh range', async () => {
  // A retention under an hour is a test switch: the test build.
  const a = new Authority({ retentionSeconds: 2, testBuild: true });
  started.push(a);
  await a.start();
  const ns = uniqueNs('prune');
  const admin = a.token('admin', ['*']);
  const gen = a.token('generator', [ns]);
  assert.equal((await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns } })).status, 201);
  const body = { namespace: ns, incarnation: 'A', requestId: 'r1', count: 5 };
  const g = await a.req('POST', '/v1/ranges', { token: gen, body });
  assert.equal(g.body.start, '1');
  assert.equal((await a.req('GET', `/v1/namespaces/${ns}/lookup?id=3`, { token: admin })).status, 200);
  let pruned = false;
  for (let i = 0; i < 60 && !pruned; i++) {
    await sleep(500);
    const r = await a.req('GET', `/v1/namespaces/${ns}/lookup?id=3`, { token: admin });
    pruned = r.status === 404 && r.body.error.code === 'grant_not_found';
  }
  assert.ok(pruned, 'the alarm pruned the grant');
  const again = await a.req('POST', '/v1/ranges', { token: gen, body });
  assert.equal(again.status, 200);
  assert.equal(again.body.replayed, false);
  assert.equal(again.body.start, '6', 'a fresh range, never the old one');
});
