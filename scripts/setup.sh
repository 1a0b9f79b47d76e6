#!/usr/bin/env bash
# Installs what rangeid's build and tests need, idempotently: each step
# checks first and does nothing when the right thing is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*"; }

command -v cargo >/dev/null || { echo "cargo not found: install Rust with rustup first" >&2; exit 1; }

# The core is also built for wasm32 (the authority and the wasm client embed it).
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# Fetch crates once so later steps do not race for the registry.
cargo fetch --locked >/dev/null 2>&1 || cargo fetch >/dev/null
say "ready"
