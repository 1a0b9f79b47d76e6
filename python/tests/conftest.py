"""Fixtures: the real local authority (``localauthority.py``), one per
session, and a namespace with a generator token per test."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from localauthority import LocalAuthority  # noqa: E402


@pytest.fixture(scope="session")
def authority() -> Iterator[LocalAuthority]:
    a = LocalAuthority()
    try:
        yield a
    finally:
        a.close()
