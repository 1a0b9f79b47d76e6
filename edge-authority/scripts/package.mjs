#!/usr/bin/env node
// Stages the npm package `rangeid-authority` (edge-authority/npm/) from the
// repository: the production Worker (the folder of wrangler.toml's `main`,
// the one place that names it), the admin page's files (wrangler.toml's
// [assets] directory), the workerd configuration and a wrangler
// configuration template, both with their paths rewritten to the package's
// layout, and the LICENSE. Then checks that every file the package lists
// is there, so a pack can never ship without the build.
//
//   node edge-authority/scripts/package.mjs               # build (build.sh: a no-op when up to date), then stage
//   node edge-authority/scripts/package.mjs --no-build    # stage what is built (scripts/workerd.sh)
//
// It is the package's `prepack`, so `npm pack` and `npm publish` in
// edge-authority/npm always build first.
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(here, "..");
const pkg = join(here, "npm");

/** A failure of staging: the message alone, exit status 1. */
class StageError extends Error {}

/** `key = "value"` in the given [section] of a small TOML file (the top level when section is ""). */
export function tomlString(text, section, key) {
  let current = "";
  for (const line of text.split("\n")) {
    const header = /^\s*\[([^\]]*)\]\s*(#.*)?$/.exec(line);
    if (header) {
      current = header[1].trim();
      continue;
    }
    const m = new RegExp(`^\\s*${key}\\s*=\\s*"([^"]*)"`).exec(line);
    if (m && current === section) return m[1];
  }
  return undefined;
}

/** Where the production build and the admin page are, read from wrangler.toml. */
export function sources() {
  const wrangler = readFileSync(join(here, "wrangler.toml"), "utf8");
  const main = tomlString(wrangler, "", "main");
  const assets = tomlString(wrangler, "assets", "directory");
  if (!main || !assets) throw new StageError("edge-authority/wrangler.toml: no main or no [assets] directory");
  return { wrangler, main, worker: resolve(here, main), build: dirname(resolve(here, main)), assets: resolve(here, assets) };
}

/** `inside` as a path below `dir`, or undefined when it is not below it. */
function below(dir, inside) {
  const rel = relative(dir, inside);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel.split(sep).join("/") : undefined;
}

/**
 * The package's workerd configuration from the repository's: each embedded
 * module taken from the production build (refused otherwise), the assets
 * folder at ../assets, and the test-only settings left out (a production
 * artifact has no test switch).
 */
