#!/usr/bin/env bash
# Serves the rangeid authority on the open-source workerd binary, without
# Cloudflare or wrangler: http://127.0.0.1:8787 (self-hosting; see
# edge-authority/README.md "Self-hosting on workerd").
#
#   edge-authority/scripts/workerd.sh        # or: make authority RUNTIME=workerd
#
# Builds, creates the local signing key once and prints an admin token and
# the admin page's link (all as scripts/dev.sh does), then runs
# edge-authority/workerd/authority.capnp with state in .rangeid/workerd-state.
# Environment: RANGEID_HOME, RANGEID_PORT, RANGEID_SKIP_BUILD as for dev.sh;
# RANGEID_CORS_ORIGINS, RANGEID_GRANT_RETENTION_SECONDS and
# RANGEID_TOKEN_AUDIENCE are passed to the authority.
set -euo pipefail
# The pinned Node.js first on PATH (scripts/setup.sh installs it).
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/env.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
home="${RANGEID_HOME:-$repo/.rangeid}"
port="${RANGEID_PORT:-8787}"

RANGEID_NO_SERVE=1 "$here/scripts/dev.sh"

state="$home/workerd-state"
mkdir -p "$state"
RANGEID_SIGNING_KEYS="$(cat "$home/keys.json")"
export RANGEID_SIGNING_KEYS
# Every setting the config reads must be set (an unset one is null there).
export RANGEID_CORS_ORIGINS="${RANGEID_CORS_ORIGINS:-}"
export RANGEID_GRANT_RETENTION_SECONDS="${RANGEID_GRANT_RETENTION_SECONDS:-86400}"
export RANGEID_TOKEN_AUDIENCE="${RANGEID_TOKEN_AUDIENCE:-}"
echo "workerd.sh: serving on http://127.0.0.1:$port with bare workerd (state in $state)" >&2
exec "$here/node_modules/@cloudflare/workerd-linux-64/bin/workerd" serve --experimental \
  "$here/workerd/authority.capnp" \
  --directory-path "state=$state" \
  --directory-path "assets=$repo/www/dist" \
  --socket-addr "http=127.0.0.1:$port"
