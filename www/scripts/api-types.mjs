// Writes the admin page's API types from the one source of API v1's shapes,
// the authority's OpenAPI document (edge-authority/src/openapi.rs):
//   1. edge-authority/openapi.json, printed by `cargo run --example openapi`;
//   2. www/src/api/schema.gen.ts, openapi-typescript's reading of that file.
// Tests fail when either is stale (openapi.rs's tests, tests/www/lib.test.mjs).
//
//   node www/scripts/api-types.mjs
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const www = join(dirname(fileURLToPath(import.meta.url)), "..");
const repo = join(www, "..");
export const DOCUMENT = join(repo, "edge-authority", "openapi.json");
export const GENERATED = join(www, "src", "api", "schema.gen.ts");

/** openapi-typescript's TypeScript for the document at `file`, with a header. */
export async function typesOf(file) {
  const { default: openapiTS, astToString } = await import(join(www, "node_modules", "openapi-typescript", "dist", "index.mjs"));
  const ast = await openapiTS(new URL(`file://${file}`), { emptyObjectsUnknown: true });
  return `// Generated from edge-authority/openapi.json by www/scripts/api-types.mjs
// (openapi-typescript); do not edit. tests/www/lib.test.mjs fails when stale.
${astToString(ast)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = execFileSync("cargo", ["run", "--quiet", "--locked", "-p", "rangeid-authority", "--example", "openapi"], { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  writeFileSync(DOCUMENT, text);
  writeFileSync(GENERATED, await typesOf(DOCUMENT));
  console.log(`wrote ${DOCUMENT} and ${GENERATED}`);
}
