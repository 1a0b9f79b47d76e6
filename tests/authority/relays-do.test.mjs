// The relay objects (docs/relays.md, issue 18) on bare workerd with the
// production build: generators' range requests routed by the front Worker
// to the relay of their namespace and region (named here with ?region=, so
// that one machine runs several relays), answered from memory with
// sub-ranges of what the namespace object granted each relay.
//
// - 4 relays of one namespace, 64 concurrent generators (plain HTTP grant
//   loops, retrying under the same request id), every ID recorded, no ID
//   twice, every sub-range inside a range the object granted a relay, and
//   a retry answered with the same range;
// - a freeze while relays hold ranges: acknowledged, then no relay hands
//   out anything (the namespace object grants nothing new while frozen,
//   so any new range would be one a relay held before the freeze);
// - relays turned off under load: the requests in flight and their
//   retries land on the namespace object, which grants them;
// - exhaustion at a small max through a relay: `namespace_exhausted` with
//   what can still be granted in one request, down to 0, no ID twice;
// - with the test build's RANGEID_TEST_ONLY_RELAY_FAULT: relays deaf to
//   revocations (a freeze waits out the last relay grant's lease, then no
//   relay hands out anything), and relays down (the front falls back to
//   the namespace object, which grants every request itself).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Authority, assertDisjoint, conforms, uniqueNs } from './harness.mjs';

const LEASE_MS = 3000;
const REGIONS = ['r0', 'r1', 'r2', 'r3'];
let a;
let doc;
let admin;

before(async () => {
  a = await new Authority({ runtime: 'workerd', vars: { RANGEID_RELAY_LEASE_MS: String(LEASE_MS) } }).start();
  admin = a.token('admin', ['*'], { sub: 'ops' });
  doc = (await a.req('GET', '/v1/openapi.json')).body;
});

after(async () => {
  await a?.stop();
  a?.cleanup();
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const startedAt = new Map();
/** Waits until `ns`'s object started more than a lease ago. */
const pastStartLease = (ns) => sleep(Math.max(0, startedAt.get(ns) + LEASE_MS + 300 - Date.now()));

async function create(ns, extra = {}) {
  const r = await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns, ...extra } });
  assert.equal(r.status, 201, r.text);
}

async function setRelays(ns, relays) {
  const r = await a.req('POST', `/v1/namespaces/${ns}/relays`, { token: admin, body: { relays, reason: 'test' } });
  assert.equal(r.status, 200, r.text);
  return r;
}

/** One grant attempt; {status, body, ...}. */
const grantOnce = (token, ns, region, incarnation, requestId, count) =>
  a.req('POST', `/v1/ranges?region=${region}`, { token, body: { namespace: ns, incarnation, requestId, count } });

/** Every grant of the namespace's ledger (all pages). */
async function ledger(ns) {
  const all = [];
  let before = '';
  for (;;) {
    const r = await a.req('GET', `/v1/namespaces/${ns}/grants?limit=1000${before}`, { token: admin });
    assert.equal(r.status, 200, r.text);
    all.push(...r.body.grants);
    if (!r.body.nextBefore) return all;
    before = `&before=${r.body.nextBefore}`;
  }
}

/**
 * A generator: its own sub and incarnation, a region, and a loop of range
 * requests r1, r2, ... each retried under its id until answered 200 (or a
 * final refusal). `stop()` says when to stop asking new ones. Every range
 * is recorded with the time its request was first sent and answered.
 */
