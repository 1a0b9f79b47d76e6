// Relays on the namespace object (docs/relays.md, issue 18), on bare
// workerd with the production build: the setting (POST .../relays) round
// trip and its audit row; a relay token's range request refused while
// relays are off; an admin act (freeze, relays off) with a relay
// incarnation granted to answered only after that relay's lease
// (RANGEID_RELAY_LEASE_MS, here 3 s) ran out, while a namespace whose
// relays were never on is answered without that wait; and after a restart,
// once relays were on, an act waits a lease from the object's start.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Authority, conforms, uniqueNs } from './harness.mjs';

const LEASE_MS = 3000;
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

async function create(ns) {
  const r = await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns } });
  assert.equal(r.status, 201, r.text);
}

async function setRelays(ns, relays, reason = 'edge latency') {
  const r = await a.req('POST', `/v1/namespaces/${ns}/relays`, { token: admin, body: { relays, reason } });
  conforms(doc, 'post', '/v1/namespaces/{ns}/relays', r);
  return r;
}

const grant = (token, ns, incarnation, requestId, count = 10) =>
  a.req('POST', '/v1/ranges', { token, body: { namespace: ns, incarnation, requestId, count } });

/** `fn`'s result and how long it took (ms). */
async function timed(fn) {
  const t = Date.now();
  const r = await fn();
  return [r, Date.now() - t];
}

test('the relay setting: off by default, set by an admin, shown in the summary, audited', async () => {
  const ns = uniqueNs('relays-set');
  await create(ns);
  const summary = await a.req('GET', `/v1/namespaces/${ns}`, { token: admin });
  conforms(doc, 'get', '/v1/namespaces/{ns}', summary);
  assert.equal(summary.body.relays, 'off');

  const on = await setRelays(ns, 'on');
  assert.equal(on.status, 200, on.text);
  assert.equal(on.body.relays, 'on');
  assert.equal((await a.req('GET', `/v1/namespaces/${ns}`, { token: admin })).body.relays, 'on');

  const audit = await a.req('GET', `/v1/namespaces/${ns}/audit`, { token: admin });
  const entry = audit.body.audit[0];
  assert.deepEqual(
    { action: entry.action, actor: entry.actor, before: entry.before, after: entry.after, reason: entry.reason },
    { action: 'relays', actor: 'ops', before: { relays: 'off' }, after: { relays: 'on' }, reason: 'edge latency' },
  );

  // Bad input: a clear error, nothing changed, nothing audited.
  for (const body of [{ relays: 'on' }, { relays: true, reason: 'x' }, { relays: 'maybe', reason: 'x' }]) {
    const r = await a.req('POST', `/v1/namespaces/${ns}/relays`, { token: admin, body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error.code, 'invalid_request');
  }
  // Only an admin: a generator, a reader, a relay are refused.
  for (const role of ['generator', 'reader', 'relay']) {
    const r = await a.req('POST', `/v1/namespaces/${ns}/relays`, { token: a.token(role, [ns]), body: { relays: 'off', reason: 'x' } });
    assert.equal(r.status, 403, role);
  }
  const after = await a.req('GET', `/v1/namespaces/${ns}/audit`, { token: admin });
  assert.equal(after.body.audit.length, audit.body.audit.length, 'refused changes write no audit row');
  assert.equal((await a.req('GET', `/v1/namespaces/${ns}`, { token: admin })).body.relays, 'on');
});

test('a relay token is refused while relays are off; a generator is not', async () => {
  const ns = uniqueNs('relays-off');
  await create(ns);
  const relay = a.token('relay', [ns], { sub: 'relay-eu' });
  const gen = a.token('generator', [ns], { sub: 'svc' });
  const refused = await grant(relay, ns, 'relay-eu-1', 'r1');
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.body.error.code, 'forbidden');
  assert.match(refused.body.error.message, /relays are turned off/);
  assert.equal((await grant(gen, ns, 'g1', 'r1')).status, 200);
  // Nothing was granted to the relay: the ledger holds the generator's only.
  const grants = await a.req('GET', `/v1/namespaces/${ns}/grants`, { token: admin });
  assert.deepEqual(grants.body.grants.map((g) => g.sub), ['svc']);

  // On: the relay takes ranges; off again: refused again (after the wait).
  assert.equal((await setRelays(ns, 'on')).status, 200);
  // Timed from before the grant was sent, which is before its decision.
  const [granted, offMs] = await timed(async () => {
    const g = await grant(relay, ns, 'relay-eu-1', 'r1');
    assert.equal(g.status, 200, g.text);
    return setRelays(ns, 'off');
  });
  assert.equal(granted.status, 200, granted.text);
  assert.ok(offMs >= LEASE_MS, `relays off is answered after the relay's lease (${offMs} ms)`);
  assert.equal((await grant(relay, ns, 'relay-eu-1', 'r2')).status, 403);
  assert.equal((await grant(gen, ns, 'g1', 'r2')).status, 200);
});

test('a freeze with a relay granted to is acknowledged only after its lease; without relays at once', async () => {
  const plain = uniqueNs('relays-never');
  const ns = uniqueNs('relays-freeze');
  await create(plain);
  await create(ns);
  assert.equal((await setRelays(ns, 'on')).status, 200);
  // Let the object's own start lease pass, so only the relay's grant counts.
  await new Promise((r) => setTimeout(r, LEASE_MS + 200));

  const relay = a.token('relay', [ns], { sub: 'relay-eu' });
  const grantedAt = Date.now(); // before the grant's decision
  const granted = await grant(relay, ns, 'relay-eu-7', 'r1');
  assert.equal(granted.status, 200, granted.text);
  const freeze = (name) => a.req('POST', `/v1/namespaces/${name}/freeze`, { token: admin, body: { reason: 'audit' } });
  const frozen = await freeze(ns);
  const ackAfter = Date.now() - grantedAt;
  assert.equal(frozen.status, 200, frozen.text);
  assert.equal(frozen.body.state, 'frozen');
  assert.ok(ackAfter >= LEASE_MS, `the freeze waited the relay's lease out (${ackAfter} ms after its grant)`);

  // A namespace whose relays were never on: the freeze does not wait a lease.
  const [plainFrozen, plainMs] = await timed(() => freeze(plain));
  assert.equal(plainFrozen.status, 200);
  assert.ok(plainMs < LEASE_MS, `no relay wait without relays (${plainMs} ms)`);
});

test('after a restart, once relays were on, an act waits a lease from the start', async () => {
  const ns = uniqueNs('relays-restart');
  await create(ns);
  assert.equal((await setRelays(ns, 'on')).status, 200);
  assert.equal((await setRelays(ns, 'off')).status, 200);
  await a.stop();
  await a.start();
  // The first request starts the object; the floor after it waits one lease
  // from that start, although relays are off and this run granted none.
  const startedAt = Date.now();
  assert.equal((await a.req('GET', `/v1/namespaces/${ns}`, { token: admin })).body.relays, 'off');
  const floor = await a.req('POST', `/v1/namespaces/${ns}/floor`, { token: admin, body: { floor: '1000000' } });
  const took = Date.now() - startedAt;
  assert.equal(floor.status, 200, floor.text);
  assert.ok(took >= LEASE_MS, `the floor waited the start's lease (${took} ms)`);
});
