// rangeid/testing from the packed tarball, as a user installs it: the
// README's node:test example runs as written in a scratch project (with
// only node and npm on PATH), CommonJS requires it, TypeScript resolves its
// declarations through the package's exports, and the client's engine
// stays within its 80,000-byte budget beside the test authority's module.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { installPacked, packageDir } from "./harness.mjs";

const ENGINE_BUDGET = 80_000;
let pkg;

before(() => {
  pkg = installPacked();
});

/** Runs `node args` in the scratch project with a user's PATH: node itself, and the system's. */
function node(args, cwd = pkg.scratch) {
  const PATH = [dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].join(":");
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd, env: { PATH, HOME: process.env.HOME }, timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (err.code ?? 1) : 0, out: stdout + stderr }));
  });
}

/** The README's example: the first ```js block after the marker that names this file. */
function readmeExample() {
  const readme = readFileSync(join(packageDir, "README.md"), "utf8");
  const marker = readme.indexOf("This example is run by tests/npm/testing.test.mjs");
  assert.ok(marker > 0, "the README marks its rangeid/testing example");
  const m = /```js\n([\s\S]*?)```/.exec(readme.slice(marker));
  assert.ok(m, "a js block follows the marker");
  return m[1];
}

test("the README's node:test example runs as written against the packed package", async () => {
  writeFileSync(join(pkg.scratch, "orders.test.mjs"), readmeExample());
  const r = await node(["--test", "orders.test.mjs"]);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /ℹ pass 3/, r.out);
  assert.match(r.out, /ℹ fail 0/, r.out);
});

test("CommonJS: require('rangeid/testing') beside require('rangeid')", async () => {
  writeFileSync(join(pkg.scratch, "cjs.cjs"), `
const { createGenerator } = require("rangeid");
const { createTestAuthority } = require("rangeid/testing");
(async () => {
  const authority = createTestAuthority({ namespaces: { orders: { first: "9007199254740990", max: "9007199254741100" } } });
  const ids = await createGenerator({ url: authority.url, token: "t", namespace: "orders", fetch: authority.fetch, rangeSize: 10 });
  const got = await ids.nextIds(20);
  authority.check(got, "orders");
  ids.close();
  console.log(got[0], got[19], authority.grants.length);
})().catch((e) => { console.error(e); process.exit(1); });
`);
  const r = await node(["cjs.cjs"]);
  assert.equal(r.code, 0, r.out);
  assert.equal(r.out.trim(), "9007199254740990 9007199254741009 2", "exact past 2^53, from two ranges");
});

test("TypeScript resolves rangeid/testing's declarations through the exports (ESM and CommonJS)", async () => {
  const tsc = join(packageDir, "node_modules", "typescript", "bin", "tsc");
  writeFileSync(join(pkg.scratch, "use.mts"), `
import { createGenerator } from "rangeid";
import { createTestAuthority, type TestAuthority } from "rangeid/testing";
const authority: TestAuthority = createTestAuthority({ namespaces: { orders: { max: 100n } }, tokens: ["t"] });
authority.unavailable({ times: 1, retryAfter: 0 }).slow(5).loseReplies().proxyError({ status: 418 }).heal();
const ids = await createGenerator({ url: authority.url, token: "t", namespace: "orders", fetch: authority.fetch });
const n: number = authority.check(await ids.nextIds(3), "orders");
const left: string = authority.remaining("orders");
// @ts-expect-error: slow takes milliseconds.
authority.slow("fast");
export { n, left };
`);
  writeFileSync(join(pkg.scratch, "use.cts"), `
import testing = require("rangeid/testing");
const a: testing.TestAuthority = testing.createTestAuthority();
export = a.url;
`);
  writeFileSync(join(pkg.scratch, "tsconfig.json"), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "nodenext", moduleResolution: "nodenext", lib: ["es2022", "dom"], types: [] },
    files: ["use.mts", "use.cts"],
  }));
  const r = await node([tsc, "-p", "tsconfig.json"]);
  assert.equal(r.code, 0, r.out);
});

test("the client's engine stays within its budget; the test authority is a module of its own", () => {
  const installed = join(pkg.scratch, "node_modules", "rangeid", "wasm");
  const engine = statSync(join(installed, "rangeid_wasm_bg.wasm")).size;
  const testing = statSync(join(installed, "testing", "rangeid_testing_bg.wasm")).size;
  const tarball = statSync(pkg.tarball).size;
  console.log(`client engine ${engine.toLocaleString("en-US")} bytes (budget ${ENGINE_BUDGET.toLocaleString("en-US")}); test authority ${testing.toLocaleString("en-US")} bytes; tarball ${tarball.toLocaleString("en-US")} bytes`);
  assert.ok(engine <= ENGINE_BUDGET, `the engine is ${engine} bytes`);
  // The client's entry never loads the test authority.
  const node = readFileSync(join(pkg.scratch, "node_modules", "rangeid", "src", "node.mjs"), "utf8");
  assert.doesNotMatch(node, /testing/);
});
