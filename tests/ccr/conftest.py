"""Fixtures for the ccr tests: a store per backend, a fresh store file path, and running the ``ccr`` command."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccr import Store, open_store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A store file path whose directory does not exist yet."""
    return tmp_path / "home" / "ccr.db"


@pytest.fixture(params=["sqlite", "memory"])
def store(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Store]:
    """An empty store, once per backend."""
    opened = open_store(db_path if request.param == "sqlite" else ":memory:")
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def small_store(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Store]:
    """A file store with a 1,000-byte budget."""
    opened = open_store(db_path, max_bytes=1_000)
    try:
        yield opened
    finally:
        opened.close()


def ccr(*args: str, input: bytes = b"", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run the ``ccr`` command with ``args`` (``env`` on top of this process's environment)."""
    return subprocess.run(
        [sys.executable, "-m", "ccr", *args],
        input=input,
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
