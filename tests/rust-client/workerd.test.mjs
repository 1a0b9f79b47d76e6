// The Rust client (rust-client/, crate rangeid-client) against the real
// local authority on workerd: its drill example (rust-client/examples/
// drill.rs) issues from many threads through one generator, and prints what
// it got. Checked here: no ID twice; a restart of the authority while it
// issues (the drill reaches it through a forwarder on a fixed port, as a
// service reaches an authority behind a stable address); a token that
// expires while it issues, refreshed after the 401.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Authority, uniqueNs } from '../authority/harness.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const drill = join(repo, 'target', 'debug', 'examples', 'drill');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const work = mkdtempSync(join(tmpdir(), 'rangeid-rust-client-'));

let a;
let forwarder;
let url;

before(async () => {
  execFileSync('cargo', ['build', '-q', '-p', 'rangeid-client', '--example', 'drill', '--locked'], { cwd: repo, stdio: 'inherit' });
  a = new Authority({ runtime: 'workerd' });
  await a.start();
  // Forwards to wherever the authority listens now (its port changes
  // across a restart).
  forwarder = createServer((client) => {
    const upstream = connect(a.port, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    const end = () => { client.destroy(); upstream.destroy(); };
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise((r) => forwarder.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${forwarder.address().port}`;
});

after(async () => {
  forwarder?.close();
  await a?.stop();
  a?.cleanup();
  rmSync(work, { recursive: true, force: true });
});

async function namespace(prefix) {
  const ns = uniqueNs(prefix);
  const r = await a.req('POST', '/v1/namespaces', { token: a.token('admin', ['*']), body: { namespace: ns } });
  assert.equal(r.status, 201, r.text);
  return ns;
}

/** Runs the drill: THREADS threads for SECONDS; resolves with its JSON line. */
function runDrill({ ns, tokenFile, threads, seconds, rangeSize }) {
  return new Promise((resolve, reject) => {
    const p = spawn(drill, [String(threads), String(seconds)], {
      env: {
        PATH: process.env.PATH,
        RANGEID_URL: url,
        RANGEID_NAMESPACE: ns,
        RANGEID_TOKEN_FILE: tokenFile,
        ...(rangeSize ? { RANGEID_RANGE_SIZE: String(rangeSize) } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (b) => { out += b; });
    p.stderr.on('data', (b) => { err = (err + b).slice(-4000); });
    p.on('error', reject);
    p.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`drill exited ${code}: ${err}`));
      try {
        resolve({ ...JSON.parse(out.trim().split('\n').pop()), stderr: err });
      } catch (e) {
        reject(new Error(`drill printed ${out}: ${e}\n${err}`));
      }
    });
  });
}

test('many threads through one generator: every ID once', async () => {
  const ns = await namespace('rust-threads');
  const tokenFile = join(work, `${ns}.token`);
  writeFileSync(tokenFile, a.token('generator', [ns]));
  const r = await runDrill({ ns, tokenFile, threads: 8, seconds: 4 });
  assert.ok(r.issued > 100_000, `issued ${r.issued}`);
  assert.equal(r.distinct, r.issued, 'an ID was issued twice');
  assert.deepEqual(Object.keys(r.errors).filter((k) => !k.startsWith('now:')), [], `waits that failed: ${JSON.stringify(r.errors)}\n${r.stderr}`);
  // What the authority granted covers every ID issued.
  const s = await a.req('GET', `/v1/namespaces/${ns}`, { token: a.token('admin', ['*']) });
  assert.ok(BigInt(r.max) < BigInt(s.body.next), `max ${r.max} is past next ${s.body.next}`);
});

test('a restart of the authority while threads issue: no ID twice, issuing resumes', async () => {
  const ns = await namespace('rust-restart');
  const tokenFile = join(work, `${ns}.token`);
  writeFileSync(tokenFile, a.token('generator', [ns]));
  const admin = a.token('admin', ['*']);
  const running = runDrill({ ns, tokenFile, threads: 4, seconds: 9, rangeSize: 5000 });
  await sleep(2500);
  await a.stop();
  await sleep(1000);
  await a.start();
  const atRestart = BigInt((await a.req('GET', `/v1/namespaces/${ns}`, { token: admin })).body.next);
  const r = await running;
  assert.equal(r.distinct, r.issued, 'an ID was issued twice');
  const end = BigInt((await a.req('GET', `/v1/namespaces/${ns}`, { token: admin })).body.next);
  assert.ok(end > atRestart, 'ranges were granted after the restart');
  assert.ok(BigInt(r.max) >= atRestart, `IDs were issued from ranges granted after the restart (max ${r.max}, next at restart ${atRestart})`);
  assert.ok(r.retries > 0, 'requests were retried across the outage');
});

test('a token that expires while threads issue: refreshed after the 401, no ID twice', async () => {
  const ns = await namespace('rust-refresh');
  const tokenFile = join(work, `${ns}.token`);
  const mint = () => writeFileSync(tokenFile, a.token('generator', [ns], { ttl: 2 }));
  mint();
  const minting = setInterval(mint, 500);
  try {
    const r = await runDrill({ ns, tokenFile, threads: 2, seconds: 6, rangeSize: 2000 });
    assert.ok(r.refreshes >= 1, `the token was refreshed (${JSON.stringify(r)})`);
    assert.equal(r.distinct, r.issued, 'an ID was issued twice');
    assert.deepEqual(Object.keys(r.errors).filter((k) => !k.startsWith('now:')), [], `waits that failed: ${JSON.stringify(r.errors)}\n${r.stderr}`);
  } finally {
    clearInterval(minting);
  }
});
