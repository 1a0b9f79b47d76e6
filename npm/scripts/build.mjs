// Builds the npm package from the repo: the wasm engine (cargo), its JS
// glue (wasm-bindgen, pinned 0.2.130), the engine shrunk by binaryen's
// wasm-opt -Oz (pinned in package-lock.json), the CommonJS bundle
// (esbuild) and the CommonJS type declarations. Then `npm pack` in npm/
// makes the tarball.
// Run from anywhere: `node npm/scripts/build.mjs`.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(pkg, "..");
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: "inherit", cwd: repo, ...opts });

const cargoBin = join(homedir(), ".cargo", "bin");
const env = { ...process.env, PATH: `${cargoBin}:${process.env.PATH}` };

run("cargo", ["build", "-p", "rangeid-wasm", "--target", "wasm32-unknown-unknown", "--profile", "wasm", "--locked"], { env });
const target = process.env.CARGO_TARGET_DIR ?? join(repo, "target");
const wasm = join(target, "wasm32-unknown-unknown", "wasm", "rangeid_wasm.wasm");

const out = join(pkg, "wasm");
rmSync(out, { recursive: true, force: true });
run("wasm-bindgen", ["--target", "web", "--out-dir", out, wasm], { env });
rmSync(join(out, ".gitignore"), { force: true });

const esbuild = join(pkg, "node_modules", ".bin", "esbuild");
const wasmOpt = join(pkg, "node_modules", "binaryen", "bin", "wasm-opt");
if (!existsSync(esbuild) || !existsSync(wasmOpt)) run("npm", ["ci", "--no-audit", "--no-fund"], { cwd: pkg });
const engine = join(out, "rangeid_wasm_bg.wasm");
run(wasmOpt, [
  "-Oz", "--enable-bulk-memory", "--enable-nontrapping-float-to-int", "--enable-sign-ext",
  "--enable-mutable-globals", engine, "-o", engine,
]);
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
console.log(`built ${pkg} (wasm/, dist/, index.d.cts, testing.d.cts); engine ${statSync(engine).size} bytes, test authority ${statSync(testing).size} bytes`);
