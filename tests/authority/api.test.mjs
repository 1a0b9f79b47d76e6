// API v1 against the real local workerd: every status and code of the
// table, the role/namespace matrix, replay and conflict, exhaustion at max
// and at 2^64-1, floors, freezes, audit, CORS, malformed input, and every
// answer checked against the served OpenAPI document.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Authority, ALLOWED_ORIGIN, conforms, uniqueNs } from './harness.mjs';

const U64_MAX = '18446744073709551615';
const TWO_64 = '18446744073709551616';

let a;
let doc;
let admin;

async function call(method, template, path, opts = {}) {
  const res = await a.req(method, path, opts);
  conforms(doc, method, template, res);
  return res;
}

function expectError(res, status, code) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body?.error?.code, code, res.text);
  assert.equal(typeof res.body.error.message, 'string');
}

async function createNs(body, token = admin) {
  const res = await call('POST', '/v1/namespaces', '/v1/namespaces', { token, body });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

function grantBody(namespace, requestId, count, incarnation = 'inc-1') {
  return { namespace, incarnation, requestId, count };
}

async function grant(token, namespace, requestId, count, incarnation) {
  return call('POST', '/v1/ranges', '/v1/ranges', { token, body: grantBody(namespace, requestId, count, incarnation) });
}

before(async () => {
  a = await new Authority().start();
  const res = await a.req('GET', '/v1/openapi.json');
  assert.equal(res.status, 200);
  doc = res.body;
  admin = a.token('admin', ['*']);
});

after(async () => {
  await a?.stop();
  a?.cleanup();
});

describe('open routes', () => {
  test('healthz and the OpenAPI document', async () => {
    const h = await call('GET', '/healthz', '/healthz');
    assert.equal(h.status, 200);
    assert.equal(doc.openapi, '3.1.0');
    for (const p of ['/v1/ranges', '/v1/namespaces', '/v1/namespaces/{ns}', '/v1/namespaces/{ns}/grants',
      '/v1/namespaces/{ns}/lookup', '/v1/namespaces/{ns}/floor', '/v1/namespaces/{ns}/freeze',
      '/v1/namespaces/{ns}/unfreeze', '/v1/namespaces/{ns}/audit']) {
      assert.ok(doc.paths[p], p);
    }
  });

  test('unknown paths are 404 not_found; wrong methods 405 with Allow', async () => {
    for (const p of ['/v2/ranges', '/v1/ranges/', '/v1/namespaces/x/nope']) {
      expectError(await a.req('GET', p), 404, 'not_found');
    }
    // The root sends a browser to the admin page; only GET and HEAD have it.
    const root = await a.req('GET', '/');
    assert.equal(root.status, 308);
    assert.equal(root.headers.get('location'), '/admin/');
    const r = await a.req('PUT', '/v1/ranges');
    expectError(r, 405, 'method_not_allowed');
    assert.equal(r.headers.get('allow'), 'POST');
    const head = await a.req('HEAD', '/healthz');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    const options = await a.req('OPTIONS', '/v1/namespaces');
    assert.equal(options.status, 204);
    assert.match(options.headers.get('allow'), /POST/);
    expectError(await a.req('OPTIONS', '/nope'), 404, 'not_found');
    const d = await a.req('DELETE', '/v1/namespaces');
    expectError(d, 405, 'method_not_allowed');
    assert.match(d.headers.get('allow'), /GET/);
  });
});

describe('tokens', () => {
  test('missing, malformed, expired, alg none, unknown kid, tampered: 401', async () => {
    const ns = uniqueNs('tok');
    await createNs({ namespace: ns });
    const body = grantBody(ns, 'r1', 1);
    const good = a.token('generator', [ns]);
    const [h, p] = good.split('.');
    const forgedClaims = Buffer.from(JSON.stringify({ sub: 'x', role: 'generator', ns: ['*'], exp: 4e9 })).toString('base64url');
    const bad = {
      missing: undefined,
      garbage: 'not-a-token',
      expired: a.token('generator', [ns], { ttl: -10 }),
      algNone: `${Buffer.from('{"alg":"none","kid":"test-1"}').toString('base64url')}.${p}.`,
      hs512: a.token('generator', [ns], { header: { alg: 'HS512', kid: 'test-1' } }),
      unknownKid: a.token('generator', [ns], { kid: 'nope-1' }),
      wrongKey: a.token('generator', [ns], { key: 'f'.repeat(64) }),
      tampered: `${h}.${forgedClaims}.${good.split('.')[2]}`,
    };
    for (const [name, token] of Object.entries(bad)) {
      const res = await call('POST', '/v1/ranges', '/v1/ranges', { token, body });
      expectError(res, 401, 'unauthenticated');
      assert.ok(res.body.error.message.length > 0, name);
    }
    const basic = await a.req('POST', '/v1/ranges', { body, headers: { authorization: 'Basic abc' } });
    expectError(basic, 401, 'unauthenticated');
    // Nothing was granted by any refused request.
    const s = await call('GET', '/v1/namespaces/{ns}', `/v1/namespaces/${ns}`, { token: admin });
    assert.equal(s.body.rangesGranted, 0);
    // A valid token works, with either key (rotation).
    assert.equal((await grant(good, ns, 'r1', 1)).status, 200);
    const rotated = a.token('generator', [ns], { kid: a.oldKid, key: a.oldKey });
    assert.equal((await grant(rotated, ns, 'r2', 1)).status, 200);
  });

  test('role and namespace matrix', async () => {
    const ns = uniqueNs('matrix');
    const other = uniqueNs('matrix-other');
    await createNs({ namespace: ns });
    await createNs({ namespace: other });
    const tokens = {
      generator: a.token('generator', [ns]),
      reader: a.token('reader', [ns]),
      admin: a.token('admin', [ns]),
      otherGenerator: a.token('generator', [other]),
      otherReader: a.token('reader', [other]),
      otherAdmin: a.token('admin', [other]),
    };
    let n = 0;
    const routes = [
      { m: 'POST', t: '/v1/ranges', p: '/v1/ranges', body: () => grantBody(ns, `m${++n}`, 1), ok: ['generator'] },
      { m: 'GET', t: '/v1/namespaces/{ns}', p: `/v1/namespaces/${ns}`, ok: ['reader', 'admin'] },
      { m: 'GET', t: '/v1/namespaces/{ns}/grants', p: `/v1/namespaces/${ns}/grants`, ok: ['reader', 'admin'] },
      { m: 'GET', t: '/v1/namespaces/{ns}/audit', p: `/v1/namespaces/${ns}/audit`, ok: ['admin'] },
      { m: 'POST', t: '/v1/namespaces/{ns}/floor', p: `/v1/namespaces/${ns}/floor`, body: () => ({ floor: String(1000 + (++n)) }), ok: ['admin'] },
      { m: 'POST', t: '/v1/namespaces/{ns}/freeze', p: `/v1/namespaces/${ns}/freeze`, body: () => ({ reason: 'matrix' }), ok: ['admin'] },
      { m: 'POST', t: '/v1/namespaces/{ns}/unfreeze', p: `/v1/namespaces/${ns}/unfreeze`, body: () => ({ reason: 'matrix' }), ok: ['admin'] },
      { m: 'GET', t: '/v1/namespaces', p: '/v1/namespaces', ok: ['reader', 'admin', 'otherReader', 'otherAdmin'] },
    ];
    for (const r of routes) {
      for (const [who, token] of Object.entries(tokens)) {
        const res = await call(r.m, r.t, r.p, { token, body: r.body?.() });
        if (r.ok.includes(who)) {
          assert.ok(res.status >= 200 && res.status < 300, `${who} ${r.m} ${r.p}: ${res.text}`);
        } else {
          expectError(res, 403, 'forbidden');
        }
      }
    }
    // The lookup route follows the reader rule too.
    await grant(tokens.generator, ns, 'look', 3);
    for (const [who, token] of Object.entries(tokens)) {
      const res = await call('GET', '/v1/namespaces/{ns}/lookup', `/v1/namespaces/${ns}/lookup?id=1`, { token });
      if (['reader', 'admin'].includes(who)) assert.ok([200, 404].includes(res.status), res.text);
      else expectError(res, 403, 'forbidden');
    }
    // Listing shows only the namespaces in scope.
    const list = await call('GET', '/v1/namespaces', '/v1/namespaces', { token: tokens.reader });
    assert.deepEqual(list.body.namespaces.map((s) => s.namespace), [ns]);
    // Creating needs admin over the new name.
    const created = await call('POST', '/v1/namespaces', '/v1/namespaces', { token: tokens.admin, body: { namespace: uniqueNs('nope') } });
    expectError(created, 403, 'forbidden');
    expectError(await call('POST', '/v1/namespaces', '/v1/namespaces', { token: tokens.reader, body: { namespace: ns } }), 403, 'forbidden');
  });
});

describe('namespaces', () => {
  test('create: 201, defaults, namespace_exists, invalid bodies, too large', async () => {
    const ns = uniqueNs('create');
    const s = await createNs({ namespace: ns });
    assert.equal(s.first, '1');
    assert.equal(s.next, '1');
    assert.equal(s.max, '9007199254740991');
    assert.equal(s.maxCount, 10000000);
    assert.equal(s.state, 'active');
    const again = await call('POST', '/v1/namespaces', '/v1/namespaces', { token: admin, body: { namespace: ns, first: '5' } });
    expectError(again, 409, 'namespace_exists');
    const invalid = [
      { namespace: 'Bad Name' },
      { namespace: uniqueNs('c'), first: 5 },
      { namespace: uniqueNs('c'), first: '05' },
      { namespace: uniqueNs('c'), first: '0' },
      { namespace: uniqueNs('c'), first: '10', max: '9' },
      { namespace: uniqueNs('c'), max: TWO_64 },
      { namespace: uniqueNs('c'), maxCount: 0 },
      { namespace: uniqueNs('c'), maxCount: '10' },
      { namespace: uniqueNs('c'), extra: true },
      {},
    ];
    for (const body of invalid) {
      expectError(await call('POST', '/v1/namespaces', '/v1/namespaces', { token: admin, body }), 400, 'invalid_request');
    }
    expectError(await call('POST', '/v1/namespaces', '/v1/namespaces', { token: admin, raw: '{"namespace":' }), 400, 'invalid_request');
    const big = JSON.stringify({ namespace: uniqueNs('big'), pad: 'x'.repeat(5000) });
    expectError(await call('POST', '/v1/namespaces', '/v1/namespaces', { token: admin, raw: big }), 413, 'payload_too_large');
  });

  test('summary, list and 404s', async () => {
    const ns = uniqueNs('sum');
    await createNs({ namespace: ns, first: '1001', maxCount: 10000 });
    const gen = a.token('generator', [ns]);
    await grant(gen, ns, 'r17', 10000, 'A9');
    const s = await call('GET', '/v1/namespaces/{ns}', `/v1/namespaces/${ns}`, { token: admin });
    assert.equal(s.status, 200);
    assert.equal(s.body.next, '11001');
    assert.equal(s.body.rangesGranted, 1);
    assert.equal(s.body.idsGranted, '10000');
    assert.equal(s.body.grantRate.lastMinute.ranges, 1);
    assert.ok(s.body.grantRate.lastHour.idsPerSecond > 0);
    assert.ok(s.body.exhaustion.seconds > 0);
    assert.ok(s.body.lastGrantAt);
    // The listing reads the summaries objects push to the registry, at
    // most PUSH_EVERY_MS (2 s) behind.
    let listed;
    for (let i = 0; i < 40 && !listed; i++) {
      const list = await call('GET', '/v1/namespaces', '/v1/namespaces', { token: admin });
      listed = list.body.namespaces.find((x) => x.namespace === ns && x.next === '11001');
      if (!listed) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(listed, 'the listing shows the grant within 4 s');
    expectError(await call('GET', '/v1/namespaces/{ns}', `/v1/namespaces/${uniqueNs('missing')}`, { token: admin }), 404, 'namespace_not_found');
    expectError(await call('GET', '/v1/namespaces/{ns}', '/v1/namespaces/NotAName', { token: admin }), 404, 'namespace_not_found');
    expectError(await call('GET', '/v1/namespaces/{ns}/grants', `/v1/namespaces/${uniqueNs('missing')}/grants`, { token: admin }), 404, 'namespace_not_found');
    expectError(await call('GET', '/v1/namespaces/{ns}/audit', `/v1/namespaces/${uniqueNs('missing')}/audit`, { token: admin }), 404, 'namespace_not_found');
    expectError(await call('POST', '/v1/namespaces/{ns}/floor', `/v1/namespaces/${uniqueNs('missing')}/floor`, { token: admin, body: { floor: '5' } }), 404, 'namespace_not_found');
    expectError(await call('POST', '/v1/namespaces/{ns}/freeze', `/v1/namespaces/${uniqueNs('missing')}/freeze`, { token: admin, body: { reason: 'x' } }), 404, 'namespace_not_found');
  });
});

describe('grants', () => {
  test('seed example: grant, replay, conflict', async () => {
    const ns = uniqueNs('seed');
    await createNs({ namespace: ns, first: '1001', maxCount: 10000 });
    const gen = a.token('generator', [ns]);
    const g = await grant(gen, ns, 'r17', 10000, 'A9');
    assert.equal(g.status, 200);
    assert.deepEqual(g.body, {
      namespace: ns, incarnation: 'A9', requestId: 'r17', start: '1001', end: '11001', count: 10000, replayed: false,
      maxCount: 10000, remaining: String(2n ** 53n - 1n - 11000n),
    });
    const r = await grant(gen, ns, 'r17', 10000, 'A9');
    assert.deepEqual(r.body, { ...g.body, replayed: true });
    expectError(await grant(gen, ns, 'r17', 9999, 'A9'), 409, 'request_conflict');
    // Another incarnation with the same request id is another request.
    const other = await grant(gen, ns, 'r17', 1, 'B1');
    assert.equal(other.body.start, '11001');
  });

  test('invalid requests are 400, unknown namespace 404, too large 413', async () => {
    const ns = uniqueNs('inv');
    await createNs({ namespace: ns, maxCount: 100 });
    const gen = a.token('generator', ['*']);
    const bad = [
      grantBody(ns, 'r1', 0),
      grantBody(ns, 'r1', 101),
      grantBody(ns, 'r1', -1),
      grantBody(ns, 'r1', 1.5),
      { ...grantBody(ns, 'r1', 1), count: '1' },
      { ...grantBody(ns, 'r1', 1), extra: 1 },
      { namespace: ns, incarnation: 'A9', count: 1 },
      { ...grantBody(ns, 'r1', 1), requestId: 'has space' },
      { ...grantBody(ns, 'r1', 1), incarnation: '' },
    ];
    for (const body of bad) {
      expectError(await call('POST', '/v1/ranges', '/v1/ranges', { token: gen, body }), 400, 'invalid_request');
    }
    // A count above maxCount says the namespace's maxCount, so a client
    // that could not know it asks again within it.
    const above = await call('POST', '/v1/ranges', '/v1/ranges', { token: gen, body: grantBody(ns, 'r1', 101) });
    assert.equal(above.body.error.maxCount, 100, above.text);
    for (const raw of ['', 'null', '[]', '{', '{"namespace":"x"}x', '\u00ff']) {
      expectError(await call('POST', '/v1/ranges', '/v1/ranges', { token: gen, raw }), 400, 'invalid_request');
    }
    expectError(await grant(gen, uniqueNs('nope'), 'r1', 1), 404, 'namespace_not_found');
    const huge = JSON.stringify({ ...grantBody(ns, 'r1', 1), pad: ' '.repeat(4097) });
    expectError(await call('POST', '/v1/ranges', '/v1/ranges', { token: gen, raw: huge }), 413, 'payload_too_large');
    const s = await call('GET', '/v1/namespaces/{ns}', `/v1/namespaces/${ns}`, { token: admin });
    assert.equal(s.body.next, '1', 'refused requests change nothing');
  });

  test('exhaustion exactly at max', async () => {
    const ns = uniqueNs('max');
    await createNs({ namespace: ns, first: '1', max: '10' });
    const gen = a.token('generator', [ns]);
    assert.equal((await grant(gen, ns, 'r1', 8)).body.end, '9');
    const e = await grant(gen, ns, 'r2', 3);
    expectError(e, 409, 'namespace_exhausted');
    assert.equal(e.body.error.remaining, '2');
    const last = await grant(gen, ns, 'r3', 2);
    assert.equal(last.body.start, '9');
    assert.equal(last.body.end, '11');
    const none = await grant(gen, ns, 'r4', 1);
    expectError(none, 409, 'namespace_exhausted');
    assert.equal(none.body.error.remaining, '0');
  });

  test('exhaustion at 2^64-1, exact round trip of values past 2^53', async () => {
    const ns = uniqueNs('top');
    await createNs({ namespace: ns, first: '18446744073709551606', max: U64_MAX, maxCount: 1000 });
    const gen = a.token('generator', [ns]);
    const g1 = await grant(gen, ns, 'r1', 7);
    assert.equal(g1.body.start, '18446744073709551606');
    assert.equal(g1.body.end, '18446744073709551613');
    const e = await grant(gen, ns, 'r2', 4);
    expectError(e, 409, 'namespace_exhausted');
    assert.equal(e.body.error.remaining, '3');
    const g2 = await grant(gen, ns, 'r3', 3);
    assert.equal(g2.body.end, TWO_64);
    const s = await call('GET', '/v1/namespaces/{ns}', `/v1/namespaces/${ns}`, { token: admin });
    assert.equal(s.body.next, TWO_64);
    assert.equal(s.body.remaining, '0');
    assert.equal(s.body.max, U64_MAX);
    const lookup = await call('GET', '/v1/namespaces/{ns}/lookup', `/v1/namespaces/${ns}/lookup?id=${U64_MAX}`, { token: admin });
    assert.equal(lookup.status, 200);
    assert.equal(lookup.body.requestId, 'r3');
    expectError(await grant(gen, ns, 'r4', 1), 409, 'namespace_exhausted');
    assert.equal((await grant(gen, ns, 'r3', 3)).body.replayed, true);
  });
});

describe('admin actions', () => {
  test('floor never lowers next; audited', async () => {
    const ns = uniqueNs('floor');
    await createNs({ namespace: ns, first: '10', max: '1000' });
    const gen = a.token('generator', [ns]);
    await grant(gen, ns, 'r1', 5);
    const path = `/v1/namespaces/${ns}/floor`;
    const low = await call('POST', '/v1/namespaces/{ns}/floor', path, { token: admin, body: { floor: '14' } });
    expectError(low, 409, 'floor_below_next');
    assert.equal(low.body.error.next, '15');
    expectError(await call('POST', '/v1/namespaces/{ns}/floor', path, { token: admin, body: { floor: '1001' } }), 400, 'invalid_request');
    expectError(await call('POST', '/v1/namespaces/{ns}/floor', path, { token: admin, body: { floor: 500 } }), 400, 'invalid_request');
    const up = await call('POST', '/v1/namespaces/{ns}/floor', path, { token: admin, body: { floor: '500' } });
    assert.equal(up.status, 200);
    assert.equal(up.body.next, '500');
    assert.equal((await grant(gen, ns, 'r2', 1)).body.start, '500');
    expectError(await call('POST', '/v1/namespaces/{ns}/floor', path, { token: admin, body: { floor: '499' } }), 409, 'floor_below_next');
    const audit = await call('GET', '/v1/namespaces/{ns}/audit', `/v1/namespaces/${ns}/audit`, { token: admin });
    assert.equal(audit.status, 200);
    const actions = audit.body.audit.map((e) => e.action);
    assert.deepEqual(actions, ['floor', 'create']);
    assert.equal(audit.body.audit[0].actor, 'tester');
    assert.deepEqual(audit.body.audit[0].before, { next: '15' });
    assert.deepEqual(audit.body.audit[0].after, { next: '500' });
  });

  test('freeze refuses grants with 423, replays still answer; unfreeze; audited with reason', async () => {
    const ns = uniqueNs('freeze');
    await createNs({ namespace: ns });
    const gen = a.token('generator', [ns]);
    await grant(gen, ns, 'r1', 5);
    const f = await call('POST', '/v1/namespaces/{ns}/freeze', `/v1/namespaces/${ns}/freeze`, { token: admin, body: { reason: 'incident 42' } });
    assert.equal(f.body.state, 'frozen');
    expectError(await grant(gen, ns, 'r2', 5), 423, 'namespace_frozen');
    assert.equal((await grant(gen, ns, 'r1', 5)).body.replayed, true);
    expectError(await call('POST', '/v1/namespaces/{ns}/freeze', `/v1/namespaces/${ns}/freeze`, { token: admin, body: {} }), 400, 'invalid_request');
    const u = await call('POST', '/v1/namespaces/{ns}/unfreeze', `/v1/namespaces/${ns}/unfreeze`, { token: admin, body: { reason: 'resolved' } });
    assert.equal(u.body.state, 'active');
    assert.equal((await grant(gen, ns, 'r2', 5)).body.start, '6');
    const audit = await call('GET', '/v1/namespaces/{ns}/audit', `/v1/namespaces/${ns}/audit?limit=2`, { token: admin });
    assert.deepEqual(audit.body.audit.map((e) => [e.action, e.reason]), [['unfreeze', 'resolved'], ['freeze', 'incident 42']]);
    assert.ok(audit.body.nextBefore);
    const rest = await call('GET', '/v1/namespaces/{ns}/audit', `/v1/namespaces/${ns}/audit?before=${audit.body.nextBefore}`, { token: admin });
    assert.deepEqual(rest.body.audit.map((e) => e.action), ['create']);
    assert.equal(rest.body.audit[0].after.state, 'active');
  });

  test('grants listing and lookup', async () => {
    const ns = uniqueNs('list');
    await createNs({ namespace: ns });
    const gen = a.token('generator', [ns]);
    for (let i = 0; i < 5; i++) await grant(gen, ns, `r${i}`, 10);
    const page = await call('GET', '/v1/namespaces/{ns}/grants', `/v1/namespaces/${ns}/grants?limit=2`, { token: admin });
    assert.deepEqual(page.body.grants.map((g) => g.start), ['41', '31']);
    const rest = await call('GET', '/v1/namespaces/{ns}/grants', `/v1/namespaces/${ns}/grants?before=${page.body.nextBefore}`, { token: admin });
    assert.deepEqual(rest.body.grants.map((g) => g.start), ['21', '11', '1']);
    assert.equal(rest.body.nextBefore, null);
    expectError(await call('GET', '/v1/namespaces/{ns}/grants', `/v1/namespaces/${ns}/grants?limit=0`, { token: admin }), 400, 'invalid_request');
    expectError(await call('GET', '/v1/namespaces/{ns}/grants', `/v1/namespaces/${ns}/grants?before=x`, { token: admin }), 400, 'invalid_request');
    const hit = await call('GET', '/v1/namespaces/{ns}/lookup', `/v1/namespaces/${ns}/lookup?id=25`, { token: admin });
    assert.equal(hit.body.requestId, 'r2');
    assert.equal(hit.body.start, '21');
    expectError(await call('GET', '/v1/namespaces/{ns}/lookup', `/v1/namespaces/${ns}/lookup?id=51`, { token: admin }), 404, 'grant_not_found');
    for (const q of ['', '?id=0', '?id=abc', `?id=${TWO_64}`]) {
      expectError(await call('GET', '/v1/namespaces/{ns}/lookup', `/v1/namespaces/${ns}/lookup${q}`, { token: admin }), 400, 'invalid_request');
    }
  });
});

describe('cors', () => {
  test('preflight and origins: allow-list only', async () => {
    const ok = await a.req('OPTIONS', '/v1/ranges', {
      headers: { origin: ALLOWED_ORIGIN, 'access-control-request-method': 'POST' },
    });
    assert.equal(ok.status, 204);
    assert.equal(ok.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN);
    assert.match(ok.headers.get('access-control-allow-methods'), /POST/);
    assert.match(ok.headers.get('access-control-allow-headers'), /authorization/);
    const refused = await a.req('OPTIONS', '/v1/ranges', { headers: { origin: 'https://evil.example' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
    const cross = await a.req('GET', '/v1/namespaces', { token: admin, headers: { origin: 'https://evil.example' } });
    expectError(cross, 403, 'forbidden');
    const allowed = await a.req('GET', '/v1/namespaces', { token: admin, headers: { origin: ALLOWED_ORIGIN } });
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers.get('access-control-allow-origin'), ALLOWED_ORIGIN);
  });
});

describe('robustness', () => {
  test('no malformed input gets a 5xx or changes state', async () => {
    const ns = uniqueNs('fuzz');
    await createNs({ namespace: ns, max: '1000', maxCount: 10 });
    const gen = a.token('generator', [ns]);
    await grant(gen, ns, 'base', 3);
    const bodies = ['', ' ', 'null', 'true', '1', '"s"', '[]', '{}', '{"a":', '{"namespace":null}',
      `{"namespace":"${ns}","incarnation":"A","requestId":"r","count":1e400}`,
      `{"namespace":"${ns}","incarnation":"A","requestId":"r","count":18446744073709551616}`,
      `{"namespace":"${ns}","incarnation":"A","requestId":"r","count":1,"count":2}`,
      `{"namespace":"${ns}","incarnation":"${'x'.repeat(65)}","requestId":"r","count":1}`,
      '\u0000\u0001', '{"floor":"-1"}', '{"floor":"1e3"}', '{"reason":""}', '{"reason":null}',
      `{"namespace":"${ns}","first":"99999999999999999999999"}`];
    const targets = [
      ['POST', '/v1/ranges', gen],
      ['POST', '/v1/namespaces', admin],
      ['POST', `/v1/namespaces/${ns}/floor`, admin],
      ['POST', `/v1/namespaces/${ns}/freeze`, admin],
      ['POST', `/v1/namespaces/${ns}/unfreeze`, admin],
    ];
    for (const [m, p, token] of targets) {
      for (const raw of bodies) {
        const r = await a.req(m, p, { token, raw });
        assert.ok(r.status >= 400 && r.status < 500, `${m} ${p} ${JSON.stringify(raw)} -> ${r.status} ${r.text}`);
      }
    }
    for (const q of ['?limit=-1', '?limit=1&limit=2', '?x=1', '?before=%00', '?limit=99999999999999999999999']) {
      const r = await a.req('GET', `/v1/namespaces/${ns}/grants${q}`, { token: admin });
      assert.equal(r.status, 400, q);
    }
    for (const p of ['/v1/namespaces/%2e%2e', `/v1/namespaces/${'a'.repeat(200)}`, '/v1/namespaces/a%2Fb/grants']) {
      const r = await a.req('GET', p, { token: admin });
      assert.ok(r.status >= 400 && r.status < 500, `${p} -> ${r.status}`);
    }
    const s = await call('GET', '/v1/namespaces/{ns}', `/v1/namespaces/${ns}`, { token: admin });
    assert.equal(s.body.next, '4');
    assert.equal(s.body.state, 'active');
    const audit = await call('GET', '/v1/namespaces/{ns}/audit', `/v1/namespaces/${ns}/audit`, { token: admin });
    assert.deepEqual(audit.body.audit.map((e) => e.action), ['create']);
  });
});
