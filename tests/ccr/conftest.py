"""Fixtures for the ccr tests: a store per backend, and a fresh store file path."""

from __future__ import annotations

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
