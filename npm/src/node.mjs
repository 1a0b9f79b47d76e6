// Node ESM entry (also Deno, Bun, and Next.js's Node runtime under
// Turbopack): loads the wasm module from the package's files. Bundlers that
// understand `new URL("...", import.meta.url)` copy the file beside their
// output. Next.js's webpack does too, but hands over a relative URL that no
// file API reads (vercel/next.js#55523), so the `webpack` condition sends it
// to the inline build instead (see package.json).
import { readFile } from "node:fs/promises";
import { init, initSync, makeCreateGenerator, Generator, RangeIdError } from "./api.mjs";

const wasmUrl = new URL("../wasm/rangeid_wasm_bg.wasm", import.meta.url);

export const createGenerator = makeCreateGenerator(async () => init(await readFile(wasmUrl)));
export { init, initSync, Generator, RangeIdError };
