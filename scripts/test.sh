#!/usr/bin/env bash
# Runs every rangeid test. Installs what it needs first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

step() { printf '\n== %s\n' "$*"; }

step "format and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --all-features --locked -- -D warnings

step "core builds no_std for wasm32, with and without its features"
cargo build -p rangeid-core --target wasm32-unknown-unknown --locked
cargo build -p rangeid-core --target wasm32-unknown-unknown --features serde --locked

step "unit, property and simulation tests (1,000 seeds, 10M IDs by default)"
cargo test --workspace --all-features --locked

step "loom model check of the atomic cursor"
RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
  cargo test -p rangeid-core --test loom --release --locked
