#!/usr/bin/env bash
# The Python package as its users get it: builds the wheel (maturin, from
# python/pyproject.toml, into target/wheels/), installs it with pip in a
# fresh venv in a temporary folder (the test tools, pinned in .venv by
# scripts/setup.sh, seen through a .pth file), and runs there with no Rust
# tool on PATH, never from the source tree:
#
#   python/scripts/run.sh test    mypy --strict on a typed program using the
#                                 package (tests/typing_use.py), stubtest
#                                 (the stubs against the module), then pytest
#                                 against the real local authority on workerd
#   python/scripts/run.sh bench   benches/next_id.py: next_id() beside
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
# Left in target/wheels/ for `pip install target/wheels/rangeid-*.whl`.
rm -f target/wheels/rangeid-*.whl
nice -n 10 .venv/bin/maturin build --release --locked --manifest-path python/Cargo.toml --out target/wheels --quiet
wheel="$(ls "$repo"/target/wheels/rangeid-*.whl)"
say "built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) in $((SECONDS - start)) s"

start=$SECONDS
# A fresh venv holding only the wheel, installed by pip as a user would;
# the test tools (pytest, mypy, FastAPI, httpx2, pinned by setup.sh) come
# from .venv through a .pth file, after the venv's own packages.
purelib() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
.venv/bin/python -m venv --without-pip "$work/venv"
py="$work/venv/bin/python"
purelib .venv/bin/python > "$(purelib "$py")/rangeid-test-tools.pth"
# As a user's: node (the local authority's runtime for the tests) and the
# system's folders on PATH, no cargo or rustc.
user_path="$(dirname "$(command -v node)"):/usr/local/bin:/usr/bin:/bin"
PATH="$user_path" .venv/bin/python -m pip --python "$py" install --quiet --disable-pip-version-check --no-deps "$wheel"
say "a fresh venv with the wheel: $((SECONDS - start)) s"

# From the temporary folder: nothing of the source tree on the path.
cd "$work"
if [ "$mode" = bench ]; then
  PATH="$user_path" "$py" "$repo/python/benches/next_id.py"
  exit 0
fi
start=$SECONDS
PATH="$user_path" "$py" -m mypy --strict --no-incremental "$repo/python/tests/typing_use.py"
PATH="$user_path" "$py" -m mypy.stubtest rangeid
say "mypy --strict and stubtest: $((SECONDS - start)) s"
start=$SECONDS
PATH="$user_path" "$py" -m pytest "$repo/python/tests" -p no:cacheprovider --import-mode=importlib -q "$@"
say "pytest: $((SECONDS - start)) s"
