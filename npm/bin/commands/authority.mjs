// Finds the prebuilt authority (the npm package rangeid-authority) and the
// tools `rangeid dev` and `rangeid deploy` run it with, or says exactly how
// to install what is missing. Node's built-ins only.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** This package's version: the authority package is released with the same one. */
export const VERSION = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;
/** The package holding the prebuilt authority. */
export const AUTHORITY_PACKAGE = "rangeid-authority";
/** The rangeid command's own entry, run for keys and tokens (one minting code). */
export const CLI = fileURLToPath(new URL("../rangeid.mjs", import.meta.url));

/** Where `name` resolves from `dir` (a project folder), as Node would load it there; undefined when absent. */
function resolveFrom(dir, name) {
  try {
    return createRequire(join(resolve(dir), "noop.js")).resolve(name);
  } catch (e) {
    if (e?.code === "MODULE_NOT_FOUND" || e?.code === "ERR_PACKAGE_PATH_NOT_EXPORTED") return undefined;
    throw e;
  }
}

/**
 * The authority package: from `dir` when given (a staged package folder,
 * e.g. edge-authority/npm in the repository), else as installed in the
 * project at `cwd`, else beside this package. Throws `fail(message)` with
 * the install command when it is absent or incomplete.
 */
export function findAuthority({ dir, cwd = process.cwd(), command, fail }) {
  let entry;
  if (dir !== undefined) {
    entry = join(resolve(cwd, dir), "index.js");
    if (!existsSync(entry)) throw fail(`--authority ${dir}: no ${AUTHORITY_PACKAGE} package there (no index.js)`);
  } else {
    entry = resolveFrom(cwd, AUTHORITY_PACKAGE) ?? resolveFrom(dirname(CLI), AUTHORITY_PACKAGE);
  }
  if (!entry) {
    throw fail(`\`rangeid ${command}\` runs the prebuilt authority from the npm package ${AUTHORITY_PACKAGE}, which is not installed here (looked from ${resolve(cwd)}).
Install it beside rangeid (it brings the workerd runtime; no Rust, no clone), then run this again:
  npm install --save-dev ${AUTHORITY_PACKAGE}@${VERSION}
  npx --no-install rangeid ${command}`);
  }
  const authority = createRequire(entry)(entry);
  const missing = ["worker", "wasm", "workerdConfig", "wranglerTemplate"]
    .map((k) => authority.paths[k])
    .concat(join(authority.paths.assets, "admin", "index.html"))
    .filter((f) => !existsSync(f));
  if (missing.length) {
    throw fail(`${AUTHORITY_PACKAGE} in ${authority.paths.root} is incomplete (no ${missing.join(", ")}): reinstall it with
  npm install --save-dev ${AUTHORITY_PACKAGE}@${VERSION}`);
  }
  if (authority.version !== VERSION) {
    process.stderr.write(`rangeid: warning: rangeid ${VERSION} with ${AUTHORITY_PACKAGE} ${authority.version}; they are released together (npm install --save-dev ${AUTHORITY_PACKAGE}@${VERSION})\n`);
  }
  return authority;
}

/** The workerd binary the authority package depends on, or `fail` with how to get it. */
export function workerdOf(authority, fail) {
  let bin;
  try {
    bin = authority.workerdBinary();
  } catch (e) {
    throw fail(`the workerd runtime that ${AUTHORITY_PACKAGE} depends on is not usable here: ${String(e?.message ?? e).trim()}
Reinstall it (without --omit=optional: the binary for this platform is an optional dependency):
  npm install --save-dev ${AUTHORITY_PACKAGE}@${VERSION}`);
  }
  if (!existsSync(bin)) throw fail(`the workerd binary ${bin} is missing: reinstall ${AUTHORITY_PACKAGE}`);
  return bin;
}

/**
 * wrangler: the project's own (node_modules), else one on PATH. Returns
 * {command, args, version, where} or undefined.
 */
export function findWrangler(cwd = process.cwd()) {
  const manifest = resolveFrom(cwd, "wrangler/package.json");
  if (manifest) {
    const pkg = JSON.parse(readFileSync(manifest, "utf8"));
    const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin?.wrangler;
    if (bin) return { command: process.execPath, args: [join(dirname(manifest), bin)], version: pkg.version, where: dirname(manifest) };
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const bin = dir && join(dir, "wrangler");
    if (bin && existsSync(bin)) {
      const v = spawnSync(bin, ["--version"], { encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
      const version = /(\d+\.\d+\.\d+)/.exec(v.stdout ?? "")?.[1];
      return { command: bin, args: [], version, where: bin };
    }
  }
  return undefined;
}

/**
 * Runs this command's own `rangeid <args>` (keygen, token) and returns its
 * stdout; a refusal becomes `fail(its message)`.
 */
export function runSelf(args, fail, env = process.env) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env });
  if (r.status !== 0) throw fail((r.stderr || `rangeid ${args[0]} failed`).replace(/^rangeid: /, "").replace(/\n\(rangeid --help for usage\)\n?$/, "").trim());
  return r.stdout.trim();
}

/** The state folder (`--state`, $RANGEID_HOME or ./.rangeid), created private and ignored by git whatever project it is in. */
export function stateFolder(values) {
  const home = resolve(values.state ?? process.env.RANGEID_HOME ?? ".rangeid");
  mkdirSync(home, { recursive: true });
  chmodSync(home, 0o700);
  const ignore = join(home, ".gitignore");
  if (!existsSync(ignore)) writeFileSync(ignore, "# rangeid's local state and signing key: never commit.\n*\n");
  return home;
}