function generator(ns, i, region, { stop, count = () => 1 + Math.floor(Math.random() * 200), record }) {
  const sub = `gen-${i}`;
  const token = a.token('generator', [ns], { sub });
  const incarnation = randomBytes(16).toString('hex');
  return (async () => {
    let n = 0;
    const refusals = {};
    while (!stop()) {
      n += 1;
      const id = `r${n}`;
      const c = count();
      const sentAt = Date.now();
      for (;;) {
        let r;
        const attemptAt = Date.now();
        try {
          r = await grantOnce(token, ns, region, incarnation, id, c);
        } catch (e) {
          r = { status: 0, body: null, text: String(e) };
        }
        if (r.status === 200) {
          record({ sub, region, id, sentAt, attemptAt, at: Date.now(), replayed: r.body.replayed, start: BigInt(r.body.start), end: BigInt(r.body.end), body: r.body });
          break;
        }
        const code = r.body?.error?.code ?? `http-${r.status}`;
        refusals[code] = (refusals[code] ?? 0) + 1;
        if (code === 'namespace_frozen' || code === 'namespace_exhausted') return { sub, n, refusals, final: r };
        assert.ok([0, 429, 503].includes(r.status), `${sub} ${id}: ${r.status} ${r.text}`);
        assert.ok(Date.now() - sentAt < 30_000, `${sub} ${id}: never granted (${JSON.stringify(refusals)})`);
        await sleep(25);
      }
    }
    return { sub, n, refusals };
  })();
}

/** A namespace with relays on, whose front has learned so (its first
 * grant went to the namespace object and said relays are on). */
async function relayedNamespace(prefix, extra) {
  const ns = uniqueNs(prefix);
  await create(ns, extra);
  // The namespace object's start: its acts wait a lease after it whatever
  // relays do (docs/relays.md §4), so the tests that time an act start
  // a lease after it.
  startedAt.set(ns, Date.now());
  await setRelays(ns, 'on');
  const warm = a.token('generator', [ns], { sub: 'warm-up' });
  const r = await grantOnce(warm, ns, 'r0', 'warm0', 'r1', 1);
  assert.equal(r.status, 200, r.text);
  return ns;
}

/** Ranges the namespace object granted to relay objects, by sub. */
function relayRoots(grants) {
  return grants.filter((g) => g.sub.startsWith('relay@')).map((g) => ({ sub: g.sub, start: BigInt(g.start), end: BigInt(g.end) }));
}

