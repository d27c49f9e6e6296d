"""Staleness: noticing that a file the agent read has changed on disk since.

``mark_stale`` is the decision (pure apart from reading the files it is
told about); ``StalenessWatcher`` is the optional edge that feeds it the
changes watchfiles reports, from a background thread. A stale entry makes
the next file attachment say that the file changed since it was read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from attachments.errors import WatchError
from attachments.files import content_changed, current_content
from attachments.sources import DiskFiles, FileSource
from attachments.state import AttachmentState
from skills.watch_loop import WatchLoop

__all__ = ["StalenessWatcher", "mark_stale"]


def mark_stale(state: AttachmentState, changed: Iterable[str], files: FileSource | None = None) -> list[str]:
    """Mark the read-file entries among ``changed`` whose content now differs; returns their keys.

    A file whose current content still equals what was read (a save with no
    change) is left alone; a deleted file is stale.
    """
    source = files if files is not None else DiskFiles(state.cwd)
    by_real = {real: key for key in list(state.read_files) if (real := _real(key, state.cwd)) is not None}
    marked: list[str] = []
    for path in dict.fromkeys(_real(p, state.cwd) for p in changed):
        key = by_real.get(path) if path is not None else None
        entry = state.read_files.get(key) if key is not None else None
        if key is None or entry is None or entry.stale:
            continue
        current = current_content(source, entry)
        if current is None or content_changed(entry, current):
            entry.stale = True
            marked.append(key)
    return marked


class StalenessWatcher:
    """Marks ``state.read_files`` entries stale when their files change on disk.

    Watches ``roots`` (a list of folders, or one; recursively) when given, else the folders of the files
    read when it starts. ``on_stale`` gets the keys marked, from the watcher
    thread. Use as a context manager or call ``start``/``stop``.
    """

    def __init__(
        self,
        state: AttachmentState,
        *,
        roots: Iterable[str | os.PathLike[str]] | str | os.PathLike[str] | None = None,
        on_stale: Callable[[list[str]], None] | None = None,
        debounce_ms: int = 200,
        ready_timeout: float = 10.0,
    ) -> None:
        self.state = state
        if isinstance(roots, str | os.PathLike):
            roots = [roots]  # one folder, not the characters of its path
        self._roots = [os.fspath(r) for r in roots] if roots is not None else None
        self._on_stale = on_stale
        self._loop = WatchLoop(
            name="staleness-watcher",
            on_changes=self._mark,
            debounce_ms=debounce_ms,
            ready_timeout=ready_timeout,
            watch_filter=None,
            recursive=self._roots is not None,
        )

    @property
    def error(self) -> BaseException | None:
        """What stopped the watch loop, if anything did."""
        return self._loop.error

    @property
    def paths(self) -> list[str]:
        """The folders watched: the given roots, or the existing folders of the read files."""
        if self._roots is not None:
            return [r for r in self._roots if Path(r).is_dir()]
        reals = (_real(key, self.state.cwd) for key in self.state.read_files)
        folders = {os.path.dirname(real) for real in reals if real is not None}
        return sorted(f for f in folders if Path(f).is_dir())

    def start(self) -> StalenessWatcher:
        """Start watching; returns once the watcher listens.

        Raises:
            WatchError: there is no existing folder to watch, or the watcher failed to start.
        """
        paths = self.paths
        if not paths:
            raise WatchError("no existing folder to watch for changes to read files")
        if not self._loop.start(paths):
            raise WatchError(f"the staleness watcher did not start: {self.error}") from self.error
        return self

    def stop(self) -> None:
        """Stop watching and wait for the thread to end."""
        self._loop.stop()

    def __enter__(self) -> StalenessWatcher:
        return self if self._loop.running else self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _mark(self, changed: list[str]) -> None:
        marked = mark_stale(self.state, changed)
        if marked and self._on_stale is not None:
            self._on_stale(marked)


def _real(path: str, cwd: str | None) -> str | None:
    """``path`` resolved against ``cwd`` and symlinks; ``None`` when no file can have that name (a NUL byte)."""
    target = path if os.path.isabs(path) or not cwd else os.path.join(cwd, path)
    try:
        return os.path.realpath(target)
    except ValueError:
        return None
