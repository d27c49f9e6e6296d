"""SkillWatcher: hot reload of the skill roots with watchfiles, in a background thread.

Watching is an effect at the edge: a thread runs ``watchfiles.watch`` on the
roots that exist and reloads the registry after each batch of changes.
``start`` returns only once the watcher is listening, so a change made right
after it is never missed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import watchfiles

from skills.errors import SkillsError

if TYPE_CHECKING:
    from skills.registry import SkillRegistry

__all__ = ["SkillWatcher"]

_TICK_MS = 100
"""How often the watch loop wakes up with no changes (to notice it is ready)."""


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
        self._debounce_ms = debounce_ms
        self._ready_timeout = ready_timeout
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.reloads = 0

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
        self._thread = threading.Thread(
            target=self._run, args=(paths,), name="skill-watcher", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(self._ready_timeout) or self.error is not None:
            self.stop()
            raise SkillsError(f"the skill watcher did not start: {self.error}") from self.error
        return self

    def stop(self) -> None:
        """Stop watching and wait for the thread to end."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> SkillWatcher:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _run(self, paths: list[str]) -> None:
        try:
            for changes in watchfiles.watch(
                *paths,
                debounce=self._debounce_ms,
                stop_event=self._stop,
                rust_timeout=_TICK_MS,
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                self._ready.set()
                if changes:
                    self.registry.reload()
                    self.reloads += 1
                    if self._on_reload is not None:
                        self._on_reload(self.registry)
        except Exception as exc:  # reported through .error and start()
            self.error = exc
        finally:
            self._ready.set()
