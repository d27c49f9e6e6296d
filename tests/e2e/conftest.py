"""The end-to-end suite: the real Claude Code client, the plugin, and a fake API on 127.0.0.1.

Skipped as a whole, with the reason, when node/npm or the pinned client are
not installed (``npm ci --prefix tests/e2e`` installs it; CI does).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Session, missing_client_reason

_REASON = missing_client_reason()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _REASON is None:
        return
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.skip(reason=_REASON))


_clock: dict[str, float] = {}


def _in_suite(nodeid: str) -> bool:
    return "tests/e2e/" in nodeid.replace("\\", "/")


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if _in_suite(nodeid):
        _clock.setdefault("start", time.monotonic())


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if _in_suite(nodeid):
        _clock["end"] = time.monotonic()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say how long the end-to-end suite took (CI prints it; the whole run should stay under 20 minutes)."""
    if "start" in _clock and "end" in _clock:
        state = "skipped: " + _REASON if _REASON else "ran"
        terminalreporter.write_line(f"e2e suite: {_clock['end'] - _clock['start']:.0f} s ({state})")


@pytest.fixture
def world(tmp_path: Path) -> Iterator[Callable[..., Session]]:
    """Makes isolated client worlds (own HOME, COMPACTOR_HOME, project, fake API); closes them after."""
    opened: list[Session] = []

    def make(**kwargs: Any) -> Session:
        session = Session(tmp_path / f"world-{len(opened)}", **kwargs)
        session.__enter__()
        opened.append(session)
        return session

    yield make
    for session in opened:
        session.__exit__(None, None, None)
