// Authority hardening on bare workerd (a request's identity, which
// includes the token subject, is drilled in identity.test.mjs): bodies are
// read only after route and token,
// and never past the limit; creation is idempotent and listings never miss
// a namespace; nbf, aud, lifetime caps, duplicate kids and unknown kids; a
// misconfigured authority (duplicate kids, a private key, a retention under
// an hour) refuses to serve and tells the reason only to its log.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { connect } from 'node:net';
import { Authority, conforms, uniqueNs } from './harness.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let a;
let doc;
let admin;
const others = [];

before(async () => {
  a = await new Authority({ runtime: 'workerd' }).start();
  doc = (await a.req('GET', '/v1/openapi.json')).body;
  admin = a.token('admin', ['*']);
});

after(async () => {
  for (const x of [a, ...others]) {
    await x?.stop();
    x?.cleanup();
  }
});

async function create(namespace, extra = {}) {
  const r = await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace, ...extra } });
  conforms(doc, 'POST', '/v1/namespaces', r);
  return r;
}

/** POSTs a chunked body over a raw socket, 16 KiB every 10 ms up to
 * `total` bytes, never ending it. Resolves with the answer's status and
 * JSON body as soon as it arrives (the authority must answer without
 * reading the whole body: it never ends), or status 0 after 5 s. (A fetch
 * cannot be used: the authority closes the connection after answering
 * early, and fetch reports the reset instead of the answer.) */
