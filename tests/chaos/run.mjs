#!/usr/bin/env node
// make chaos: a nemesis drives the real authority on bare workerd while 64
// generators issue IDs through the packed npm package, behind a faulty
// proxy; then a checker accounts for every ID a caller was given.
//
//   node tests/chaos/run.mjs [--seconds 600] [--seed N] [--generators 64]
//                            [--hang-seconds 30] [--starve-seconds 120]
//                            [--plant KIND] [--keep]
//
// Needs the built Worker and npm package (make build). Prints the faults
// injected by kind, IDs issued, duplicates, acknowledged ranges accounted
// for, gaps and the longest waits; exits 1 on any duplicate, any ID outside
// the ranges the ledger granted to its incarnation, an acknowledged grant
// missing from the ledger, a final error, a call that never settled (a hang:
// pending past --hang-seconds, though a generator's calls give up after
// 5 s), a caller without an ID for --starve-seconds through every retry, or
// a caller without an ID soon after the faults stop. The event
// log (and, on failure, everything the checker read) is kept under
// target/chaos/.
//
// --plant (to see the checker fail; never in make test or make chaos):
//   relabel                 the proxy now and then hands a client another
//                           client's grant, relabelled as its own;
//   rollback                the namespace object and its witness restored
//                           together (the documented whole-namespace rollback);
//   witness-then-namespace  the witness restored, then, without waiting for
//                           a check-in, the namespace object (issue 16 s. 1).
import { fork } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { appendFileSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Authority } from "../authority/harness.mjs";
import { installPacked } from "../npm/harness.mjs";
import { check } from "./checker.mjs";
import { CLASSES, ObjectFiles } from "./objects.mjs";
import { FAULTS, FaultyProxy } from "./proxy.mjs";
import { rng } from "./rng.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const PLANTS = ["relabel", "rollback", "witness-then-namespace"];
/** The witness check-in interval the chaos authority runs with. */
const CHECK_SECONDS = 5;

