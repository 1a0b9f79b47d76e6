#!/usr/bin/env bash
# Smoke test of a running local authority (scripts/dev.sh) with curl:
# create a namespace near 2^64, grant, replay, conflict, exhaustion.
# Uses the local key in .rangeid/keys.json; creates a new namespace each run.
set -euo pipefail
# The pinned Node.js first on PATH (scripts/setup.sh installs it).
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/env.sh"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
home="${RANGEID_HOME:-$repo/.rangeid}"
base="http://127.0.0.1:${RANGEID_PORT:-8787}"
ns="smoke-$(date +%s)-$$"

mint() { node "$repo/npm/bin/rangeid.mjs" token --keys "$home/keys.json" --ttl 10m "$@"; }
admin="$(mint --role admin --ns "$ns")"
gen="$(mint --role generator --ns "$ns")"

fail=0
check() { # name, expected status, method, path, token, body
  local name="$1" want="$2" method="$3" path="$4" token="$5" body="${6:-}"
  local out status
  out="$(curl -s -w '\n%{http_code}' -X "$method" -H "authorization: Bearer $token" \
    ${body:+-H 'content-type: application/json' -d "$body"} "$base$path")"
  status="${out##*$'\n'}"
  printf '%-28s %s %s\n' "$name" "$status" "${out%$'\n'*}"
  if [ "$status" != "$want" ]; then echo "  expected $want" >&2; fail=1; fi
}

check create 201 POST /v1/namespaces "$admin" \
  "{\"namespace\":\"$ns\",\"first\":\"18446744073709551606\",\"max\":\"18446744073709551615\",\"maxCount\":100}"
check grant 200 POST /v1/ranges "$gen" "{\"namespace\":\"$ns\",\"incarnation\":\"A9\",\"requestId\":\"r1\",\"count\":7}"
check replay 200 POST /v1/ranges "$gen" "{\"namespace\":\"$ns\",\"incarnation\":\"A9\",\"requestId\":\"r1\",\"count\":7}"
check conflict 409 POST /v1/ranges "$gen" "{\"namespace\":\"$ns\",\"incarnation\":\"A9\",\"requestId\":\"r1\",\"count\":6}"
check exhausted 409 POST /v1/ranges "$gen" "{\"namespace\":\"$ns\",\"incarnation\":\"A9\",\"requestId\":\"r2\",\"count\":4}"
check last-ids 200 POST /v1/ranges "$gen" "{\"namespace\":\"$ns\",\"incarnation\":\"A9\",\"requestId\":\"r3\",\"count\":3}"
check summary 200 GET "/v1/namespaces/$ns" "$admin"
check lookup-u64-max 200 GET "/v1/namespaces/$ns/lookup?id=18446744073709551615" "$admin"
check audit 200 GET "/v1/namespaces/$ns/audit" "$admin"
[ "$fail" = 0 ] && echo "smoke: ok" || { echo "smoke: FAILED" >&2; exit 1; }
