"use strict";
// rangeid-authority: where the prebuilt authority's files are, and the
// workerd binary it runs on. The rangeid command (`npx rangeid dev`,
// `npx rangeid deploy`) is what uses it; see README.md.
const { join } = require("node:path");

/** The folder this package is installed in. */
const root = __dirname;

/** The package's files, as absolute paths. */
const paths = Object.freeze({
  root,
  /** The Worker: build/index.js (an ES module) and the wasm it imports. */
  worker: join(root, "build", "index.js"),
  wasm: join(root, "build", "index_bg.wasm"),
  /** The admin page's files, served by the Worker at /admin/ (the ASSETS binding). */
  assets: join(root, "assets"),
  /** The workerd configuration: every Durable Object on local disk. */
  workerdConfig: join(root, "workerd", "authority.capnp"),
  /** A wrangler configuration for `wrangler deploy`, paths relative to this folder. */
  wranglerTemplate: join(root, "wrangler.toml"),
});

/** The wrangler version this build is deployed and tested with. */
const testedWrangler = "4.164.0";

/**
 * The path of the workerd binary from the pinned `workerd` package (its
 * platform package is an optional dependency, installed for this machine).
 * Throws the workerd package's own explanation when the binary is missing.
 */
function workerdBinary() {
  return require("workerd").default;
}

exports.paths = paths;
exports.testedWrangler = testedWrangler;
exports.workerdBinary = workerdBinary;
/** This package's version. */
exports.version = require("./package.json").version;
