// The packed package inside the example Worker on workerd, taking ranges
// through a Service Binding to the real local authority.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { createServer } from "node:net";
import { Authority, authorityDir, uniqueNs } from "../authority/harness.mjs";
import { createNamespace, installPacked, packageDir } from "./harness.mjs";

let authority;
let worker;
let base;
let ns;
let log = "";

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

before(async () => {
  const pkg = installPacked();
  authority = await new Authority().start();
  const admin = authority.token("admin", ["*"]);
  ns = uniqueNs("edge");
  await createNamespace(authority, admin, ns);

  // The example, as a user would set it up: its folder, the tarball, a token.
  const app = join(pkg.scratch, "edge-function");
  cpSync(join(packageDir, "examples", "edge-function"), app, { recursive: true, filter: (p) => !p.includes("node_modules") });
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "edge", private: true, type: "module" }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--silent", pkg.tarball], { cwd: app, stdio: ["ignore", "ignore", "inherit"] });
  writeFileSync(join(app, ".dev.vars"), `GENERATOR_TOKEN=${authority.token("generator", [ns])}\n`);

  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  worker = spawn(
    join(authorityDir, "node_modules", ".bin", "wrangler"),
    ["dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(await freePort()),
      "--var", `NAMESPACE:${ns}`, "--show-interactive-dev-session=false", "--log-level", "warn",
      "--persist-to", join(pkg.scratch, "state")],
    { cwd: app, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", CI: "true" } },
  );
  worker.stdout.on("data", (b) => (log += b));
  worker.stderr.on("data", (b) => (log += b));
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const r = await fetch(`${base}/ids?n=1`, { signal: AbortSignal.timeout(5000) });
      if (r.status === 200) break;
      log += `\n/ids answered ${r.status}: ${await r.text()}`;
    } catch {
      // Not up yet.
    }
    if (Date.now() > deadline || worker.exitCode !== null) throw new Error(`example worker did not serve IDs:\n${log}`);
    await new Promise((r) => setTimeout(r, 500));
  }
});

after(async () => {
  if (worker) {
    try { process.kill(-worker.pid, "SIGTERM"); } catch { /* gone */ }
  }
  await authority?.stop();
  authority?.cleanup();
});

test("an isolate that answered two requests reserved little (by the authority's ledger)", async () => {
  // The readiness probe was the first request (1 ID); this is the second.
  const r = await fetch(`${base}/ids?n=4`);
  const body = await r.json();
  assert.equal(r.status, 200, JSON.stringify(body));
  const { stats, incarnation } = body;
  const admin = authority.token("admin", ["*"]);
  const grants = await authority.req("GET", `/v1/namespaces/${ns}/grants?limit=1000`, { token: admin });
  const ledger = grants.body.grants
    .filter((g) => g.incarnation === incarnation)
    .reduce((sum, g) => sum + BigInt(g.count), 0n);
  const bound = BigInt(Math.max(2 * 1000, 4 * stats.issued));
  console.log(`example Worker: ${stats.issued} IDs returned, ${stats.reserved} reserved (ledger: ${ledger}), ${stats.reservedAhead} ahead`);
  assert.ok(stats.issued >= 5);
  assert.ok(ledger <= bound, `the isolate reserved ${ledger} > ${bound}`);
  // Granted or given up, plus what is in flight (which may be committed by now).
  const inFlight = BigInt(stats.reservedAhead) - BigInt(stats.available);
  assert.ok(BigInt(stats.reserved) + inFlight >= ledger, "stats count every committed grant");
});

test("the example Worker issues unique string IDs through its Service Binding", async () => {
  const seen = new Set();
  let incarnation;
  for (let i = 0; i < 20; i++) {
    const r = await fetch(`${base}/ids?n=50`);
    const body = await r.json();
    assert.equal(r.status, 200, `${JSON.stringify(body)}\n${log}`);
    assert.equal(body.ids.length, 50);
    for (const id of body.ids) {
      assert.equal(typeof id, "string");
      assert.match(id, /^[1-9][0-9]*$/);
      assert.ok(!seen.has(id), `duplicate ${id}`);
      seen.add(id);
    }
    incarnation = body.incarnation;
  }
  // The authority saw this Worker's incarnation take the ranges.
  const admin = authority.token("admin", ["*"]);
  const grants = await authority.req("GET", `/v1/namespaces/${ns}/grants?limit=100`, { token: admin });
  assert.equal(grants.status, 200);
  assert.ok(grants.body.grants.some((g) => g.incarnation === incarnation), "a grant to the Worker's incarnation");
  const bad = await fetch(`${base}/ids?n=0`);
  assert.equal(bad.status, 400);
});
