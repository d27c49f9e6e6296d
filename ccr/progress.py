"""Progress bars for long commands, on a terminal only.

A command that may run for a while (``replay``, ``tokens`` and ``inspect`` on
big files, ``ccr verify`` on a big store) wraps its loop in ``progress(...)``
and calls ``advance`` as it goes, after each unit of work is done (never
before: a bar at 100% means finished). Each bar names its unit. On a terminal (stderr is a TTY) that draws a
rich progress bar on stderr; piped or redirected, it draws nothing, so stdout
and stderr carry exactly what they would without it. ``rich`` is imported only
when a bar is drawn. It lives in ``ccr``, the lowest package, since ``ccr
verify`` draws one too.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

__all__ = ["Progress", "count_text", "human_count", "progress", "time_column"]


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


def human_count(value: float, unit: str) -> str:
    """``value`` for a person: bytes as kB, MB, GB (decimal); any other unit with thousands separators."""
    if unit == "bytes":
        for size, suffix in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
            if value >= size:
                return f"{value / size:.1f} {suffix}"
        return f"{int(value)} B"
    return f"{int(value):,}"


def count_text(completed: float, total: float | None, unit: str) -> str:
    """What the bar prints beside itself: ``4.2 MB/10.3 MB``, ``171/581 entries``, ``171 entries``."""
    if unit == "bytes":
        done = human_count(completed, unit)
        return done if total is None else f"{done}/{human_count(total, unit)}"
    suffix = f" {unit}" if unit else ""
    if total is None:
        return f"{human_count(completed, unit)}{suffix}"
    return f"{human_count(completed, unit)}/{human_count(total, unit)}{suffix}"


def time_column() -> Any:
    """A rich column: the time left once the total and a rate are known; until then, the time spent
    (so that a bar waiting for its first unit still shows that it is running)."""
    from rich.progress import (
        ProgressColumn,
        Task,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class Time(ProgressColumn):
        def __init__(self) -> None:
            super().__init__()
            self.left, self.spent = TimeRemainingColumn(), TimeElapsedColumn()

        def render(self, task: Task) -> Text:
            if task.total is None or not task.completed or task.time_remaining is None:
                return Text.assemble(self.spent.render(task), " elapsed")
            return Text.assemble(self.left.render(task), " left")

    return Time()


@contextmanager
def progress(description: str, total: float | None, *, unit: str = "") -> Iterator[Progress]:
    """A progress bar for ``total`` units of ``unit`` (None: unknown), drawn on stderr only when it is a terminal.

    Beside the bar: the count in ``unit`` (``"bytes"`` prints kB/MB/GB), then
    the time left while the total is known and the time spent otherwise.
    """
    stream = sys.stderr
    if stream is None or not stream.isatty():
        yield _Silent()
        return
    from rich.console import Console
    from rich.progress import BarColumn, ProgressColumn, Task, TextColumn
    from rich.progress import Progress as RichProgress
    from rich.text import Text

    class Count(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(count_text(task.completed, task.total, unit), style="progress.download")

    columns = [TextColumn("{task.description}"), BarColumn(), Count(), time_column()]
    with RichProgress(*columns, console=Console(file=stream), transient=True) as bar:
        yield _Bar(bar, bar.add_task(description, total=total))
