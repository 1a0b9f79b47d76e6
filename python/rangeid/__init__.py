"""rangeid: unique integer IDs from a rangeid authority, issued in-process.

The engine is the Rust client's (``rangeid-client``, over ``rangeid-core``),
the same one the Rust crate and, through wasm, the npm package run; this
package only marshals. ``Generator.next_id()`` takes an ID from memory,
lock-free; refills run on a Rust runtime in the background, and a call that
waits on the network releases the GIL.

    from rangeid import Generator

    with Generator(url="https://ids.example.com", token=token, namespace="orders") as ids:
        order_id: int = ids.next_id()

The asyncio variant is ``AsyncGenerator``. Every failure is a
``RangeIdError`` whose ``code`` is the stable code the HTTP API, the npm
package and the Rust client use.
"""

from __future__ import annotations

from ._aio import AsyncGenerator
from ._rangeid import (
    MAX_BATCH,
    BlockedError,
    ClosedError,
    ExhaustedError,
    FrozenError,
    Generator,
    InvalidConfigError,
    InvalidRequestError,
    RangeIdError,
    RefusedError,
    TooFewError,
    UnavailableError,
    __version__,
)
from ._types import Closed, LeaseStats, Latency, Stats, TokenProvider

__all__ = [
    "MAX_BATCH",
    "AsyncGenerator",
    "BlockedError",
    "Closed",
    "ClosedError",
    "ExhaustedError",
    "FrozenError",
    "Generator",
    "InvalidConfigError",
    "InvalidRequestError",
    "Latency",
    "LeaseStats",
    "RangeIdError",
    "RefusedError",
    "Stats",
    "TokenProvider",
    "TooFewError",
    "UnavailableError",
    "__version__",
]
