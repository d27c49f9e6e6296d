"""Reading a store file with the standard library alone: opening it read-only, and how full it is.

``SQLiteStore`` uses these, and so does ``ccr stats``, which answers from
them without loading the store's models: pydantic alone costs ten times
Python's own start, more than the whole command should.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from ccr._migrations import SCHEMA
from ccr.errors import DiskFull, StoreError
from ccr.sqlite_kit import connect
from ccr.sqlite_kit.connect import DISK_FULL_BYTES, disk_free

__all__ = [
    "DISK_FULL_BYTES",
    "PAGE_SLACK",
    "PUT_PAGES",
    "STATS_FIELDS",
    "damage_hint",
    "disk_free",
    "open_read_only",
    "page_cap",
    "pages_left",
    "read_stats",
    "store_failure",
]

PAGE_SLACK = 4096
"""Pages allowed beyond twice the budget, for schema, indexes and overhead."""
PUT_PAGES = 8
"""Pages kept free below the page cap: what one small record with its index entries may need.
A put is refused (and ``stats`` says full) once fewer remain, so "full" means
exactly that a one-byte put would be refused."""

STATS_FIELDS = (
    "backend",
    "path",
    "entries",
    "objects",
    "payload_bytes",
    "max_bytes",
    "full",
    "tokens_before",
    "tokens_after",
    "tokens_saved",
    "basis",
)
"""The fields of ``ccr.records.StoreStats``, in its order (a test keeps them equal)."""


def open_read_only(path: Path) -> tuple[sqlite3.Connection, int]:
    """A connection that can only read the store, also on read-only media, and the file's schema version.

    The SQLite kit's read-only opening (``ccr.sqlite_kit.connect``) with
    the store's schema: a file of an older version is read as it is.

    Raises:
        UnsafeStorePath: the path is a symlink or not a regular file.
        NotAStore: the file is not a ccr store.
        StoreError: the file cannot be read, holds no store yet, or is of a newer version.
    """
    try:
        conn, version = connect.open_read_only(path, SCHEMA)
    except sqlite3.Error as exc:
        raise store_failure("cannot read store", path, exc) from exc
    if version == 0:
        conn.close()
        raise StoreError(f"{path} holds no ccr store yet")
    return conn, version


def page_cap(conn: sqlite3.Connection, max_bytes: int) -> int:
    """The file's page cap for a budget of ``max_bytes``: twice the budget, plus ``PAGE_SLACK`` pages."""
    page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    return int(2 * max_bytes // page_size + PAGE_SLACK)


def pages_left(conn: sqlite3.Connection, cap: int) -> int:
    """Pages a write may still take: free pages in the file plus room below the cap."""
    count = int(conn.execute("PRAGMA page_count").fetchone()[0])
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    return cap - count + free


def read_stats(conn: sqlite3.Connection, *, path: Path, max_bytes: int, cap: int) -> dict[str, Any]:
    """How full the store is, as ``StoreStats``'s fields (``STATS_FIELDS``, in order)."""
    row = conn.execute(
        "SELECT payload_bytes, entries, objects, tokens_before, tokens_after, tokens_saved FROM usage WHERE id = 1"
    ).fetchone()
    used, entries, objects, before, after, saved = (int(x) for x in row)
    left = pages_left(conn, cap)
    return {
        "backend": "sqlite",
        "path": str(path),
        "entries": entries,
        "objects": objects,
        "payload_bytes": used,
        "max_bytes": max_bytes,
        "full": used >= max_bytes or left < PUT_PAGES,
        "tokens_before": before,
        "tokens_after": after,
        "tokens_saved": saved,
        "basis": "inferred",
    }


def store_failure(what: str, path: Path, exc: sqlite3.Error) -> StoreError:
    """The error for SQLite's ``exc`` on the store at ``path``: ``DiskFull`` when its disk has no space left."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in (sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR) and disk_free(path) < DISK_FULL_BYTES:
        return DiskFull(
            f"{what} {path}: the disk holding it is full (no space left on the device; not the store's "
            f"byte budget); free some space: {exc}"
        )
    return StoreError(f"{what} {path}: {exc}{damage_hint(exc)}")


def damage_hint(exc: sqlite3.Error) -> str:
    """What to do when SQLite says the file is damaged; nothing for other errors."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB) or "malformed" in str(exc):
        return " (the file is damaged: 'ccr repair' salvages every record that is still readable)"
    return ""
