// The packed package for edge bundlers: the `edge-light` export condition
// (Vercel Edge Functions, Next.js's edge runtime) resolves to the build
// that takes a precompiled WebAssembly.Module, and the bundle runs under
// the `edge-runtime` package (Vercel's local edge runtime) with wasm code
// generation switched off in V8, issuing IDs from the real local authority
// through the runtime's own fetch. Also: the subpaths that force one build
// (`rangeid/node`, `rangeid/workerd`, `rangeid/edge-light`,
// `rangeid/browser`) resolve to it whatever the bundler's conditions.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join, resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";
import * as esbuild from "esbuild";
import { EdgeRuntime } from "edge-runtime";
import { Authority, uniqueNs } from "../authority/harness.mjs";
import { createNamespace, installPacked } from "./harness.mjs";

let authority;
let pkg;
let admin;

// An edge function as a user writes it: one generator per isolate, and the
// prefetch a request started kept alive with waitUntil.
const APP = `
import { createGenerator, RangeIdError } from "rangeid";
let generator;
addEventListener("fetch", (event) => event.respondWith(handle(event)));
async function handle(event) {
  const n = Number(new URL(event.request.url).searchParams.get("n") ?? "1");
  try {
    generator ??= createGenerator(CONFIG);
    const ids = await generator;
    const out = [];
    while (out.length < n) out.push(...(await ids.nextIds(n - out.length)));
    event.waitUntil(ids.settled());
    return Response.json({ ids: out, incarnation: ids.incarnation, runtime: typeof EdgeRuntime === "string" ? EdgeRuntime : null, stats: ids.stats() });
  } catch (e) {
    generator = undefined;
    return Response.json({ error: { code: e instanceof RangeIdError ? e.code : "internal", message: String(e && e.message) } }, { status: 500 });
  }
}
`;

/**
 * What Next.js and Vercel's edge bundlers do with `import m from
 * "./x.wasm?module"`: the platform compiles the file ahead of time and the
 * import becomes a reference to that WebAssembly.Module (here a global the
 * runtime is given, as Next.js's sandbox does). Records what it saw.
 */
function wasmModulePlugin(seen) {
  return {
    name: "wasm-module",
    setup(build) {
      build.onResolve({ filter: /\.wasm\?module$/ }, (args) => ({
        path: resolvePath(args.resolveDir, args.path.replace(/\?module$/, "")),
        namespace: "wasm-module",
      }));
      build.onResolve({ filter: /\.wasm$/ }, (args) => ({ path: resolvePath(args.resolveDir, args.path), namespace: "wasm-plain" }));
      build.onLoad({ filter: /.*/, namespace: "wasm-module" }, (args) => {
        const binding = `wasm_${basename(args.path).replace(/\W/g, "_")}`;
        seen.set(binding, args.path);
        return { contents: `export default globalThis.${binding};`, loader: "js" };
      });
      // A plain `.wasm` import means "instantiate for me", which edge bundlers do at run time: refuse it here.
      build.onLoad({ filter: /.*/, namespace: "wasm-plain" }, (args) => ({ errors: [{ text: `plain wasm import ${args.path}: an edge build must import .wasm?module` }] }));
    },
  };
}

/** Every wasm import as an empty module: for checks of resolution alone. */
const stubWasm = {
  name: "stub-wasm",
  setup(build) {
    build.onResolve({ filter: /\.wasm(\?module)?$/ }, (args) => ({ path: args.path, namespace: "stub" }));
    build.onLoad({ filter: /.*/, namespace: "stub" }, () => ({ contents: "export default undefined;", loader: "js" }));
  },
};

/** Bundles `source` from the scratch project with the given esbuild options. */
async function bundle(source, options = {}, seen = new Map()) {
  const result = await esbuild.build({
    stdin: { contents: source, resolveDir: pkg.scratch, sourcefile: "app.mjs", loader: "js" },
    absWorkingDir: pkg.scratch,
    bundle: true,
    write: false,
    metafile: true,
    format: "esm",
    target: "es2022",
    logLevel: "silent",
    plugins: [wasmModulePlugin(seen)],
    ...options,
  });
  const inputs = Object.keys(result.metafile.inputs).filter((p) => p.includes("node_modules/rangeid/src/"));
  return { code: result.outputFiles[0].text, inputs, seen, warnings: result.warnings };
}

