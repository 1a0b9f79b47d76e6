#!/usr/bin/env bash
# The Python package as its users get it: builds the wheel (maturin, from
# python/pyproject.toml), installs it in a fresh venv in a temporary folder
# with pytest and mypy (the versions scripts/setup.sh pins in .venv), and
# runs there, never from the source tree:
#
#   python/scripts/run.sh test    mypy --strict on a typed program using the
#                                 package (tests/typing_use.py), stubtest
#                                 (the stubs against the module), then pytest
#                                 against the real local authority on workerd
#   python/scripts/run.sh bench   bench.py: next_id() beside
#                                 next(itertools.count()) and uuid.uuid4()
#
# Needs .venv (scripts/setup.sh) and the authority Worker's build
# (edge-authority/scripts/build.sh). Extra arguments go to pytest.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo"
# shellcheck source=scripts/env.sh
. "$repo/scripts/env.sh"
mode="${1:-test}"
shift || true
case "$mode" in test|bench) ;; *) echo "usage: run.sh test|bench [pytest args]" >&2; exit 2 ;; esac

work="$(mktemp -d "${TMPDIR:-/tmp}/rangeid-python-XXXXXX")"
trap 'rm -rf "$work"' EXIT
say() { printf '[python] %s\n' "$*"; }

start=$SECONDS
nice -n 10 .venv/bin/maturin build --release --locked --manifest-path python/Cargo.toml --out "$work/dist" --quiet
wheel="$(ls "$work"/dist/rangeid-*.whl)"
say "built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) in $((SECONDS - start)) s"

pin() { .venv/bin/python -c 'import importlib.metadata as m, sys; print(sys.argv[1] + "==" + m.version(sys.argv[1]))' "$1"; }
.venv/bin/python -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel" "$(pin pytest)" "$(pin mypy)"
py="$work/venv/bin/python"

# From the temporary folder: nothing of the source tree on the path.
cd "$work"
if [ "$mode" = bench ]; then
  "$py" "$repo/python/bench.py"
  exit 0
fi
start=$SECONDS
"$py" -m mypy --strict --no-incremental "$repo/python/tests/typing_use.py"
"$py" -m mypy.stubtest rangeid --allowlist "$repo/python/tests/stubtest-allowlist.txt"
say "mypy --strict and stubtest: $((SECONDS - start)) s"
start=$SECONDS
"$py" -m pytest "$repo/python/tests" -p no:cacheprovider --import-mode=importlib -q "$@"
say "pytest: $((SECONDS - start)) s"
