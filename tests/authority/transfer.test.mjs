// Moving a namespace between two self-hosted authorities on bare workerd
// (each its own key, state folder and port), with the rangeid command as an
// operator runs it: grants on A, `rangeid ns export` from A, `rangeid ns
// import` into B, grants on B. Every range B grants starts at or above the
// highest end A granted and at or above A's witness mark, read from the
// witness's own SQLite file (not from the document). A stays frozen: a grant
// is refused (namespace_frozen) and a plain unfreeze too
// (namespace_exported). Bad input, each a typed refusal that changes
// nothing: an edited document, a cut one, a foreign one, an older version,
// another namespace's, the same document twice, an import over a namespace
// that exists and has grants.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Authority, assertDisjoint, authorityDir, uniqueNs } from './harness.mjs';

const cli = join(authorityDir, '..', 'npm', 'bin', 'rangeid.mjs');
const started = [];
const dir = mkdtempSync(join(tmpdir(), 'rangeid-transfer-'));
let A;
let B;

before(async () => {
  A = new Authority({ runtime: 'workerd' });
  B = new Authority({ runtime: 'workerd' });
  started.push(A, B);
  await Promise.all([A.start(), B.start()]);
});

after(async () => {
  for (const a of started) {
    await a.stop();
    a.cleanup();
  }
  rmSync(dir, { recursive: true, force: true });
});

/** `rangeid ARGS` against `a` with an admin token; {code, stdout, stderr}. */
function rangeid(a, args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], {
      env: { PATH: process.env.PATH, RANGEID_URL: a.base, RANGEID_TOKEN: a.token('admin', ['*'], { sub: 'ops' }) },
    }, (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
}

let seq = 0;
async function grant(a, ns, count = 1000) {
  seq += 1;
  return a.req('POST', '/v1/ranges', {
    token: a.token('generator', [ns], { sub: 'svc' }),
    body: { namespace: ns, incarnation: 'inc-1', requestId: `r${seq}`, count },
  });
}

const summary = async (a, ns) => (await a.req('GET', `/v1/namespaces/${ns}`, { token: a.token('reader', ['*']) }));