test('64 generators through 4 relays: no ID twice, each inside a relay grant, retries replay', async () => {
  const ns = await relayedNamespace('relays-do-load');
  const got = [];
  const until = Date.now() + 8000;
  const gens = [];
  for (let i = 0; i < 64; i++) {
    gens.push(generator(ns, i, REGIONS[i % REGIONS.length], { stop: () => Date.now() > until, record: (g) => got.push(g) }));
  }
  const results = await Promise.all(gens);
  const requests = results.reduce((s, r) => s + r.n, 0);
  const ids = got.reduce((s, g) => s + (g.end - g.start), 0n);
  console.log(`# ${got.length} ranges, ${ids} IDs for 64 generators through ${REGIONS.length} relays in 8 s; refusals retried: ${
    JSON.stringify(results.reduce((acc, r) => { for (const [k, v] of Object.entries(r.refusals)) acc[k] = (acc[k] ?? 0) + v; return acc; }, {}))}`);
  assert.ok(got.length >= 200, `only ${got.length} ranges of ${requests} requests`);
  assertDisjoint(got);
  for (const g of got.slice(0, 5)) conforms(doc, 'post', '/v1/ranges', { status: 200, headers: new Headers(), body: g.body, text: '' });

  // Each region's relay took ranges from the namespace object under its
  // own sub; every generator range lies inside one of them (but the
  // warm-up's, the one that taught the front that relays are on).
  const grants = await ledger(ns);
  const roots = relayRoots(grants);
  assert.deepEqual([...new Set(roots.map((r) => r.sub))].sort(), REGIONS.map((r) => `relay@${r}`));
  assert.deepEqual(grants.filter((g) => !g.sub.startsWith('relay@')).map((g) => g.sub), ['warm-up']);
  for (const g of got) {
    const inside = roots.find((r) => r.sub === `relay@${g.region}` && r.start <= g.start && g.end <= r.end);
    assert.ok(inside, `${g.sub} ${g.id} [${g.start}, ${g.end}) is in no grant to relay@${g.region}`);
  }
  console.log(`# the namespace object saw ${roots.length} relay grants for ${got.length} generator ranges`);

  // A retry of an answered request gets the same range, replayed.
  const token = a.token('generator', [ns], { sub: 'replayer' });
  const first = await grantOnce(token, ns, 'r1', 'replay1', 'r1', 17);
  const again = await grantOnce(token, ns, 'r1', 'replay1', 'r1', 17);
  assert.equal(first.status, 200, first.text);
  assert.deepEqual([again.status, again.body.start, again.body.end, again.body.replayed], [200, first.body.start, first.body.end, true]);
  // Another count under the same id: refused, as the object would.
  const conflict = await grantOnce(token, ns, 'r1', 'replay1', 'r1', 18);
  assert.equal(conflict.body.error.code, 'request_conflict', conflict.text);

  // Who got ID N (§3): the relays report their sub-grants in batches (at
  // least every 2 s), and a lookup then names the generator, with the
  // relay's grant that held it. Sampled: 40 ranges across the run.
  const sample = got.filter((_, i) => i % Math.max(1, Math.floor(got.length / 40)) === 0).slice(0, 40);
  const deadline = Date.now() + 15_000;
  for (const g of sample) {
    const id = g.start + (g.end - g.start) / 2n;
    for (;;) {
      const r = await a.req('GET', `/v1/namespaces/${ns}/lookup?id=${id}`, { token: admin });
      assert.equal(r.status, 200, r.text);
      conforms(doc, 'get', '/v1/namespaces/{ns}/lookup', r);
      assert.equal(r.body.relay?.sub, `relay@${g.region}`, r.text);
      if (r.body.relay.reported) {
        assert.deepEqual([r.body.sub, r.body.requestId, r.body.start, r.body.end], [g.sub, g.id, String(g.start), String(g.end)], r.text);
        break;
      }
      assert.ok(Date.now() < deadline, `ID ${id} (${g.sub} ${g.id}) still names the relay after 15 s: ${r.text}`);
      await sleep(250);
    }
  }
  // Every sub-grant answered (and the replayer's) is reported once.
  let reported;
  let kept;
  for (;;) {
    const r = await a.req('GET', `/v1/namespaces/${ns}`, { token: admin });
    conforms(doc, 'get', '/v1/namespaces/{ns}', r);
    reported = r.body.ledger.relays;
    kept = reported.reduce((s, x) => s + x.kept, 0);
    if (kept >= got.length + 1) break;
    assert.ok(Date.now() < deadline, `reports kept ${kept} of ${got.length + 1} sub-grants: ${r.text}`);
    await sleep(250);
  }
  assert.deepEqual(reported.map((r) => r.sub).sort(), REGIONS.map((r) => `relay@${r}`));
  assert.equal(kept, got.length + 1, 'no sub-grant kept twice');
  const batches = reported.reduce((s, r) => s + r.batches, 0);
  // The same, per relay, in /v1/metrics (from the registry: the object
  // pushes its summary within a couple of seconds).
  for (;;) {
    const text = (await a.req('GET', '/v1/metrics', { token: admin })).text;
    const keptOf = (region) => Number(text.match(new RegExp(`^rangeid_relay_reported_sub_grants_total\\{namespace="${ns}",relay="relay@${region}"\\} (\\d+)$`, 'm'))?.[1] ?? -1);
    const sum = REGIONS.reduce((s, r) => s + Math.max(0, keptOf(r)), 0);
    if (sum === kept && REGIONS.every((r) => keptOf(r) > 0)) {
      assert.match(text, new RegExp(`^rangeid_relay_held_ids\\{namespace="${ns}",relay="relay@r0"\\} \\d+$`, 'm'));
      break;
    }
    assert.ok(Date.now() < deadline + 10_000, `metrics show ${sum} of ${kept} reported sub-grants`);
    await sleep(500);
  }
  console.log(`# ${sample.length} sampled lookups name their generator; reports: ${kept} sub-grants kept in ${batches} batches`);
});

