#!/usr/bin/env bash
# Starts the rangeid authority locally on workerd: http://127.0.0.1:8787
#
#   edge-authority/scripts/dev.sh            # build, then serve in the foreground
#
# Idempotent. On first run it creates a signing key under .rangeid/ at the
# repository root (git-ignored, never committed). State persists in
# .rangeid/state, so stopping and starting again keeps every namespace and
# boundary. Prints an admin token (valid 30 days) before serving.
#
# Environment (all optional):
#   RANGEID_HOME        state and key folder      (default: <repo>/.rangeid)
#   RANGEID_PORT        port on 127.0.0.1         (default: 8787)
#   RANGEID_SKIP_BUILD  1 = reuse build/ as it is (default: build)
#   RANGEID_NO_SERVE    1 = build and mint only, do not start wrangler
# Extra arguments go to `wrangler dev` (e.g. --var RANGEID_CORS_ORIGINS:https://a.example).
set -euo pipefail
# The pinned Node.js first on PATH (scripts/setup.sh installs it).
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/env.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
home="${RANGEID_HOME:-$repo/.rangeid}"
port="${RANGEID_PORT:-8787}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$RANGEID_REPO/target}"

cd "$here"

# 1-2. Toolchain and build (see build.sh).
if [ "${RANGEID_SKIP_BUILD:-0}" != 1 ] || [ ! -f build/index.js ]; then
  "$here/scripts/build.sh"
fi

# 3. The local signing key, created once, with the package's CLI (Node only).
rangeid=(node "$repo/npm/bin/rangeid.mjs")
mkdir -p "$home/state"
chmod 700 "$home"
if [ ! -s "$home/keys.json" ]; then
  echo "dev.sh: creating a local signing key in $home/keys.json" >&2
  rm -f "$home/keys.json.tmp"
  # Written aside (keygen's mode 0600) and moved in whole, so an interrupted
  # run leaves no half key; the line above says where it is.
  "${rangeid[@]}" keygen --kid local-1 --out "$home/keys.json.tmp" 2>/dev/null
  mv "$home/keys.json.tmp" "$home/keys.json"
fi
( umask 077; printf "RANGEID_SIGNING_KEYS='%s'\n" "$(cat "$home/keys.json")" > "$home/dev.vars" )

# 4. An admin token for this key.
token="$("${rangeid[@]}" token --role admin --ns '*' --ttl 30d --sub local-admin --keys "$home/keys.json")"
echo "admin token (30 days): $token"
echo "admin page: http://127.0.0.1:$port/admin/#token=$token"
echo "mint more: node $repo/npm/bin/rangeid.mjs token --role generator --ns orders --ttl 30d --keys $home/keys.json"
echo "look:      RANGEID_URL=http://127.0.0.1:$port RANGEID_TOKEN=<the admin token> node $repo/npm/bin/rangeid.mjs status"

if [ "${RANGEID_NO_SERVE:-0}" = 1 ]; then
  exit 0
fi

# 5. Serve on loopback with state on disk.
echo "dev.sh: serving on http://127.0.0.1:$port (state in $home/state)" >&2
exec node_modules/.bin/wrangler dev --local --ip 127.0.0.1 --port "$port" \
  --persist-to "$home/state" --env-file "$home/dev.vars" \
  --show-interactive-dev-session=false "$@"