test('a namespace moves from A to B: B never grants below A\'s highest end nor A\'s witness mark; A stays frozen; bad documents change nothing', { timeout: 300_000 }, async () => {
  const ns = uniqueNs('move');
  let r = await rangeid(A, ['ns', 'create', ns]);
  assert.equal(r.code, 0, r.stderr);
  // Settings that move with it (format 2): limits, and relays that were on.
  r = await rangeid(A, ['ns', 'limits', ns, '--grants-per-second', '40', '--sub-ledger-rows', '5000']);
  assert.equal(r.code, 0, r.stderr);
  r = await rangeid(A, ['ns', 'relays', ns, 'on', '--reason', 'edge traffic']);
  assert.equal(r.code, 0, r.stderr);
  const onA = [];
  for (let i = 0; i < 20; i++) {
    const g = await grant(A, ns, 1000 + i * 37);
    assert.equal(g.status, 200, g.text);
    onA.push([BigInt(g.body.start), BigInt(g.body.end)]);
  }
  const highestEnd = onA.reduce((m, [, e]) => (e > m ? e : m), 0n);

  // Export with the command, into a file.
  const file = join(dir, `${ns}.json`);
  r = await rangeid(A, ['namespace', 'export', ns, '--reason', 'move to B', '--out', file]);
  assert.equal(r.code, 0, r.stderr);
  const retired = A.witnessMark();
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  const mark = BigInt(doc.witness);
  console.log(`A: highest end ${highestEnd}, witness retired to ${retired} (file); document next ${doc.next}, fence ${doc.fence}, witness ${doc.witness}, start ${doc.start}`);
  assert.equal(retired, BigInt(doc.max) + 1n, 'the export retired A\'s witness past the last ID');
  assert.ok(mark > highestEnd, 'the fence is ahead of what A granted');

  // A is frozen, and stays so.
  let g = await grant(A, ns);
  assert.equal(g.status, 423, g.text);
  assert.equal(g.body.error.code, 'namespace_frozen');
  r = await rangeid(A, ['ns', 'unfreeze', ns, '--reason', 'oops']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /namespace_exported: .*retired here/);
  assert.equal((await summary(A, ns)).body.state, 'frozen');
  assert.equal((await grant(A, ns)).status, 423);
  assert.equal(A.witnessMark(), retired, 'nothing moved A\'s witness after the export');

  // Bad documents into B: each refused with its own code, nothing created.
  const text = readFileSync(file, 'utf8');
  const bad = [
    ['an edited witness mark', text.replace(`"witness":"${doc.witness}"`, '"witness":"1"'), [], 'export_invalid'],
    ['an edited start', text.replace(`"start":"${doc.start}"`, `"start":"${doc.next}"`), [], 'export_invalid'],
    ['a cut document', text.slice(0, 120), ['--as', ns], 'export_invalid'],
    ['a foreign document', JSON.stringify({ format: 'snowflake-dump/3', namespace: ns }), [], 'export_unsupported'],
    ['an older version', text.replace('rangeid-namespace-export/2', 'rangeid-namespace-export/0'), [], 'export_unsupported'],
    ['a newer version', text.replace('rangeid-namespace-export/2', 'rangeid-namespace-export/3'), [], 'export_unsupported'],
    ['settings edited', text.replace('"grantsPerSecond":40', '"grantsPerSecond":4000'), [], 'export_invalid'],
    ['another namespace\'s name', text, ['--as', `${ns}-x`], 'export_namespace_mismatch'],
  ];
  for (const [what, body, args, code] of bad) {
    const f = join(dir, 'bad.json');
    writeFileSync(f, body);
    r = await rangeid(B, ['ns', 'import', f, ...args]);
    assert.equal(r.code, 1, `${what}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`^rangeid: ${code}: `), `${what}: ${r.stderr}`);
    console.log(`${what}: ${r.stderr.trim()}`);
    for (const name of [ns, `${ns}-x`]) assert.equal((await summary(B, name)).status, 404, `${what} created nothing`);
  }

  // The import, then grants on B.
  r = await rangeid(B, ['ns', 'import', file, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const imported = JSON.parse(r.stdout);
  assert.equal(imported.state, 'active');
  assert.equal(imported.next, doc.start);
  assert.deepEqual(doc.settings, { relays: true, grantsPerSecond: 40, ledgerRows: null, subLedgerRows: 5000 });
  assert.deepEqual([imported.limits.grantsPerSecond, imported.limits.subLedgerRows], [40, 5000], 'the limits moved');
  assert.equal(imported.relays, 'off', 'relays start off at the destination');
  assert.match(r.stderr, /relays were on at the source; they start off here: turn them on with `rangeid ns relays /);
  const onB = [];
  for (let i = 0; i < 20; i++) {
    g = await grant(B, ns, 1000 + i * 41);
    assert.equal(g.status, 200, g.text);
    onB.push([BigInt(g.body.start), BigInt(g.body.end)]);
  }
  for (const [s] of onB) {
    assert.ok(s >= highestEnd, `B granted from ${s}, below A's highest end ${highestEnd}`);
    assert.ok(s >= mark, `B granted from ${s}, below A's witness mark ${mark}`);
  }
  assertDisjoint([...onA, ...onB].map(([s, e]) => ({ start: s, end: e })));
  console.log(`B: first grant at ${onB[0][0]}, ${onB.length} grants, all >= ${mark}`);

  // The same document again: already_imported, B unchanged.
  const before2 = (await summary(B, ns)).body;
  r = await rangeid(B, ['ns', 'import', file]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^rangeid: already_imported: /);
  const after2 = (await summary(B, ns)).body;
  assert.deepEqual([after2.next, after2.rangesGranted, after2.state], [before2.next, before2.rangesGranted, before2.state]);

  // Back into A, where the namespace exists with its grants: refused, A unchanged.
  r = await rangeid(A, ['ns', 'import', file]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^rangeid: namespace_exists: /);
  const a = (await summary(A, ns)).body;
  assert.deepEqual([a.state, a.next], ['frozen', doc.next]);

  // Audited on both sides.
  const actions = async (x) => (await x.req('GET', `/v1/namespaces/${ns}/audit`, { token: x.token('admin', ['*']) })).body.audit.map((e) => `${e.actor}:${e.action}`);
  assert.deepEqual((await actions(A)).slice(0, 4), ['ops:export', 'ops:relays', 'ops:limits', 'ops:create']);
  assert.deepEqual(await actions(B), ['ops:import']);
});

test('an import into a namespace that exists on the destination with grants is refused and changes nothing', { timeout: 120_000 }, async () => {
  const ns = uniqueNs('taken');
  for (const x of [A, B]) {
    assert.equal((await rangeid(x, ['ns', 'create', ns])).code, 0);
    assert.equal((await grant(x, ns, 500)).status, 200);
  }
  const file = join(dir, `${ns}.json`);
  let r = await rangeid(A, ['ns', 'export', ns, '--reason', 'move', '--out', file]);
  assert.equal(r.code, 0, r.stderr);
  const before2 = (await summary(B, ns)).body;
  r = await rangeid(B, ['ns', 'import', file]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^rangeid: namespace_exists: .*never writes over/);
  const after2 = (await summary(B, ns)).body;
  assert.deepEqual([after2.state, after2.next, after2.rangesGranted], [before2.state, before2.next, before2.rangesGranted]);
  assert.equal((await grant(B, ns, 10)).status, 200, 'B\'s own namespace still grants');
});

test('a copy of the source from before the export, put back alone, grants nothing: the export retired its witness', { timeout: 180_000 }, async () => {
  const C = new Authority({ runtime: 'workerd' });
  started.push(C);
  await C.start();
  const ns = uniqueNs('retire');
  let r = await rangeid(C, ['ns', 'create', ns]);
  assert.equal(r.code, 0, r.stderr);
  for (let i = 0; i < 5; i++) assert.equal((await grant(C, ns)).status, 200);
  // The namespace object's files as a backup before the export holds them.
  await C.stop();
  const copy = C.copyObjects('Namespace', join(dir, 'before-export'));
  await C.start();
  const file = join(dir, `${ns}-retire.json`);
  r = await rangeid(C, ['ns', 'export', ns, '--reason', 'move', '--out', file]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  // Put the namespace object's files back alone (the witness keeps its
  // mark), as a point-in-time restore of that object would.
  await C.stop();
  C.putBackObjects(copy);
  await C.start();
  assert.equal((await summary(C, ns)).body.state, 'active', 'the copy is from before the freeze');
  const g = await grant(C, ns);
  console.log(`restored source after the export (document start ${doc.start}): ${g.status} ${g.text}`);
  assert.notEqual(g.status, 200, `the restored source granted ${g.body.start}..${g.body.end}, the destination's IDs from ${doc.start}`);
  assert.equal(g.body.error.code, 'namespace_exhausted');
});