// ---- Options ----
const { values: opt } = parseArgs({
  options: {
    seconds: { type: "string", default: "600" },
    seed: { type: "string" },
    generators: { type: "string", default: "64" },
    "hang-seconds": { type: "string", default: "30" },
    "starve-seconds": { type: "string", default: "120" },
    plant: { type: "string" },
    keep: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (opt.help) {
  console.log(readmeOfThisFile());
  process.exit(0);
}
const whole = (name, lo, hi) => {
  const v = Number(opt[name]);
  if (!Number.isInteger(v) || v < lo || v > hi) {
    console.error(`chaos: --${name} must be a whole number from ${lo} to ${hi}, got ${opt[name]}`);
    process.exit(2);
  }
  return v;
};
const SECONDS = whole("seconds", 10, 86400);
const GENERATORS = whole("generators", 2, 256);
const HANG_MS = whole("hang-seconds", 10, 3600) * 1000;
const STARVE_MS = whole("starve-seconds", 10, 86400) * 1000;
const SEED = opt.seed === undefined ? randomBytes(4).readUInt32BE() : whole("seed", 0, 2 ** 32 - 1);
if (opt.plant !== undefined && !PLANTS.includes(opt.plant)) {
  console.error(`chaos: --plant must be one of ${PLANTS.join(", ")}`);
  process.exit(2);
}
const PLANT = opt.plant;

function readmeOfThisFile() {
  return "usage: node tests/chaos/run.mjs [--seconds 600] [--seed N] [--generators 64] [--hang-seconds 30] [--starve-seconds 120] [--plant relabel|rollback|witness-then-namespace] [--keep]";
}

// ---- The run's record ----
const started = Date.now();
const runDir = join(repo, "target", "chaos", `${new Date(started).toISOString().replace(/[:.]/g, "-")}-seed${SEED}${PLANT ? `-plant-${PLANT}` : ""}`);
mkdirSync(runDir, { recursive: true });
const eventsFile = join(runDir, "events.ndjson");
const elapsed = () => (Date.now() - started) / 1000;
function event(kind, detail = {}) {
  appendFileSync(eventsFile, `${JSON.stringify({ t: Number(elapsed().toFixed(3)), kind, ...detail })}\n`);
}
const say = (line) => console.log(`[chaos ${elapsed().toFixed(0).padStart(4)}s] ${line}`);
const fmt = (n) => (typeof n === "bigint" ? n : BigInt(Math.round(Number(n)))).toLocaleString("en-US");
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

const root = rng(SEED);
const loopDelay = monitorEventLoopDelay({ resolution: 20 });
loopDelay.enable();
const faults = {
  runtime: { sigkill: 0, sigterm: 0 },
  callersPaused: 0,
  restores: { namespace: 0, witness: 0, registry: 0 },
  restoresDeferred: { witnessBehind: 0, tooSoon: 0, notIdle: 0 },
  snapshots: 0,
  tokens: { keysAdded: 0, keysRemoved: 0 },
  admin: { freezes: 0, floors: 0, floorsRaced: 0, unfrozenAfterRestore: 0 },
  storms: Object.fromEntries(FAULTS.map((f) => [f, 0])),
  planted: 0,
};
/** The machine's 1-minute load average at each tick (other work shares
 * the machine, and the answer times depend on it). */
const loads = [];
let longestFreezeMs = 0;
let longestPauseMs = 0;
let longestWitnessBehindS = 0;
const failures = [];

// ---- Keys and tokens ----
let kidSerial = 1;
const newKey = () => ({ kid: `chaos-${kidSerial++}`, key: randomBytes(32).toString("hex") });
let keyring = [newKey()];
let keyAddedAt = 0;
const signing = () => keyring[keyring.length - 1];
const keysText = () => JSON.stringify(Object.fromEntries(keyring.map((k) => [k.kid, k.key])));

function mint(claims) {
  const { kid, key } = signing();
  const b64 = (v) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const head = `${b64({ alg: "HS256", kid, typ: "JWT" })}.${b64(claims)}`;
  return `${head}.${createHmac("sha256", key).update(head).digest("base64url")}`;
}
const adminToken = () => mint({ sub: "chaos-nemesis", role: "admin", ns: ["*"], exp: Math.floor(Date.now() / 1000) + 600 });

// ---- The authority ----
const authority = new Authority({ runtime: "workerd", keysText: keysText(), vars: { RANGEID_CHECK_SECONDS: String(CHECK_SECONDS) } });
let restarts = 0;
/** The slowest stop, start (until /healthz answers) and first read of every
 * namespace after a start, in ms. */
const slowest = { stop: 0, start: 0, read: 0 };

/** An admin request straight to the authority (not through the proxy),
 * retried while the authority restarts. */
async function admin(method, path, body, { tries = 120 } = {}) {
  let last;
  for (let i = 0; i < tries; i++) {
    try {
      const r = await authority.req(method, path, { token: adminToken(), body });
      if (r.status !== 503 && r.status < 500) return r;
      last = `${r.status} ${r.text}`;
    } catch (e) {
      last = String(e?.cause?.code ?? e?.message ?? e);
    }
    await sleep(250);
  }
  throw new Error(`${method} ${path}: no answer after ${tries} tries (${last})`);
}

// Namespaces: most callers on one counting up from 1 (IDs as JS numbers),
// the rest on one that starts just below 2^53 (IDs cross it, then stay
// exact as strings) and ends at 2^64 - 1.
const NAMESPACES = [
  { name: "chaos-low", create: {} },
  { name: "chaos-high", create: { first: String(2n ** 53n - 200_000n), max: String(2n ** 64n - 1n) } },
];
const slots = Array.from({ length: GENERATORS }, (_, slot) => ({ slot, ns: slot < Math.ceil(GENERATORS * 0.75) ? "chaos-low" : "chaos-high" }));

// ---- Object files: one object's SQLite files at a time ----
const objects = new ObjectFiles(authority, join(authority.workDir, "copies"));

function snapshot(key, slot = key) {
  objects.copy(key, elapsed(), slot);
  faults.snapshots += 1;
  event("snapshot", { object: key, slot });
}

function putBack(key, slot = key) {
  const copy = objects.putBack(key, slot);
  faults.restores[key.split(":")[0]] += 1;
  event("restore", { object: key, slot, copyFrom: copy.at });
}

// ---- Runtime: stops, restarts, restores ----
let runtimeBusy = Promise.resolve();
/** Stops the authority (SIGKILL or SIGTERM), runs `whileStopped`, starts
 * it again and reads every namespace. One at a time. */
function restart(how, whileStopped = () => {}) {
  const job = runtimeBusy.then(async () => {
    const down = Date.now();
    if (how === "sigkill") await authority.kill();
    else await authority.stop();
    const stopped = Date.now();
    faults.runtime[how] += 1;
    let note;
    let up;
    try {
      watchWitnesses();
      note = await whileStopped();
    } finally {
      authority.keysText = keysText();
      await authority.start();
      up = Date.now();
      restarts += 1;
      for (const { name } of NAMESPACES) await admin("GET", `/v1/namespaces/${name}`);
    }
    slowest.stop = Math.max(slowest.stop, stopped - down);
    slowest.start = Math.max(slowest.start, up - stopped);
    slowest.read = Math.max(slowest.read, Date.now() - up);
    event(how, { note, stopMs: stopped - down, startMs: up - stopped, readMs: Date.now() - up, ...(up - stopped > 5000 ? { log: authority.log.slice(-2000) } : {}) });
    return note;
  });
  runtimeBusy = job.catch(() => {});
  return job;
}

const ledgerReads = [];
/** Every grant the ledger lists for `ns`, through the API. */
async function readLedger(ns) {
  const out = [];
  let before = "";
  for (;;) {
    const r = await admin("GET", `/v1/namespaces/${ns}/grants?limit=1000${before}`);
    if (r.status !== 200) throw new Error(`grants of ${ns}: ${r.status} ${r.text}`);
    for (const g of r.body.grants) out.push({ ns, incarnation: g.incarnation, requestId: g.requestId, start: g.start, end: g.end });
    if (!r.body.nextBefore) break;
    before = `&before=${r.body.nextBefore}`;
  }
  return out;
}

const freezing = new Set();
/** Witness restores whose namespace object has not yet raised the witness
 * back past its own recorded fence (as the files show at later stops). */
const witnessRestored = new Map();
/** When each namespace's witness was last restored (elapsed seconds). */
const witnessRestoredAt = new Map();
let witnessesRepaired = 0;

/** While stopped: notes each restored witness found raised back. */
function watchWitnesses() {
  for (const [ns, w] of witnessRestored) {
    const m = objects.marks(ns);
    const behind = elapsed() - w.at;
    longestWitnessBehindS = Math.max(longestWitnessBehindS, behind);
    if (m.witness >= m.fence) {
      witnessRestored.delete(ns);
      witnessesRepaired += 1;
      event("witness-repaired", { ns, afterSeconds: Number(behind.toFixed(1)) });
    }
  }
}

/** A restore of one object from its copy, with the gate closed so the
 * ledger is read with nothing in flight. For a namespace object: never
 * while its witness is behind it (restored and not yet raised back), and
 * not within a check-in interval of its witness's restore (whose restart
 * already started the namespace object with a read). */
async function restoreEpisode(key, { force = false, slot = key } = {}) {
  const [kind, ns] = key.split(":");
  proxy.close();
  try {
    if (!(await proxy.idle(15_000))) {
      faults.restoresDeferred.notIdle += 1;
      event("restore-deferred", { object: key, why: "requests still in flight after 15 s" });
      return;
    }
    if (kind === "namespace") for (const n of NAMESPACES) ledgerReads.push(...(await readLedger(n.name)));
    await restart(root.chance(0.5) ? "sigkill" : "sigterm", () => {
      if (kind === "namespace" && !force) {
        const w = witnessRestoredAt.get(ns);
        if (w !== undefined && elapsed() - w < CHECK_SECONDS) {
          faults.restoresDeferred.tooSoon += 1;
          return `deferred ${key}: witness restored ${(elapsed() - w).toFixed(1)} s ago`;
        }
        const m = objects.marks(ns);
        if (m.witness < m.fence) {
          faults.restoresDeferred.witnessBehind += 1;
          return `deferred ${key}: witness ${m.witness} behind the object's fence ${m.fence}`;
        }
      }
      putBack(key, slot);
      if (kind === "witness") {
        witnessRestored.set(ns, { at: elapsed() });
        witnessRestoredAt.set(ns, elapsed());
      }
      return `restored ${key}`;
    });
    if (kind === "namespace") await unfreezeUnlessMeant(ns);
  } finally {
    proxy.open();
  }
}

/** A restored namespace object may come back frozen from its copy. */
async function unfreezeUnlessMeant(ns) {
  const s = await admin("GET", `/v1/namespaces/${ns}`);
  if (s.body.state === "frozen" && !freezing.has(ns)) {
    await admin("POST", `/v1/namespaces/${ns}/unfreeze`, { reason: "chaos: frozen by a restored copy" });
    faults.admin.unfrozenAfterRestore += 1;
  }
}

// ---- The nemesis ----
let nemesisOn = true;
const nemesisSleep = async (ms) => {
  const end = Date.now() + ms;
  while (nemesisOn && Date.now() < end) await sleep(Math.min(250, end - Date.now()));
};
const BASE_RATES = {
  "drop-request": 0.01, "drop-reply": 0.01, "reset-before": 0.005, "reset-after": 0.01, truncate: 0.005,
  "bad-gateway": 0.005, delay: 0.05, duplicate: 0.02, reorder: 0.03,
};

async function proxyLoop(r) {
  while (nemesisOn) {
    proxy.rates = { ...BASE_RATES };
    await nemesisSleep(r.int(1000, 6000));
    if (!nemesisOn) break;
    const kind = r.pick(FAULTS);
    proxy.rates = { ...BASE_RATES, [kind]: r.between(0.2, 0.6) };
    faults.storms[kind] += 1;
    event("storm", { fault: kind, rate: Number(proxy.rates[kind].toFixed(2)) });
    await nemesisSleep(r.int(2000, 8000));
  }
  proxy.rates = {};
}

/** The callers' whole process paused (SIGSTOP) and resumed (SIGCONT): its
 * timers and in-flight requests stall, then resume with old ranges and
 * late replies. */
async function pauseLoop(r) {
  while (nemesisOn) {
    await nemesisSleep(r.int(10_000, 40_000));
    if (!nemesisOn) break;
    const ms = r.int(500, 8000);
    child.kill("SIGSTOP");
    faults.callersPaused += 1;
    longestPauseMs = Math.max(longestPauseMs, ms);
    event("callers-paused", { ms });
    await sleep(ms);
    child.kill("SIGCONT");
  }
}

async function adminLoop(r) {
  while (nemesisOn) {
    await nemesisSleep(r.int(3000, 12000));
    if (!nemesisOn) break;
    const ns = r.pick(NAMESPACES).name;
    if (r.chance(0.5)) {
      const holdMs = r.int(300, 6000);
      freezing.add(ns);
      const t = Date.now();
      await admin("POST", `/v1/namespaces/${ns}/freeze`, { reason: "chaos: freeze" });
      faults.admin.freezes += 1;
      event("freeze", { ns, holdMs });
      await sleep(holdMs);
      await admin("POST", `/v1/namespaces/${ns}/unfreeze`, { reason: "chaos: unfreeze" });
      freezing.delete(ns);
      longestFreezeMs = Math.max(longestFreezeMs, Date.now() - t);
    } else {
      const s = await admin("GET", `/v1/namespaces/${ns}`);
      const jump = r.chance(0.2) ? BigInt(r.int(1, 10_000_000)) : BigInt(r.int(1, 100_000));
      const floor = BigInt(s.body.next) + jump;
      const f = await admin("POST", `/v1/namespaces/${ns}/floor`, { floor: String(floor) });
      if (f.status === 200) {
        faults.admin.floors += 1;
        event("floor", { ns, floor: String(floor) });
      } else if (f.status === 409) {
        faults.admin.floorsRaced += 1;
      } else {
        throw new Error(`floor ${ns}: ${f.status} ${f.text}`);
      }
    }
  }
}

async function runtimeLoop(r) {
  const objectKeys = objects.keys();
  // A first copy of every object, so restores can start at once.
  await nemesisSleep(r.int(2000, 5000));
  if (nemesisOn) {
    await restart("sigterm", () => {
      for (const k of objectKeys) snapshot(k);
    });
  }
  while (nemesisOn) {
    await nemesisSleep(r.int(3000, 10000));
    if (!nemesisOn) break;
    const what = r.weighted({ sigkill: 3, sigterm: 1, snapshot: 2, "restore-namespace": 2, "restore-witness": 1.5, "restore-registry": 1, rotate: 1 });
    if (what === "sigkill" || what === "sigterm") {
      await restart(what);
    } else if (what === "snapshot") {
      const keys = objectKeys.filter(() => r.chance(0.5));
      if (keys.length === 0) keys.push(r.pick(objectKeys));
      await restart(r.chance(0.5) ? "sigkill" : "sigterm", () => {
        for (const k of keys) snapshot(k);
      });
    } else if (what === "rotate") {
      await rotate();
    } else {
      const kind = what.slice("restore-".length);
      const key = kind === "registry" ? "registry" : `${kind}:${r.pick(NAMESPACES).name}`;
      if (!objects.copies.has(key)) {
        await restart("sigterm", () => snapshot(key));
      } else {
        await restoreEpisode(key);
      }
    }
  }
}

/** One step of a key rotation: add a new kid (the authority restarts with
 * both, then every token is minted with the new one), or, a while later,
 * remove the old kid (cached tokens signed with it are refused: 401). */
async function rotate() {
  if (keyring.length === 1) {
    const k = newKey();
    await restart("sigterm", () => {
      keyring = [...keyring, k];
    });
    keyAddedAt = elapsed();
    child.send({ type: "signing", kid: k.kid, key: k.key });
    faults.tokens.keysAdded += 1;
    event("key-added", { kid: k.kid });
  } else if (elapsed() - keyAddedAt > 5) {
    const old = keyring[0];
    await restart("sigterm", () => {
      keyring = keyring.slice(1);
    });
    faults.tokens.keysRemoved += 1;
    event("key-removed", { kid: old.kid });
  }
}

/** The planted rollbacks: copies of a namespace object and its witness
 * taken together; once grants have gone past the witness's copied mark,
 * both put back at once (`rollback`), or the witness and then at the next
 * restart the namespace object (`witness-then-namespace`). */
async function plantLoop() {
  const ns = "chaos-low";
  await nemesisSleep(8000);
  await restart("sigterm", () => {
    snapshot(`namespace:${ns}`, `plant-namespace:${ns}`);
    snapshot(`witness:${ns}`, `plant-witness:${ns}`);
  });
  const copied = (await admin("GET", `/v1/namespaces/${ns}`)).body.fence.mark;
  event("plant-copied", { ns, witnessMark: copied });
  while (nemesisOn) {
    const s = await admin("GET", `/v1/namespaces/${ns}`);
    if (BigInt(s.body.next) > BigInt(copied) + 1_000_000n) break;
    await nemesisSleep(1000);
  }
  if (!nemesisOn) return;
  faults.planted += 1;
  if (PLANT === "rollback") {
    proxy.close();
    await proxy.idle(15_000);
    for (const n of NAMESPACES) ledgerReads.push(...(await readLedger(n.name)));
    await restart("sigkill", () => {
      putBack(`namespace:${ns}`, `plant-namespace:${ns}`);
      putBack(`witness:${ns}`, `plant-witness:${ns}`);
      return "planted: namespace object and witness restored together";
    });
    proxy.open();
  } else {
    await restoreEpisode(`witness:${ns}`, { slot: `plant-witness:${ns}` });
    await restoreEpisode(`namespace:${ns}`, { force: true, slot: `plant-namespace:${ns}` });
  }
  event("planted", { plant: PLANT });
}

// ---- Setup ----
let proxy;
let child;
const wire = [];
let progress = {};

async function setup() {
  say(`seed ${SEED}, ${SECONDS} s, ${GENERATORS} generators${PLANT ? `, PLANTED BUG: ${PLANT}` : ""}; log in ${runDir}`);
  const pkg = installPacked();
  for (const f of ["clients.mjs", "rng.mjs"]) copyFileSync(join(here, f), join(pkg.scratch, f));
  await authority.start();
  say(`authority on bare workerd at ${authority.base} (state ${authority.stateDir})`);
  const before = { namespace: objects.idsOnDisk("namespace"), witness: objects.idsOnDisk("witness") };
  for (const { name, create } of NAMESPACES) {
    const r = await admin("POST", "/v1/namespaces", { namespace: name, ...create });
    if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.text}`);
    // One grant, so the witness exists; its range is a gap.
    const g = await authority.req("POST", "/v1/ranges", {
      token: mint({ sub: "chaos-setup", role: "generator", ns: [name], exp: Math.floor(Date.now() / 1000) + 60 }),
      body: { namespace: name, incarnation: "chaos-setup", requestId: "r1", count: 1 },
    });
    if (g.status !== 200) throw new Error(`first grant of ${name}: ${g.status} ${g.text}`);
    for (const kind of ["namespace", "witness"]) {
      const now = objects.idsOnDisk(kind);
      const fresh = [...now].filter((id) => !before[kind].has(id));
      if (fresh.length !== 1) throw new Error(`expected one new ${CLASSES[kind]} object for ${name}, found ${fresh.length}`);
      objects.name(`${kind}:${name}`, fresh[0]);
      before[kind] = now;
    }
  }
  const reg = [...objects.idsOnDisk("registry")];
  if (reg.length !== 1) throw new Error(`expected one registry object, found ${reg.length}`);
  objects.name("registry", reg[0]);

  proxy = new FaultyProxy({
    upstream: () => authority.base,
    rng: root.fork("proxy"),
    onGrant: (g) => wire.push({ ns: g.namespace, incarnation: g.incarnation, requestId: g.requestId, start: g.start, end: g.end }),
    plant: PLANT === "relabel" ? "relabel" : undefined,
  });
  await proxy.start();
  child = fork(join(pkg.scratch, "clients.mjs"), [], { cwd: pkg.scratch, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  child.on("message", (m) => {
    if (m.type === "progress") progress = m;
  });
  child.send({
    type: "start", url: proxy.base, seed: SEED, slots, hangMs: HANG_MS, startedAt: started,
    kid: signing().kid, key: signing().key, tokenTtl: [3, 15],
  });
  return pkg;
}

// ---- Run ----
async function main() {
  const pkg = await setup();
  const report = new Promise((resolve, reject) => {
    child.on("message", (m) => {
      if (m.type === "report") resolve(m);
      if (m.type === "crash") reject(new Error(`the callers' process crashed: ${m.error}`));
    });
    child.on("exit", (code) => code !== 0 && reject(new Error(`the callers' process exited with ${code}`)));
  });
  report.catch(() => {});
  const loops = [
    proxyLoop(root.fork("proxy-loop")),
    adminLoop(root.fork("admin-loop")),
    pauseLoop(root.fork("pause-loop")),
    runtimeLoop(root.fork("runtime-loop")),
    ...(PLANT === "rollback" || PLANT === "witness-then-namespace" ? [plantLoop()] : []),
  ];
  const every = Math.max(10, Math.round(SECONDS / 20)) * 1000;
  let seen = 0;
  const ticker = setInterval(() => {
    const f = Object.values(proxy.counts).reduce((a, b) => a + b, 0);
    loads.push(loadavg()[0]);
    event("tick", { load: Number(loadavg()[0].toFixed(1)), loopDelayMaxMs: Math.round(loopDelay.max / 1e6), ids: progress.ids, requests: proxy.requests, answers: latencySummary(proxy.latencies.slice(seen)), oldestCallMs: progress.oldestCallMs });
    seen = proxy.latencies.length;
    loopDelay.reset();
    say(`${fmt(progress.ids ?? 0)} IDs, ${fmt(proxy.requests)} requests (${fmt(f)} faulted), ${restarts} restarts, oldest call waiting ${secs(progress.oldestCallMs ?? 0)}`);
  }, every);
  const loopsDone = Promise.all(loops);
  await Promise.race([sleep(SECONDS * 1000), loopsDone]);
  nemesisOn = false;
  await loopsDone;
  await runtimeBusy;
  clearInterval(ticker);

  // Heal: faults off, gate open, nothing frozen; every caller must get an
  // ID again within the hang limit.
  proxy.rates = {};
  proxy.open();
  for (const { name } of NAMESPACES) await admin("POST", `/v1/namespaces/${name}/unfreeze`, { reason: "chaos: healed" });
  say("faults off; waiting for every caller to get an ID");
  child.send({ type: "heal" });
  await sleep(15_000);
  child.send({ type: "stop" });
  const rep = await Promise.race([report, sleep(HANG_MS + 30_000).then(() => null)]);
  if (!rep) {
    failures.push(`the callers did not stop within ${secs(HANG_MS + 30_000)} (a hang)`);
    child.kill("SIGKILL");
    return finish(pkg, null);
  }
  return finish(pkg, rep);
}

