"""The ``Store`` protocol, and ``open_store`` which picks a backend and a budget.

Backends: SQLite (a file, the default ``$COMPACTOR_HOME/ccr.db``) and
memory (``":memory:"``). Both refuse a record that would pass the byte
budget instead of evicting anything, because issued output may still point at
any handle. Records leave only by an explicit ``delete`` (``ccr rm``,
``ccr gc``).

Budget precedence: the ``max_bytes`` argument, then ``COMPACTOR_CCR_MAX_BYTES``,
then ``DEFAULT_MAX_BYTES`` (512 MiB). A value that is not a positive integer
is an error at open, never a silent fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self, runtime_checkable

from ccr._budget import DEFAULT_MAX_BYTES, MAX_BYTES_ENV, resolve_max_bytes
from ccr._memory import MemoryStore
from ccr._sqlite import SQLiteStore
from ccr.objects import Currentness, Lifecycle, StoredObject, TypedObject
from ccr.paths import DEFAULT_HOME, HOME_ENV, default_store_path
from ccr.records import PutRequest, Record, RecordFilter, StoreStats
from ccr.retrieval import Retrieval
from ccr.sqlite_kit.files import require_folder, require_store_file

__all__ = [
    "DEFAULT_HOME",
    "DEFAULT_MAX_BYTES",
    "HOME_ENV",
    "MAX_BYTES_ENV",
    "MEMORY",
    "Store",
    "default_store_path",
    "open_store",
    "resolve_max_bytes",
]

MEMORY = ":memory:"
"""The path that selects the in-memory backend."""


@runtime_checkable
class Store(Protocol):
    """What every backend offers. Handles are content addresses; nothing is ever evicted."""

    max_bytes: int

    def put(
        self,
        data: bytes,
        *,
        content_type: str = "text/plain",
        producer: str = "",
        tokens_before: int | None = None,
        tokens_after: int | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str: ...

    def put_many(self, items: Sequence[PutRequest]) -> list[str]: ...

    def get(self, ref: str) -> bytes: ...

    def contains(self, ref: str) -> bool: ...

    def record(self, ref: str) -> Record: ...

    def retrieve(
        self,
        ref: str,
        *,
        query: str | None = None,
        lines: tuple[int, int] | None = None,
        byte_range: tuple[int, int] | None = None,
    ) -> Retrieval: ...

    def put_object(self, obj: TypedObject) -> str: ...

    def get_object(self, ref: str) -> StoredObject: ...

    def set_currentness(self, ref: str, currentness: Currentness) -> StoredObject: ...

    def set_lifecycle(self, ref: str, lifecycle: Lifecycle) -> StoredObject: ...

    def records(self, where: RecordFilter | None = None) -> list[Record]: ...

    def delete(self, refs: Sequence[str]) -> list[str]: ...

    def iter_blobs(self) -> Iterator[tuple[Record, bytes]]: ...

    def iter_objects(self) -> Iterator[StoredObject]: ...

    def restore(self, blobs: Sequence[tuple[Record, bytes]], objects: Sequence[StoredObject] = ()) -> None: ...

    def vacuum(self) -> int: ...

    def stats(self) -> StoreStats: ...

    def verify(self, progress: Callable[[int], object] | None = None) -> list[str]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


def open_store(
    path: str | Path | None = None,
    *,
    max_bytes: int | None = None,
    readonly: bool = False,
    make_folders: bool = True,
    must_exist: bool = False,
) -> Store:
    """Open (creating if needed) the store at ``path``.

    ``None`` opens the default file, ``":memory:"`` an in-memory store.
    ``readonly`` opens an existing file for reading only: nothing is created,
    migrated or changed, so a store on read-only media (a 0444 file, a
    read-only directory) can be read; writes through it fail with
    ``StoreError``. Read-only, nothing is ever created: a file that does not
    exist yet (or is empty) reads as an empty store, and is read once a
    writer has made it. The command lines ask for more care with a path the
    user named: ``must_exist`` (reading) refuses a path that names no file
    (most likely a typo) or an empty one, and ``make_folders=False``
    (writing) makes the store file only in a folder that exists.

    Raises:
        StoreConfigError: the budget is not a positive integer.
        InputNotFound: ``must_exist`` and nothing is at the path, or the
            folder for a new store does not exist and ``make_folders`` is false.
        UnsafeStorePath: the path (or a sidecar) is a symlink or not a regular file.
        NotAStore: ``must_exist`` and the path names an empty file, or the file is not a ccr store.
        StoreError: the file cannot be created, opened or migrated.
    """
    budget = resolve_max_bytes(max_bytes)
    if isinstance(path, str) and path == MEMORY:
        return MemoryStore(max_bytes=budget)
    target = default_store_path() if path is None else Path(path).expanduser()
    if readonly and must_exist:
        require_store_file(target)
    elif not readonly and not make_folders:
        require_folder(target)
    return SQLiteStore(target, max_bytes=budget, readonly=readonly)
