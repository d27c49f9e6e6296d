"""SkillWatcher: hot reload of the skill roots with watchfiles, in a background thread.

Watching is an effect at the edge: a ``WatchLoop`` thread runs
``watchfiles.watch`` on the roots that exist and reloads the registry after
each batch of changes. ``start`` returns only once the watcher is listening,
so a change made right after it is never missed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import watchfiles

from skills.errors import SkillsError
from skills.watch_loop import WatchLoop

if TYPE_CHECKING:
    from skills.registry import SkillRegistry

__all__ = ["SkillWatcher"]


class SkillWatcher:
    """Reloads a ``SkillRegistry`` whenever a file under its roots changes.

    Use as a context manager or call ``start``/``stop``. ``on_reload`` is
    called from the watcher thread after each reload. Roots that do not exist
    when the watcher starts are not watched.
    """

    def __init__(
        self,
        registry: SkillRegistry,
        *,
        on_reload: Callable[[SkillRegistry], None] | None = None,
        debounce_ms: int = 1_600,
        ready_timeout: float = 10.0,
    ) -> None:
        self.registry = registry
        self._on_reload = on_reload
        self._loop = WatchLoop(
            name="skill-watcher",
            on_changes=self._reload,
            debounce_ms=debounce_ms,
            ready_timeout=ready_timeout,
            watch_filter=watchfiles.DefaultFilter(),
        )
        self.reloads = 0

    @property
    def error(self) -> BaseException | None:
        """What stopped the watch loop, if anything did."""
        return self._loop.error

    @property
    def paths(self) -> list[str]:
        """The roots being watched: those that exist."""
        return [r.path for r in self.registry.roots if Path(r.path).is_dir()]

    def start(self) -> SkillWatcher:
        """Start watching; returns once the watcher listens.

        Raises:
            SkillsError: none of the roots exists, or the watcher failed to start.
        """
        paths = self.paths
        if not paths:
            raise SkillsError("none of the skill roots exists, so there is nothing to watch")
        if not self._loop.start(paths):
            raise SkillsError(f"the skill watcher did not start: {self.error}") from self.error
        return self

    def stop(self) -> None:
        """Stop watching and wait for the thread to end."""
        self._loop.stop()

    def __enter__(self) -> SkillWatcher:
        return self if self._loop.running else self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _reload(self, changed: list[str]) -> None:
        self.registry.reload()
        self.reloads += 1
        if self._on_reload is not None:
            self._on_reload(self.registry)
