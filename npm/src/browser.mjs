// Browser entry: fetches and compiles the wasm module next to this file.
import { init, initSync, makeCreateGenerator, Generator, RangeIdError } from "./api.mjs";

export const createGenerator = makeCreateGenerator(() => init(new URL("../wasm/rangeid_wasm_bg.wasm", import.meta.url)));
export { init, initSync, Generator, RangeIdError };