async function finish(pkg, rep) {
  for (const n of NAMESPACES) ledgerReads.push(...(await readLedger(n.name)));
  const summaries = {};
  for (const n of NAMESPACES) summaries[n.name] = (await admin("GET", `/v1/namespaces/${n.name}`)).body;
  const issued = rep ? rep.incarnations : [];
  const result = check({ issued, ledger: ledgerReads, wire });
  if (rep) event("longest-waits", { waits: rep.waits.longestStarved });

  // Lookups: a sample of issued IDs, each looked up in the ledger.
  const r = root.fork("lookups");
  const lookups = { asked: 0, agree: 0, prunedByRestore: 0, disagree: 0, examples: [] };
  const withRuns = issued.filter((x) => x.runs.length > 0);
  for (let i = 0; i < 200 && withRuns.length > 0; i++) {
    const x = r.pick(withRuns);
    const [s, e] = r.pick(x.runs);
    const id = BigInt(s) + BigInt(Math.floor(r.next() * Number(BigInt(e) - BigInt(s))));
    const l = await admin("GET", `/v1/namespaces/${x.ns}/lookup?id=${id}`);
    lookups.asked += 1;
    if (l.status === 200 && l.body.incarnation === x.incarnation) lookups.agree += 1;
    else if (l.status === 404 && l.body?.error?.code === "grant_not_found" && faults.restores.namespace + faults.planted > 0) lookups.prunedByRestore += 1;
    else {
      lookups.disagree += 1;
      if (lookups.examples.length < 5) lookups.examples.push({ ns: x.ns, id: String(id), issuedTo: x.incarnation, ledger: l.body });
    }
  }
  const listing = await admin("GET", "/v1/namespaces?limit=1000");
  const listed = listing.body.namespaces?.map((n) => n.namespace) ?? [];

  // ---- Verdicts ----
  const t = result.total;
  if (t.duplicates > 0n) failures.push(`${fmt(t.duplicates)} IDs given to callers more than once`);
  if (t.unaccounted > 0n) failures.push(`${fmt(t.unaccounted)} IDs outside every range the ledger granted to their incarnation`);
  if (t.ledgerOverlap > 0n) failures.push(`the ledger granted ${fmt(t.ledgerOverlap)} IDs to more than one incarnation`);
  if (t.wireMissing > 0) failures.push(`${t.wireMissing} acknowledged grants missing from every ledger read`);
  if (lookups.disagree > 0) failures.push(`${lookups.disagree} lookups disagree with the caller's incarnation`);
  if (rep) {
    const c = rep.counts;
    if (Object.keys(c.finals).length > 0) failures.push(`generators stopped by final errors: ${JSON.stringify(c.finals)}`);
    if (c.malformed > 0) failures.push(`${c.malformed} IDs were not canonical decimal strings`);
    if (c.contract > 0) failures.push(`${c.contract} nextIds(n) batches were not exactly n distinct IDs`);
    if (rep.waits.hangs.length > 0) failures.push(`${rep.waits.hangs.length} calls waited past ${secs(HANG_MS)}: ${JSON.stringify(rep.waits.hangs.slice(0, 3))}`);
    if (rep.waits.longestStarvedMs > STARVE_MS) failures.push(`a caller went ${secs(rep.waits.longestStarvedMs)} without an ID (limit ${secs(STARVE_MS)}): ${JSON.stringify(rep.waits.longestStarved)}`);
    if (rep.afterHeal.got < rep.afterHeal.callers) failures.push(`after healing only ${rep.afterHeal.got} of ${rep.afterHeal.callers} callers got an ID; the others: ${JSON.stringify(rep.afterHeal.missing)}`);
  }

  // ---- Report ----
  const pc = proxy.counts;
  const lines = [
    "",
    `rangeid chaos: seed ${SEED}, ${elapsed().toFixed(0)} s (${SECONDS} s of faults), ${GENERATORS} generators on ${NAMESPACES.length} namespaces, authority on bare workerd behind a faulty proxy${PLANT ? `; PLANTED BUG: ${PLANT}` : ""}`,
    `machine: ${availableParallelism()} cores, 1-minute load average ${loads.length ? `${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)}` : loadavg()[0].toFixed(1)} during the run`,
    "faults injected:",
    `  proxy (of ${fmt(proxy.requests)} requests): ${FAULTS.map((f) => `${f} ${fmt(pc[f])}`).join(", ")}${PLANT === "relabel" ? `, relabelled grants ${pc.planted}` : ""}; authority unreachable ${fmt(proxy.unreachable)}`,
    `  the authority's answers through the proxy: ${Object.entries(proxy.statuses).map(([k, v]) => `${k} ${fmt(v)}`).join(", ")}`,
    `  the authority's answer times through the proxy: ${latencySummary(proxy.latencies)}`,
    `  proxy storms (a few seconds at 20-60 %): ${FAULTS.filter((f) => faults.storms[f]).map((f) => `${f} ${faults.storms[f]}`).join(", ") || "none"}`,
    `  runtime: SIGKILL ${faults.runtime.sigkill}, SIGTERM ${faults.runtime.sigterm} (each followed by a restart)`,
    `  callers' process paused (SIGSTOP, then SIGCONT): ${faults.callersPaused} (longest ${secs(longestPauseMs)})`,
    `  restores of one object's files: namespace object ${faults.restores.namespace}, witness ${faults.restores.witness}, registry ${faults.restores.registry} (from ${faults.snapshots} copies); namespace restores deferred: witness behind ${faults.restoresDeferred.witnessBehind}, within a check-in of the witness's restore ${faults.restoresDeferred.tooSoon}, requests in flight ${faults.restoresDeferred.notIdle}`,
    `  tokens: ${rep ? fmt(rep.counts.tokenMints) : "?"} minted (3-15 s lifetimes), ${rep ? fmt(rep.counts.tokenRefreshes) : "?"} refreshed after a 401; keys added ${faults.tokens.keysAdded}, removed ${faults.tokens.keysRemoved}`,
    `  admin: freezes ${faults.admin.freezes} (longest ${secs(longestFreezeMs)}), floors ${faults.admin.floors}, unfrozen after a restore brought a freeze back ${faults.admin.unfrozenAfterRestore}`,
    ...(PLANT && PLANT !== "relabel" ? [`  planted ${PLANT}: ${faults.planted}`] : []),
    `IDs issued: ${fmt(t.issued)} to callers by ${t.incarnations} generator incarnations in ${rep ? fmt(rep.counts.calls) : "?"} calls (${Object.entries(result.per).map(([ns, p]) => `${ns} ${fmt(p.issued)}`).join(", ")})`,
    `duplicates: ${fmt(t.duplicates)}`,
    `acknowledged ranges accounted for: ${fmt(t.wireGrants - t.wireMissing)} of ${fmt(t.wireGrants)} grants acknowledged on the wire are in the ledger; IDs outside a range granted to their incarnation: ${fmt(t.unaccounted)}; ledger overlaps between incarnations: ${fmt(t.ledgerOverlap)}; lookups of ${lookups.asked} issued IDs: ${lookups.agree} name the caller's incarnation, ${lookups.prunedByRestore} were rolled back with a restored namespace object (their grants are in an earlier ledger read), ${lookups.disagree} disagree`,
    `gaps: ${fmt(t.granted)} IDs granted, ${fmt(t.gap)} never issued (${pct(t.gap, t.granted)}), of which ${rep ? fmt(sumAbandoned(rep)) : "?"} abandoned by close(); fence skips ${Object.values(summaries).map((s) => `${s.namespace} ${fmt(BigInt(s.fence.skipped))}`).join(", ")} (rollbacks detected: ${Object.values(summaries).map((s) => s.fence.rollbacks).join(", ")})`,
    rep
      ? `waits: longest a caller went without an ID ${secs(rep.waits.longestStarvedMs)} (through rejections and new generators; ${rep.waits.longestStarved.slice(0, 2).map((w) => `caller ${w.slot} until ${w.until.toFixed(0)} s`).join(", ") || "none over 5 s"}); longest call that resolved ${secs(rep.waits.longestResolvedMs)}, that rejected ${secs(rep.waits.longestRejectedMs)}; rejections ${JSON.stringify(rep.counts.rejections)}; after healing ${rep.afterHeal.got}/${rep.afterHeal.callers} callers got an ID within ${secs(rep.afterHeal.slowestMs)}`
      : "waits: no report from the callers",
    `also: ${restarts} restarts (slowest: stop ${secs(slowest.stop)}, start ${secs(slowest.start)}, first read of the namespaces ${secs(slowest.read)}); restored witnesses seen raised back past their object's fence at a later stop ${witnessesRepaired} of ${faults.restores.witness}, the longest seen behind ${longestWitnessBehindS.toFixed(0)} s after its restore; namespaces listed after registry restores: ${NAMESPACES.filter((n) => listed.includes(n.name)).length} of ${NAMESPACES.length}`,
  ];
  for (const l of lines) console.log(l);
  const ok = failures.length === 0;
  writeFileSync(join(runDir, "summary.txt"), `${lines.join("\n")}\n${ok ? "PASS" : `FAIL\n${failures.join("\n")}`}\n`);
  if (!ok) {
    console.log(`\nchaos: FAIL (seed ${SEED}; log ${runDir})`);
    for (const f of failures) console.log(`  - ${f}`);
    for (const [k, v] of Object.entries(result.examples)) if (v.length) console.log(`  ${k}: ${JSON.stringify(v.slice(0, 3))}`);
    if (rep?.counts.finalExamples.length) console.log(`  final errors: ${JSON.stringify(rep.counts.finalExamples.slice(0, 3))}`);
    if (lookups.examples.length) console.log(`  lookups: ${JSON.stringify(lookups.examples.slice(0, 3))}`);
    writeFileSync(join(runDir, "evidence.json"), JSON.stringify({ failures, examples: result.examples, issued, ledger: ledgerReads, wire, summaries, report: rep && { ...rep, incarnations: undefined } }));
  } else {
    console.log(`\nchaos: PASS (seed ${SEED})`);
  }
  await cleanup(pkg, ok);
  return ok;
}

function latencySummary(ms) {
  if (ms.length === 0) return "none";
  const s = [...ms].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return `p50 ${q(0.5).toFixed(0)} ms, p99 ${q(0.99).toFixed(0)} ms, max ${secs(s[s.length - 1])}`;
}
const pct = (a, b) => (b === 0n ? "0 %" : `${(Number((a * 10000n) / b) / 100).toFixed(2)} %`);
const sumAbandoned = (rep) => rep.incarnations.reduce((s, x) => s + BigInt(x.abandoned), 0n);

async function cleanup(pkg, ok) {
  try { child?.kill(); } catch { /* gone */ }
  await proxy?.stop();
  await authority.stop();
  if (ok && !opt.keep) {
    authority.cleanup();
    if (pkg) rmSync(pkg.scratch, { recursive: true, force: true });
  } else {
    say(`kept: authority state ${authority.workDir}, scratch project ${pkg?.scratch}`);
  }
}

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  async (e) => {
    console.error(`chaos: the run itself failed (seed ${SEED}; log ${runDir}):`, e);
    try { child?.kill("SIGKILL"); } catch { /* gone */ }
    await authority.stop().catch(() => {});
    process.exit(1);
  },
);
