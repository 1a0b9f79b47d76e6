// The README's quick start for a JavaScript developer, as one would run it:
// in a scratch project, with only the pinned Node.js, /usr/bin and /bin on
// PATH (no cargo, no rustc, no wrangler, no clone), the two tarballs that
// `make pack` (scripts/pack.mjs) makes are installed with npm, `npx --no-install rangeid dev` serves
// the prebuilt authority on the workerd binary from npm, the CLI creates a
// namespace and a Node script issues IDs. Prints the time from install to
// the first ID, with the install and the start apart (the goal: under 60 s
// here with a warm npm cache; printed, not asserted). Then: Ctrl-C stops
// workerd with it; a second run keeps every namespace; a process manager's
// SIGTERM or a SIGKILL leave no workerd behind; `rangeid deploy --dry-run`
// works with no network; the messages for a missing rangeid-authority and
// a missing wrangler say how to install them.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { descendants } from "../authority/harness.mjs";
import { bytes } from "../release/pack.mjs";

// Only what a JavaScript developer has: this Node.js (the pinned 24; npm
// and npx from /usr/bin run on it), the system's /usr/bin and /bin. The
// rest of the environment is the machine's (its CA certificates, npm's
// configuration and cache), less anything of Rust's, rangeid's or a
// running npm script's.
const PATH = [dirname(process.execPath), "/usr/bin", "/bin"].join(":");
const BASE_ENV = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(PATH|CARGO|RUSTUP|RUSTC|RUSTFLAGS|RANGEID_|npm_|NODE_OPTIONS|NODE_TEST)/i.test(k))),
  PATH,
  npm_config_update_notifier: "false",
  npm_config_fund: "false",
  npm_config_audit: "false",
};
// After the install nothing may come from the registry: npx runs what is installed.
const NO_REGISTRY = { npm_config_offline: "true", npm_config_registry: "http://127.0.0.1:9/" };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let tarballs;
let project;
let version;
const running = new Set();
// Every process a dev run had, so that a failed check leaves none behind.
const seen = new Map(); // pid -> its comm then, so a reused pid is never hit
const cleanup = [];

/** Runs a command in `cwd` with the user's environment; resolves {code, stdout, stderr}. */
function run(file, args, { cwd = project, env = {}, offline = false } = {}) {
  const [cmd, argv] = offline ? ["unshare", ["-n", file, ...args]] : [file, args];
  return new Promise((resolve) => {
    execFile(cmd, argv, { cwd, env: { ...BASE_ENV, ...env }, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr });
    });
  });
}
const npx = (args, opts = {}) => run("npx", ["--no-install", "rangeid", ...args], { ...opts, env: { ...NO_REGISTRY, ...opts.env } });

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** `unshare -n` (no network at all) when this machine allows it. */
const canUnshare = spawnSync("unshare", ["-n", "true"]).status === 0;

/**
 * `npx --no-install rangeid dev ARGS` in its own process group (as a
 * terminal runs it), until it printed the admin token and /healthz answers.
 */
async function startDev(args, cwd = project) {
  const p = spawn("npx", ["--no-install", "rangeid", "dev", ...args], {
    cwd,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...BASE_ENV, ...NO_REGISTRY },
  });
  running.add(p);
  p.once("exit", () => running.delete(p));
  // `closed`: npx exited and every writer of its output pipes (rangeid dev, workerd) too.
  const dev = { proc: p, out: "", err: "", closed: new Promise((r) => p.once("close", r)) };
  p.stdout.on("data", (b) => { dev.out += b; });
  p.stderr.on("data", (b) => { dev.err += b; });
  const port = Number(args[args.indexOf("--port") + 1]);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && p.exitCode === null) {
    const token = /admin token \(30 days\): (\S+)/.exec(dev.out)?.[1];
    if (token) {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null);
      if (r?.status === 200) {
        const pids = [p.pid, ...descendants(p.pid)];
        for (const pid of pids) seen.set(pid, comm(pid));
        return Object.assign(dev, { token, base: `http://127.0.0.1:${port}`, pids });
      }
    }
    await sleep(50);
  }
  throw new Error(`rangeid dev did not start:\n${dev.out}\n${dev.err}`);
}

