// The main job: starts the local authority (workerd, state on disk), creates
// a demo namespace, runs several generators issuing IDs for a few seconds,
// and prints what happened. `make demo` builds everything first.
//
//   node scripts/demo.mjs [--keep] [--seconds N] [--generators N]
//
// --keep leaves the authority running on http://127.0.0.1:8787 afterwards.
import { execFileSync, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createGenerator } from "../npm/src/node.mjs";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const home = process.env.RANGEID_HOME ?? join(repo, ".rangeid");
const port = Number(process.env.RANGEID_PORT ?? 8787);
const base = `http://127.0.0.1:${port}`;

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const v = Number(args[i + 1]);
  if (!Number.isSafeInteger(v) || v < 1) {
    console.error(`${name} needs a whole number`);
    process.exit(2);
  }
  return v;
};
const keep = args.includes("--keep");
const seconds = flag("--seconds", 5);
const generators = flag("--generators", 4);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Tokens come from the package's CLI (npx rangeid token ... for users).
function token(role, ns) {
  return execFileSync(
    process.execPath,
    [join(repo, "npm", "bin", "rangeid.mjs"), "token", "--role", role, "--ns", ns, "--ttl", "1d", "--sub", "demo", "--keys", join(home, "keys.json")],
    { cwd: repo, encoding: "utf8" },
  ).trim();
}

async function healthy() {
  try {
    return (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1000) })).status === 200;
  } catch {
    return false;
  }
}

async function api(method, path, tok, body) {
  const r = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${tok}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json().catch(() => null) };
}

// 1. The authority: reuse one already serving (a previous --keep), else start it.
let server;
if (await healthy()) {
  console.log(`authority: already running on ${base}`);
} else {
  console.log(`authority: starting on ${base} (workerd through wrangler; state in ${join(home, "state")})`);
  server = spawn(join(repo, "edge-authority", "scripts", "dev.sh"), ["--log-level", "warn"], {
    cwd: repo,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, RANGEID_SKIP_BUILD: "1", RANGEID_PORT: String(port), CI: "true" },
  });
  let log = "";
  server.stdout.on("data", (b) => (log += b));
  server.stderr.on("data", (b) => (log += b));
  const deadline = Date.now() + 90_000;
  while (!(await healthy())) {
    if (server.exitCode !== null || Date.now() > deadline) {
      console.error(`the authority did not start:\n${log}`);
      process.exit(1);
    }
    await sleep(250);
  }
}
const stop = () => {
  if (server && !keep) {
    try { process.kill(-server.pid, "SIGTERM"); } catch { /* gone */ }
  }
};
process.on("SIGINT", () => {
  stop();
  process.exit(130);
});

try {
  // 2. A demo namespace (kept across runs: its boundary only moves up).
  const admin = token("admin", "*");
  const created = await api("POST", "/v1/namespaces", admin, { namespace: "demo" });
  if (created.status === 201) console.log("namespace: created \"demo\" (IDs 1 to 2^53-1)");
  else if (created.status === 200) console.log("namespace: \"demo\" exists; continuing where it left off");
  else throw new Error(`could not create the namespace: ${created.status} ${JSON.stringify(created.body)}`);
  const before = (await api("GET", "/v1/namespaces/demo", admin)).body;

  // 3. Generators issuing as fast as they can, in batches from one range.
  const gen = token("generator", "demo");
  const gens = await Promise.all(Array.from({ length: generators }, () => createGenerator({ url: base, token: gen, namespace: "demo" })));
  console.log(`generators: ${generators} started, issuing for ${seconds} s ...`);
  const spans = [];
  const counts = gens.map(() => 0);
  const samples = [];
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(gens.map(async (g, i) => {
    while (performance.now() < end) {
      for (let k = 0; k < 20; k++) {
        const batch = await g.nextIds(1000);
        counts[i] += batch.length;
        spans.push([BigInt(batch[0]), BigInt(batch.at(-1))]);
        if (samples.length < 8 && Math.random() < 0.001) samples.push(batch[0]);
      }
      await new Promise((r) => setImmediate(r));
    }
  }));
  const elapsed = (performance.now() - t0) / 1000;

  // 4. Check: the batches, each contiguous, never overlap.
  spans.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let overlaps = 0;
  for (let i = 1; i < spans.length; i++) if (spans[i][0] <= spans[i - 1][1]) overlaps++;

  const total = counts.reduce((a, b) => a + b, 0);
  console.log("");
  gens.forEach((g, i) => {
    const s = g.stats();
    console.log(`  generator ${i + 1} (${g.incarnation.slice(0, 8)}): ${counts[i].toLocaleString("en")} IDs, ${s.rangesInstalled} ranges, ${s.requests} requests, grant p50 ${s.grantLatencyMs.p50?.toFixed(1)} ms`);
  });
  console.log(`\nissued ${total.toLocaleString("en")} IDs in ${elapsed.toFixed(1)} s = ${Math.round(total / elapsed).toLocaleString("en")} IDs/s`);
  console.log(`checked: ${spans.length.toLocaleString("en")} batches, ${overlaps === 0 ? "no ID issued twice" : `${overlaps} OVERLAPS`}`);
  console.log(`sample IDs: ${samples.join(", ")}`);
  let abandoned = 0n;
  for (const g of gens) abandoned += BigInt(g.close());
  const after = (await api("GET", "/v1/namespaces/demo", admin)).body;
  console.log(`abandoned at close (reserved, never issued; gaps are by design): ${abandoned.toLocaleString("en")}`);
  console.log(`\nnamespace "demo": next ${before.next} -> ${after.next}, ranges granted ${before.rangesGranted} -> ${after.rangesGranted}, remaining ${after.remaining}`);
  console.log(`state: ${join(home, "state")} (one SQLite file per Durable Object); signing key: ${join(home, "keys.json")}`);
  if (overlaps > 0) process.exitCode = 1;
} finally {
  if (server && keep) {
    console.log(`\nthe authority keeps running on ${base} (pid group ${server.pid}); stop it with: kill -- -${server.pid}`);
    console.log(`admin page (signed in as an admin for a day; the token stays in this tab only): ${base}/admin/#token=${token("admin", "*")}`);
    server.unref();
    server.stdout.destroy();
    server.stderr.destroy();
  } else if (server) {
    stop();
    console.log("\nauthority stopped; run `make demo` again (state is kept) or `make authority` to serve it in the foreground (`make authority RUNTIME=workerd` keeps its own state)");
  }
}
