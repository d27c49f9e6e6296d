"""Fixtures for the memory tests: a fresh database beside its own recovery store, and the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from compactor.memory import MemoryDB, open_memory

CLI_TIMEOUT_S = 120


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A memory database path whose folder does not exist yet."""
    return tmp_path / "home" / "memory.db"


@pytest.fixture
def ccr_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "ccr.db"


@pytest.fixture
def db(db_path: Path, ccr_path: Path) -> Iterator[MemoryDB]:
    opened = open_memory(db_path, recovery=ccr_path)
    try:
        yield opened
    finally:
        opened.close()


def run_memory(
    *args: str, home: Path, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``python -m compactor.memory ARGS`` with ``COMPACTOR_HOME=home``; bytes in and out."""
    return subprocess.run(
        [sys.executable, "-m", "compactor.memory", *args],
        input=stdin,
        capture_output=True,
        timeout=CLI_TIMEOUT_S,
        env={**os.environ, "COMPACTOR_HOME": str(home), **(env or {})},
        check=False,
    )
