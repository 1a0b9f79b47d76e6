// Builds the admin page into www/dist, the authority's static-assets root:
//   dist/admin/index.html, app-<hash>.js|css (+ .map), favicon.svg
// The authority serves them at /admin/ with the headers it decides
// (edge-authority/src/front/page.rs: CSP, nosniff, caching).
// Installs its own dependencies (npm ci, from package-lock.json) when they
// are missing. Idempotent: the same sources give the same files.
// Run from anywhere: `node www/scripts/build.mjs`.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const www = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(www, "dist");
const out = join(dist, "admin");

if (!["esbuild", "preact", "uplot", "typescript"].every((d) => existsSync(join(www, "node_modules", d)))) {
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: www, stdio: "inherit" });
}
const { build } = await import(join(www, "node_modules", "esbuild", "lib", "main.js"));

rmSync(dist, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const result = await build({
  absWorkingDir: www,
  entryPoints: { app: "src/main.tsx" },
  outdir: out,
  entryNames: "[name]-[hash]",
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  sourcemap: "linked",
  jsx: "automatic",
  jsxImportSource: "preact",
  metafile: true,
  logLevel: "warning",
});

const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
const js = outputs.find((f) => f.endsWith(".js"));
const css = outputs.find((f) => f.endsWith(".css"));
const html = readFileSync(join(www, "src", "index.html"), "utf8").replace("{{js}}", js).replace("{{css}}", css);
writeFileSync(join(out, "index.html"), html);
copyFileSync(join(www, "src", "favicon.svg"), join(out, "favicon.svg"));

for (const f of ["index.html", js, css]) console.log(`  admin/${f}  ${statSync(join(out, f)).size} bytes`);
console.log(`built ${dist}`);
