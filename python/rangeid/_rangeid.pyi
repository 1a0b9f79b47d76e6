"""Type stubs of the extension module rangeid._rangeid (PyO3)."""

from types import TracebackType
from typing import Awaitable, Final, Literal, Mapping, Optional, Type, final

from ._types import Closed, Stats, Token

__all__ = [
    "MAX_BATCH",
    "BlockedError",
    "ClosedError",
    "ExhaustedError",
    "FrozenError",
    "Generator",
    "InvalidConfigError",
    "InvalidRequestError",
    "RangeIdError",
    "RefusedError",
    "TooFewError",
    "UnavailableError",
    "__version__",
]

MAX_BATCH: Final[int]
__version__: Final[str]

class RangeIdError(Exception):
    """Every rangeid failure. ``code`` is the stable code (``unavailable``,
    ``frozen``, ``exhausted``, ``unauthenticated``, ``forbidden``,
    ``namespace_not_found``, ``invalid_request``, ``refused``, ``closed``,
    ``invalid_config``, ...) the HTTP API, npm package and Rust client use."""

    code: str
    message: str
    is_final: bool
    status: Optional[int]
    authority_code: Optional[str]
    authority_message: Optional[str]
    excerpt: Optional[str]
    remaining: Optional[int]
    available: Optional[int]
    limit: Optional[int]
    retry_after: Optional[float]

class UnavailableError(RangeIdError): ...
class FrozenError(RangeIdError): ...
class BlockedError(RangeIdError): ...
class ExhaustedError(RangeIdError): ...
class TooFewError(ExhaustedError): ...
class RefusedError(RangeIdError): ...
class InvalidRequestError(RangeIdError): ...
class ClosedError(RangeIdError): ...
class InvalidConfigError(RangeIdError): ...

@final
class Generator:
    """IDs for one namespace, issued in-process from ranges the authority
    committed to this generator; every method may be called from any thread."""

    def __new__(
        cls,
        url: str,
        token: Token,
        namespace: str,
        *,
        options: Optional[Mapping[str, int]] = None,
        allow_insecure_http: bool = False,
        region: Optional[str] = None,
    ) -> Generator: ...
    @staticmethod
    def connect_async(
        url: str,
        token: Token,
        namespace: str,
        *,
        options: Optional[Mapping[str, int]] = None,
        allow_insecure_http: bool = False,
        region: Optional[str] = None,
    ) -> Awaitable[Generator]: ...
    def next_id(self) -> int: ...
    def try_next_id(self) -> int: ...
    def next_ids(self, n: int) -> list[int]: ...
    def next_id_async(self) -> Awaitable[int]: ...
    def next_ids_async(self, n: int) -> Awaitable[list[int]]: ...
    def stats(self) -> Stats: ...
    def close(self) -> Closed: ...
    @property
    def incarnation(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    def __enter__(self) -> Generator: ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> Literal[False]: ...
