#!/usr/bin/env bash
# Builds the admin page into www/dist (the Worker's ASSETS) and the Worker
# into edge-authority/build/ (the production Worker: what is deployed and
# self-hosted) with the pinned toolchain:
# npm packages from package-lock.json (wrangler, binaryen's wasm-opt,
# esbuild) and the cargo-installed worker-build 0.8.7 and wasm-bindgen-cli
# 0.2.130. Nothing is downloaded at build time. Idempotent, and skips the
# Worker build when its inputs did not change.
#
#   edge-authority/scripts/build.sh                   # build/
#   edge-authority/scripts/build.sh --test-switches   # build-test/: for tests only
#
# --test-switches builds the same Worker with the cargo feature
# test-switches (src/shared/test_switches.rs: RANGEID_TEST_ONLY_*) into
# build-test/, which only the drills that need a switch run
# (scripts/test-switches.mjs); never deploy it.
set -euo pipefail
out=build
features=()
case "${1:-}" in
  "") ;;
  --test-switches) out=build-test; features=(--features test-switches) ;;
  *) echo "usage: build.sh [--test-switches]" >&2; exit 2 ;;
esac
# The pinned Node.js first on PATH (scripts/setup.sh installs it).
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/env.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$RANGEID_REPO/target}"

if [ ! -x node_modules/.bin/wrangler ] || [ ! -x node_modules/binaryen/bin/wasm-opt ] \
   || [ ! -x node_modules/@esbuild/linux-x64/bin/esbuild ]; then
  echo "build.sh: installing wrangler, binaryen and esbuild (npm ci)" >&2
  npm ci --no-audit --no-fund >&2
fi
for tool in worker-build wasm-bindgen; do
  if ! command -v "$tool" >/dev/null; then
    echo "build.sh: $tool is missing; install the pinned versions with:" >&2
    echo "  cargo install worker-build --version 0.8.7 --locked" >&2
    echo "  cargo install wasm-bindgen-cli --version 0.2.130" >&2
    exit 1
  fi
done

# The admin page first: wrangler refuses to start without its assets folder.
# Rebuilt only when its sources, lock file or build script changed, so that
# packing right after a build (the npm package's prepack) builds nothing.
www_hash() {
  (cd "$RANGEID_REPO/www" && find package.json package-lock.json tsconfig.json src scripts/build.mjs \
    -type f -print0 | sort -z | xargs -0 sha256sum; node --version) | sha256sum | cut -d' ' -f1
}
mkdir -p "$CARGO_TARGET_DIR"
www_stamp="$CARGO_TARGET_DIR/rangeid-www.inputs.sha256"
www_want="$(www_hash)"
if [ -f "$RANGEID_REPO/www/dist/admin/index.html" ] && [ "$(cat "$www_stamp" 2>/dev/null)" = "$www_want" ]; then
  echo "build.sh: the admin page in www/dist is up to date" >&2
else
  rm -f "$www_stamp"
  node "$here/../www/scripts/build.mjs" >&2
  [ "$(www_hash)" = "$www_want" ] && echo "$www_want" >"$www_stamp"
fi

# The Worker is rebuilt only when what it is made of changed (wasm-opt alone
# takes most of a minute on 2 cores): the Rust sources and manifests of the
# crates it compiles, the lock files, cargo configuration and environment,
# and the tools' versions.
inputs_hash() {
  {
    (cd "$RANGEID_REPO" && find Cargo.toml Cargo.lock core/Cargo.toml core/src \
      edge-authority/Cargo.toml edge-authority/src edge-authority/package-lock.json \
      .cargo "${CARGO_HOME:-$HOME/.cargo}/config.toml" "${CARGO_HOME:-$HOME/.cargo}/config" \
      -type f -print0 2>/dev/null | sort -z | xargs -0 sha256sum || true)
    env | grep -E '^(CARGO_|RUSTC|RUSTFLAGS|RUSTDOC)' | grep -v '^CARGO_HOME=' | sort
    rustc --version
    worker-build --version
    wasm-bindgen --version
    node_modules/binaryen/bin/wasm-opt --version
    node_modules/@esbuild/linux-x64/bin/esbuild --version
    echo "features: ${features[*]:-none}"
  } | sha256sum | cut -d' ' -f1
}
stamp="$out/.inputs.sha256"
want="$(inputs_hash)"
if [ -f "$out/index.js" ] && [ -f "$out/index_bg.wasm" ] && [ -d "$out/worker" ] \
   && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "build.sh: the Worker in $out/ is up to date" >&2
else
  rm -f "$stamp"
  # worker-build would otherwise download these three from the network.
  WASM_BINDGEN_BIN="$(command -v wasm-bindgen)" \
  WASM_OPT_BIN="$here/node_modules/binaryen/bin/wasm-opt" \
  ESBUILD_BIN="$here/node_modules/@esbuild/linux-x64/bin/esbuild" \
    worker-build --release --out-dir "$out" "${features[@]}" >&2
  # A source edited while cargo ran may or may not be in this build: stamp
  # only when the inputs are what they were at the start, so the next run
  # builds again otherwise.
  if [ "$(inputs_hash)" = "$want" ]; then
    echo "$want" >"$stamp"
  else
    echo "build.sh: sources changed during the build; $out/ is not stamped and the next run builds it again" >&2
  fi
fi