export function packageCapnp(text, src) {
  const configDir = join(here, "workerd");
  let out = text.replace(/embed "([^"]+)"/g, (_, path) => {
    const rel = below(src.build, resolve(configDir, path));
    if (!rel) throw new StageError(`workerd/authority.capnp embeds ${path}, which is not in the production build (${relative(repo, src.build)})`);
    return `embed "../build/${rel}"`;
  });
  out = out.replace(/disk = \(path = "([^"]+)"/g, (whole, path) =>
    resolve(configDir, path) === src.assets ? 'disk = (path = "../assets"' : whole);
  // The repository's own header comment gives way to the package's.
  const lines = out.split("\n");
  const body = lines.slice(lines.findIndex((line) => !/^\s*(#.*)?$/.test(line)));
  out = body.filter((line) => !/RANGEID_TEST_ONLY_/.test(line)).join("\n");
  const header = `# The rangeid authority on workerd, from the npm package rangeid-authority
# (staged from the repository's edge-authority/workerd/authority.capnp by
# edge-authority/scripts/package.mjs; paths point into this package).
# \`npx rangeid dev\` runs it; by hand:
#
#   workerd serve --experimental node_modules/rangeid-authority/workerd/authority.capnp \\
#     --directory-path state=/var/lib/rangeid --socket-addr http=127.0.0.1:8787
#
# Settings come from the environment; set each (empty for the default):
# RANGEID_SIGNING_KEYS (required: a JSON map kid -> key), RANGEID_CORS_ORIGINS,
# RANGEID_GRANT_RETENTION_SECONDS, RANGEID_TOKEN_AUDIENCE,
# RANGEID_CHECK_SECONDS, RANGEID_RELAY_LEASE_MS. One machine, no
# replication: back up the state folder (stop workerd, or copy every
# *.sqlite with its -wal and -shm together).

`;
  return header + out;
}

/** The package's wrangler configuration template: main and assets inside the package. */
export function packageWrangler(text, src) {
  const main = below(src.build, src.worker);
  let out = text.replace(/^(\s*main\s*=\s*)"[^"]*"/m, `$1"build/${main}"`);
  let section = "";
  out = out.split("\n").map((line) => {
    const header = /^\s*\[([^\]]*)\]/.exec(line);
    if (header) section = header[1].trim();
    return section === "assets" ? line.replace(/^(\s*directory\s*=\s*)"[^"]*"/, '$1"assets"') : line;
  }).join("\n");
  const header = `# The rangeid authority's wrangler configuration, from the npm package
# rangeid-authority (staged from the repository's edge-authority/wrangler.toml;
# main and [assets] point into this package). \`npx rangeid deploy\` deploys
# with it; the secret RANGEID_SIGNING_KEYS is set apart from it.
#
`;
  return header + out;
}

/** The files the package lists ("files" in its package.json), each checked present and non-empty. */
export function checkStaged() {
  const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
  const missing = manifest.files.filter((f) => {
    const p = join(pkg, f);
    if (!existsSync(p)) return true;
    const s = statSync(p);
    return s.isFile() ? s.size === 0 : false;
  });
  if (missing.length) throw new StageError(`edge-authority/npm is missing ${missing.join(", ")}: run node edge-authority/scripts/package.mjs`);
  if (!existsSync(join(pkg, "assets", "admin", "index.html"))) throw new StageError("edge-authority/npm/assets has no admin/index.html");
}

export function stage() {
  const src = sources();
  for (const f of [src.worker, join(src.build, "index_bg.wasm")]) {
    if (!existsSync(f)) throw new StageError(`${relative(repo, f)} is missing: run edge-authority/scripts/build.sh`);
  }
  if (!existsSync(join(src.assets, "admin", "index.html"))) throw new StageError(`${relative(repo, src.assets)} has no admin page: run edge-authority/scripts/build.sh`);

  const capnp = packageCapnp(readFileSync(join(here, "workerd", "authority.capnp"), "utf8"), src);
  const modules = [...capnp.matchAll(/embed "\.\.\/build\/([^"]+)"/g)].map((m) => m[1]);

  for (const dir of ["build", "assets", "workerd"]) rmSync(join(pkg, dir), { recursive: true, force: true });
  mkdirSync(join(pkg, "build"), { recursive: true });
  mkdirSync(join(pkg, "workerd"), { recursive: true });
  for (const m of modules) copyFileSync(join(src.build, m), join(pkg, "build", m));
  cpSync(src.assets, join(pkg, "assets"), { recursive: true });
  writeFileSync(join(pkg, "workerd", "authority.capnp"), capnp);
  writeFileSync(join(pkg, "wrangler.toml"), packageWrangler(src.wrangler, src));
  copyFileSync(join(repo, "LICENSE"), join(pkg, "LICENSE"));
  checkStaged();
  const size = (f) => statSync(join(pkg, "build", f)).size.toLocaleString("en");
  process.stderr.write(`package.mjs: staged edge-authority/npm (${modules.map((m) => `${basename(m)} ${size(m)} bytes`).join(", ")})\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    if (!process.argv.includes("--no-build")) {
      execFileSync(join(here, "scripts", "build.sh"), { stdio: ["ignore", process.stderr, "inherit"] });
    }
    stage();
  } catch (e) {
    if (!(e instanceof StageError)) throw e;
    process.stderr.write(`package.mjs: ${e.message}\n`);
    process.exitCode = 1;
  }
}
