// Vercel Edge Functions and Next.js's edge runtime (the `edge-light`
// export condition). Like Workers, they refuse to compile wasm at run time;
// their bundlers (Next.js's webpack and Turbopack, Vercel's) hand over a
// precompiled WebAssembly.Module for an import of a `.wasm` file with the
// `?module` suffix (wrangler does too). Under `next start` and `next dev`
// that module comes from outside the function's isolate, so it is
// instantiated with `init` (WebAssembly.instantiate), which takes a module
// of any realm.
import wasmModule from "../wasm/rangeid_wasm_bg.wasm?module";
import { init, initSync, makeCreateGenerator, Generator, RangeIdError } from "./api.mjs";

export const createGenerator = makeCreateGenerator(() => init(wasmModule));
export { init, initSync, Generator, RangeIdError };
