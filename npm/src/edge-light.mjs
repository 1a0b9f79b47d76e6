// Vercel Edge Functions and Next.js's edge runtime (the `edge-light`
// export condition). Like Workers, they refuse to compile wasm at run time;
// their bundlers hand over a precompiled WebAssembly.Module for an import
// of a `.wasm` file with the `?module` suffix (wrangler does too).
import wasmModule from "../wasm/rangeid_wasm_bg.wasm?module";
import { init, initSync, makeCreateGenerator, Generator, RangeIdError } from "./api.mjs";

export const createGenerator = makeCreateGenerator(async () => initSync(wasmModule));
export { init, initSync, Generator, RangeIdError };
