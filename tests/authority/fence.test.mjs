// Restore-fence drills on bare workerd, with the namespace object's SQLite
// files copied and put back as a point-in-time restore of that object alone
// would: no acknowledged range is granted again, the audit log shows the
// fence moving forward, a restored object whose witness is unreachable
// answers 503 and never grants, and concurrent grants straddling a chunk
// boundary never end above the witness's stored mark.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Authority, assertDisjoint, takeGrants, uniqueNs } from './harness.mjs';

const started = [];

after(async () => {
  for (const a of started) {
    await a.stop();
    a.cleanup();
  }
});
/** Takes `n` grants of `count` as incarnation `inc`; returns them. */

async function freshAuthority(opts = {}) {
  const a = new Authority({ runtime: 'workerd', ...opts });
  started.push(a);
  await a.start();
  return a;
}

test('a namespace object restored to an older copy never grants an acknowledged range again', async () => {
  const a = await freshAuthority();
  const ns = uniqueNs('restore');
  const admin = a.token('admin', ['*']);
  const gen = a.token('generator', [ns]);
  // Small enough that a chunk (at most 1/100 of what remains, here about
  // 10,000) is crossed every few grants.
  const made = await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns, max: '1000000', maxCount: 5000 } });
  assert.equal(made.status, 201, made.text);
  const before = await takeGrants(a, gen, ns, 'one', 20, 1000);

  await a.stop();
  const copy = a.copyObjects('Namespace', join(a.workDir, 'backup'));

  await a.start();
  const afterCopy = await takeGrants(a, gen, ns, 'two', 20, 1000);
  await a.stop();

  // The restore: the namespace object's files as they were at the copy.
  a.putBackObjects(copy);
  await a.start();
  const restored = await a.req('GET', `/v1/namespaces/${ns}`, { token: admin });
  assert.equal(restored.status, 200, restored.text);
  const acked = [...before, ...afterCopy];
  const highest = acked.reduce((m, x) => (x.end > m ? x.end : m), 0n);

  const later = await takeGrants(a, gen, ns, 'three', 40, 1000);
  assertDisjoint([...acked, ...later]);
  for (const g of later) assert.ok(g.start >= highest, `a grant after the restore starts at ${g.start}, below ${highest}`);

  const audit = await a.req('GET', `/v1/namespaces/${ns}/audit`, { token: admin });
  const forward = audit.body.audit.find((e) => e.action === 'fence_forward');
  assert.ok(forward, `the audit log shows the fence moving forward: ${audit.text}`);
  assert.equal(forward.actor, 'system');
  assert.ok(BigInt(forward.after.next) >= highest, 'the audited move reaches past every acknowledged grant');
  const summary = await a.req('GET', `/v1/namespaces/${ns}`, { token: admin });
  assert.equal(summary.body.fence.rollbacks, 1, summary.text);

  // The same restore with the witness unreachable: 503s, never a grant.
  // A witness that is down is a test switch: the test build, on the same
  // state, this once.
  await a.stop();
  a.putBackObjects(copy);
  a.testBuild = true;
  a.witnessDown = true;
  await a.start();
  for (let i = 0; i < 5; i++) {
    const r = await a.req('POST', '/v1/ranges', { token: gen, body: { namespace: ns, incarnation: 'four', requestId: `r${i}`, count: 1000 } });
    assert.equal(r.status, 503, r.text);
    assert.equal(r.body.error.code, 'unavailable');
    assert.ok(r.headers.get('retry-after'), 'with Retry-After');
  }
  await a.stop();
  a.testBuild = false;
  a.witnessDown = false;
  await a.start();
  const last = await takeGrants(a, gen, ns, 'five', 5, 1000);
  assertDisjoint([...acked, ...later, ...last]);
});

test('32 concurrent grants straddling the mark while the witness goes down: none ends above the witness mark', async () => {
  // The witness acknowledges 4 raises, then cannot be reached: the mark
  // stops, so a grant that passed it could not be hidden by a later raise.
  // A test switch: the test build.
  const a = await freshAuthority({ testBuild: true, vars: { RANGEID_TEST_ONLY_WITNESS_RAISES: '4' } });
  const ns = uniqueNs('straddle');
  const admin = a.token('admin', ['*']);
  const gen = a.token('generator', [ns]);
  assert.equal((await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns, max: '10000000', maxCount: 10000 } })).status, 201);
  const acked = [];
  let refused = 0;
  for (let round = 0; round < 5; round++) {
    const results = await Promise.all(Array.from({ length: 32 }, (_, g) => a.req('POST', '/v1/ranges', {
      token: gen, body: { namespace: ns, incarnation: `g${g}`, requestId: `r${round}`, count: 1 + ((g * 977 + round * 131) % 9000) },
    })));
    for (const r of results) {
      if (r.status === 200) {
        acked.push({ start: BigInt(r.body.start), end: BigInt(r.body.end) });
      } else {
        assert.equal(r.status, 503, r.text);
        assert.ok(r.headers.get('retry-after'));
        refused += 1;
      }
    }
  }
  assert.ok(acked.length > 0 && refused > 0, `the mark was reached (${acked.length} granted, ${refused} refused)`);
  assertDisjoint(acked);
  const summary = await a.req('GET', `/v1/namespaces/${ns}`, { token: admin });
  const recorded = BigInt(summary.body.fence.mark);
  await a.stop();
  const mark = a.witnessMark();
  const highest = acked.reduce((m, x) => (x.end > m ? x.end : m), 0n);
  assert.ok(highest <= mark, `a grant ends at ${highest}, above the witness's mark ${mark}`);
  assert.ok(highest <= recorded, `a grant ends at ${highest}, above the object's recorded mark ${recorded}`);
  assert.ok(recorded <= mark, `the object recorded ${recorded}, above the witness's ${mark}`);
});

test('restores to before the namespace existed, or before a floor, never go back', async () => {
  const a = await freshAuthority();
  const admin = a.token('admin', ['*']);
  const ns = uniqueNs('reborn');
  const gen = a.token('generator', [ns]);
  // Storage as it was before the namespace existed: no namespace object.
  assert.equal((await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns, max: '1000000' } })).status, 201);
  const before = await takeGrants(a, gen, ns, 'one', 10, 1000);
  await a.stop();
  for (const f of a.objectFiles('Namespace')) rmSync(f);
  await a.start();
  // The object is new and empty; creating the namespace again succeeds...
  const again = await a.req('POST', '/v1/namespaces', { token: admin, body: { namespace: ns, max: '1000000' } });
  assert.equal(again.status, 201, again.text);
  // ...and its first grants still start past everything the witness covers.
  const after = await takeGrants(a, gen, ns, 'two', 10, 1000);
  assertDisjoint([...before, ...after]);
  const audit = await a.req('GET', `/v1/namespaces/${ns}/audit`, { token: admin });
  assert.ok(audit.body.audit.some((e) => e.action === 'fence_forward'), audit.text);

  // A floor with no grant after it, then this object alone restored to
  // before the floor: grants still start at or above the floor.
  await a.stop();
  const copy = a.copyObjects('Namespace', join(a.workDir, 'before-floor'));
  await a.start();
  const floor = 700000n;
  const raised = await a.req('POST', `/v1/namespaces/${ns}/floor`, { token: admin, body: { floor: String(floor) } });
  assert.equal(raised.status, 200, raised.text);
  await a.stop();
  a.putBackObjects(copy);
  await a.start();
  const past = await takeGrants(a, gen, ns, 'three', 3, 1000);
  for (const g of past) assert.ok(g.start >= floor, `a grant at ${g.start} went below the floor ${floor}`);
});
