#!/usr/bin/env bash
# Installs what rangeid's builds and tests need, idempotently: every step
# checks first and does nothing when the right version is already there.
# Tools go outside the repo (~/.cargo/bin, apt), so later runs reuse them.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"

say() { printf '[setup] %s\n' "$*"; }
export PATH="$HOME/.cargo/bin:$PATH"

command -v cargo >/dev/null || { echo "cargo not found: install Rust with rustup first" >&2; exit 1; }
command -v node >/dev/null || { echo "node not found: install Node.js 20 or newer" >&2; exit 1; }

# Rust: the wasm32 target (core, the authority and the wasm client).
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# Pinned cargo tools. wasm-bindgen-cli must match the workspace's
# wasm-bindgen (=0.2.130); its locked tree names a crate the registry
# lacks, so it installs without --locked. About 11 minutes cold for both.
version_of() { "$1" --version 2>/dev/null | awk '{print $NF}' || true; }
if [ "$(version_of wasm-bindgen)" != "0.2.130" ]; then
  say "installing wasm-bindgen-cli 0.2.130"
  cargo install wasm-bindgen-cli --version 0.2.130 --force
fi
if [ "$(version_of worker-build)" != "0.8.7" ]; then
  say "installing worker-build 0.8.7"
  cargo install worker-build --version 0.8.7 --locked --force
fi

# Headless Chromium and its driver, for the browser tests (Debian packages).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  say "installing chromium and chromium-driver"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# npm packages, from each lock file: wrangler/binaryen/esbuild for the
# authority, esbuild for the package build, playwright-core for the tests.
for dir in edge-authority npm tests; do
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    say "npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done

cargo fetch --locked >/dev/null
say "ready"
