#!/usr/bin/env bash
# Serves the rangeid authority on the open-source workerd binary, without
# Cloudflare or wrangler: http://127.0.0.1:8787 (self-hosting; see
# edge-authority/README.md "Self-hosting on workerd").
#
#   edge-authority/scripts/workerd.sh        # or: make authority RUNTIME=workerd
#
# Builds, stages the npm package rangeid-authority in edge-authority/npm
# (scripts/package.mjs), then runs it exactly as a user's `npx rangeid dev`
# does (npm/bin/commands/dev.mjs, the one place that logic lives): the
# signing key made once in .rangeid/keys.json, an admin token and the admin
# page's link printed, state in .rangeid/workerd-state, Ctrl-C stops workerd.
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

if [ "${RANGEID_SKIP_BUILD:-0}" != 1 ] || [ ! -f "$here/build/index.js" ]; then
  "$here/scripts/build.sh"
fi
node "$here/scripts/package.mjs" --no-build

cd "$repo"
exec node "$repo/npm/bin/rangeid.mjs" dev --authority "$here/npm" --state "$home" --port "$port"
