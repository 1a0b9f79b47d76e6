// The package's API over one way of loading the wasm module. Each entry
// point (node, inline, browser, workerd, edge-light, default) supplies the
// loader.

import { Generator } from "./generator.mjs";
import { RangeIdError } from "./errors.mjs";
import * as glue from "../wasm/rangeid_wasm.js";

let ready = false;

/**
 * True for a compiled `WebAssembly.Module`, also one made in another realm:
 * Next.js's edge sandbox (`next start`, `next dev`) compiles the `.wasm?module`
 * imports of an edge function outside the function's isolate, so they fail
 * `instanceof` there.
 */
function isCompiledModule(value) {
  return value instanceof WebAssembly.Module || Object.prototype.toString.call(value) === "[object WebAssembly.Module]";
}

/** Instantiates the wasm module from a `WebAssembly.Module`, bytes, a URL or a Response. */
export async function init(moduleOrBytes) {
  if (ready) return;
  if (isCompiledModule(moduleOrBytes)) {
    // WebAssembly.instantiate (the glue's asynchronous path) takes a module
    // of any realm; the glue's synchronous path would try to compile it again.
    await glue.default({ module_or_path: moduleOrBytes });
  } else if (ArrayBuffer.isView(moduleOrBytes) || moduleOrBytes instanceof ArrayBuffer) {
    glue.initSync({ module: moduleOrBytes });
  } else {
    await glue.default({ module_or_path: moduleOrBytes });
  }
  ready = true;
}

/** Like `init`, synchronously, from a `WebAssembly.Module` or bytes. */
export function initSync(moduleOrBytes) {
  if (ready) return;
  if (!(moduleOrBytes instanceof WebAssembly.Module) && isCompiledModule(moduleOrBytes)) {
    throw new RangeIdError("invalid_config", "initSync was given a WebAssembly.Module from another realm (as Next.js's edge sandbox provides); use `await init(module)` instead");
  }
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
