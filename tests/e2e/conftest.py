"""The end-to-end suite: the real Claude Code client, the plugin, and a fake API on 127.0.0.1.

Skipped as a whole, with the reason, when node/npm or the pinned client are
not installed (``npm ci --prefix tests/e2e`` installs it; CI does). How long the
suite took is said by ``tests/conftest.py``: under pytest-xdist, the process that
prints the summary loads no conftest below that one.
"""

from __future__ import annotations

import sys
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