/**
 * 16 generators on a new relayed namespace until every relay holds
 * ranges, then a freeze a start-lease later. Checks that once it was
 * acknowledged no relay handed out anything: every generator ended on
 * `namespace_frozen`, no new range answered an attempt sent after the
 * acknowledgement (a replay of one handed out before is no new range),
 * new generators in every region are refused. Returns {ns, t0, frozenAt}.
 */
async function freezeUnderRelayLoad(prefix) {
  const ns = await relayedNamespace(prefix);
  const got = [];
  const gens = [];
  for (let i = 0; i < 16; i++) {
    gens.push(generator(ns, i, REGIONS[i % REGIONS.length], { stop: () => false, record: (g) => got.push(g) }));
  }
  while (new Set(got.map((g) => g.region)).size < REGIONS.length || got.length < 100) await sleep(50);
  assert.ok(relayRoots(await ledger(ns)).length >= REGIONS.length);
  await pastStartLease(ns);
  const t0 = Date.now();
  const frozen = await a.req('POST', `/v1/namespaces/${ns}/freeze`, { token: admin, body: { reason: 'audit' } });
  const frozenAt = Date.now();
  assert.equal(frozen.status, 200, frozen.text);
  const results = await Promise.all(gens);
  for (const r of results) assert.equal(r.final?.body?.error?.code, 'namespace_frozen', `${r.sub}: ${JSON.stringify(r)}`);
  const late = got.filter((g) => g.attemptAt >= frozenAt && !g.replayed);
  assert.deepEqual(late.map((g) => `${g.sub} ${g.id} [${g.start}, ${g.end})`), []);
  for (const region of REGIONS) {
    const t = a.token('generator', [ns], { sub: `after-${region}` });
    const r = await grantOnce(t, ns, region, `after${region}`, 'r1', 5);
    assert.equal(r.body?.error?.code, 'namespace_frozen', `${region}: ${r.text}`);
  }
  assertDisjoint(got);
  // What the relays refused reaches the summary in their next reports,
  // though no sub-grant is left to report.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const relays = (await a.req('GET', `/v1/namespaces/${ns}`, { token: admin })).body.ledger.relays;
    const frozenByRelays = relays.reduce((n, r) => n + r.refused.frozen, 0);
    if (frozenByRelays > 0) break;
    assert.ok(Date.now() < deadline, `no relay's frozen refusal reported after 10 s: ${JSON.stringify(relays)}`);
    await sleep(250);
  }
  return { ns, t0, frozenAt };
}

test('a freeze while relays hold ranges: once acknowledged, no relay hands out anything', async () => {
  const { t0, frozenAt } = await freezeUnderRelayLoad('relays-do-freeze');
  console.log(`# freeze acknowledged in ${frozenAt - t0} ms with ${REGIONS.length} relays holding ranges (lease ${LEASE_MS} ms)`);
  // The relays did not wait out their leases: they were revoked.
  assert.ok(frozenAt - t0 < LEASE_MS, `the freeze took ${frozenAt - t0} ms: the relays were not revoked`);
});

test('relays turned off under load: requests in flight and their retries land on the namespace object', async () => {
  const ns = await relayedNamespace('relays-do-off');
  const got = [];
  let offAt = Infinity;
  const until = { t: Infinity };
  const gens = [];
  for (let i = 0; i < 16; i++) {
    gens.push(generator(ns, i, REGIONS[i % REGIONS.length], { stop: () => Date.now() > until.t, record: (g) => got.push(g) }));
  }
  while (got.length < 100) await sleep(50);
  await pastStartLease(ns);
  const t0 = Date.now();
  await setRelays(ns, 'off');
  offAt = Date.now();
  until.t = offAt + 2000;
  const results = await Promise.all(gens);
  console.log(`# relays off acknowledged in ${offAt - t0} ms under load`);
  // Every attempt sent after the acknowledgement and answered afresh
  // (a replay may repeat what a relay cut before it).
  const afterOff = got.filter((g) => g.attemptAt >= offAt && !g.replayed);
  assert.ok(afterOff.length >= 16, `only ${afterOff.length} grants after relays were off`);
  assertDisjoint(got);
  for (const r of results) assert.equal(r.final, undefined, JSON.stringify(r));
  // After the acknowledgement every grant is the namespace object's own,
  // to the generator's sub; no relay took anything more.
  const grants = await ledger(ns);
  for (const g of afterOff) {
    const own = grants.find((x) => x.sub === g.sub && BigInt(x.start) === g.start && BigInt(x.end) === g.end);
    assert.ok(own, `${g.sub} ${g.id} was not granted by the namespace object itself`);
  }
  // A grant kept in a span of several was committed as late as the span's
  // lastAt, not its first grant's at.
  const committedBy = (g) => Date.parse(g.span?.lastAt ?? g.at);
  const lateRelay = grants.filter((g) => g.sub.startsWith('relay@') && committedBy(g) > offAt);
  assert.deepEqual(lateRelay, [], 'a relay was granted to after relays were off');
});

