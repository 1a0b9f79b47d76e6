// The example apps of examples/ as their users run them: each copied into a
// scratch folder, its locked dependencies installed with `npm ci` (the npm
// cache is warm from scripts/setup.sh, which installs every example), the
// packed `rangeid` tarball installed on top, then the framework's own
// commands (`npm run build`, `npm start`, `npm run dev`, ...) started as
// child processes in their own process group, and pages driven in
// Debian's Chromium.
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { packTarball } from "../npm/harness.mjs";

const here = dirname(fileURLToPath(import.meta.url));
export const examplesDir = join(here, "..", "..", "examples");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The environment a user's shell gives the framework's commands: this
 * one (the pinned Node.js first on PATH), without the test runner's own
 * variables, with Next.js's telemetry off (no network here), plus `extra`. */
export function userEnv(extra = {}) {
  const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", ...extra };
  delete env.NODE_TEST_CONTEXT;
  delete env.NODE_OPTIONS;
  return env;
}

/** Runs a command to completion; resolves with its output and duration,
 * rejects with the output's tail when it exits non-zero. */
export function run(command, args, { cwd, env = userEnv(), timeoutMs = 600_000 } = {}) {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const proc = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const append = (b) => {
      output = (output + b.toString()).slice(-40_000);
    };
    proc.stdout.on("data", append);
    proc.stderr.on("data", append);
    const timer = setTimeout(() => {
      try { process.kill(-proc.pid, "SIGKILL"); } catch { /* gone */ }
    }, timeoutMs);
    proc.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    proc.on("exit", (code, signal) => {
      clearTimeout(timer);
      const ms = Date.now() - started;
      if (code === 0) resolve({ output, ms });
      else reject(new Error(`${command} ${args.join(" ")} (in ${cwd}) ended with ${code ?? signal} after ${ms} ms:\n${output.slice(-6000)}`));
    });
  });
}

/**
 * Copies examples/`name` into a new scratch folder (without node_modules or
 * build output or .env files), installs its locked dependencies with `npm ci` and the
 * packed tarball with `npm install --no-save`, as its README says.
 */
export async function prepareExample(name) {
  const scratch = mkdtempSync(join(tmpdir(), `rangeid-example-${name}-`));
  const dir = join(scratch, name);
  const source = join(examplesDir, name);
  cpSync(source, dir, {
    recursive: true,
    filter: (src) => !/[/\\](node_modules|\.next|dist|\.env[^/\\]*)$/.test(src.slice(source.length)),
  });
  const tarball = packTarball(scratch);
  const started = Date.now();
  await run("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: dir });
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--no-save", tarball], { cwd: dir });
  return {
    dir,
    tarball,
    installMs: Date.now() - started,
    cleanup: () => rmSync(scratch, { recursive: true, force: true }),
  };
}

/**
 * A long-running command (a dev server, `next start`, `vite preview`) in
 * its own process group, ready once `url` answers any HTTP status. `stop()`
 * ends that group only.
 */
export async function startServer(command, args, { cwd, env = userEnv(), url, timeoutMs = 180_000 }) {
  const proc = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const server = {
    proc,
    log: "",
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once("exit", r));
      try { process.kill(-proc.pid, "SIGTERM"); } catch { /* gone */ }
      const timeout = sleep(10_000).then(() => "timeout");
      if ((await Promise.race([exited, timeout])) === "timeout") {
        try { process.kill(-proc.pid, "SIGKILL"); } catch { /* gone */ }
        await exited;
      }
    },
  };
  const append = (b) => {
    server.log = (server.log + b.toString()).slice(-40_000);
  };
  proc.stdout.on("data", append);
  proc.stderr.on("data", append);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) break;
    try {
      await fetch(url, { signal: AbortSignal.timeout(5000) });
      return server;
    } catch {
      await sleep(250);
    }
  }
  await server.stop();
  throw new Error(`${command} ${args.join(" ")} did not answer at ${url}:\n${server.log.slice(-6000)}`);
}

/** Debian's Chromium, headless, through playwright-core. */
export function launchChromium() {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run",
    ],
  });
}

/** Asserts that every ID is a positive decimal string, each one new to `seen` (which it joins). */
export function assertFresh(ids, seen) {
  for (const id of ids) {
    assert.equal(typeof id, "string");
    assert.match(id, /^[1-9][0-9]*$/);
    assert.ok(!seen.has(id), `${id} issued twice`);
    seen.add(id);
  }
}

/**
 * Asserts against the authority's ledger that every ID lies in a range it
 * granted to `incarnation`, under the token subject `sub`.
 */
export async function assertGranted(authority, admin, namespace, ids, { incarnation, sub }) {
  const r = await authority.req("GET", `/v1/namespaces/${namespace}/grants?limit=1000`, { token: admin });
  assert.equal(r.status, 200, r.text);
  const mine = r.body.grants.filter((g) => g.incarnation === incarnation);
  assert.ok(mine.length >= 1, `no grant to incarnation ${incarnation} in ${namespace}`);
  for (const g of mine) assert.equal(g.sub, sub, `grant ${g.start}..${g.end} went to ${g.sub}`);
  for (const id of ids) {
    const n = BigInt(id);
    assert.ok(mine.some((g) => BigInt(g.start) <= n && n < BigInt(g.end)), `${id} is in no range granted to ${incarnation}`);
  }
}
