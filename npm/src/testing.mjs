// rangeid/testing (ESM): the in-process test authority, its wasm read from
// the package's files on first use (Node, Deno, Bun).
import { readFileSync } from "node:fs";
import * as glue from "../wasm/testing/rangeid_testing.js";
import { makeCreateTestAuthority } from "./testing/authority.mjs";

let ready = false;
function load() {
  if (!ready) {
    glue.initSync({ module: readFileSync(new URL("../wasm/testing/rangeid_testing_bg.wasm", import.meta.url)) });
    ready = true;
  }
  return glue;
}

export const createTestAuthority = makeCreateTestAuthority(load);
