// Test harness: runs the built authority on the real local workerd (through
// wrangler dev) on loopback, mints tokens, and checks answers against the
// served OpenAPI document.
//
// Runs the production Worker, edge-authority/build/ (scripts/build.sh), the
// one that ships; only an Authority made with `testBuild: true` runs the
// test build, edge-authority/build-test/ (scripts/build.sh
// --test-switches), the one that reads the test-only switches
// (RANGEID_TEST_ONLY_*), which no other Authority may be given.
import { execFileSync, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { PREFIX as SWITCH_PREFIX, testWorkerdConfig } from '../../edge-authority/scripts/test-switches.mjs';

const addFormats = addFormatsModule.default ?? addFormatsModule;

const here = dirname(fileURLToPath(import.meta.url));
export const authorityDir = join(here, '..', '..', 'edge-authority');
const wrangler = join(authorityDir, 'node_modules', '.bin', 'wrangler');
const workerd = join(authorityDir, 'node_modules', '@cloudflare', 'workerd-linux-64', 'bin', 'workerd');

export const ALLOWED_ORIGIN = 'https://ok.example';

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The pids of every live descendant of `root`, from /proc. */
export function descendants(root) {
  const children = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(after[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch {
      // The process went away while we looked.
    }
  }
  const out = [];
  const stack = [root];
  while (stack.length) {
    const p = stack.pop();
    for (const c of children.get(p) ?? []) {
      out.push(c);
      stack.push(c);
    }
  }
  return out;
}

function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function commOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * One local authority on 127.0.0.1, with its own key, state folder and
 * ports: through `wrangler dev` (the default, as scripts/dev.sh runs it) or,
 * with `runtime: 'workerd'`, on the same workerd binary run directly from
 * the committed self-hosting config (no dev proxy in front). The default
 * comes from RANGEID_TEST_RUNTIME. The production build unless `testBuild`
 * (which may change between stops and starts, as may `witnessDown`).
 * `stop()` ends only the processes it started.
 */
export class Authority {
  constructor({ retentionSeconds, stateDir, witnessDown = false, testBuild = false, audience, vars = {}, strayVars = {}, keysText, runtime = process.env.RANGEID_TEST_RUNTIME || 'wrangler', inspect = false } = {}) {
    if (!['wrangler', 'workerd'].includes(runtime)) throw new Error(`unknown runtime ${runtime}`);
    this.runtime = runtime;
    // Bare workerd only: serve the V8 inspector on `inspectorPort` (a
    // workerd command-line option, not a build switch), for profiling.
    this.inspect = inspect;
    this.testBuild = testBuild;
    // A short retention is a test-only setting (test build); the authority
    // refuses one under an hour otherwise.
    this.retentionSeconds = retentionSeconds;
    this.witnessDown = witnessDown;
    this.audience = audience;
    this.extraVars = vars;
    // Passed as they are, test switches included, whatever the build: only
    // for the drill that the production build ignores them.
    this.strayVars = strayVars;
    this.workDir = mkdtempSync(join(tmpdir(), 'rangeid-authority-test-'));
    this.stateDir = stateDir ?? join(this.workDir, 'state');
    this.kid = 'test-1';
    this.key = randomBytes(32).toString('hex');
    this.oldKid = 'old-1';
    this.oldKey = randomBytes(32).toString('hex');
    this.keysText = keysText ?? JSON.stringify({ [this.kid]: this.key, [this.oldKid]: this.oldKey });
    this.envFile = join(this.workDir, 'dev.vars');
    writeFileSync(this.envFile, `RANGEID_SIGNING_KEYS='${this.keysText}'\n`, { mode: 0o600 });
    this.log = '';
  }

  /** Replaces the key map (RANGEID_SIGNING_KEYS); the next start uses it. */
  setKeys(text) {
    this.keysText = text;
    writeFileSync(this.envFile, `RANGEID_SIGNING_KEYS='${text}'\n`, { mode: 0o600 });
  }

  /** Starts the authority and waits for /healthz; retries on another port
   * if the process dies early (a port taken between probe and bind). */
  async start() {
    let last;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        return await this.#startOnce();
      } catch (e) {
        last = e;
      }
    }
    throw last;
  }

  /** The build this instance runs: edge-authority/build or build-test. */
  get buildDir() {
    return join(authorityDir, this.testBuild ? 'build-test' : 'build');
  }

  async #startOnce() {
    if (!existsSync(join(this.buildDir, 'index.js'))) {
      throw new Error(`${this.buildDir}/index.js is missing: run edge-authority/scripts/build.sh${this.testBuild ? ' --test-switches' : ''}`);
    }
    const vars = this.#vars();
    this.port = await freePort();
    this.inspectorPort = await freePort();
    this.base = `http://127.0.0.1:${this.port}`;
    this.log = '';
    this.proc = this.runtime === 'workerd' ? this.#spawnWorkerd(vars) : spawn(
      wrangler,
      [
        // The test build's Worker instead of wrangler.toml's `main` (first:
        // after an array option such as --var it would be read as a value).
        'dev', ...(this.testBuild ? [join(this.buildDir, 'index.js')] : []),
        '--local', '--ip', '127.0.0.1', '--port', String(this.port),
        '--inspector-port', String(this.inspectorPort),
        '--persist-to', this.stateDir, '--env-file', this.envFile,
        '--show-interactive-dev-session=false', '--log-level', 'warn',
        '--var', `RANGEID_CORS_ORIGINS:${ALLOWED_ORIGIN}`,
        ...vars.flatMap(([k, v]) => ['--var', `${k}:${v}`]),
      ],
      {
        cwd: authorityDir,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: 'true' },
      },
    );
    const append = (b) => {
      this.log = (this.log + b.toString()).slice(-20000);
    };
    this.proc.stdout.on('data', append);
    this.proc.stderr.on('data', append);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (this.proc.exitCode !== null) break;
      try {
        const r = await fetch(`${this.base}/healthz`, { signal: AbortSignal.timeout(2000) });
        if (r.status === 200) return this;
      } catch {
        // Not up yet.
      }
      await sleep(250);
    }
    await this.stop();
    throw new Error(`authority did not start:\n${this.log}`);
  }

  /** The settings this instance runs with; a test-only one needs the test
   * build (the production build does not read them: a drill that set one
   * there would test nothing). */
  #vars() {
    const vars = [];
    if (this.retentionSeconds !== undefined) vars.push(['RANGEID_TEST_ONLY_GRANT_RETENTION_SECONDS', String(this.retentionSeconds)]);
    if (this.witnessDown) vars.push(['RANGEID_TEST_ONLY_WITNESS_DOWN', '1']);
    if (this.audience) vars.push(['RANGEID_TOKEN_AUDIENCE', this.audience]);
    vars.push(...Object.entries(this.extraVars));
    const switches = vars.filter(([k]) => k.startsWith(SWITCH_PREFIX)).map(([k]) => k);
    if (switches.length > 0 && !this.testBuild) {
      throw new Error(`${switches.join(', ')}: test-only switches need the test build (new Authority({ testBuild: true }))`);
    }
    return [...vars, ...Object.entries(this.strayVars)];
  }

  /** Bare workerd with the committed self-hosting config
   * (edge-authority/workerd/authority.capnp), or for the test build the
   * same with the switches bound (build-test/authority.capnp): settings
   * from the environment, state and port by command-line overrides. */
  #spawnWorkerd(vars) {
    mkdirSync(this.stateDir, { recursive: true });
    const env = {
      PATH: process.env.PATH,
      RANGEID_SIGNING_KEYS: this.keysText,
      RANGEID_CORS_ORIGINS: ALLOWED_ORIGIN,
      ...Object.fromEntries(vars),
    };
    const config = this.testBuild ? testWorkerdConfig() : join(authorityDir, 'workerd', 'authority.capnp');
    return spawn(workerd, [
      'serve', '--experimental', config,
      '--directory-path', `state=${this.stateDir}`,
      '--directory-path', `assets=${join(authorityDir, '..', 'www', 'dist')}`,
      '--socket-addr', `http=127.0.0.1:${this.port}`,
      ...(this.inspect ? [`--inspector-addr=127.0.0.1:${this.inspectorPort}`] : []),
    ], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  }

  /** The folder holding the SQLite files of every object of class
   * `className` (`Namespace`, `Fence`, `Registry`) in this instance's state. */
  storageDir(className) {
    return this.runtime === 'workerd'
      ? join(this.stateDir, `rangeid-authority-${className.toLowerCase()}`)
      : join(this.stateDir, 'v3', 'do', `rangeid-authority-${className}`);
  }

  /** The SQLite files (with -wal and -shm) of the objects of `className`,
   * without the runtime's metadata file. */
  objectFiles(className) {
    const dir = this.storageDir(className);
    return readdirSync(dir).filter((f) => !f.startsWith('metadata.')).map((f) => join(dir, f));
  }

  /** Copies the files of every object of `className` into `dir` (a
   * backup, taken while stopped); returns the copy for `putBackObjects`. */
  copyObjects(className, dir) {
    mkdirSync(dir, { recursive: true });
    const files = this.objectFiles(className);
    assert.ok(files.some((f) => f.endsWith('.sqlite')), `${className} has a SQLite file`);
    for (const f of files) copyFileSync(f, join(dir, basename(f)));
    return { className, dir, files };
  }

  /** Puts a copy from `copyObjects` back, as a point-in-time restore of
   * that class's objects alone would (while stopped). */
  putBackObjects({ className, dir, files }) {
    for (const f of this.objectFiles(className)) rmSync(f);
    for (const f of files) copyFileSync(join(dir, basename(f)), f);
  }

  /** The highest mark any witness (Fence object) stored, read from its
   * SQLite file. */
  witnessMark() {
    const marks = this.objectFiles('Fence').filter((f) => f.endsWith('.sqlite')).map((file) => BigInt(execFileSync('python3', ['-c',
      'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT mark FROM fence").fetchone()[0])', file]).toString().trim()));
    assert.ok(marks.length > 0, 'the witness has storage');
    return marks.reduce((x, y) => (x > y ? x : y));
  }

  /** The workerd processes this instance started. */
  workerdPids() {
    if (!this.proc) return [];
    return [this.proc.pid, ...descendants(this.proc.pid)].filter((p) => commOf(p).startsWith('workerd'));
  }

  /** SIGKILLs workerd, then the rest of this instance's process group. */
  async kill() {
    for (const p of this.workerdPids()) {
      try { process.kill(p, 'SIGKILL'); } catch { /* gone */ }
    }
    await this.#endGroup('SIGKILL');
  }

  async stop() {
    await this.#endGroup('SIGTERM');
  }

  async #endGroup(signal) {
    const proc = this.proc;
    if (!proc) return;
    this.proc = null;
    const pids = [proc.pid, ...descendants(proc.pid)];
    try { process.kill(-proc.pid, signal); } catch { /* gone */ }
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && pids.some(alive)) await sleep(100);
    for (const p of pids.filter(alive)) {
      try { process.kill(p, 'SIGKILL'); } catch { /* gone */ }
    }
  }

  cleanup() {
    rmSync(this.workDir, { recursive: true, force: true });
  }

  /** An HS256 token for this instance's key (or any key/kid/header/claims). */
  token(role, ns, { ttl = 3600, sub = 'tester', kid = this.kid, key = this.key, header, claims } = {}) {
    const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const h = b64(header ?? { alg: 'HS256', kid, typ: 'JWT' });
    const p = b64(claims ?? { sub, role, ns, exp: Math.floor(Date.now() / 1000) + ttl });
    const s = createHmac('sha256', key).update(`${h}.${p}`).digest('base64url');
    return `${h}.${p}.${s}`;
  }

  /** Sends a request; returns {status, headers, body (parsed JSON or text)}. */
  async req(method, path, { token, body, raw, headers = {} } = {}) {
    const h = { ...headers };
    if (token) h.authorization = `Bearer ${token}`;
    let payload;
    if (raw !== undefined) payload = raw;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      h['content-type'] = 'application/json';
    }
    const r = await fetch(`${this.base}${path}`, {
      method, headers: h, body: payload, redirect: 'manual', signal: AbortSignal.timeout(30_000),
    });
    const text = await r.text();
    let parsed = text;
    try { parsed = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
    return { status: r.status, headers: r.headers, body: parsed, text };
  }
}