const alive = (pid) => {
  try {
    return !readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].startsWith("Z");
  } catch {
    return false;
  }
};
const comm = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
};

/** Waits until every pid is gone; returns the ones still alive after `ms`. */
async function gone(pids, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && pids.some(alive)) await sleep(50);
  return pids.filter(alive);
}

/** The Node script of the quick start: a generator for `namespace`, `n` IDs. */
function issueScript(dir) {
  writeFileSync(join(dir, "issue.mjs"), `import { createGenerator } from "rangeid";
const ids = await createGenerator({ url: process.env.RANGEID_URL, token: process.env.RANGEID_TOKEN, namespace: process.argv[2] });
const first = await ids.nextId();
const firstAt = Date.now();
const all = [first];
for (let i = 1; i < Number(process.argv[3]); i++) all.push(await ids.nextId());
ids.close();
console.log(JSON.stringify({ firstAt, ids: all }));
`);
}

before(() => {
  for (const tool of ["cargo", "rustc", "wrangler", "worker-build"]) {
    const r = spawnSync("sh", ["-c", `command -v ${tool}`], { env: { PATH } });
    assert.notEqual(r.status, 0, `${tool} must not be on the test's PATH (${PATH}), found ${r.stdout}`);
  }
  const npmBin = spawnSync("sh", ["-c", "command -v npm && command -v npx && node --version"], { env: { PATH }, encoding: "utf8" });
  assert.equal(npmBin.status, 0, "npm and npx are on PATH");
  console.log(`PATH=${PATH} (npm, npx: ${npmBin.stdout.trim().split("\n").join(", ")})`);
  // The README's way to the tarballs until the packages are on the registry:
  // `make pack`, which is scripts/pack.mjs; its --json line is packBoth's result.
  const out = mkdtempSync(join(tmpdir(), "rangeid-pack-"));
  const packed = spawnSync(process.execPath, [new URL("../../scripts/pack.mjs", import.meta.url).pathname, "--out", out, "--json"], { encoding: "utf8", maxBuffer: 64 << 20 });
  assert.equal(packed.status, 0, packed.stderr);
  tarballs = JSON.parse(packed.stdout.trim().split("\n").at(-1));
  for (const name of ["rangeid", "rangeid-authority"]) {
    const line = `npm install ${name === "rangeid" ? "" : "--save-dev "}${tarballs[name].tarball}`;
    assert.ok(packed.stdout.includes(line), `make pack prints how to install ${name}: ${line}`);
  }
  for (const [name, p] of Object.entries(tarballs)) console.log(`${name}: packed ${bytes(p.size)}, unpacked ${bytes(p.unpackedSize)}`);
  version = JSON.parse(readFileSync(new URL("../../npm/package.json", import.meta.url), "utf8")).version;
  project = mkdtempSync(join(tmpdir(), "rangeid-quickstart-"));
  cleanup.push(project, dirname(tarballs.rangeid.tarball));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "my-app", private: true, type: "module" }));
  issueScript(project);
});

