#!/usr/bin/env bash
# The PostgreSQL peer of a grant, for the authority's benchmark
# (edge-authority/scripts/bench.mjs runs it in the same run when
# PostgreSQL is installed): a durable counter row advanced with
# `UPDATE ... RETURNING` plus a ledger row inserted, in one transaction,
# with synchronous_commit and fsync on (every commit durable before it is
# acknowledged, as a grant is), driven by pgbench with 1 and 8 clients.
#
#   tests/bench/postgres-peer.sh [--install] [--seconds 10]
#
# Uses the PostgreSQL of Debian's `postgresql` package, in a throw-away
# cluster (its own folder, a Unix socket only, stopped and deleted after).
# --install first runs `apt-get install -y postgresql` (root). Opt-in only:
# neither `make test` nor scripts/setup.sh installs or runs it.
# Prints one JSON line: {"version", "synchronous_commit", "seconds",
# "tps": {"1", "8"}}. Exit 3 (and why, on stderr) when PostgreSQL is not
# installed.
set -euo pipefail
seconds=10
install=0
while [ $# -gt 0 ]; do
  case "$1" in
    --install) install=1 ;;
    --seconds) seconds="$2"; shift ;;
    *) echo "usage: postgres-peer.sh [--install] [--seconds N]" >&2; exit 2 ;;
  esac
  shift
done
if [ "$install" = 1 ]; then
  apt-get install -y postgresql >&2
fi
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
if [ -z "$bin" ] || [ ! -x "$bin/pgbench" ]; then
  echo "PostgreSQL is not installed (tests/bench/postgres-peer.sh --install: apt-get install -y postgresql)" >&2
  exit 3
fi

# PostgreSQL refuses to run as root: as root, the cluster belongs to the
# package's `postgres` user.
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
dir="$(mktemp -d /tmp/rangeid-pg-peer.XXXXXX)"
[ "$(id -u)" = 0 ] && chown postgres "$dir"
cleanup() {
  as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
as_owner "$bin/initdb" -D "$dir/data" -A trust -U bench >/dev/null
# No TCP: the socket in $dir only, so no other cluster's port is touched.
as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
  -o "-k $dir -c listen_addresses= -c synchronous_commit=on -c fsync=on -c full_page_writes=on" start >/dev/null
psql() { as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -U bench -d postgres "$@"; }
psql -c "CREATE TABLE namespaces (name text PRIMARY KEY, next bigint NOT NULL);
  CREATE TABLE ledger (id bigserial PRIMARY KEY, namespace text NOT NULL, start bigint NOT NULL,
    count bigint NOT NULL, owner text NOT NULL, at timestamptz NOT NULL DEFAULT now());
  INSERT INTO namespaces VALUES ('bench', 1);"
cat >"$dir/grant.sql" <<'SQL'
BEGIN;
UPDATE namespaces SET next = next + 10000 WHERE name = 'bench' RETURNING next - 10000 AS start \gset
INSERT INTO ledger (namespace, start, count, owner) VALUES ('bench', :start, 10000, 'client-' || :client_id);
COMMIT;
SQL
[ "$(id -u)" = 0 ] && chown postgres "$dir/grant.sql"
tps() {
  as_owner "$bin/pgbench" -n -h "$dir" -U bench -f "$dir/grant.sql" -c "$1" -j "$(( $1 < 2 ? 1 : 2 ))" -T "$seconds" postgres 2>&1 \
    | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1
}
one="$(tps 1)"
eight="$(tps 8)"
version="$(psql -t -A -c 'SHOW server_version' | cut -d' ' -f1)"
sync="$(psql -t -A -c 'SHOW synchronous_commit')"
[ -n "$one" ] && [ -n "$eight" ] || { echo "pgbench printed no tps" >&2; exit 1; }
echo "{\"version\":\"$version\",\"synchronous_commit\":\"$sync\",\"seconds\":$seconds,\"tps\":{\"1\":$one,\"8\":$eight}}"
