// Builds the npm package from the repo: the wasm engine (cargo), its JS
// glue (wasm-bindgen, pinned 0.2.130), the engine shrunk by binaryen's
// wasm-opt -Oz (pinned in package-lock.json), the CommonJS bundle
// (esbuild) and the CommonJS type declarations. It is the package's
// `prepack`, so `npm pack` and `npm publish` in npm/ always build first;
// a build whose inputs did not change since the last one is skipped (a
// stamp of their hash in the cargo target folder), so packing right after
// `make build` does not build twice.
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
const OUTPUTS = ["wasm/rangeid_wasm.js", "wasm/rangeid_wasm_bg.wasm", "dist/node.cjs", "index.d.cts"];
function inputsHash() {
  const hash = createHash("sha256");
  const files = (path) => {
    if (!existsSync(path)) return [];
    if (!statSync(path).isDirectory()) return [path];
    return readdirSync(path, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1)).flatMap((d) => files(join(path, d.name)));
  };
  const inputs = [
    "Cargo.toml", "Cargo.lock", ".cargo", "core/Cargo.toml", "core/src", "wasm-client/Cargo.toml", "wasm-client/src",
    "npm/src", "npm/index.d.ts", "npm/package-lock.json", "npm/scripts/build.mjs",
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
  console.log(`npm/scripts/build.mjs: the package in ${pkg} is up to date (wasm/, dist/, index.d.cts)`);
  process.exit(0);
}
rmSync(stamp, { force: true });

run("cargo", ["build", "-p", "rangeid-wasm", "--target", "wasm32-unknown-unknown", "--profile", "wasm", "--locked"], { env });
const wasm = join(target, "wasm32-unknown-unknown", "wasm", "rangeid_wasm.wasm");

const out = join(pkg, "wasm");
rmSync(out, { recursive: true, force: true });
run("wasm-bindgen", ["--target", "web", "--out-dir", out, wasm], { env });
rmSync(join(out, ".gitignore"), { force: true });

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
writeFileSync(stamp, `${want}\n`);
console.log(`built ${pkg} (wasm/, dist/, index.d.cts); engine ${statSync(engine).size} bytes`);
