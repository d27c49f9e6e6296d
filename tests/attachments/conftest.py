"""Fixtures for the attachments tests: a real in-memory CCR store, the default counter, file helpers."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

import ccr
from compactor.core.session import ReadFileEntry
from compactor.core.tokens import TiktokenCounter


@pytest.fixture(scope="session")
def counter() -> TiktokenCounter:
    return TiktokenCounter()


@pytest.fixture
def store() -> ccr.Store:
    return ccr.open_store(":memory:")


@pytest.fixture
def write_file(tmp_path: Path) -> Callable[..., ReadFileEntry]:
    """Write a file under tmp_path and return the read-file entry of having read it at ``at``."""

    def write(name: str, content: str, *, at: float, seen: str | None = None) -> ReadFileEntry:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        return ReadFileEntry(path=str(path), content=content if seen is None else seen, timestamp=at)

    return write


@pytest.fixture
def shown_content() -> Callable[[str], str]:
    """The file content a rendered file attachment shows (between its content tags)."""

    def shown(text: str) -> str:
        match = re.search(r'<file-content path="[^"]*"[^>]*>\n(.*)</file-content>', text, re.S)
        assert match is not None, text
        return match.group(1)

    return shown
