"""WatchLoop: a watchfiles loop in a background thread, started and stopped on demand.

Both the skill watcher and the staleness watcher in ``attachments`` run one.
``start`` returns only once the loop is listening (or has failed), so a
change made right after it is never missed; a failure inside the loop is
kept in ``error`` instead of dying with the thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import watchfiles

__all__ = ["WatchLoop"]

_TICK_MS = 100
"""How often the watch loop wakes up with no changes (to notice it is ready)."""

WatchFilter = Callable[[watchfiles.Change, str], bool]


class WatchLoop:
    """Calls ``on_changes`` with the changed paths of each debounced batch, from its own thread.

    ``watch_filter`` and ``recursive`` go to ``watchfiles.watch`` as they are
    (``None`` watches every file). A stopped loop may be started again.
    """

    def __init__(
        self,
        *,
        name: str,
        on_changes: Callable[[list[str]], None],
        debounce_ms: int,
        ready_timeout: float,
        watch_filter: WatchFilter | None,
        recursive: bool = True,
    ) -> None:
        self._name = name
        self._on_changes = on_changes
        self._debounce_ms = debounce_ms
        self._ready_timeout = ready_timeout
        self._watch_filter = watch_filter
        self._recursive = recursive
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None

    @property
    def running(self) -> bool:
        """Whether a thread was started and not yet stopped."""
        return self._thread is not None

    def start(self, paths: list[str]) -> bool:
        """Watch ``paths``; True once the loop listens, False (and stopped) when it failed or never got ready.

        Starting a running loop changes nothing. Starting a stopped one clears
        the stop and ready signals first: left set, the new thread would end
        at once while ``start`` still reported it listening.
        """
        if self._thread is not None:
            return True
        self._stop.clear()
        self._ready.clear()
        self.error = None
        self._thread = threading.Thread(target=self._run, args=(paths,), name=self._name, daemon=True)
        self._thread.start()
        if not self._ready.wait(self._ready_timeout) or self.error is not None:
            self.stop()
            return False
        return True

    def stop(self) -> None:
        """Stop watching and wait for the thread to end."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self, paths: list[str]) -> None:
        try:
            for changes in watchfiles.watch(
                *paths,
                watch_filter=self._watch_filter,
                debounce=self._debounce_ms,
                stop_event=self._stop,
                rust_timeout=_TICK_MS,
                yield_on_timeout=True,
                raise_interrupt=False,
                recursive=self._recursive,
            ):
                self._ready.set()
                if changes:
                    self._on_changes([path for _, path in changes])
        except Exception as exc:  # reported through .error and start()
            self.error = exc
        finally:
            self._ready.set()