before(async () => {
  pkg = installPacked();
  authority = await new Authority({ runtime: process.env.RANGEID_TEST_RUNTIME || "workerd" }).start();
  admin = authority.token("admin", ["*"]);
});

after(async () => {
  await authority?.stop();
  authority?.cleanup();
});

test("esbuild with the edge-light condition picks the precompiled-module build", async () => {
  const { inputs, seen } = await bundle(APP, { conditions: ["edge-light"], platform: "browser", format: "iife", define: { CONFIG: "{}" } });
  assert.ok(inputs.includes("node_modules/rangeid/src/edge-light.mjs"), inputs.join(", "));
  for (const other of ["browser", "node", "workerd", "default"]) {
    assert.ok(!inputs.includes(`node_modules/rangeid/src/${other}.mjs`), `not the ${other} build: ${inputs.join(", ")}`);
  }
  assert.deepEqual([...seen.values()].map((p) => p.replace(/^.*node_modules\//, "")), ["rangeid/wasm/rangeid_wasm_bg.wasm"], "the engine came in as a precompiled module");
});

test("under edge-runtime, with wasm compilation off, the bundle issues IDs through the runtime's fetch", async () => {
  const ns = uniqueNs("edge-light");
  await createNamespace(authority, admin, ns);
  const config = { url: authority.base, token: authority.token("generator", [ns], { sub: "edge-fn" }), namespace: ns };
  const { code, seen } = await bundle(APP, { conditions: ["edge-light"], platform: "browser", format: "iife", define: { CONFIG: JSON.stringify(config) } });
  const fetched = [];
  const runtime = new EdgeRuntime({
    // What edge platforms enforce: no eval, and no compiling wasm from bytes.
    codeGeneration: { strings: false, wasm: false },
    extend(context) {
      for (const [binding, file] of seen) context[binding] = new WebAssembly.Module(readFileSync(file));
      const edgeFetch = context.fetch;
      context.fetch = (input, init) => {
        fetched.push(String(input));
        return edgeFetch(input, init);
      };
      return context;
    },
  });
  // The modules were compiled in Node's realm, outside the isolate, as
  // Next.js's sandbox compiles them: inside, they fail `instanceof
  // WebAssembly.Module`, and the package must take them all the same.
  assert.equal(runtime.evaluate(`${[...seen.keys()][0]} instanceof WebAssembly.Module`), false, "the module is from another realm");
  runtime.evaluate(code);
  // The ban is real: compiling wasm bytes inside this runtime throws.
  assert.throws(() => runtime.evaluate("new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]))"), /disallowed/);

  const seenIds = new Set();
  let incarnation;
  for (let i = 0; i < 12; i++) {
    const response = await runtime.dispatchFetch(`https://edge.example/ids?n=${i === 0 ? 1 : 500}`);
    const body = await response.json();
    await response.waitUntil();
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.equal(typeof body.runtime, "string", "ran inside edge-runtime");
    incarnation ??= body.incarnation;
    assert.equal(body.incarnation, incarnation, "one generator per isolate");
    for (const id of body.ids) {
      assert.match(id, /^[1-9][0-9]*$/);
      assert.ok(!seenIds.has(id), `duplicate ${id}`);
      seenIds.add(id);
    }
  }
  assert.equal(seenIds.size, 1 + 11 * 500);
  assert.ok(fetched.length >= 2 && fetched.every((u) => u === `${authority.base}/v1/ranges`), `range requests through the edge runtime's fetch: ${fetched}`);
  const grants = await authority.req("GET", `/v1/namespaces/${ns}/grants?limit=1000`, { token: admin });
  const mine = grants.body.grants.filter((g) => g.incarnation === incarnation);
  assert.ok(mine.length >= 2 && mine.every((g) => g.sub === "edge-fn"));
  for (const id of seenIds) {
    const n = BigInt(id);
    assert.ok(mine.some((g) => BigInt(g.start) <= n && n < BigInt(g.end)), `${id} is in a grant to this isolate`);
  }
});

test("forced subpaths resolve to their build whatever the conditions; rangeid/node issues IDs from ESM and CommonJS", async () => {
  const cases = [
    // [import, esbuild options, expected build]
    ["rangeid", { platform: "node" }, "node"],
    ["rangeid", { platform: "browser" }, "browser"],
    ["rangeid", { platform: "neutral", conditions: ["workerd"] }, "workerd"],
    ["rangeid", { platform: "neutral", conditions: ["edge-light"] }, "edge-light"],
    ["rangeid", { platform: "neutral" }, "default"],
    ["rangeid/node", { platform: "browser" }, "node"],
    ["rangeid/browser", { platform: "node" }, "browser"],
    ["rangeid/workerd", { platform: "node" }, "workerd"],
    ["rangeid/workerd", { platform: "browser", conditions: ["edge-light"] }, "workerd"],
    ["rangeid/edge-light", { platform: "node" }, "edge-light"],
    // webpack's own condition: Next.js's `next build --webpack` server bundles.
    ["rangeid", { platform: "node", conditions: ["webpack"] }, "inline"],
    ["rangeid/node", { platform: "node", conditions: ["webpack"] }, "inline"],
    ["rangeid", { platform: "browser", conditions: ["webpack"] }, "browser"],
    ["rangeid", { platform: "neutral", conditions: ["edge-light", "webpack"] }, "edge-light"],
    ["rangeid/inline", { platform: "neutral" }, "inline"],
  ];
  for (const [specifier, options, expected] of cases) {
    const { inputs } = await bundle(`export * from ${JSON.stringify(specifier)};`, { external: ["node:*"], plugins: [stubWasm], ...options });
    assert.ok(inputs.includes(`node_modules/rangeid/src/${expected}.mjs`), `${specifier} with ${JSON.stringify(options)}: ${inputs.join(", ")}`);
    assert.equal(inputs.filter((p) => /\/src\/(node|inline|browser|workerd|edge-light|default)\.mjs$/.test(p)).length, 1, `one build only: ${inputs.join(", ")}`);
  }

  // Node's own resolver.
  writeFileSync(join(pkg.scratch, "resolve.mjs"), "export const resolve = (s) => import.meta.resolve(s);\n");
  const { resolve } = await import(pathToFileURL(join(pkg.scratch, "resolve.mjs")).href);
  const require = createRequire(join(pkg.scratch, "x.cjs"));
  assert.match(resolve("rangeid/node"), /\/rangeid\/src\/node\.mjs$/);
  assert.match(resolve("rangeid/workerd"), /\/rangeid\/src\/workerd\.mjs$/);
  assert.match(resolve("rangeid/browser"), /\/rangeid\/src\/browser\.mjs$/);
  assert.match(resolve("rangeid/edge-light"), /\/rangeid\/src\/edge-light\.mjs$/);
  assert.match(resolve("rangeid/inline"), /\/rangeid\/src\/inline\.mjs$/);
  assert.match(require.resolve("rangeid/node"), /\/rangeid\/dist\/node\.cjs$/);

  const ns = uniqueNs("subpath");
  await createNamespace(authority, admin, ns, { first: (2n ** 53n - 2n).toString(), max: (2n ** 64n - 1n).toString() });
  const options = { url: authority.base, token: authority.token("generator", [ns]), namespace: ns, rangeSize: 3 };
  const esm = await import(resolve("rangeid/node"));
  const a = await esm.createGenerator(options);
  const b = await require("rangeid/node").createGenerator(options);
  const ids = [...(await a.nextIds(3)), ...(await b.nextIds(3))].sort();
  assert.deepEqual(ids, ["9007199254740990", "9007199254740991", "9007199254740992", "9007199254740993", "9007199254740994", "9007199254740995"]);
  a.close();
  b.close();
});
