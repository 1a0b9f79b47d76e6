// Node ESM entry: loads the wasm module from the package's files.
import { readFile } from "node:fs/promises";
import { init, initSync, makeCreateGenerator, Generator, RangeIdError } from "./api.mjs";

const wasmUrl = new URL("../wasm/rangeid_wasm_bg.wasm", import.meta.url);

export const createGenerator = makeCreateGenerator(async () => init(await readFile(wasmUrl)));
export { init, initSync, Generator, RangeIdError };
