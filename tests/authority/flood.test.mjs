// Floods that would fill storage, on bare workerd.
//
// 1. A generator token loops `count: 1` grants for a fixed time with its
//    shipped request ids, while two honest generators (other subs) take
//    ranges: the ledger keeps the flood as spans, a row a minute and one
//    per honest grant that came between, so its rows stay under a stated
//    bound; every flood grant still replays exactly and "who got ID N"
//    answers it; the honest generators are served throughout.
// 2. A flooder that defeats the spans (varying counts) meets its own row
//    budget, answered 429 ledger_full with Retry-After, while the others
//    are still served; one past the grant rate meets 429 rate_limited.
//    The limits are set with the `rangeid` command, audited, and the
//    refusals counted in /v1/metrics.
//
// Prints rows and bytes (the object's storage as the runtime reports it,
// and its files on disk) before and after each.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { Authority, authorityDir, conforms, uniqueNs } from './harness.mjs';

const FLOOD_SECONDS = Number(process.env.RANGEID_FLOOD_SECONDS ?? 8);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let a;
let doc;
let admin;

before(async () => {
  a = await new Authority({ runtime: 'workerd' }).start();
  doc = (await a.req('GET', '/v1/openapi.json')).body;
  admin = a.token('admin', ['*'], { sub: 'ops' });
});

after(async () => {
  await a?.stop();
  a?.cleanup();
});

async function summary(ns) {
  const r = await a.req('GET', `/v1/namespaces/${ns}`, { token: admin });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/** The bytes of the namespace objects' SQLite files (with -wal, -shm). */
function filesBytes() {
  return a.objectFiles('Namespace').reduce((n, f) => n + statSync(f).size, 0);
}

async function measure(ns, label) {
  const s = await summary(ns);
  const m = { rows: s.ledger.rows, bytes: s.ledger.bytes, files: filesBytes(), top: s.ledger.topSubs };
  console.log(`${label}: ${m.rows} ledger rows, ${m.bytes} bytes of storage (files on disk ${m.files}); most rows: ${JSON.stringify(m.top)}`);
  return m;
}

function grant(token, body) {
  return a.req('POST', '/v1/ranges', { token, body });
}

/** An honest generator: a range of 1,000 every 500 ms until `until`. */
async function honest(token, ns, incarnation, until) {
  const got = [];
  for (let n = 1; Date.now() < until; n++) {
    const r = await grant(token, { namespace: ns, incarnation, requestId: `r${n}`, count: 1000 });
    got.push(r.status);
    await sleep(500);
  }
  return got;
}

test('a count: 1 loop is kept as spans: rows stay under the bound, every grant exact, others served', async () => {
  const ns = uniqueNs('flood');
  assert.equal((await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns } })).status, 201);
  const flooder = a.token('generator', [ns], { sub: 'svc-flooder' });
  const svcA = a.token('generator', [ns], { sub: 'svc-a' });
  const svcB = a.token('generator', [ns], { sub: 'svc-b' });
  const before = await measure(ns, 'before the flood');

  const until = Date.now() + FLOOD_SECONDS * 1000;
  const honestRuns = Promise.all([honest(svcA, ns, 'a-1', until), honest(svcB, ns, 'b-1', until)]);
  const flood = [];
  for (let n = 0; Date.now() < until; n++) {
    const r = await grant(flooder, { namespace: ns, incarnation: 'flood-1', requestId: `r${n}`, count: 1 });
    assert.equal(r.status, 200, r.text);
    flood.push(BigInt(r.body.start));
  }
  const honestStatuses = (await honestRuns).flat();
  const after = await measure(ns, `after ${FLOOD_SECONDS} s`);
  const honestGrants = honestStatuses.length;
  console.log(`flood: ${flood.length} count: 1 grants in ${FLOOD_SECONDS} s (${Math.round(flood.length / FLOOD_SECONDS)}/s) beside ${honestGrants} honest grants`);

  // Honest generators were served throughout.
  assert.ok(honestGrants >= 2 * FLOOD_SECONDS, `${honestGrants} honest grants`);
  assert.deepEqual([...new Set(honestStatuses)], [200]);
  // The bound: a row per honest grant, and a flood span for each run of
  // flood grants between them (at most one more per minute): rows added
  // <= 2 x honest grants + 2 per started minute. One row per grant would be
  // flood.length + honestGrants.
  const minutes = Math.ceil(FLOOD_SECONDS / 60);
  const bound = 2 * honestGrants + 2 * minutes;
  const added = after.rows - before.rows;
  console.log(`rows added: ${added} (bound ${bound}; one per grant would be ${flood.length + honestGrants})`);
  assert.ok(added <= bound, `${added} rows added, bound ${bound}`);
  // Kept a row a grant, the flood alone would be far past the bound.
  assert.ok(flood.length > 3 * bound, `the flood (${flood.length} grants) is far above the bound (${bound})`);

  // Every flood grant replays exactly, first, last and in between.
  const picks = [0, 1, Math.floor(flood.length / 3), Math.floor(flood.length / 2), flood.length - 2, flood.length - 1];
  for (const n of picks) {
    const r = await grant(flooder, { namespace: ns, incarnation: 'flood-1', requestId: `r${n}`, count: 1 });
    conforms(doc, 'POST', '/v1/ranges', r);
    assert.deepEqual([r.status, BigInt(r.body.start), r.body.replayed], [200, flood[n], true], `r${n}`);
    // ...and "who got ID N" names it.
    const who = await a.req('GET', `/v1/namespaces/${ns}/lookup?id=${flood[n]}`, { token: admin });
    conforms(doc, 'GET', '/v1/namespaces/{ns}/lookup', who);
    assert.deepEqual([who.body.requestId, who.body.sub, who.body.incarnation], [`r${n}`, 'svc-flooder', 'flood-1']);
  }
  // The listing shows the flood grant by grant.
  const page = await a.req('GET', `/v1/namespaces/${ns}/grants?limit=1000`, { token: admin });
  conforms(doc, 'GET', '/v1/namespaces/{ns}/grants', page);
  assert.equal(page.body.grants.length, Math.min(1000, flood.length + honestGrants));
  assert.equal(new Set(page.body.grants.map((g) => g.start)).size, page.body.grants.length);
});

