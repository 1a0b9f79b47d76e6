// A request's identity is (sub, incarnation, requestId), on bare workerd.
// An insider with a valid generator token of another sub posts a victim's
// body (its incarnation and next requestId are visible to readers): that is
// a different request. It never receives the victim's range, never blocks
// it (no final 403 or 409 for the victim), and the victim's retry still
// replays its own range. The same holds for two tokens minted by the
// `rangeid token` command, each with its own --sub.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Authority, assertDisjoint, authorityDir, conforms, uniqueNs } from './harness.mjs';

let a;
let doc;
let admin;

before(async () => {
  a = await new Authority({ runtime: 'workerd' }).start();
  doc = (await a.req('GET', '/v1/openapi.json')).body;
  admin = a.token('admin', ['*']);
});

after(async () => {
  await a?.stop();
  a?.cleanup();
});

async function create(namespace) {
  const r = await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace } });
  assert.equal(r.status, 201, r.text);
}

async function grant(token, body) {
  const r = await a.req('POST', '/v1/ranges', { token, body });
  conforms(doc, 'POST', '/v1/ranges', r);
  return r;
}

const range = (r) => ({ start: BigInt(r.body.start), end: BigInt(r.body.end) });

/** The drill, for a victim's and an insider's token. */
async function drill(ns, victim, insider) {
  const body = (requestId, count = 10) => ({ namespace: ns, incarnation: 'victim-1', requestId, count });

  // The insider posts the victim's next request first: it is the
  // insider's own request, with its own range.
  const first = await grant(insider, body('r1'));
  assert.equal(first.status, 200, `the insider's request is its own: ${first.text}`);
  const mine = await grant(victim, body('r1'));
  assert.equal(mine.status, 200, `the victim is not blocked: ${mine.text}`);
  assert.equal(mine.body.replayed, false, `the victim is not handed the insider's range: ${mine.text}`);
  assertDisjoint([range(first), range(mine)]);

  // The same body again from each: each gets its own range back.
  const again = await grant(victim, body('r1'));
  assert.deepEqual([again.status, again.body.start, again.body.replayed], [200, mine.body.start, true], again.text);
  const theirs = await grant(insider, body('r1'));
  assert.deepEqual([theirs.status, theirs.body.start, theirs.body.replayed], [200, first.body.start, true], theirs.text);

  // Another count or sub cannot make the victim's generator stop: the
  // insider's wrong count conflicts only with its own request.
  const wrong = await grant(insider, body('r2', 7));
  assert.equal(wrong.status, 200, wrong.text);
  const next = await grant(victim, body('r2'));
  assert.deepEqual([next.status, next.body.replayed], [200, false], next.text);
  assertDisjoint([range(first), range(mine), range(wrong), range(next)]);
  const conflict = await grant(insider, body('r2', 8));
  assert.equal(conflict.status, 409, 'a conflict is with one\'s own request only');
  const victimRetry = await grant(victim, body('r2'));
  assert.deepEqual([victimRetry.status, victimRetry.body.start], [200, next.body.start]);
}

describe('a request is (sub, incarnation, requestId)', () => {
  test('another sub posting the victim\'s body neither receives nor blocks its range', async () => {
    const ns = uniqueNs('identity');
    await create(ns);
    const victim = a.token('generator', [ns], { sub: 'svc-victim' });
    const insider = a.token('generator', [ns], { sub: 'svc-insider' });
    await drill(ns, victim, insider);

    // A rotated token keeps its sub, and so its requests.
    const rotated = a.token('generator', [ns], { sub: 'svc-victim', kid: a.oldKid, key: a.oldKey });
    const replay = await grant(rotated, { namespace: ns, incarnation: 'victim-1', requestId: 'r1', count: 10 });
    assert.deepEqual([replay.status, replay.body.replayed], [200, true]);

    // The ledger shows each grant with the sub that took it.
    const listed = await a.req('GET', `/v1/namespaces/${ns}/grants`, { token: admin });
    const subs = listed.body.grants.map((g) => `${g.sub}:${g.requestId}`).sort();
    assert.deepEqual(subs, ['svc-insider:r1', 'svc-insider:r2', 'svc-victim:r1', 'svc-victim:r2']);
  });

  test('two generator tokens minted by the rangeid command with their own --sub are two callers', async () => {
    const ns = uniqueNs('identity-cli');
    await create(ns);
    const keys = join(a.workDir, 'keys.json');
    writeFileSync(keys, a.keysText, { mode: 0o600 });
    const cli = join(authorityDir, '..', 'npm', 'bin', 'rangeid.mjs');
    // Minted as a user would, with the key the authority holds under its
    // kid, each with a sub of its own (a unique default sub for tokens
    // minted without --sub is the tokens branch's part).
    const mint = (sub) => execFileSync(process.execPath, [cli, 'token', '--role', 'generator', '--ns', ns, '--keys', keys, '--kid', a.kid, '--sub', sub], { encoding: 'utf8' }).trim();
    const victim = mint('orders-svc-1');
    const insider = mint('orders-svc-2');
    const sub = (token) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url')).sub;
    assert.deepEqual([sub(victim), sub(insider)], ['orders-svc-1', 'orders-svc-2']);
    await drill(ns, victim, insider);
  });
});
