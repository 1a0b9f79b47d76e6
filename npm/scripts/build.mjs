// Builds the npm package from the repo: the wasm engine (cargo), its JS
// glue (wasm-bindgen, pinned 0.2.130), the engine shrunk by binaryen's
// wasm-opt -Oz (pinned in package-lock.json), the engine again as a
// base64 module for the `inline` build, the CommonJS bundle (esbuild) and
// the CommonJS type declarations, and rangeid/testing's authority (its
// own wasm module, bundle and declarations). It is the package's `prepack`, so
// `npm pack` and `npm publish` in npm/ always build first; a build whose
// inputs did not change since the last one is skipped (a stamp of their
// hash in the cargo target folder), so packing right after `make build`
// does not build twice.
// Run from anywhere: `node npm/scripts/build.mjs` (`--force` rebuilds).
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(pkg, "..");
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: "inherit", cwd: repo, ...opts });

const cargoHome = process.env.CARGO_HOME ?? join(homedir(), ".cargo");
const cargoBin = join(cargoHome, "bin");
const env = { ...process.env, PATH: `${cargoBin}:${process.env.PATH}` };
const target = process.env.CARGO_TARGET_DIR ?? join(repo, "target");
const esbuild = join(pkg, "node_modules", ".bin", "esbuild");
const wasmOpt = join(pkg, "node_modules", "binaryen", "bin", "wasm-opt");
if (!existsSync(esbuild) || !existsSync(wasmOpt)) run("npm", ["ci", "--no-audit", "--no-fund"], { cwd: pkg });

// What the package's built files are made of: the sources and manifests of
// the crates compiled, the JS bundled, the lock files, cargo's
// configuration and environment, this script and the tools' versions.
const OUTPUTS = [
  "wasm/rangeid_wasm.js", "wasm/rangeid_wasm_bg.wasm", "wasm/rangeid_wasm_bg.base64.mjs", "dist/node.cjs", "index.d.cts",
  "wasm/testing/rangeid_testing.js", "wasm/testing/rangeid_testing_bg.wasm", "dist/testing.cjs", "testing.d.cts",
];
function inputsHash() {
  const hash = createHash("sha256");
  const files = (path) => {
    if (!existsSync(path)) return [];
    if (!statSync(path).isDirectory()) return [path];
    return readdirSync(path, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1)).flatMap((d) => files(join(path, d.name)));
  };
  const inputs = [
    "Cargo.toml", "Cargo.lock", ".cargo", "core/Cargo.toml", "core/src", "wasm-client/Cargo.toml", "wasm-client/src",
    "wasm-testing/Cargo.toml", "wasm-testing/src", "npm/src", "npm/index.d.ts", "npm/testing.d.ts", "npm/package-lock.json", "npm/scripts/build.mjs",
  ].flatMap((p) => files(join(repo, p))).concat(files(join(cargoHome, "config.toml")), files(join(cargoHome, "config")));
  for (const f of inputs) hash.update(`${relative(repo, f)}\0`).update(readFileSync(f)).update("\0");
  for (const [k, v] of Object.entries(process.env).filter(([k]) => /^(CARGO_|RUSTC|RUSTFLAGS|RUSTDOC)/.test(k) && k !== "CARGO_HOME").sort()) hash.update(`${k}=${v}\n`);
  for (const [cmd, args] of [["rustc", ["--version"]], ["wasm-bindgen", ["--version"]], [wasmOpt, ["--version"]], [esbuild, ["--version"]]]) {
    hash.update(execFileSync(cmd, args, { env, encoding: "utf8" }));
  }
  return hash.digest("hex");
}
const stamp = join(target, "rangeid-npm-package.inputs.sha256");
const want = inputsHash();
if (!process.argv.includes("--force") && OUTPUTS.every((f) => existsSync(join(pkg, f)))
    && existsSync(stamp) && readFileSync(stamp, "utf8").trim() === want) {
  console.log(`npm/scripts/build.mjs: the package in ${pkg} is up to date (wasm/, dist/, index.d.cts, testing.d.cts)`);
  process.exit(0);
}
rmSync(stamp, { force: true });

run("cargo", ["build", "-p", "rangeid-wasm", "--target", "wasm32-unknown-unknown", "--profile", "wasm", "--locked"], { env });
const wasm = join(target, "wasm32-unknown-unknown", "wasm", "rangeid_wasm.wasm");

const out = join(pkg, "wasm");
rmSync(out, { recursive: true, force: true });
// Every entry hands the glue its engine, so the glue needs no default
// `new URL("rangeid_wasm_bg.wasm", import.meta.url)`; without it, bundlers
// no longer copy the engine a second time into every bundle of an entry
// that loads it another way (Next.js's edge build did).
run("wasm-bindgen", ["--target", "web", "--omit-default-module-path", "--out-dir", out, wasm], { env });
rmSync(join(out, ".gitignore"), { force: true });

const engine = join(out, "rangeid_wasm_bg.wasm");
run(wasmOpt, [
  "-Oz", "--enable-bulk-memory", "--enable-nontrapping-float-to-int", "--enable-sign-ext",
  "--enable-mutable-globals", engine, "-o", engine,
]);
// The `inline` build's copy of the engine: the optimized bytes as base64.
writeFileSync(
  join(out, "rangeid_wasm_bg.base64.mjs"),
  `// The engine (rangeid_wasm_bg.wasm) as base64, for src/inline.mjs. Generated by npm/scripts/build.mjs.\nexport default "${readFileSync(engine).toString("base64")}";\n`,
);
mkdirSync(join(pkg, "dist"), { recursive: true });
run(esbuild, [
  join(pkg, "src", "node-cjs.mjs"), "--bundle", "--platform=node", "--format=cjs", "--target=node20",
  `--outfile=${join(pkg, "dist", "node.cjs")}`, "--log-level=error",
], { cwd: pkg });
// The CommonJS entry's declarations: the same API, under the name
// TypeScript expects beside a `require` condition.
copyFileSync(join(pkg, "index.d.ts"), join(pkg, "index.d.cts"));

// rangeid/testing: the test authority (core's decisions) as a wasm module
// of its own, so the engine above keeps its size budget.
run("cargo", ["build", "-p", "rangeid-wasm-testing", "--target", "wasm32-unknown-unknown", "--profile", "wasm", "--locked"], { env });
const testingOut = join(out, "testing");
run("wasm-bindgen", ["--target", "web", "--out-dir", testingOut, join(target, "wasm32-unknown-unknown", "wasm", "rangeid_testing.wasm")], { env });
rmSync(join(testingOut, ".gitignore"), { force: true });
const testing = join(testingOut, "rangeid_testing_bg.wasm");
run(wasmOpt, [
  "-Oz", "--enable-bulk-memory", "--enable-nontrapping-float-to-int", "--enable-sign-ext",
  "--enable-mutable-globals", testing, "-o", testing,
]);
run(esbuild, [
  join(pkg, "src", "testing-cjs.mjs"), "--bundle", "--platform=node", "--format=cjs", "--target=node20",
  `--outfile=${join(pkg, "dist", "testing.cjs")}`, "--log-level=error",
], { cwd: pkg });
copyFileSync(join(pkg, "testing.d.ts"), join(pkg, "testing.d.cts"));
// Stamped only when the inputs are still what they were at the start (a
// source edited during the build may or may not be in it).
if (inputsHash() === want) writeFileSync(stamp, `${want}\n`);
console.log(`built ${pkg} (wasm/, dist/, index.d.cts, testing.d.cts); engine ${statSync(engine).size} bytes, test authority ${statSync(testing).size} bytes`);
