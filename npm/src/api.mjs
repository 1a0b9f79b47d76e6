// The package's API over one way of loading the wasm module. Each entry
// point (node, browser, workerd, default) supplies the loader.

import { Generator } from "./generator.mjs";
import { RangeIdError } from "./errors.mjs";
import * as glue from "../wasm/rangeid_wasm.js";

let ready = false;

/** Instantiates the wasm module from a `WebAssembly.Module`, bytes, a URL or a Response. */
export async function init(moduleOrBytes) {
  if (ready) return;
  if (moduleOrBytes instanceof WebAssembly.Module || ArrayBuffer.isView(moduleOrBytes) || moduleOrBytes instanceof ArrayBuffer) {
    glue.initSync({ module: moduleOrBytes });
  } else {
    await glue.default({ module_or_path: moduleOrBytes });
  }
  ready = true;
}

/** Like `init`, synchronously, from a `WebAssembly.Module` or bytes. */
export function initSync(moduleOrBytes) {
  if (ready) return;
  glue.initSync({ module: moduleOrBytes });
  ready = true;
}

/** Builds `createGenerator` for an entry point whose loader runs on first use. */
export function makeCreateGenerator(autoInit) {
  return async function createGenerator(options) {
    if (!ready) {
      if (!autoInit) {
        throw new RangeIdError("invalid_config", "call init(moduleOrBytes) before createGenerator on this runtime");
      }
      await autoInit();
    }
    const generator = new Generator(glue.Engine, options);
    await generator.warm();
    return generator;
  };
}

export { Generator, RangeIdError };
