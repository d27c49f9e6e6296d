"""Opening an SQLite file only to read it, also on read-only media.

Shared by the ccr store and the memory database. SQLite's read-only mode
still needs the WAL index (``-shm``); where it cannot be created (a
read-only directory, an immutable file) and no WAL content is pending, the
file is read as immutable instead. Pending WAL content that cannot be read
is refused rather than ignored: the reader would see an older state.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from ccr._migrations import retry_busy
from ccr.errors import StoreError

__all__ = ["BUSY_TIMEOUT_MS", "connect_read_only", "file_size"]

BUSY_TIMEOUT_MS = 5000
"""How long a connection waits for a writer's lock before it gives up."""


def connect_read_only(
    path: Path, check: Callable[[sqlite3.Connection, Path], None], *, what: str
) -> sqlite3.Connection:
    """A connection that can only read ``path``, after ``check(conn, path)`` accepted it.

    ``what`` names the file in messages ("store", "memory database").

    Raises:
        sqlite3.Error: SQLite could not read the file (the caller says what that means).
        StoreError: WAL content is pending and cannot be read.
        Whatever ``check`` raises (the connection is closed first).
    """
    base = "file:" + urllib.parse.quote(str(path.absolute()))
    conn: sqlite3.Connection | None = None
    try:
        conn = sqlite3.connect(
            base + "?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        opened = conn
        retry_busy(lambda: check(opened, path))
        return conn
    except sqlite3.OperationalError as exc:
        if conn is not None:
            conn.close()
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN):
            raise
        if file_size(path.with_name(path.name + "-wal")) > 0:
            raise StoreError(
                f"cannot read {what} {path}: its write-ahead log is pending and cannot be opened ({exc})"
            ) from exc
    except BaseException:
        if conn is not None:
            conn.close()
        raise
    immutable = sqlite3.connect(base + "?immutable=1", uri=True, isolation_level=None, check_same_thread=False)
    try:
        check(immutable, path)
    except BaseException:
        immutable.close()
        raise
    return immutable


def file_size(path: Path) -> int:
    """The size of ``path`` without following a link; 0 when there is nothing to measure."""
    try:
        return os.stat(path, follow_symlinks=False).st_size
    except OSError:
        return 0