after(async () => {
  for (const p of running) {
    try { process.kill(-p.pid, "SIGKILL"); } catch { /* gone */ }
  }
  for (const [pid, name] of seen) {
    if (alive(pid) && comm(pid) === name) process.kill(pid, "SIGKILL"); // an orphan a failed check found
  }
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

let first;
const firstIds = new Set();

test("from the packed tarballs to the first ID with no Rust on PATH: install, npx rangeid dev, a namespace, IDs", { timeout: 300_000 }, async () => {
  const t0 = Date.now();
  let r = await run("npm", ["install", tarballs.rangeid.tarball]);
  assert.equal(r.code, 0, r.stderr);
  r = await run("npm", ["install", "--save-dev", tarballs["rangeid-authority"].tarball]);
  assert.equal(r.code, 0, r.stderr);
  const t1 = Date.now();
  const modules = spawnSync("du", ["-sb", join(project, "node_modules")], { encoding: "utf8" }).stdout.split("\t")[0];

  const port = await freePort();
  first = await startDev(["--port", String(port)]);
  const t2 = Date.now();
  assert.match(first.out, new RegExp(`admin page: http://127\\.0\\.0\\.1:${port}/admin/#token=${first.token}`));
  assert.ok(first.pids.some((pid) => comm(pid) === "workerd"), "workerd runs under it");

  const env = { RANGEID_URL: first.base, RANGEID_TOKEN: first.token };
  r = await npx(["ns", "create", "orders"], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^created orders/);
  r = await npx(["token", "--role", "generator", "--ns", "orders", "--keys", ".rangeid/keys.json"]);
  assert.equal(r.code, 0, r.stderr);
  r = await run("node", ["issue.mjs", "orders", "1000"], { env: { RANGEID_URL: first.base, RANGEID_TOKEN: r.stdout.trim() } });
  assert.equal(r.code, 0, r.stderr);
  const { firstAt, ids } = JSON.parse(r.stdout);
  for (const id of ids) firstIds.add(id);
  assert.equal(firstIds.size, 1000, "1,000 distinct IDs");
  assert.ok(ids.every((id) => /^[1-9][0-9]*$/.test(id)), "decimal strings");

  const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
  console.log(`install to first ID: ${s(firstAt - t0)} (npm install of both tarballs ${s(t1 - t0)}; npx rangeid dev to serving ${s(t2 - t1)}; namespace, token and the first ID ${s(firstAt - t2)}); node_modules ${bytes(Number(modules))}`);

  // The state folder: the key, private, and ignored by git wherever it is.
  assert.equal(statSync(join(project, ".rangeid")).mode & 0o077, 0);
  assert.equal(statSync(join(project, ".rangeid", "keys.json")).mode & 0o077, 0);
  assert.match(readFileSync(join(project, ".rangeid", ".gitignore"), "utf8"), /^\*$/m);
  assert.ok(existsSync(join(project, ".rangeid", "workerd-state")));
});

test("Ctrl-C stops it and workerd with it; a second run (--state, another --port) keeps every namespace; a taken port is refused", { timeout: 120_000 }, async () => {
  assert.ok(first, "the first test started it");
  const keys = readFileSync(join(project, ".rangeid", "keys.json"), "utf8");
  process.kill(-first.proc.pid, "SIGINT"); // what a terminal's Ctrl-C does
  assert.deepEqual(await gone(first.pids), [], "no process of it is left, workerd included");
  await first.closed;
  assert.match(first.err, /rangeid dev: stopped/);

  const port = await freePort();
  const second = await startDev(["--state", ".rangeid", "--port", String(port)]);
  assert.equal(readFileSync(join(project, ".rangeid", "keys.json"), "utf8"), keys, "the key is made once");
  let r = await npx(["ns", "show", "orders", "--json"], { env: { RANGEID_URL: second.base, RANGEID_TOKEN: first.token } });
  assert.equal(r.code, 0, `the first run's token still works, and orders is there: ${r.stderr}`);
  assert.equal(JSON.parse(r.stdout).idsGranted !== "0", true);
  r = await npx(["token", "--role", "generator", "--ns", "orders", "--keys", ".rangeid/keys.json"]);
  r = await run("node", ["issue.mjs", "orders", "1000"], { env: { RANGEID_URL: second.base, RANGEID_TOKEN: r.stdout.trim() } });
  assert.equal(r.code, 0, r.stderr);
  const again = JSON.parse(r.stdout).ids;
  assert.deepEqual(again.filter((id) => firstIds.has(id)), [], "no ID of the first run is issued again");

  r = await npx(["dev", "--port", String(port)]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, new RegExp(`127\\.0\\.0\\.1:${port} is in use`));
  // A second dev on the same state, on a free port: refused, before any workerd starts.
  r = await npx(["dev", "--port", String(await freePort())]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /another rangeid dev \(pid \d+\) is serving the state in .*\.rangeid: stop it first, or pass another --state DIR/);
  r = await npx(["dev", "--port", "70000"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--port must be a whole number from 1 to 65535/);

  process.kill(-second.proc.pid, "SIGINT");
  assert.deepEqual(await gone(second.pids), []);
});

test("a process manager's SIGTERM to npx, or a SIGKILL of the rangeid process, leave no workerd behind", { timeout: 120_000 }, async () => {
  const a = await startDev(["--port", String(await freePort())]);
  process.kill(a.proc.pid, "SIGTERM"); // npx alone, not its group: it passes it to its shell only
  assert.deepEqual(await gone(a.pids), [], "SIGTERM to npx stops everything under it");
  await a.closed;
  assert.match(a.err, /the process that started it is gone; stopping\nrangeid dev: stopped/);

  // A SIGKILL cannot be passed on: workerd goes by setpriv's parent-death
  // signal, where setpriv (util-linux) is.
  if (!existsSync("/usr/bin/setpriv")) return void console.log("no /usr/bin/setpriv here: the SIGKILL case is not covered");
  const b = await startDev(["--port", String(await freePort())]);
  const cmdline = (pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      return [];
    }
  };
  // The node process running the rangeid bin (npx's own node runs npm-cli.js).
  const rangeid = b.pids.find((pid) => cmdline(pid).some((a) => /node_modules\/(\.bin\/rangeid|rangeid\/bin\/rangeid\.mjs)$/.test(a)));
  const workerd = b.pids.filter((pid) => comm(pid) === "workerd");
  assert.ok(rangeid && workerd.length, `found the rangeid process and workerd among ${b.pids.map((pid) => cmdline(pid).join(" "))}`);
  process.kill(rangeid, "SIGKILL");
  assert.deepEqual(await gone(workerd), [], "workerd does not outlive a killed rangeid dev");
  try { process.kill(-b.proc.pid, "SIGKILL"); } catch { /* gone */ }
  // Its claim on the state folder died with it: the next run takes it over.
  assert.ok(existsSync(join(project, ".rangeid", "dev.pid")), "a SIGKILL leaves the claim behind");
  const c = await startDev(["--port", String(await freePort())]);
  process.kill(-c.proc.pid, "SIGINT");
  assert.deepEqual(await gone(c.pids), []);
  await c.closed;
  assert.ok(!existsSync(join(project, ".rangeid", "dev.pid")), "a clean stop releases the claim");

  // A claim whose pid is in use again by another process (after a reboot
  // of the machine or container pids come round): this test's own pid,
  // alive, with a start time that is not its own. Taken over, not obeyed.
  writeFileSync(join(project, ".rangeid", "dev.pid"), `${process.pid}:1\n`);
  const d = await startDev(["--port", String(await freePort())]);
  process.kill(-d.proc.pid, "SIGINT");
  assert.deepEqual(await gone(d.pids), []);
  await d.closed;
});

test("two rangeid dev started at once on a fresh state folder: one serves, the other is refused, and one key is made", { timeout: 120_000 }, async () => {
  for (let round = 0; round < 3; round++) {
    const state = `.rangeid-race-${round}`;
    const [a, b] = await Promise.allSettled([
      startDev(["--state", state, "--port", String(await freePort())]),
      startDev(["--state", state, "--port", String(await freePort())]),
    ]);
    const served = [a, b].filter((r) => r.status === "fulfilled").map((r) => r.value);
    const refused = [a, b].filter((r) => r.status === "rejected").map((r) => r.reason.message);
    assert.equal(served.length, 1, `exactly one serves: ${refused.join("\n")}`);
    assert.match(refused[0], /another rangeid dev (\(pid \d+\) is serving|is starting on) the state in/);
    // The admin token it printed is accepted: its key is the one in the folder.
    const r = await npx(["status", "--json"], { env: { RANGEID_URL: served[0].base, RANGEID_TOKEN: served[0].token } });
    assert.equal(r.code, 0, r.stderr);
    process.kill(-served[0].proc.pid, "SIGINT");
    assert.deepEqual(await gone(served[0].pids), []);
    await served[0].closed;
    assert.ok(!existsSync(join(project, state, "dev.pid")), "a clean stop releases the claim");
  }
});

test("without rangeid-authority, dev and deploy say exactly how to install it", { timeout: 120_000 }, async () => {
  const bare = mkdtempSync(join(tmpdir(), "rangeid-quickstart-bare-"));
  cleanup.push(bare);
  writeFileSync(join(bare, "package.json"), JSON.stringify({ name: "bare", private: true, type: "module" }));
  let r = await run("npm", ["install", tarballs.rangeid.tarball], { cwd: bare });
  assert.equal(r.code, 0, r.stderr);
  for (const command of [["dev"], ["deploy", "--dry-run"]]) {
    r = await npx(command, { cwd: bare });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /the npm package rangeid-authority, which is not installed here/);
    assert.ok(r.stderr.includes(`  npm install --save-dev rangeid-authority@${version}\n  npx --no-install rangeid ${command.join(" ")}\n`), r.stderr);
  }
  assert.deepEqual(readdirSync(bare).sort(), ["node_modules", "package-lock.json", "package.json"], "nothing was written");
});

test("rangeid deploy: without wrangler it says how to get it; with it, --dry-run works with no network", { timeout: 300_000 }, async () => {
  let r = await npx(["deploy", "--dry-run"]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /uses wrangler, Cloudflare's deploy tool, which is not installed here/);
  assert.match(r.stderr, /\n {2}npm install --save-dev wrangler@4\.164\.0\n {2}npx --no-install rangeid deploy --dry-run/);

  const offline = canUnshare;
  if (!offline) console.log("unshare -n is not allowed here: the dry run runs with the registry and proxies pointed nowhere instead");
  const blocked = offline ? {} : { ...NO_REGISTRY, HTTPS_PROXY: "http://127.0.0.1:9", HTTP_PROXY: "http://127.0.0.1:9" };
  r = await run("npm", ["install", "--save-dev", "wrangler@4.164.0"]);
  assert.equal(r.code, 0, r.stderr);

  const secrets = mkdtempSync(join(tmpdir(), "rangeid-prod-"));
  cleanup.push(secrets);
  const prodKeys = join(secrets, "prod-keys.json");
  r = await npx(["keygen", "--kid", "prod-1", "--out", prodKeys]);
  assert.equal(r.code, 0, r.stderr);

  r = await npx(["deploy", "--dry-run", "--keys", ".rangeid/keys.json"], { offline, env: blocked });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /is rangeid dev's local key/);
  writeFileSync(join(secrets, "bad.json"), '{"k":"short"}');
  r = await npx(["deploy", "--dry-run", "--keys", join(secrets, "bad.json")], { offline, env: blocked });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /key "k" is shorter than 32 bytes/);

  r = await npx(["deploy", "--dry-run", "--outdir", "bundle", "--keys", prodKeys, "--name", "ids-test", "--cors-origins", "https://app.example"], { offline, env: blocked });
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /dry run done; nothing was uploaded/);
  assert.match(r.stdout, /RANGEID_SIGNING_KEYS: would go up with this version/);
  const bundle = readdirSync(join(project, "bundle"));
  assert.ok(bundle.includes("index.js") && bundle.some((f) => f.endsWith(".wasm")), `the bundle: ${bundle}`);
  const config = readFileSync(join(project, ".rangeid", "deploy", "wrangler.toml"), "utf8");
  assert.ok(config.includes(`main = "${join(project, "node_modules", "rangeid-authority", "build", "index.js")}"`), config);
  assert.match(config, /new_sqlite_classes = \["Fence"\]/, "the package's migrations");
  assert.match(config, /^name = "ids-test"$/m, "--name is in the configuration later wrangler commands use");
  r = await npx(["deploy", "--dry-run", "--name", "Bad_Name"], { offline, env: blocked });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--name "Bad_Name" is not a Worker name/);
  assert.doesNotMatch(readFileSync(join(project, "node_modules", "rangeid-authority", "workerd", "authority.capnp"), "utf8"), /^\s*\(name = "RANGEID_TEST_ONLY/m, "no test switch in the packaged configuration");

  r = await npx(["deploy", "--dry-run"], { offline, env: blocked });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /RANGEID_SIGNING_KEYS: not given[\s\S]*rangeid keygen --alg EdDSA --kid prod-1 --out ~\/rangeid-prod-keys\.json\n {2}npx --no-install rangeid deploy --keys/);
});
