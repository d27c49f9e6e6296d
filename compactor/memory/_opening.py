"""Opening the memory database: the SQLite kit's rules with the memory schema, and memory's own errors.

For writing, ``open_for_writing`` is the kit's ``open_writable`` (a private
file in a private folder, symlinks refused, WAL, ``busy_timeout`` 5000 ms,
durable commits, numbered migrations) plus rebuilding a stale recall index.
For reading, ``open_for_reading`` changes nothing on disk: a database that
does not exist yet reads as an empty one, and one that would need upgrading
or reindexing is refused with the command that does it. The kit's errors
(the shared ``StoreError``, ``UnsafeStorePath``, ``NotAStore``) pass through
as they are; their messages name the memory store.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from pathlib import Path

from ccr.sqlite_kit import connect
from ccr.sqlite_kit.migrations import apply_migrations, retry_busy
from compactor.memory._schema import SCHEMA, index_is_current, reindex_if_stale
from compactor.memory.errors import NotAStore, StoreError

__all__ = ["open_for_reading", "open_for_writing"]


def open_for_writing(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the memory database at ``path``, migrated and with a current recall index.

    Raises:
        UnsafeStorePath: the path or a sidecar is a symlink or not a regular file.
        NotAStore: the file is not a memory database; it was left unchanged.
        StoreError: the file cannot be created, opened or migrated.
    """
    try:
        conn = connect.open_writable(path, SCHEMA)
        try:
            retry_busy(lambda: reindex_if_stale(conn))
        except BaseException:
            conn.close()
            raise
    except sqlite3.Error as exc:
        raise _failure("cannot open memory database", path, exc) from exc
    return conn


def open_for_reading(path: Path) -> sqlite3.Connection:
    """A connection that can only read the database at ``path``; an empty store when there is none yet.

    Raises:
        UnsafeStorePath: the path or a sidecar is a symlink or not a regular file.
        NotAStore: the file is not a memory database.
        StoreError: the file cannot be read, was written by a newer version
            of this code, or needs a writing command to upgrade or reindex it.
    """
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return _empty_store()
    except OSError as exc:  # a folder on the way is not a folder, or cannot be searched
        if exc.errno == errno.ENOTDIR:
            return _empty_store()
        raise StoreError(f"cannot read memory database {path}: {exc.strerror or exc}") from exc
    if stat.S_ISREG(st.st_mode) and st.st_size == 0:
        return _empty_store()
    try:
        conn, version = connect.open_read_only(path, SCHEMA)
    except sqlite3.Error as exc:
        raise _failure("cannot read memory database", path, exc) from exc
    if version == 0:  # no memory store yet (a fresh SQLite file): nothing to recall
        conn.close()
        return _empty_store()
    if version < SCHEMA.version:
        conn.close()
        raise StoreError(
            f"memory database {path} has schema version {version}, older than this code's ({SCHEMA.version}); "
            "run a writing command (compactor memory remember) once to upgrade it"
        )
    if not index_is_current(conn):
        conn.close()
        raise StoreError(
            f"memory database {path} was indexed for recall with other stop words than this code's; "
            "run a writing command (compactor memory remember) once to reindex it"
        )
    return conn


def _failure(what: str, path: Path, exc: sqlite3.Error) -> StoreError:
    """The error for SQLite's ``exc`` on the database at ``path``: ``NotAStore`` when it is no database."""
    if "not a database" in str(exc):
        return NotAStore(f"{path} is not a memory database; left unchanged")
    return StoreError(f"{what} {path}: {exc}")


def _empty_store() -> sqlite3.Connection:
    """An empty memory store in memory: what a database that does not exist yet reads as."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    apply_migrations(conn, SCHEMA, ":memory:")
    reindex_if_stale(conn)
    return conn
