#!/usr/bin/env bash
# Runs every rangeid test. Installs what it needs first (scripts/setup.sh).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
./scripts/setup.sh
# shellcheck source=scripts/env.sh
. "$repo/scripts/env.sh"
echo "node $(node --version) from $(command -v node)"

step() { printf '\n== %s (at %ss)\n' "$*" "$SECONDS"; }

step "format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings
cargo clippy -p rangeid-authority -p rangeid-wasm -p rangeid-wasm-testing --target wasm32-unknown-unknown --locked -- -D warnings
cargo clippy -p rangeid-authority --target wasm32-unknown-unknown --features test-switches --locked -- -D warnings

step "core builds no_std for wasm32, with and without its features"
cargo build -p rangeid-core --target wasm32-unknown-unknown --locked
cargo build -p rangeid-core --target wasm32-unknown-unknown --features serde --locked

step "Rust tests: unit, property, simulation (1,000 seeds, 10M IDs), authority host tests"
cargo test --workspace --all-features --locked

step "the Rust client's docs build without a warning"
RUSTDOCFLAGS="-D warnings" cargo doc -p rangeid-client --no-deps --locked

step "loom model check of the atomic cursor and the refillable cursor slot"
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
  cargo test -p rangeid-core --test loom --release --locked

step "the wasm binding under wasm-bindgen-test: Node, then headless Chromium"
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
cargo test -p rangeid-wasm --target wasm32-unknown-unknown --locked
WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER=/usr/bin/chromedriver \
  cargo test -p rangeid-wasm --target wasm32-unknown-unknown --test binding --locked
unset CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER

step "build the authority Worker (production, and the test build with its switches) and the npm package; the deploy bundle against Cloudflare's limits (offline dry run), and no test switch in what ships"
edge-authority/scripts/build.sh
edge-authority/scripts/build.sh --test-switches
node npm/scripts/build.mjs
node edge-authority/scripts/bundle.mjs

step "the two npm packages as packed (prepack builds nothing twice), their file lists, publint, arethetypeswrong, versions and changelogs"
node --test 'tests/release/*.test.mjs'

step "npm driver tests (fake authority, transport faults) and the package's type declarations"
node --test 'npm/test/*.test.mjs'
(cd npm && node_modules/.bin/tsc -p test/types/tsconfig.json)

step "the admin page type-checks"
www/node_modules/.bin/tsc -p www/tsconfig.json

step "the Python package as installed: its wheel (maturin --release) in a fresh venv; mypy --strict and stubtest on its stubs; pytest against the local authority on workerd (threads and asyncio with 0 duplicates, each error's class and code, the GIL released while waiting, a token refresh, a restart)"
python/scripts/run.sh test

step "integration: the authority on workerd (API, fence and restore drills, hardening, HTTP fuzzing), the Rust client on it (threads, a restart, a token refresh), the packed package (ESM, CJS, Chromium, Worker), the example apps (Next.js with Turbopack and webpack, Vite), the admin page in Chromium, the npm quick start with no Rust on PATH"
node --test --test-concurrency=1 'tests/authority/*.test.mjs' 'tests/rust-client/*.test.mjs' 'tests/npm/*.test.mjs' 'tests/examples/*.test.mjs' 'tests/www/*.test.mjs' 'tests/quickstart/*.test.mjs' 'tests/guide/*.test.mjs'

step "chaos: 60 s of faults on the authority (workerd behind a faulty proxy; kills, restores, key rotation, freezes, floors) under 64 generators from the packed package; every ID accounted for"
node --test tests/chaos/checker.test.mjs
node tests/chaos/run.mjs --seconds 60

step "done: every test passed in ${SECONDS}s"
