"""AsyncGenerator: the asyncio variant. The same engine and background task
as ``Generator``; waits are awaitables resolved by the Rust runtime."""

from __future__ import annotations

from types import TracebackType
from typing import Mapping, Optional, Type

from ._rangeid import Generator, RangeIdError
from ._types import Closed, Stats, Token


class AsyncGenerator:
    """A generator for asyncio code.

    ``async with AsyncGenerator(url=..., token=..., namespace=...) as ids:``
    starts it (awaiting its first range) and closes it at the end; or
    ``ids = await AsyncGenerator.connect(...)`` and ``ids.close()``.
    """

    __slots__ = ("_args", "_g")

    def __init__(
        self,
        url: str,
        token: Token,
        namespace: str,
        *,
        options: Optional[Mapping[str, int]] = None,
        allow_insecure_http: bool = False,
        region: Optional[str] = None,
    ) -> None:
        self._args = (url, token, namespace, dict(options or {}), allow_insecure_http, region)
        self._g: Optional[Generator] = None

    @classmethod
    async def connect(
        cls,
        url: str,
        token: Token,
        namespace: str,
        *,
        options: Optional[Mapping[str, int]] = None,
        allow_insecure_http: bool = False,
        region: Optional[str] = None,
    ) -> "AsyncGenerator":
        """Starts a generator and awaits its first range."""
        self = cls(
            url, token, namespace, options=options, allow_insecure_http=allow_insecure_http, region=region
        )
        await self._start()
        return self

    async def _start(self) -> Generator:
        if self._g is None:
            url, token, namespace, options, insecure, region = self._args
            self._g = await Generator.connect_async(
                url, token, namespace, options=options, allow_insecure_http=insecure, region=region
            )
        return self._g

    @property
    def generator(self) -> Generator:
        """The synchronous generator underneath (the same one)."""
        if self._g is None:
            raise RuntimeError("AsyncGenerator is not started: use `async with` or AsyncGenerator.connect")
        return self._g

    async def next_id(self) -> int:
        """The next ID: at once from the block on hand, or awaiting a
        range up to ``deadlineMs``."""
        g = self.generator
        try:
            return g.try_next_id()
        except RangeIdError:
            # The engine decides whether waiting helps.
            return await g.next_id_async()

    def try_next_id(self) -> int:
        """The next ID only if one is on hand now; never waits."""
        return self.generator.try_next_id()

    async def next_ids(self, n: int) -> list[int]:
        """Exactly ``n`` IDs, not necessarily contiguous; all or nothing."""
        return await self.generator.next_ids_async(n)

    def stats(self) -> Stats:
        return self.generator.stats()

    def close(self) -> Closed:
        return self.generator.close()

    @property
    def incarnation(self) -> str:
        return self.generator.incarnation

    @property
    def namespace(self) -> str:
        return self.generator.namespace

    async def __aenter__(self) -> "AsyncGenerator":
        await self._start()
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if self._g is not None:
            self._g.close()
