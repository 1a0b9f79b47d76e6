// Node CommonJS entry (bundled to dist/node.cjs): loads the wasm module from
// the package's files.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { init, initSync, makeCreateGenerator, Generator, RangeIdError } from "./api.mjs";

// __dirname is the bundle's folder, dist/.
const wasmPath = join(__dirname, "..", "wasm", "rangeid_wasm_bg.wasm");

export const createGenerator = makeCreateGenerator(async () => initSync(readFileSync(wasmPath)));
export { init, initSync, Generator, RangeIdError };
