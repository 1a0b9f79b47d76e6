"""The Python package, installed from its wheel, against the real local
authority on workerd: threads and asyncio tasks issuing through shared
generators (every ID once, all below what the authority granted), the GIL
released while a call waits, each failure's exception class and stable
code, a token refreshed after a 401, and a restart of the authority."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterator

import pytest

import rangeid
from rangeid import AsyncGenerator, Generator

from localauthority import LocalAuthority

SOURCE = Path(__file__).resolve().parents[1]


def generator(a: LocalAuthority, ns: str, **options: int) -> Generator:
    return Generator(url=a.url, token=a.token("generator", [ns]), namespace=ns, options=options)


def test_imported_from_the_installed_wheel() -> None:
    """The tests exercise what users install, not the source tree."""
    where = Path(rangeid.__file__).resolve()
    assert SOURCE not in where.parents, where
    assert Path(sys.prefix) in where.parents, (where, sys.prefix)
    assert (where.parent / "py.typed").exists()
    assert (where.parent / "_rangeid.pyi").exists()


def test_threads_share_one_generator_every_id_once(authority: LocalAuthority) -> None:
    ns = authority.namespace("py-threads")
    # Small ranges: many refills, so callers wait (GIL released) often.
    g = generator(authority, ns, rangeSize=700)
    per_thread: list[list[int]] = [[] for _ in range(8)]

    def work(t: int) -> None:
        got = per_thread[t]
        for i in range(6000):
            if i % 1000 == 999:
                got.extend(g.next_ids(150))
            else:
                got.append(g.next_id())

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [i for got in per_thread for i in got]
    assert len(ids) == 8 * (6000 - 6 + 6 * 150)
    assert len(set(ids)) == len(ids), "an ID was issued twice"
    assert all(isinstance(i, int) and i > 0 for i in ids)
    assert max(ids) < authority.next_of(ns), "an ID the authority never granted"
    s = g.stats()
    assert s["lease"]["ranges_installed"] > 10
    assert s["lease"]["issued"] >= len(ids)
    g.close()


def test_asyncio_tasks_and_a_thread_every_id_once(authority: LocalAuthority) -> None:
    ns = authority.namespace("py-asyncio")
    token = authority.token("generator", [ns])
    from_thread: list[int] = []
    sync_gen = generator(authority, ns, rangeSize=500)

    def thread() -> None:
        for _ in range(20_000):
            from_thread.append(sync_gen.next_id())

    async def main() -> list[int]:
        async with AsyncGenerator(url=authority.url, token=token, namespace=ns, options={"rangeSize": 500}) as ids:

            async def task() -> list[int]:
                got: list[int] = []
                for i in range(2000):
                    if i % 500 == 499:
                        got.extend(await ids.next_ids(120))
                    else:
                        got.append(await ids.next_id())
                    if i % 100 == 0:
                        await asyncio.sleep(0)
                return got

            results = await asyncio.gather(*(task() for _ in range(20)))
            assert ids.stats()["lease"]["ranges_installed"] > 10
        with pytest.raises(rangeid.ClosedError):
            await ids.next_id()
        return [i for r in results for i in r]

    t = threading.Thread(target=thread)
    t.start()
    from_tasks = asyncio.run(main())
    t.join()
    sync_gen.close()
    ids = from_tasks + from_thread
    assert len(from_tasks) == 20 * (2000 - 4 + 4 * 120)
    assert len(set(ids)) == len(ids), "an ID was issued twice"
    assert max(ids) < authority.next_of(ns)


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A URL whose server accepts connections and never answers."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(srv.accept()[0])
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    stop.set()
    t.join()
    for c in held:
        c.close()
    srv.close()


def runs_while_waiting(call: Callable[[], Any]) -> tuple[int, BaseException | None]:
    """Runs `call` (which waits about 1.5 s) in a thread; meanwhile counts
    this thread's loop turns for 0.5 s. Returns the turns counted while the
    call was still waiting, and what the call raised."""
    raised: list[BaseException] = []
    done = threading.Event()

    def run() -> None:
        try:
            call()
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            raised.append(e)
        done.set()

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.2)
    turns = 0
    until = time.monotonic() + 0.5
    while time.monotonic() < until:
        turns += 1
    counted_while_waiting = turns if not done.is_set() else 0
    t.join()
    return counted_while_waiting, (raised[0] if raised else None)


def test_waiting_to_connect_releases_the_gil(silent_server: str) -> None:
    turns, raised = runs_while_waiting(
        lambda: Generator(url=silent_server, token="t", namespace="orders", options={"deadlineMs": 1500})
    )
    assert isinstance(raised, rangeid.UnavailableError), raised
    assert turns > 1000, "this thread did not run while the other waited: the GIL was held"


def test_waiting_for_an_id_releases_the_gil(authority: LocalAuthority) -> None:
    ns = authority.namespace("py-gil")
    g = generator(authority, ns, deadlineMs=1500, rangeSize=100)
    status, body = authority.request("POST", f"/v1/namespaces/{ns}/freeze", {"reason": "pytest"})
    assert status == 200, body
    # Use up what it holds; the frozen namespace grants no more.
    with pytest.raises(rangeid.FrozenError):
        while True:
            g.next_id()
    turns, raised = runs_while_waiting(g.next_id)
    assert isinstance(raised, rangeid.FrozenError), raised
    assert (raised.code, raised.status, raised.authority_code) == ("frozen", 423, "namespace_frozen")
    assert raised.is_final is False
    assert turns > 1000, "this thread did not run while the other waited: the GIL was held"
    g.close()


def expect(call: Callable[[], Any], cls: type[rangeid.RangeIdError], code: str) -> rangeid.RangeIdError:
    with pytest.raises(rangeid.RangeIdError) as info:
        call()
    e = info.value
    # The exact class (a subclass would pass `raises(cls)`).
    assert type(e) is cls, (type(e), e)
    assert e.code == code, e
    assert str(e).startswith(f"{code}: "), str(e)
    assert e.message and e.message in str(e)
    return e


def test_each_failure_has_its_class_and_stable_code(authority: LocalAuthority) -> None:
    a = authority
    ns = a.namespace("py-errors")
    fast = {"deadlineMs": 1500}
    # The authority refuses for good: a namespace that does not exist, a
    # token for another namespace.
    missing = f"{ns}-missing"
    e = expect(lambda: Generator(url=a.url, token=a.token("generator", [missing]), namespace=missing, options=fast),
               rangeid.RefusedError, "namespace_not_found")
    assert (e.status, e.authority_code, e.is_final) == (404, "namespace_not_found", True)
    assert e.authority_message
    other = a.namespace("py-errors-other")
    e = expect(lambda: Generator(url=a.url, token=a.token("generator", [other]), namespace=ns, options=fast),
               rangeid.RefusedError, "forbidden")
    assert (e.status, e.authority_code, e.is_final) == (403, "forbidden", True)
    # The message names what the token covers, and the code only once.
    assert f'this is a generator token (sub "pytest") for "{other}"' in e.message, e.message
    assert str(e).count("forbidden") == 1, str(e)
    # A token refused even fresh blocks the generator; the constructor gave
    # up, so the message promises no retry.
    e = expect(lambda: Generator(url=a.url, token=a.token("generator", [ns], key=b"\0" * 32), namespace=ns, options=fast),
               rangeid.BlockedError, "unauthenticated")
    assert (e.status, e.is_final) == (401, False)
    assert "asks again by itself" not in e.message and "nothing asks again" in e.message, e.message
    # Nothing answers: unavailable, with the network error chained.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    e = expect(lambda: Generator(url=f"http://127.0.0.1:{closed_port}", token="t", namespace=ns, options=fast),
               rangeid.UnavailableError, "unavailable")
    assert isinstance(e.__cause__, ConnectionError)
    assert "Connection refused" in e.message, e.message
    # Options, checked by core.
    e = expect(lambda: Generator(url=a.url, token="t", namespace=ns, options={"rangeSiz": 5}),
               rangeid.InvalidConfigError, "invalid_config")
    assert "rangeSiz" in e.message
    # Any Mapping is read (the stubs say Mapping[str, int]).
    e = expect(lambda: Generator(url=a.url, token="t", namespace=ns, options=MappingProxyType({"rangeSiz": 5})),
               rangeid.InvalidConfigError, "invalid_config")
    assert "rangeSiz" in e.message
    e = expect(lambda: Generator(url="http://ids.example.com", token="t", namespace=ns), rangeid.InvalidConfigError, "invalid_config")
    assert "allow_insecure_http" in e.message and "(true)" not in e.message, e.message
    expect(lambda: Generator(url=a.url, token="t", namespace=ns, options={"rangeSize": -1}), rangeid.InvalidConfigError, "invalid_config")
    expect(lambda: Generator(url=a.url, token=42, namespace=ns), rangeid.InvalidConfigError, "invalid_config")  # type: ignore[arg-type]
    # A namespace of 1,000 IDs: a batch larger than what is left.
    small = a.namespace("py-errors-small", first="1", max="1000")
    g = Generator(url=a.url, token=a.token("generator", [small]), namespace=small, options=fast)
    e = expect(lambda: g.next_ids(5000), rangeid.TooFewError, "exhausted")
    assert isinstance(e, rangeid.ExhaustedError)
    assert e.available is not None and e.remaining is not None and e.is_final is False
    expect(lambda: g.next_ids(0), rangeid.InvalidRequestError, "invalid_request")
    # A count the client cannot hold is the same typed refusal, not OverflowError.
    e = expect(lambda: g.next_ids(-1), rangeid.InvalidRequestError, "invalid_request")
    assert "not -1" in e.message, e.message
    expect(lambda: g.next_ids(2**70), rangeid.InvalidRequestError, "invalid_request")
    with pytest.raises(TypeError):
        g.next_ids("3")  # type: ignore[arg-type]
    e = expect(lambda: g.next_ids(rangeid.MAX_BATCH + 1), rangeid.InvalidRequestError, "invalid_request")
    # Every ID, then exhausted.
    assert len(set(g.next_ids(1000))) == 1000
    e = expect(g.next_id, rangeid.ExhaustedError, "exhausted")
    assert e.is_final is True
    assert g.stats()["phase"] == "exhausted"
    g.close()
    expect(g.next_id, rangeid.ClosedError, "closed")
    expect(g.try_next_id, rangeid.ClosedError, "closed")
    expect(lambda: g.next_ids(2), rangeid.ClosedError, "closed")


def test_a_region_is_served_by_its_relay_and_a_bad_one_is_invalid_config(authority: LocalAuthority) -> None:
    """``region=`` as the npm option does (docs/relays.md, "The region"):
    with the namespace's relays on, a generator naming region r1 is served
    by the relay of r1 (the ledger holds its IDs under ``relay@r1``, none
    under its own sub); a bad region fails before anything is sent."""
    a = authority
    ns = a.namespace("py-region")
    status, body = a.request("POST", f"/v1/namespaces/{ns}/relays", {"relays": "on", "reason": "python region test"})
    assert status == 200, body
    # The front learns that relays are on from the namespace object's answer.
    with Generator(url=a.url, token=a.token("generator", [ns], sub="warm-up"), namespace=ns, options={"rangeSize": 1}) as warm:
        warm.next_id()
    with Generator(url=a.url, token=a.token("generator", [ns], sub="py-r1"), namespace=ns, region="r1",
                   options={"rangeSize": 100}) as g:
        ids = g.next_ids(500)
    status, body = a.request("GET", f"/v1/namespaces/{ns}/grants?limit=1000")
    assert status == 200, body
    subs = {x["sub"] for x in body["grants"]}
    assert "relay@r1" in subs and "py-r1" not in subs, subs
    roots = [(int(x["start"]), int(x["end"])) for x in body["grants"] if x["sub"] == "relay@r1"]
    assert all(any(s <= i < e for s, e in roots) for i in ids)
    for bad in ["", "EU", "eu_west", "a/b", "a" * 33]:
        e = expect(lambda: Generator(url=a.url, token="t", namespace=ns, region=bad), rangeid.InvalidConfigError,
                   "invalid_config")
        assert "region" in e.message, e.message


def test_context_manager_stats_and_close(authority: LocalAuthority) -> None:
    ns = authority.namespace("py-with")
    with generator(authority, ns) as g:
        first = g.next_id()
        assert g.next_id() != first
        assert g.namespace == ns and len(g.incarnation) == 32
        s = g.stats()
        # The dict has exactly the keys the stubs declare.
        assert set(s) == set(rangeid.Stats.__annotations__)
        assert set(s["lease"]) == set(rangeid.LeaseStats.__annotations__)
        assert set(s["lease"]["grant_ms"]) == set(rangeid.Latency.__annotations__)
        assert s["phase"] == "running" and s["lease"]["issued"] >= 2
    assert g.stats()["phase"] == "closed"
    assert g.close() == {"abandoned": 0, "requests_abandoned": 0}
    with pytest.raises(rangeid.ClosedError):
        g.next_id()


def test_a_token_provider_is_asked_again_after_a_401(authority: LocalAuthority) -> None:
    ns = authority.namespace("py-refresh")
    asked: list[bool] = []
    current = {"token": authority.token("generator", [ns], ttl=2)}
    cached = dict(current)

    def provider(refresh: bool) -> str:
        # Cached until the authority refuses it (401), as a provider would.
        asked.append(refresh)
        if refresh:
            cached["token"] = current["token"]
        return cached["token"]

    def mint() -> None:
        while not stop.is_set():
            current["token"] = authority.token("generator", [ns], ttl=2)
            stop.wait(0.5)

    stop = threading.Event()
    minting = threading.Thread(target=mint)
    minting.start()
    try:
        g = Generator(url=authority.url, token=provider, namespace=ns, options={"rangeSize": 2000, "deadlineMs": 20_000})
        ids = []
        until = time.monotonic() + 5
        while time.monotonic() < until:
            ids.append(g.next_id())
        g.close()
    finally:
        stop.set()
        minting.join()
    assert True in asked, "the token was never refreshed"
    assert g.stats()["phase"] == "closed"
    assert len(set(ids)) == len(ids)


def test_a_restart_of_the_authority_while_threads_issue(authority: LocalAuthority) -> None:
    ns = authority.namespace("py-restart")
    g = generator(authority, ns, rangeSize=5000, deadlineMs=20_000)
    got: list[list[int]] = [[] for _ in range(4)]
    until = time.monotonic() + 8

    def work(t: int) -> None:
        while time.monotonic() < until:
            for _ in range(20):
                got[t].append(g.next_id())
            time.sleep(0.001)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    time.sleep(2)
    authority.restart()
    at_restart = authority.next_of(ns)
    for t in threads:
        t.join()
    ids = [i for x in got for i in x]
    assert len(set(ids)) == len(ids), "an ID was issued twice"
    assert max(ids) >= at_restart, "no ID came from a range granted after the restart"
    assert g.stats()["lease"]["retries"] > 0
    g.close()


def test_ids_up_to_2_to_the_64_minus_1_are_exact_ints(authority: LocalAuthority) -> None:
    top = 2**64 - 1
    ns = authority.namespace("py-top", first=str(top - 999), max=str(top))
    g = generator(authority, ns, deadlineMs=5000)
    ids = g.next_ids(999) + [g.next_id()]
    assert sorted(ids) == list(range(top - 999, top + 1)), "every ID of the namespace, exact, up to 2^64 - 1"
    e = expect(g.next_id, rangeid.ExhaustedError, "exhausted")
    assert e.is_final
    g.close()
    # first == max: a namespace of one ID.
    one = authority.namespace("py-one", first=str(top), max=str(top))
    with generator(authority, one) as g:
        assert g.next_id() == top
        expect(g.next_id, rangeid.ExhaustedError, "exhausted")


def test_no_rust_toolchain_is_needed_where_users_run_it() -> None:
    """run.sh installs the wheel and runs these tests with only node (for
    the local authority) and the system's folders on PATH."""
    import shutil

    assert shutil.which("cargo") is None and shutil.which("rustc") is None
    assert shutil.which("maturin") is None


def test_a_cancelled_wait_takes_no_id_and_the_generator_goes_on(authority: LocalAuthority) -> None:
    ns = authority.namespace("py-cancel")
    token = authority.token("generator", [ns])

    async def main() -> None:
        ids = await AsyncGenerator.connect(url=authority.url, token=token, namespace=ns, options={"deadlineMs": 20_000})
        status, body = authority.request("POST", f"/v1/namespaces/{ns}/freeze", {"reason": "pytest"})
        assert status == 200, body
        held = await ids.next_ids(ids.stats()["lease"]["available"])
        waiting = asyncio.ensure_future(ids.next_id())
        await asyncio.sleep(0.3)
        assert not waiting.done(), "frozen with nothing on hand: the call waits"
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        status, body = authority.request("POST", f"/v1/namespaces/{ns}/unfreeze", {"reason": "pytest"})
        assert status == 200, body
        after = await ids.next_ids(50)
        assert not set(after) & set(held) and len(set(after)) == 50
        ids.close()

    asyncio.run(main())