test('a flooder that defeats spans meets its row budget (429 + Retry-After) while others are served', async () => {
  const ns = uniqueNs('budget');
  assert.equal((await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns } })).status, 201);
  // The limits, set with the rangeid command as an operator would.
  const cli = join(authorityDir, '..', 'npm', 'bin', 'rangeid.mjs');
  const rangeid = (...args) => execFileSync(process.execPath, [cli, ...args], {
    encoding: 'utf8', env: { ...process.env, RANGEID_URL: a.base, RANGEID_TOKEN: admin },
  });
  const SUB_ROWS = 1500;
  console.log(rangeid('ns', 'limits', ns, '--sub-ledger-rows', String(SUB_ROWS), '--ledger-rows', '100000').trim());
  const flooder = a.token('generator', [ns], { sub: 'svc-flooder' });
  const svcA = a.token('generator', [ns], { sub: 'svc-a' });
  const before = await measure(ns, 'before the varying-count flood');

  // Counts 1, 2, 1, 2, ...: no grant follows the one before with the same
  // count, so each is a row, until the flooder's budget is held.
  let first429;
  let served = 0;
  for (let n = 0; n < SUB_ROWS + 50; n++) {
    const r = await grant(flooder, { namespace: ns, incarnation: 'vary-1', requestId: `r${n}`, count: 1 + (n % 2) });
    if (r.status === 200) {
      served += 1;
      continue;
    }
    conforms(doc, 'POST', '/v1/ranges', r);
    first429 ??= r;
    assert.deepEqual([r.status, r.body.error.code], [429, 'ledger_full'], r.text);
    assert.equal(r.headers.get('retry-after'), '60');
  }
  assert.equal(served, SUB_ROWS, 'exactly its budget of rows');
  assert.ok(first429, 'the flooder met its budget');
  // Its replays still answer; another sub is served.
  const replay = await grant(flooder, { namespace: ns, incarnation: 'vary-1', requestId: 'r0', count: 1 });
  assert.deepEqual([replay.status, replay.body.replayed], [200, true]);
  for (let n = 1; n <= 20; n++) {
    const r = await grant(svcA, { namespace: ns, incarnation: 'a-1', requestId: `x${n}`, count: 1 + (n % 2) });
    assert.equal(r.status, 200, `svc-a, a flooder's neighbour, is served: ${r.text}`);
  }
  const full = await measure(ns, `after the flooder's ${SUB_ROWS} rows`);
  const perRow = (full.bytes - before.bytes) / (full.rows - before.rows);
  console.log(`storage per ledger row (workerd SQLite, with its indexes): ${Math.round(perRow)} bytes`);
  // The stated bound: at most 400 bytes of storage per row.
  assert.ok(perRow <= 400, `${perRow} bytes per row`);
  assert.deepEqual(full.top[0], { sub: 'svc-flooder', rows: SUB_ROWS });

  // The grant rate: two a second per sub.
  rangeid('ns', 'limits', ns, '--grants-per-second', '2');
  const svcB = a.token('generator', [ns], { sub: 'svc-b' });
  const statuses = [];
  let limited;
  for (let n = 1; n <= 6; n++) {
    const r = await grant(svcB, { namespace: ns, incarnation: 'b-1', requestId: `r${n}`, count: 5 });
    statuses.push(r.status);
    if (r.status === 429) limited = r;
  }
  assert.ok(statuses.filter((s) => s === 200).length >= 2 && limited, `${statuses}`);
  conforms(doc, 'POST', '/v1/ranges', limited);
  assert.equal(limited.body.error.code, 'rate_limited');
  assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  const other = await grant(svcA, { namespace: ns, incarnation: 'a-1', requestId: 'y1', count: 5 });
  assert.equal(other.status, 200, 'another sub has its own rate');

  // Audited, and counted where operators look.
  const audit = await a.req('GET', `/v1/namespaces/${ns}/audit`, { token: admin });
  assert.deepEqual(audit.body.audit.slice(0, 2).map((e) => [e.action, e.actor]), [['limits', 'ops'], ['limits', 'ops']]);
  let text = '';
  const sample = (name, labels = '') => {
    const m = text.match(new RegExp(`^${name}\\{namespace="${ns}"${labels}\\} (\\S+)$`, 'm'));
    return m && Number(m[1]);
  };
  // Refusals reach the registry with the object's next push (within 2 s;
  // every reason is listed, at 0 until then).
  for (let i = 0; i < 100; i++) {
    text = (await a.req('GET', '/v1/metrics', { token: admin })).text;
    if (sample('rangeid_namespace_refusals_total', ',reason="rate_limited"') >= 1) break;
    await sleep(100);
  }
  assert.ok(sample('rangeid_namespace_refusals_total', ',reason="ledger_full"') >= 50);
  assert.ok(sample('rangeid_namespace_refusals_total', ',reason="rate_limited"') >= 1);
  assert.ok(sample('rangeid_namespace_ledger_rows') >= SUB_ROWS);
  assert.equal(sample('rangeid_namespace_ledger_budget_rows'), 100000);
  assert.ok(sample('rangeid_namespace_storage_bytes') > 0);
});
