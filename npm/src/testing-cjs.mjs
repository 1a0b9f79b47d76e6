// rangeid/testing (CommonJS, bundled to dist/testing.cjs): the in-process
// test authority, its wasm read from the package's files on first use.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as glue from "../wasm/testing/rangeid_testing.js";
import { makeCreateTestAuthority } from "./testing/authority.mjs";

let ready = false;
function load() {
  if (!ready) {
    // __dirname is the bundle's folder, dist/.
    glue.initSync({ module: readFileSync(join(__dirname, "..", "wasm", "testing", "rangeid_testing_bg.wasm")) });
    ready = true;
  }
  return glue;
}

export const createTestAuthority = makeCreateTestAuthority(load);
