"""Progress bars for long commands, on a terminal only.

A command that may run for a while (``replay``, ``tokens`` and ``inspect`` on
big files, ``ccr verify`` on a big store) wraps its loop in ``progress(...)``
and calls ``advance`` as it goes. On a terminal (stderr is a TTY) that draws a
rich progress bar on stderr; piped or redirected, it draws nothing, so stdout
and stderr carry exactly what they would without it. ``rich`` is imported only
when a bar is drawn.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

__all__ = ["Progress", "progress"]


class Progress(Protocol):
    """What a command sees: ``advance`` per unit of work done, or ``update`` with the count so far."""

    def advance(self, amount: float = 1) -> None: ...

    def update(self, completed: float, total: float | None = None) -> None: ...


class _Silent:
    def advance(self, amount: float = 1) -> None:
        return None

    def update(self, completed: float, total: float | None = None) -> None:
        return None


class _Bar:
    def __init__(self, bar: object, task: object) -> None:
        self._bar = bar
        self._task = task

    def advance(self, amount: float = 1) -> None:
        self._bar.advance(self._task, amount)  # type: ignore[attr-defined]

    def update(self, completed: float, total: float | None = None) -> None:
        if total is None:
            self._bar.update(self._task, completed=completed)  # type: ignore[attr-defined]
        else:
            self._bar.update(self._task, completed=completed, total=total)  # type: ignore[attr-defined]


@contextmanager
def progress(description: str, total: float | None, *, unit: str = "") -> Iterator[Progress]:
    """A progress bar for ``total`` units (None: unknown), drawn on stderr only when it is a terminal."""
    stream = sys.stderr
    if stream is None or not stream.isatty():
        yield _Silent()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeRemainingColumn

    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn() if not unit else
               TextColumn("{task.percentage:>3.0f}%"), TimeRemainingColumn()]
    with RichProgress(*columns, console=Console(file=stream), transient=True) as bar:
        yield _Bar(bar, bar.add_task(description, total=total))
