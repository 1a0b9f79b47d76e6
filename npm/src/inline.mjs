// The engine inlined as base64 (`rangeid/inline`), for bundles that cannot
// load the package's .wasm file: a Node server bundled by webpack (Next.js's
// `next build --webpack` picks this build through the `webpack` condition),
// a bundler that does not copy the file, a single-file bundle, a page where
// serving a .wasm file is awkward. It compiles the engine from bytes at run
// time, which Workers and edge runtimes forbid: they take the `workerd` /
// `edge-light` builds. About a third larger than the .wasm file, and only
// this build carries it.
import base64 from "../wasm/rangeid_wasm_bg.base64.mjs";
import { init, initSync, makeCreateGenerator, Generator, RangeIdError } from "./api.mjs";

/** The engine's bytes from base64 (`Uint8Array.fromBase64` where the runtime has it). */
function decode(text) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export const createGenerator = makeCreateGenerator(() => init(decode(base64)));
export { init, initSync, Generator, RangeIdError };
