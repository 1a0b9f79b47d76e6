// Packs rangeid's two npm packages as a release would (`npm pack`, which
// runs each package's prepack: the build, a no-op when it is up to date),
// and reads what went in.
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The two packages: the client and the prebuilt authority. */
export const PACKAGES = {
  rangeid: join(repo, "npm"),
  "rangeid-authority": join(repo, "edge-authority", "npm"),
};

/**
 * `npm pack` of one package into `dest`: {tarball, files (paths), size,
 * unpackedSize, log (what npm and prepack printed)}.
 */
export function pack(name, dest = mkdtempSync(join(tmpdir(), "rangeid-pack-"))) {
  const r = spawnSync("npm", ["pack", "--json", "--pack-destination", dest], {
    cwd: PACKAGES[name],
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`npm pack of ${name} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  // prepack's own output comes first on stdout; npm's JSON document last.
  const out = r.stdout;
  const start = out.search(/^\[\s*$/m);
  if (start === -1) throw new Error(`npm pack printed no JSON:\n${out}`);
  const [result] = JSON.parse(out.slice(start));
  return {
    tarball: join(dest, result.filename),
    files: result.files.map((f) => f.path).sort(),
    size: result.size,
    unpackedSize: result.unpackedSize,
    log: `${out.slice(0, start)}${r.stderr}`,
  };
}

/** Both packages packed into one folder. */
export function packBoth(dest = mkdtempSync(join(tmpdir(), "rangeid-pack-"))) {
  return Object.fromEntries(Object.keys(PACKAGES).map((name) => [name, pack(name, dest)]));
}

/** Bytes as "94,490 B (92.3 KiB)". */
export const bytes = (n) => `${n.toLocaleString("en")} B (${n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`})`;
