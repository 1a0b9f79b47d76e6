// The documented commands, edge-authority/scripts/dev.sh (wrangler dev) and
// edge-authority/scripts/workerd.sh (self-hosting on bare workerd): each
// creates a signing key on first run (and keeps it after), prints a working
// admin token, serves the API and the admin page on loopback, and keeps
// every namespace and boundary across a stop and start. Runs with its own
// RANGEID_HOME and port.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authorityDir, descendants } from './harness.mjs';

const home = mkdtempSync(join(tmpdir(), 'rangeid-devscript-test-'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let running = null;

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function stop() {
  const p = running;
  running = null;
  if (!p) return;
  const pids = [p.pid, ...descendants(p.pid)];
  try { process.kill(-p.pid, 'SIGTERM'); } catch { /* gone */ }
  await sleep(2000);
  for (const pid of pids) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  }
}

after(async () => {
  await stop();
  rmSync(home, { recursive: true, force: true });
});

/** Runs `script` until it serves; returns {base, token}. */
async function devStart(script = 'dev.sh') {
  const port = await freePort();
  const inspector = await freePort();
  const args = script === 'dev.sh' ? ['--inspector-port', String(inspector)] : [];
  const p = spawn(join(authorityDir, 'scripts', script), args, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RANGEID_HOME: home, RANGEID_PORT: String(port), RANGEID_SKIP_BUILD: '1', CI: 'true' },
  });
  running = p;
  let out = '';
  p.stdout.on('data', (b) => { out += b; });
  p.stderr.on('data', (b) => { out += b; });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 240_000; // the first run may compile the token command
  while (Date.now() < deadline && p.exitCode === null) {
    const m = out.match(/admin token \(30 days\): (\S+)/);
    if (m) {
      try {
        const r = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) });
        if (r.status === 200) return { base, token: m[1] };
      } catch { /* not up yet */ }
    }
    await sleep(250);
  }
  await stop();
  throw new Error(`${script} did not start:\n${out}`);
}

test('dev.sh: key on first run, admin token, state kept across restarts', { timeout: 600_000 }, async () => {
  const first = await devStart();
  const keys = readFileSync(join(home, 'keys.json'), 'utf8');
  assert.equal(statSync(join(home, 'keys.json')).mode & 0o077, 0, 'the key is private');
  const auth = { authorization: `Bearer ${first.token}` };
  const created = await fetch(`${first.base}/v1/namespaces`, { method: 'POST', headers: auth, body: '{"namespace":"dev-orders","maxCount":100}' });
  assert.equal(created.status, 201);
  await stop();

  const second = await devStart();
  assert.equal(readFileSync(join(home, 'keys.json'), 'utf8'), keys, 'the key is created once');
  const s = await fetch(`${second.base}/v1/namespaces/dev-orders`, { headers: { authorization: `Bearer ${second.token}` } });
  assert.equal(s.status, 200);
  assert.equal((await s.json()).namespace, 'dev-orders');
  // The first run's token still verifies: same key.
  const list = await fetch(`${second.base}/v1/namespaces`, { headers: auth });
  assert.equal(list.status, 200);
  await stop();
});

test('workerd.sh: self-hosted on bare workerd, with the admin page and its headers; state kept across restarts', { timeout: 600_000 }, async () => {
  const first = await devStart('workerd.sh');
  const auth = { authorization: `Bearer ${first.token}` };
  const created = await fetch(`${first.base}/v1/namespaces`, { method: 'POST', headers: auth, body: '{"namespace":"self-hosted","maxCount":100}' });
  assert.equal(created.status, 201);
  const grant = await fetch(`${first.base}/v1/ranges`, { method: 'POST', headers: auth, body: '{"namespace":"self-hosted","incarnation":"a","requestId":"r1","count":5}' });
  assert.equal(grant.status, 403, 'an admin token is not a generator');
  const page = await fetch(`${first.base}/admin/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-security-policy'), /default-src 'self'/);
  assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
  const root = await fetch(`${first.base}/`, { redirect: 'manual' });
  assert.equal(root.status, 308, 'a browser opening the root is sent to the admin page');
  assert.equal(root.headers.get('location'), '/admin/');
  await stop();

  const second = await devStart('workerd.sh');
  const s = await fetch(`${second.base}/v1/namespaces/self-hosted`, { headers: auth });
  assert.equal(s.status, 200);
  assert.equal((await s.json()).maxCount, 100);
  await stop();
});
