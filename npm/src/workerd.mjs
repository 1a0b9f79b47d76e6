// Workers (workerd) entry: the bundler hands over the compiled wasm module,
// since Workers do not allow compiling wasm from bytes at run time.
import wasmModule from "../wasm/rangeid_wasm_bg.wasm";
import { init, initSync, makeCreateGenerator, Generator, RangeIdError } from "./api.mjs";

export const createGenerator = makeCreateGenerator(() => init(wasmModule));
export { init, initSync, Generator, RangeIdError };
