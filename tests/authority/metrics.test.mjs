// GET /v1/metrics on bare workerd, parsed with a Prometheus text parser:
// every series equals the namespace summaries, refusals are counted by
// reason, a token sees only its namespaces, counters never go back across
// an authority restart, and refused authentication is in the structured
// logs without the token.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { Authority, uniqueNs } from './harness.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let a;

after(async () => {
  await a?.stop();
  a?.cleanup();
});

/** name -> namespace -> {labels-without-namespace as text -> value} */
function scrapeIndex(text) {
  const out = new Map();
  for (const family of parsePrometheusTextFormat(text)) {
    const byNs = new Map();
    for (const m of family.metrics) {
      const { namespace, ...rest } = m.labels;
      const key = Object.entries(rest).map(([k, v]) => `${k}=${v}`).join(',');
      if (!byNs.has(namespace)) byNs.set(namespace, {});
      byNs.get(namespace)[key] = m.value;
    }
    out.set(family.name, { type: family.type, byNs });
  }
  return out;
}

async function scrape(token) {
  const r = await a.req('GET', '/v1/metrics', { token });
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  return { text: r.text, index: scrapeIndex(r.text) };
}

test('metrics follow the summaries, count refusals, and never go back across a restart', async () => {
  a = await new Authority({ runtime: 'workerd' }).start();
  const admin = a.token('admin', ['*']);
  const ns = uniqueNs('metrics');
  const other = uniqueNs('metrics-other');
  for (const [name, extra] of [[ns, { max: '100000', maxCount: 50000 }], [other, {}]]) {
    assert.equal((await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: name, ...extra } })).status, 201);
  }
  const gen = a.token('generator', [ns], { sub: 'svc-a' });
  const genB = a.token('generator', [ns], { sub: 'svc-b' });
  const grant = (token, requestId, count) => a.req('POST', '/v1/ranges', { token, body: { namespace: ns, incarnation: 'm1', requestId, count } });
  assert.equal((await grant(gen, 'r1', 40000)).status, 200);
  assert.equal((await grant(gen, 'r2', 40000)).status, 200);
  // One refusal of each kind the object counts.
  assert.equal((await grant(gen, 'r3', 40000)).status, 409, 'exhausted');
  assert.equal((await grant(gen, 'r1', 5)).status, 409, 'conflict');
  const limits = await a.req('POST', `/v1/namespaces/${ns}/limits`, { token: admin, body: { grantsPerSecond: 1, subLedgerRows: 1 } });
  assert.equal(limits.status, 200, limits.text);
  assert.equal((await grant(gen, 'r4', 1)).status, 429, 'ledger_full: svc-a holds its row (r1 and r2, a span)');
  assert.equal((await grant(genB, 'r1', 1)).status, 200, 'svc-b has its own');
  assert.equal((await grant(genB, 'r2', 1)).status, 429, 'rate_limited: one a second');
  assert.equal((await a.req('POST', `/v1/namespaces/${ns}/freeze`, { token: admin, body: { reason: 'metrics drill' } })).status, 200);
  assert.equal((await grant(gen, 'r5', 1)).status, 423, 'frozen');

  // The registry's copy is at most 2 s behind.
  let m;
  for (let i = 0; i < 50; i++) {
    m = await scrape(admin);
    if (m.index.get('rangeid_namespace_refusals_total')?.byNs.get(ns)?.['reason=frozen'] === '1') break;
    await sleep(100);
  }
  const s = (await a.req('GET', `/v1/namespaces/${ns}`, { token: admin })).body;
  const v = (name, key = '') => m.index.get(name)?.byNs.get(ns)?.[key];
  assert.equal(m.index.get('rangeid_namespace_ids_granted_total').type, 'COUNTER');
  assert.equal(v('rangeid_namespace_next'), s.next);
  assert.equal(v('rangeid_namespace_remaining_ids'), s.remaining);
  assert.equal(v('rangeid_namespace_ids_granted_total'), s.idsGranted);
  assert.equal(v('rangeid_namespace_ranges_granted_total'), String(s.rangesGranted));
  assert.equal(v('rangeid_namespace_frozen'), '1');
  for (const [reason, field] of [['exhausted', 'exhausted'], ['frozen', 'frozen'], ['conflict', 'conflict'], ['rate_limited', 'rateLimited'], ['ledger_full', 'ledgerFull']]) {
    assert.equal(v('rangeid_namespace_refusals_total', `reason=${reason}`), '1', reason);
    assert.equal(s.refusals[field], 1, reason);
  }
  assert.equal(v('rangeid_namespace_ledger_rows'), String(s.ledger.rows));
  assert.equal(v('rangeid_namespace_ledger_budget_rows'), '32000000');
  assert.equal(v('rangeid_namespace_refusals_total', 'reason=fenced'), '0');
  assert.ok(Number(v('rangeid_namespace_grant_rate_ids_per_second', 'window=1m')) > 0);
  assert.ok(m.index.get('rangeid_namespace_next').byNs.has(other), 'every namespace is listed');

  // A token scoped to one namespace sees only it.
  const reader = a.token('reader', [other]);
  const scoped = await scrape(reader);
  assert.deepEqual([...scoped.index.get('rangeid_namespace_next').byNs.keys()], [other]);
  assert.equal((await a.req('GET', '/v1/metrics', { token: gen })).status, 403, 'a generator may not read');
  assert.equal((await a.req('GET', '/v1/metrics?x=1', { token: admin })).status, 400);

  // Refused authentication is logged, without the token.
  const forged = a.token('admin', ['*'], { key: 'ab'.repeat(32) });
  assert.equal((await a.req('GET', '/v1/metrics', { token: forged })).status, 401);
  const refusedLine = () => a.log.split('\n').find((l) => l.includes('"auth_refused"') && l.includes('"unauthenticated"'));
  for (let i = 0; i < 20 && !refusedLine(); i++) await sleep(100);
  const line = refusedLine();
  assert.ok(line, `an auth_refused line: ${a.log.slice(-2000)}`);
  const event = JSON.parse(line.slice(line.indexOf('{')));
  assert.deepEqual([event.status, event.code, event.path], [401, 'unauthenticated', '/v1/metrics']);
  assert.ok(!a.log.includes(forged.split('.')[2]), 'no token in the logs');
  assert.ok(a.log.includes('"grant_refused"'), 'grant refusals are logged');

  // Counters never go back across a restart.
  const counters = [...m.index].filter(([, f]) => f.type === 'COUNTER');
  await a.stop();
  await a.start();
  const again = await scrape(admin);
  for (const [name, family] of counters) {
    for (const [namespace, values] of family.byNs) {
      for (const [key, value] of Object.entries(values)) {
        const now = again.index.get(name)?.byNs.get(namespace)?.[key];
        assert.ok(now !== undefined && BigInt(now) >= BigInt(value), `${name}{${namespace},${key}} went from ${value} to ${now}`);
      }
    }
  }
});
