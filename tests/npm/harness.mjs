// Installs the packed `rangeid` tarball into a scratch project, as a user
// would, and gives tests its ESM and CommonJS faces.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const packageDir = join(here, "..", "..", "npm");

/** Packs npm/ (already built: `make test` builds it once, before the
 * integration step) into `folder`; returns the tarball's path. */
export function packTarball(folder) {
  execFileSync("npm", ["pack", "--pack-destination", folder, "--silent"], { cwd: packageDir, stdio: ["ignore", "ignore", "inherit"] });
  const tarball = readdirSync(folder).find((f) => f.endsWith(".tgz"));
  if (!tarball) throw new Error(`npm pack left no tarball in ${folder}`);
  return join(folder, tarball);
}

/** Packs npm/ (already built) and installs the tarball into a new folder. */
export function installPacked() {
  const scratch = mkdtempSync(join(tmpdir(), "rangeid-user-"));
  const tarball = basename(packTarball(scratch));
  writeFileSync(join(scratch, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--silent", join(scratch, tarball)], { cwd: scratch, stdio: ["ignore", "ignore", "inherit"] });
  writeFileSync(join(scratch, "entry.mjs"), 'export * from "rangeid";\n');
  return {
    scratch,
    tarball: join(scratch, tarball),
    esm: () => import(pathToFileURL(join(scratch, "entry.mjs")).href),
    cjs: () => createRequire(join(scratch, "entry.cjs"))("rangeid"),
  };
}

/** Creates a namespace as admin; `first` and `max` are decimal strings. */
export async function createNamespace(authority, admin, namespace, fields = {}) {
  let r;
  for (let attempt = 0; ; attempt++) {
    try {
      r = await authority.req("POST", "/v1/namespaces", { token: admin, body: { namespace, ...fields } });
      break;
    } catch (e) {
      // A keep-alive socket the server closed while this process was busy.
      if (attempt === 2) throw e;
    }
  }
  if (r.status !== 201) throw new Error(`create ${namespace}: ${r.status} ${r.text}`);
  return r.body;
}
