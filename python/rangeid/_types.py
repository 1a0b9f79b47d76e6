"""The shapes of what a generator returns (typing only)."""

from __future__ import annotations

from typing import Callable, Literal, Optional, TypedDict, Union

#: A token, or a callable giving the token of each range request; its
#: argument ``refresh`` is True after the authority refused the last one
#: (401): return a fresh token then, with the same ``sub``.
TokenProvider = Callable[[bool], str]
Token = Union[str, TokenProvider]


class Latency(TypedDict):
    """Grant round trips, in milliseconds (p50 and p99 over the last 64)."""

    count: int
    p50: int
    p99: int
    max: int


class LeaseStats(TypedDict):
    """The engine's counters (core's ``lease::Stats``)."""

    issued: int
    available: int
    reserved_ahead: int
    reserved: int
    outstanding: int
    ranges_installed: int
    replays_installed: int
    duplicates_ignored: int
    grants_refused: int
    stale_ignored: int
    requests: int
    retries: int
    requests_expired: int
    starved: int
    blocks: int
    unblocks: int
    abandoned: int
    grant_ms: Latency


class Stats(TypedDict):
    """``Generator.stats()``: the engine's counters and the driver's."""

    incarnation: str
    phase: Literal["running", "blocked", "exhausted", "failed", "closed", "unknown"]
    #: With phase "failed": the code it was refused with for good.
    failure: Optional[str]
    rate_per_second: int
    in_flight: int
    misses: int
    #: IDs lost to a refill racing a reader, or sent to a caller that
    #: stopped waiting: gaps, counted in lease.abandoned, never issued.
    lost: int
    lease: LeaseStats


class Closed(TypedDict):
    """What ``close()`` gave up."""

    abandoned: int
    requests_abandoned: int
