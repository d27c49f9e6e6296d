"""Opening a database of a given ``Schema``: for writing, and for reading only (also on read-only media).

Writing: the file rules (``ccr.sqlite_kit.files``), one connection that
may be shared across threads (the caller serialises it), ``busy_timeout``
5000 ms, a check that SQLite opened the validated file and that it is empty
or of the schema's kind, WAL, ``synchronous=FULL`` (a commit that returned
survives a crash), then the numbered migrations and private modes.

Reading: SQLite's read-only mode still needs the WAL index (``-shm``);
where it cannot be created (a read-only folder, an immutable file, a full
disk) and no WAL content is pending, the file is read as immutable instead.
Pending WAL content that cannot be read is refused rather than ignored: the
reader would see an older state; on a full disk it is read with the index
in memory instead. Nothing is created, migrated or changed.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from ccr.root_errors import StoreError
from ccr.sqlite_kit.files import check_identity, check_readable_file, file_size, prepare_file, tighten_modes
from ccr.sqlite_kit.migrations import Schema, apply_migrations, check_tables, current_version, newer_schema, retry_busy

__all__ = ["BUSY_TIMEOUT_MS", "DISK_FULL_BYTES", "disk_free", "open_read_only", "open_writable"]

BUSY_TIMEOUT_MS = 5000
"""How long a connection waits for a writer's lock before it gives up."""


def open_writable(path: Path, schema: Schema) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path`` for writing, migrated to ``schema``'s version.

    The connection is in autocommit mode (``isolation_level=None``) and not
    bound to its thread.

    Raises:
        UnsafeStorePath: the path or a sidecar is a symlink or not a regular file, or was swapped.
        NotAStore: the file is not SQLite, or holds another program's tables; it was left unchanged.
        StoreError: the file cannot be created, could not switch to WAL, or is of a newer schema.
        sqlite3.Error: SQLite failed (the connection is closed); the caller says what that means.
    """
    identity = prepare_file(path, kind=schema.kind)
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        retry_busy(lambda: conn.execute("PRAGMA schema_version").fetchone())
        check_identity(path, identity, kind=schema.kind)
        retry_busy(lambda: check_tables(conn, path, schema))
        mode = retry_busy(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        if str(mode).lower() != "wal":
            raise StoreError(f"{schema.noun} {path} could not switch to WAL (got {mode})")
        conn.execute("PRAGMA synchronous = FULL")
        apply_migrations(conn, schema, path)
        tighten_modes(path, kind=schema.kind)
    except BaseException:
        conn.close()
        raise
    return conn


def open_read_only(path: Path, schema: Schema) -> tuple[sqlite3.Connection, int]:
    """A connection that can only read the existing database at ``path``, and the file's schema version.

    Version 0 is an SQLite file without the schema yet, and a version below
    ``schema.version`` one not upgraded: the caller decides what those read as.

    Raises:
        UnsafeStorePath: the path or a sidecar is a symlink or not a regular file.
        NotAStore: the file is not SQLite, or holds another program's tables.
        StoreError: the file cannot be read, its WAL content is pending and
            unreadable, or it is of a newer schema.
        sqlite3.Error: SQLite failed (the connection is closed); the caller says what that means.
    """
    check_readable_file(path, kind=schema.kind)
    conn = _connect_read_only(path, lambda c, p: check_tables(c, p, schema), what=schema.noun)
    try:
        version = current_version(conn)
        if version > schema.version:
            raise newer_schema(schema, path, version)
    except BaseException:
        conn.close()
        raise
    return conn, version


DISK_FULL_BYTES = 1 << 20
"""Free space (bytes) under which an I/O error opening a file is taken to be its full disk."""


def disk_free(path: Path) -> int:
    """Bytes free to this user on the file system holding ``path`` (a large number when unknown)."""
    try:
        st = os.statvfs(path.parent)
    except (OSError, AttributeError):
        return 1 << 62
    return st.f_bavail * st.f_frsize


def _connect_without_index(path: Path, check: Callable[[sqlite3.Connection, Path], None]) -> sqlite3.Connection:
    """A connection to a copy, in memory, of the file as its log's last commit left it
    (``ccr.sqlite_kit.wal.snapshot``): for a disk with no room for the ``-shm`` index SQLite needs."""
    from ccr.sqlite_kit.wal import snapshot

    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    try:
        conn.deserialize(snapshot(path))
        conn.execute("PRAGMA query_only = ON")
        check(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def _connect_read_only(
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
        code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
        full = code in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL) and disk_free(path) < DISK_FULL_BYTES
        if code not in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN) and not full:
            raise
        if file_size(path.with_name(path.name + "-wal")) > 0:
            if full:  # no room for the WAL index: keep it in this process's memory instead
                return _connect_without_index(path, check)
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