function chunkedPost(path, { token, total }) {
  const { hostname, port } = new URL(a.base);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let sent = 0;
    let answer = '';
    let done = false;
    let timer;
    const chunk = ' '.repeat(16 * 1024);
    const finish = (result) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      socket.destroy();
      resolve({ ...result, sent });
    };
    socket.on('connect', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\n`
        + `${token ? `authorization: Bearer ${token}\r\n` : ''}transfer-encoding: chunked\r\n\r\n`);
      timer = setInterval(() => {
        if (done || sent >= total) return;
        sent += chunk.length;
        socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      }, 10);
    });
    socket.on('data', (d) => {
      answer += d.toString();
      const end = answer.indexOf('\r\n\r\n');
      const brace = answer.indexOf('{', end);
      const close = answer.lastIndexOf('}');
      if (end < 0 || brace < 0 || close < brace) return;
      finish({ status: Number(answer.slice(9, 12)), body: JSON.parse(answer.slice(brace, close + 1)) });
    });
    socket.on('error', () => finish({ status: -1, body: null }));
    setTimeout(() => finish({ status: 0, body: null }), 5_000);
  });
}

describe('request bodies', () => {
  test('an unauthenticated 1 MiB chunked POST is refused before its body is read', async () => {
    const r = await chunkedPost('/v1/ranges', { total: 1 << 20 });
    assert.equal(r.status, 401, 'answered while the request was still open');
    assert.equal(r.body.error.code, 'unauthenticated');
    assert.ok(r.sent < 1 << 20, `answered before the client sent it all (${r.sent} bytes)`);
  });

  test('an authenticated chunked POST past the limit gets 413 without reading the rest', async () => {
    const gen = a.token('generator', ['*']);
    const r = await chunkedPost('/v1/ranges', { token: gen, total: 1 << 20 });
    assert.equal(r.status, 413, 'answered while the request was still open');
    assert.equal(r.body.error.code, 'payload_too_large');
  });
});

describe('namespace creation', () => {
  test('is idempotent for the same configuration and listed at once', async () => {
    const ns = uniqueNs('idem');
    const config = { namespace: ns, first: '1000', max: '9000000', maxCount: 500 };
    assert.equal((await create(ns, config)).status, 201);
    const again = await create(ns, config);
    assert.equal(again.status, 200, 'a retried creation answers the summary');
    assert.equal(again.body.namespace, ns);
    const other = await create(ns, { ...config, maxCount: 501 });
    assert.equal(other.status, 409);
    assert.equal(other.body.error.code, 'namespace_exists');
    // Only one audit entry: the retry changed nothing.
    const audit = await a.req('GET', `/v1/namespaces/${ns}/audit`, { token: admin });
    assert.deepEqual(audit.body.audit.map((e) => e.action), ['create']);
    // Listed, with its summary, by pages.
    const names = [];
    let after = '';
    for (;;) {
      const page = await a.req('GET', `/v1/namespaces?limit=2${after}`, { token: admin });
      conforms(doc, 'GET', '/v1/namespaces', page);
      names.push(...page.body.namespaces.map((s) => s.namespace));
      if (!page.body.nextAfter) break;
      after = `&after=${page.body.nextAfter}`;
    }
    assert.ok(names.includes(ns), `${ns} is listed: ${names}`);
    assert.deepEqual(names, [...names].sort(), 'by name');
    assert.equal(new Set(names).size, names.length, 'each once');
  });

  test('maxCount is capped at 2^53 - 1', async () => {
    const ns = uniqueNs('cap');
    const over = await create(ns, { maxCount: 9007199254740992 });
    assert.equal(over.status, 400);
    assert.match(over.body.error.message, /9007199254740991/);
    assert.equal((await create(ns, { maxCount: 9007199254740991 })).status, 201);
  });
});

describe('tokens', () => {
  test('nbf is honoured with 60 s of clock skew', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = (nbf) => ({ sub: 'svc', role: 'admin', ns: ['*'], exp: now + 3600, nbf });
    const session = (claims) => a.req('GET', '/v1/session', { token: a.token(null, null, { claims }) });
    assert.equal((await session(claims(now + 30))).status, 200, 'within the skew');
    const early = await session(claims(now + 300));
    assert.equal(early.status, 401);
    assert.match(early.body.error.message, /not valid yet|nbf/i);
  });

  test('an unknown kid and a bad signature get the same answer', async () => {
    const unknown = await a.req('GET', '/v1/session', { token: a.token('admin', ['*'], { kid: 'no-such-kid' }) });
    const forged = await a.req('GET', '/v1/session', { token: a.token('admin', ['*'], { key: 'ab'.repeat(32) }) });
    assert.equal(unknown.status, 401);
    assert.deepEqual(unknown.body, forged.body);
  });

  test('the session route answers the calling token', async () => {
    const reader = a.token('reader', ['orders', 'users'], { sub: 'ops@example' });
    const s = await a.req('GET', '/v1/session', { token: reader });
    conforms(doc, 'GET', '/v1/session', s);
    assert.deepEqual([s.body.sub, s.body.role, s.body.ns], ['ops@example', 'reader', ['orders', 'users']]);
  });
});

describe('configuration', () => {
  async function another(opts) {
    const x = new Authority({ runtime: 'workerd', ...opts });
    others.push(x);
    return x.start();
  }

  test('a configured audience is required', async () => {
    const x = await another({ audience: 'ids.example' });
    const now = Math.floor(Date.now() / 1000);
    const claims = (aud) => ({ sub: 'svc', role: 'admin', ns: ['*'], exp: now + 3600, ...(aud ? { aud } : {}) });
    const status = async (aud) => (await x.req('GET', '/v1/session', { token: x.token(null, null, { claims: claims(aud) }) })).status;
    assert.equal(await status('ids.example'), 200);
    assert.equal(await status('other.example'), 401);
    assert.equal(await status(undefined), 401);
    await x.stop();
  });

  /** A refused configuration: every caller, with a token or without, gets
   * the same generic 503; the reason is only in the log. */
  async function refusesToServe(x, token, reason) {
    const answers = [];
    for (const t of [token, undefined]) {
      const r = await x.req('GET', '/v1/session', { token: t });
      assert.equal(r.status, 503, r.text);
      assert.equal(r.body.error.code, 'unavailable');
      assert.ok(r.headers.get('retry-after'));
      answers.push(r.text);
    }
    assert.equal(answers[0], answers[1], 'a token changes nothing');
    assert.doesNotMatch(answers[0], reason, 'the reason is not told to callers');
    assert.doesNotMatch(answers[0], /RANGEID|kid|key|retention/i);
    const line = x.log.split('\n').find((l) => l.includes('"config_refused"'));
    assert.ok(line, `a config_refused line in the log: ${x.log.slice(-2000)}`);
    assert.match(line, reason);
  }

  test('duplicate kids in the signing keys refuse to serve; the reason goes to the log only', async () => {
    const key = 'cd'.repeat(32);
    const x = await another({ keysText: `{"test-1":"${key}","test-1":"${'ef'.repeat(32)}"}` });
    await refusesToServe(x, x.token('admin', ['*'], { key }), /test-1.*given twice/);
    await x.stop();
  });

  test('an Ed25519 private key in the authority\'s map refuses to serve: it must not be able to mint', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const jwk = privateKey.export({ format: 'jwk' });
    const x = await another({ keysText: JSON.stringify({ 'ed-1': { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d } }) });
    await refusesToServe(x, undefined, /private key \(d\)/);
    await x.stop();
  });

  test('the production build ignores stray test switches, bound as wrangler binds any variable', async () => {
    // Each of these would stop grants or turn the fence off in the test
    // build; the production Worker has no code that reads them.
    const x = new Authority({
      runtime: 'wrangler',
      strayVars: { RANGEID_TEST_ONLY_WITNESS_DOWN: '1', RANGEID_TEST_ONLY_FENCE_OFF: '1', RANGEID_TEST_ONLY_WITNESS_RAISES: '0', RANGEID_TEST_ONLY_GRANT_RETENTION_SECONDS: '1' },
    });
    others.push(x);
    await x.start();
    const ns = uniqueNs('stray');
    const xadmin = x.token('admin', ['*']);
    assert.equal((await x.req('POST', '/v1/namespaces', { token: xadmin, body: { namespace: ns } })).status, 201);
    const body = { namespace: ns, incarnation: 'A', requestId: 'r1', count: 10 };
    const g = await x.req('POST', '/v1/ranges', { token: x.token('generator', [ns]), body });
    assert.equal(g.status, 200, `the witness answered: ${g.text}`);
    const s = await x.req('GET', `/v1/namespaces/${ns}`, { token: xadmin });
    assert.ok(BigInt(s.body.fence.mark) < 1n << 64n, `the fence marks a chunk, not everything: ${s.text}`);
    await x.stop();
  });

  test('a grant retention under an hour refuses to serve', async () => {
    const x = await another({ vars: { RANGEID_GRANT_RETENTION_SECONDS: '60' } });
    await refusesToServe(x, x.token('admin', ['*']), /RANGEID_GRANT_RETENTION_SECONDS/);
    await x.stop();
  });
});
