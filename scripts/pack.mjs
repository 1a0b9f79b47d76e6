// `make pack`: the two npm packages as a release would pack them (each
// package's prepack builds it first, a no-op when it is up to date), into
// dist/ or --out DIR, and the npm commands that install them in a project.
// Until rangeid is on the npm registry this is how a project gets it.
// --json prints, last, what tests/release/pack.mjs's packBoth returns.
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { bytes, packBoth, repo } from "../tests/release/pack.mjs";

const { values } = parseArgs({ options: { out: { type: "string" }, json: { type: "boolean" } } });
const out = resolve(values.out ?? join(repo, "dist"));
mkdirSync(out, { recursive: true });
const packed = packBoth(out);
for (const [name, p] of Object.entries(packed)) {
  console.log(`${name}: ${p.tarball} (${bytes(p.size)} packed, ${bytes(p.unpackedSize)} unpacked)`);
}
console.log(`\nIn your project:\n  npm install ${packed.rangeid.tarball}\n  npm install --save-dev ${packed["rangeid-authority"].tarball}`);
if (values.json) console.log(JSON.stringify(packed));
