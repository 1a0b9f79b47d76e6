/** The package's files, as absolute paths. */
export declare const paths: Readonly<{
  /** The folder this package is installed in. */
  root: string;
  /** The Worker's ES module (build/index.js). */
  worker: string;
  /** The Worker's wasm (build/index_bg.wasm). */
  wasm: string;
  /** The admin page's files (the ASSETS binding). */
  assets: string;
  /** The workerd configuration (workerd/authority.capnp). */
  workerdConfig: string;
  /** A wrangler configuration for `wrangler deploy` (wrangler.toml). */
  wranglerTemplate: string;
}>;
/** The wrangler version this build is deployed and tested with. */
export declare const testedWrangler: string;
/** The path of the workerd binary from the pinned `workerd` package. */
export declare function workerdBinary(): string;
/** This package's version. */
export declare const version: string;
