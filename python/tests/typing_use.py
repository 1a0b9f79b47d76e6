"""A program using the package as a typed application would; mypy --strict
checks it against the installed stubs (python/scripts/run.sh). Not run.

Strict mode warns on an unused `type: ignore`: each one below marks a
misuse the stubs must reject, so a stub that grew looser (Any) fails."""

from __future__ import annotations

import asyncio

import rangeid
from rangeid import AsyncGenerator, Generator, RangeIdError


def token(refresh: bool) -> str:
    return "fresh" if refresh else "cached"


def sync_use() -> int:
    with Generator(url="https://ids.example.com", token="t", namespace="orders", options={"rangeSize": 1000}) as g:
        a: int = g.next_id()
        b: int = g.try_next_id()
        batch: list[int] = g.next_ids(10)
        s: rangeid.Stats = g.stats()
        issued: int = s["lease"]["issued"]
        p99: int = s["lease"]["grant_ms"]["p99"]
        failure: str | None = s["failure"]
        closed: rangeid.Closed = g.close()
        name: str = g.namespace + g.incarnation
        g.next_ids("10")  # type: ignore[arg-type]
        g.nope()  # type: ignore[attr-defined]
        c: str = g.next_id()  # type: ignore[assignment]
        s["lease"]["nope"]  # type: ignore[typeddict-item]
        return a + b + sum(batch) + issued + p99 + closed["abandoned"] + len(name) + len(failure or "") + len(c)


def with_provider() -> Generator:
    return Generator(url="https://ids.example.com", token=token, namespace="orders", allow_insecure_http=False)


def errors() -> str:
    try:
        sync_use()
    except rangeid.TooFewError as e:
        left: int | None = e.remaining
        return str(left)
    except RangeIdError as e:
        code: str = e.code
        status: int | None = e.status
        retry: float | None = e.retry_after
        final: bool = e.is_final
        return f"{code} {status} {retry} {final} {e.authority_code} {e.message}"
    return ""


async def async_use() -> list[int]:
    async with AsyncGenerator(url="https://ids.example.com", token="t", namespace="orders") as ids:
        one: int = await ids.next_id()
        more: list[int] = await ids.next_ids(5)
        now: int = ids.try_next_id()
        await ids.next_ids(5.0)  # type: ignore[arg-type]
    other = await AsyncGenerator.connect(url="https://ids.example.com", token=token, namespace="orders")
    other.close()
    return [one, now, *more]


if __name__ == "__main__":
    asyncio.run(async_use())
