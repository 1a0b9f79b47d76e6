// The admin page's budget: the bundle's gzipped size (goal <= 100 KB), and
// the overview's time to render 1,000 namespaces beside a bare
// GET /v1/namespaces?limit=1000 from the same run, on a throw-away local
// authority (creating the 1,000 namespaces first takes a while).
// Needs edge-authority/build and tests/node_modules (npm ci in tests/).
// Run from anywhere: `node www/scripts/bench.mjs [--namespaces 1000] [--runs 5]`.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { newPage, signIn, startStack } from "../../tests/www/harness.mjs";

const www = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { namespaces: { type: "string", default: "1000" }, runs: { type: "string", default: "5" } } });
const count = Number(values.namespaces);
const runs = Number(values.runs);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(1)} ms`;

execFileSync(process.execPath, [join(www, "scripts", "build.mjs")], { stdio: "ignore" });
const admin = join(www, "dist", "admin");
let total = 0;
console.log("bundle (gzip -9):");
for (const f of readdirSync(admin).filter((f) => !f.endsWith(".map"))) {
  const size = gzipSync(readFileSync(join(admin, f)), { level: 9 }).length;
  total += size;
  console.log(`  ${f.padEnd(24)} ${(size / 1024).toFixed(1).padStart(6)} KB`);
}
console.log(`  ${"total".padEnd(24)} ${(total / 1024).toFixed(1).padStart(6)} KB (goal <= 100 KB)`);

const stack = await startStack();
try {
  const started = performance.now();
  const names = Array.from({ length: count }, (_, i) => `bench-${String(i).padStart(4, "0")}`);
  for (let i = 0; i < names.length; i += 16) {
    await Promise.all(names.slice(i, i + 16).map(async (namespace) => {
      const r = await stack.authority.req("POST", "/v1/namespaces", { token: stack.admin, body: { namespace } });
      if (r.status !== 201) throw new Error(`create ${namespace}: ${r.status} ${r.text}`);
    }));
  }
  console.log(`\ncreated ${count} namespaces in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const bare = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const r = await fetch(`${stack.authority.base}/v1/namespaces?limit=1000`, { headers: { authorization: `Bearer ${stack.admin}` } });
    const body = await r.json();
    bare.push(performance.now() - t);
    if (body.namespaces.length < Math.min(count, 1000)) throw new Error(`listed ${body.namespaces.length}`);
  }

  const page = await newPage(stack);
  await signIn(stack, page, stack.admin);
  const fetches = [];
  const renders = [];
  const shown = [];
  for (let i = 0; i < runs; i++) {
    await page.reload();
    await page.waitForFunction((n) => document.querySelectorAll("tbody tr").length === n, count, { timeout: 120_000 });
    const m = await page.evaluate(() => {
      const get = (name) => performance.getEntriesByName(name, "measure").at(-1)?.duration;
      return { fetch: get("rangeid:overview-fetch"), render: get("rangeid:overview-render"), shown: performance.now() };
    });
    fetches.push(m.fetch);
    renders.push(m.render);
    shown.push(m.shown);
  }
  // A refresh with nothing changed: every row is skipped.
  await page.waitForFunction(
    (before) => performance.getEntriesByName("rangeid:overview-render", "measure").at(-1)?.startTime > before,
    await page.evaluate(() => performance.now()), { timeout: 15_000 },
  );
  const refresh = await page.evaluate(() => performance.getEntriesByName("rangeid:overview-render", "measure").at(-1).duration);
  await page.context().close();

  console.log(`\n${count} namespaces, median of ${runs} runs:`);
  console.log(`  bare GET /v1/namespaces?limit=1000 (Node)   ${ms(median(bare))}`);
  console.log(`  the page's listing fetch (all pages)        ${ms(median(fetches))}`);
  console.log(`  the page's render of the rows               ${ms(median(renders))}`);
  console.log(`  page load to ${count} rows shown             ${ms(median(shown))}`);
  console.log(`  refresh render, nothing changed              ${ms(refresh)}`);
} finally {
  await stack.stop();
}