test('exhaustion through a relay: namespace_exhausted with what can still be granted, down to 0', async () => {
  const ns = await relayedNamespace('relays-do-max', { max: '5000', maxCount: 1000 });
  const got = [];
  const token = a.token('generator', [ns], { sub: 'drain' });
  let n = 0;
  let count = 97;
  const seen = [];
  for (;;) {
    n += 1;
    assert.ok(n < 500, 'never exhausted');
    const r = await grantOnce(token, ns, 'r2', 'drain1', `r${n}`, count);
    if (r.status === 200) {
      got.push({ start: BigInt(r.body.start), end: BigInt(r.body.end) });
      continue;
    }
    if (r.status === 503) {
      await sleep(50);
      continue;
    }
    conforms(doc, 'post', '/v1/ranges', r);
    assert.equal(r.body.error.code, 'namespace_exhausted', r.text);
    const remaining = Number(r.body.error.remaining);
    seen.push(remaining);
    assert.ok(remaining < count, `remaining ${remaining} for a count of ${count}`);
    if (remaining === 0) break;
    count = remaining;
  }
  assertDisjoint(got);
  const ids = got.reduce((s, g) => s + (g.end - g.start), 0n);
  console.log(`# exhausted through a relay: ${ids} of 5000 IDs issued to the drain (1 went to the warm-up; any rest in relay ranges that ran out), remaining seen ${JSON.stringify(seen)}`);
  assert.ok(ids <= 5000n);
  for (const g of got) assert.ok(g.start >= 1n && g.end <= 5001n);
  const roots = relayRoots(await ledger(ns));
  assert.ok(roots.length > 0, 'served by the relay');
});

test('workerd SIGKILLed under load through relays, restarted on the same state: no ID twice', async () => {
  const ns = await relayedNamespace('relays-do-kill');
  const got = [];
  const phase = { stop: false };
  const gens = [];
  for (let i = 0; i < 16; i++) {
    gens.push(generator(ns, i, REGIONS[i % REGIONS.length], { stop: () => phase.stop, record: (g) => got.push(g) }));
  }
  while (got.length < 100) await sleep(50);
  const before = got.length;
  await a.kill();
  await a.start();
  // The restarted front has forgotten that relays are on: a grant teaches it.
  const warm = a.token('generator', [ns], { sub: 'warm-up-2' });
  assert.equal((await grantOnce(warm, ns, 'r0', 'warm1', 'r1', 1)).status, 200);
  const target = got.length + 100;
  while (got.length < target) await sleep(50);
  phase.stop = true;
  await Promise.all(gens);
  assertDisjoint(got);
  const relayed = relayRoots(await ledger(ns));
  console.log(`# SIGKILL under load: ${before} ranges before, ${got.length - before} after the restart, no ID twice; ${relayed.length} relay grants`);
});