// ---- Answers checked against the served OpenAPI document, with Ajv ----

const validators = new WeakMap();

/** Ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses) over `doc`'s schemas,
 * one compiled validator per schema. */
function validatorFor(doc, schema) {
  let cache = validators.get(doc);
  if (!cache) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi', components: doc.components });
    cache = { ajv, compiled: new Map() };
    validators.set(doc, cache);
  }
  const key = JSON.stringify(schema);
  let v = cache.compiled.get(key);
  if (!v) {
    const rebased = JSON.parse(key.replaceAll('"#/components/', '"openapi#/components/'));
    v = cache.ajv.compile(rebased);
    cache.compiled.set(key, v);
  }
  return v;
}

/** Errors of `value` against `schema` (a schema of `doc`), empty when valid. */
export function validate(doc, schema, value) {
  const v = validatorFor(doc, schema);
  return v(value) ? [] : v.errors.map((e) => `${e.instancePath || '$'} ${e.message}`);
}

/** Asserts that `res` is documented for `method template` and matches its schema. */
export function conforms(doc, method, template, res) {
  const op = doc.paths[template]?.[method.toLowerCase()];
  assert.ok(op, `${method} ${template} is not in the OpenAPI document`);
  const documented = op.responses[String(res.status)];
  assert.ok(documented, `${method} ${template} answered ${res.status}, which is not documented: ${res.text}`);
  const schema = documented.content?.['application/json']?.schema;
  if (schema) {
    const errs = validate(doc, schema, res.body);
    assert.deepEqual(errs, [], `${method} ${template} ${res.status}: ${res.text}`);
  }
  if (res.status === 503) assert.ok(res.headers.get('retry-after'), '503 without Retry-After');
  if (res.status === 405) assert.ok(res.headers.get('allow'), '405 without Allow');
}

/** Asserts that no two ranges [start, end) (BigInt bounds) share an ID. */
export function assertDisjoint(ranges) {
  const sorted = [...ranges].sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0));
  for (let i = 1; i < sorted.length; i++) {
    assert.ok(sorted[i - 1].end <= sorted[i].start,
      `overlap: [${sorted[i - 1].start}, ${sorted[i - 1].end}) and [${sorted[i].start}, ${sorted[i].end})`);
  }
}

/** A unique namespace name for one test. */
let counter = 0;
export function uniqueNs(prefix) {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

/** Takes `n` grants of `count` from `a` as incarnation `inc` (request ids
 * r0, r1, ...), each answered 200; returns them as {start, end} BigInts. */
export async function takeGrants(a, gen, ns, inc, n, count) {
  const got = [];
  for (let i = 0; i < n; i++) {
    const r = await a.req('POST', '/v1/ranges', { token: gen, body: { namespace: ns, incarnation: inc, requestId: `r${i}`, count } });
    assert.equal(r.status, 200, r.text);
    got.push({ start: BigInt(r.body.start), end: BigInt(r.body.end) });
  }
  return got;
}
