#!/usr/bin/env bash
# Every test of the edge authority: host-side Rust tests, lints, the wasm32
# build, then the Node integration tests against the real local workerd
# (each test file starts its own authority on free loopback ports with
# throw-away state, and stops it).
set -euo pipefail
# The pinned Node.js first on PATH (scripts/setup.sh installs it).
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/env.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$RANGEID_REPO/target}"

step() { printf '\n== %s\n' "$*"; }

step "authority: format, lints, host tests"
cargo fmt -p rangeid-authority -- --check
cargo clippy -p rangeid-authority --all-targets --all-features --locked -- -D warnings
cargo clippy -p rangeid-authority --target wasm32-unknown-unknown --lib --locked -- -D warnings
cargo clippy -p rangeid-authority --target wasm32-unknown-unknown --lib --features test-switches --locked -- -D warnings
cargo test -p rangeid-authority --all-features --locked

step "authority: worker-build (production, and the test build for the drills that need a switch); no switch in what ships"
"$here/scripts/build.sh"
"$here/scripts/build.sh" --test-switches
node "$here/scripts/bundle.mjs"

step "authority: integration tests on local workerd"
node --test --test-concurrency=1 "tests/authority/*.test.mjs"