test('a relay that only ran dry (its namespace object cannot grant) answers unavailable, never exhausted', async () => {
  const ns = await relayedNamespace('relays-do-dry');
  // The namespace object restarted with its witness down (a test switch,
  // so the test build, on the same state): it grants nothing, and says
  // 503; its relays are still on.
  await a.stop();
  a.testBuild = true;
  a.witnessDown = true;
  try {
    await a.start();
    const token = a.token('generator', [ns], { sub: 'dry' });
    // The first request goes to the namespace object (the restarted front
    // knows nothing), whose 503 still says relays are on.
    const direct = await grantOnce(token, ns, 'r3', 'dry1', 'r1', 10);
    assert.equal(direct.status, 503, direct.text);
    const t0 = Date.now();
    const relayed = await grantOnce(token, ns, 'r3', 'dry1', 'r2', 10);
    const took = Date.now() - t0;
    conforms(doc, 'post', '/v1/ranges', relayed);
    assert.equal(relayed.status, 503, relayed.text);
    assert.equal(relayed.body.error.code, 'unavailable');
    // Parked for the relay's wait (2 s) first: it was the relay's answer.
    assert.ok(took >= 1900, `answered after ${took} ms`);
    console.log(`# a relay that ran dry answered unavailable after ${took} ms`);
  } finally {
    await a.stop();
    a.testBuild = false;
    a.witnessDown = false;
    await a.start();
  }
});

/** Runs `body` against the test build with relay objects failing as
 * `fault` says (RANGEID_TEST_ONLY_RELAY_FAULT), on the same state, then
 * puts the production build back. */
async function withRelayFault(fault, body) {
  await a.stop();
  const vars = a.extraVars;
  a.testBuild = true;
  a.extraVars = { ...vars, RANGEID_TEST_ONLY_RELAY_FAULT: fault };
  try {
    await a.start();
    await body();
  } finally {
    await a.stop();
    a.testBuild = false;
    a.extraVars = vars;
    await a.start();
  }
}

test('a freeze while every relay is deaf to revocations: acknowledged only once their leases ran out, and no relay hands out anything after', async () => {
  await withRelayFault('deaf', async () => {
    const { ns, t0, frozenAt } = await freezeUnderRelayLoad('relays-do-deaf');
    console.log(`# with every relay deaf, the freeze was acknowledged in ${frozenAt - t0} ms (lease ${LEASE_MS} ms)`);
    // No revocation reached a relay: the act waited out the lease of the
    // last range a relay took before it (a lease from that grant's commit).
    const lastRoot = Math.max(...(await ledger(ns)).filter((g) => g.sub.startsWith('relay@') && Date.parse(g.at) <= t0).map((g) => Date.parse(g.at)));
    const leaseEnd = lastRoot + LEASE_MS;
    console.log(`# the last relay grant before it was ${t0 - lastRoot} ms before the act: its lease ran ${leaseEnd - t0} ms into it`);
    assert.ok(leaseEnd - t0 > 500, 'relays were taking ranges until the act');
    assert.ok(frozenAt >= leaseEnd - 150, `acknowledged ${leaseEnd - frozenAt} ms before the last relay's lease ran out, though no relay was revoked`);
  });
});

test('every relay object down: the front falls back to the namespace object, which grants every request', async () => {
  await withRelayFault('down', async () => {
    const ns = await relayedNamespace('relays-do-down');
    const got = [];
    const until = Date.now() + 3000;
    const gens = [];
    for (let i = 0; i < 16; i++) {
      gens.push(generator(ns, i, REGIONS[i % REGIONS.length], { stop: () => Date.now() > until, record: (g) => got.push(g) }));
    }
    const results = await Promise.all(gens);
    const refused = results.reduce((s, r) => s + Object.values(r.refusals).reduce((x, y) => x + y, 0), 0);
    console.log(`# relays down: ${got.length} ranges, all from the namespace object; ${refused} attempts retried`);
    assert.ok(got.length >= 100, `only ${got.length} ranges`);
    assertDisjoint(got);
    // Every range is the object's own grant to the generator: no relay
    // took any.
    const grants = await ledger(ns);
    assert.deepEqual(relayRoots(grants), []);
    const owners = new Set(grants.map((g) => g.sub));
    for (const g of got) assert.ok(owners.has(g.sub), `${g.sub} has no grant of its own`);
    assert.equal(grants.length, got.length + 1, 'one grant per answered request, and the warm-up');
  });
});
