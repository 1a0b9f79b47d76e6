"""The Python package's benchmark (make bench, through python/scripts/run.sh
bench, from the installed wheel): ns per call of ``Generator.next_id()``
beside ``next(itertools.count())`` and ``uuid.uuid4()`` measured in the same
run, from one thread, against the real local authority on workerd with the
default options (refills in the background while it runs). Goals: at most
3x ``next(itertools.count())``, and faster than ``uuid4()``.

Each figure is the best of 7 rounds of 1,000,000 calls, each in a plain
for loop with the callee bound to a local (the loop's own cost included in
every row alike)."""

from __future__ import annotations

import itertools
import sys
import time
import uuid
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from localauthority import LocalAuthority  # noqa: E402

from rangeid import Generator  # noqa: E402

N = 1_000_000
ROUNDS = 7


def best(loop: Callable[[int], int]) -> float:
    """Best ns per call over ROUNDS rounds; `loop(n)` makes n calls and
    returns the time they took in ns."""
    return min(loop(N) for _ in range(ROUNDS)) / N


# One call per turn in each loop, its target bound to a local first.
def counts(n: int) -> int:
    c, call = itertools.count(), next
    t0 = time.perf_counter_ns()
    for _ in range(n):
        call(c)
    return time.perf_counter_ns() - t0


def uuids(n: int) -> int:
    call = uuid.uuid4
    t0 = time.perf_counter_ns()
    for _ in range(n):
        call()
    return time.perf_counter_ns() - t0


def next_ids_of(g: Generator) -> Callable[[int], int]:
    def loop(n: int) -> int:
        call = g.next_id
        t0 = time.perf_counter_ns()
        for _ in range(n):
            call()
        return time.perf_counter_ns() - t0

    return loop


def main() -> None:
    a = LocalAuthority()
    try:
        ns = a.namespace("py-bench")
        with Generator(url=a.url, token=a.token("generator", [ns]), namespace=ns) as g:
            rows = [
                ("next(itertools.count())", best(counts)),
                ("Generator.next_id()", best(next_ids_of(g))),
                ("uuid.uuid4()", best(uuids)),
            ]
            s = g.stats()
        base = rows[0][1]
        print(f"Python {sys.version.split()[0]}, best of {ROUNDS} rounds of {N:,} calls, one thread")
        print(f"{'call':<26}{'ns/call':>10}{'vs count':>10}")
        for name, ns_per in rows:
            print(f"{name:<26}{ns_per:>10.1f}{ns_per / base:>9.2f}x")
        ratio = rows[1][1] / base
        vs_uuid = rows[2][1] / rows[1][1]
        print(f"next_id vs next(count): {ratio:.2f}x (goal at most 3x: {'met' if ratio <= 3 else 'not met'})")
        print(f"uuid4 vs next_id: {vs_uuid:.1f}x slower (goal next_id faster: {'met' if vs_uuid > 1 else 'not met'})")
        lease = s["lease"]
        print(f"generator: {lease['issued']:,} IDs issued, {lease['ranges_installed']} ranges, {s['misses']} misses (calls that found none on hand; one that waited counts up to 2)")
    finally:
        a.close()


if __name__ == "__main__":
    main()
