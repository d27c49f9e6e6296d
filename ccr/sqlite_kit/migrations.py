"""A database's schema: what makes a file one of ours, its numbered migrations, and write transactions.

Each migration runs in one ``BEGIN IMMEDIATE`` transaction together with the
row of ``schema_migrations`` that records it, so a crash leaves it either
fully applied or not at all. Many processes may open a fresh file at once:
each one re-checks the recorded versions inside its write transaction, and
``apply_migrations`` retries on SQLITE_BUSY for up to
``MIGRATION_RETRY_SECONDS``. The version of a file is the highest migration
it records (``current_version``).
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from ccr.root_errors import NotAStore, StoreError

__all__ = [
    "MIGRATION_RETRY_SECONDS",
    "Migration",
    "Schema",
    "apply_migrations",
    "check_tables",
    "current_version",
    "immediate",
    "is_busy",
    "newer_schema",
    "retry_busy",
]

MIGRATION_RETRY_SECONDS = 5.0

T = TypeVar("T")


@dataclass(frozen=True)
class Migration:
    """One numbered step of a schema (a plain dataclass: opening a file to read it needs no pydantic)."""

    version: int
    name: str
    statements: tuple[str, ...]


@dataclass(frozen=True)
class Schema:
    """One kind of database: how messages name it, the table that marks it, and its migrations.

    ``noun`` names a file of this kind in messages ("store", "memory
    database"); ``kind`` says what a foreign database is not ("ccr store");
    a file is of this kind when it holds ``schema_migrations`` and ``marker``.
    ``migrations`` are numbered from 1 without gaps.
    """

    noun: str
    kind: str
    marker: str
    migrations: tuple[Migration, ...]

    @property
    def version(self) -> int:
        """The newest version this code knows."""
        return max(m.version for m in self.migrations)


_BOOKKEEPING = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)"""


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether SQLite refused because another connection holds a lock."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def retry_busy(action: Callable[[], T], *, seconds: float = MIGRATION_RETRY_SECONDS) -> T:
    """Run ``action``, retrying with jittered backoff while SQLite reports busy.

    Raises:
        sqlite3.Error: the last busy error once ``seconds`` have passed, or any other error.
    """
    deadline = time.monotonic() + seconds
    delay = 0.002
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(min(delay * (0.5 + random.random()), max(0.0, deadline - time.monotonic())))
        delay = min(delay * 2, 0.1)


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One ``BEGIN IMMEDIATE`` transaction (autocommit connection): committed on success, rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def check_tables(conn: sqlite3.Connection, path: object, schema: Schema) -> None:
    """Refuse a database that holds tables but is not of ``schema``'s kind.

    An empty database may become one; one with tables must have the schema's
    own (migrations run in one transaction, so a file has all or none).
    Checked before anything is written, so another program's database is
    never given our tables or switched to WAL.

    Raises:
        NotAStore: the database holds tables and they are not ``schema``'s.
        sqlite3.Error: SQLite failed (busy, not a database, ...).
    """
    tables = {
        name
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    }
    if tables and not {"schema_migrations", schema.marker} <= tables:
        raise NotAStore(f"{path} is an SQLite database but not a {schema.kind}; left unchanged")


def current_version(conn: sqlite3.Connection) -> int:
    """The highest migration recorded in the file (0 for a file without ``schema_migrations``)."""
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").fetchone()
    if not exists:
        return 0
    return int(conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()[0])


def newer_schema(schema: Schema, path: object, version: int) -> StoreError:
    """The error for a file at ``version``, written by a newer version of this code than ``schema`` knows."""
    return StoreError(
        f"{schema.noun} {path} has schema version {version}, newer than this code knows ({schema.version})"
    )


def apply_migrations(conn: sqlite3.Connection, schema: Schema, path: object) -> int:
    """Bring the file at ``path`` up to ``schema``'s version; return the resulting version.

    The connection must be in autocommit mode (``isolation_level=None``).
    An up-to-date file costs one read; only a stale one takes write locks.
    ``path`` only names the file in messages.

    Raises:
        StoreError: the file was written by a newer version of this code.
        sqlite3.Error: SQLite failed (busy beyond the retry budget, I/O, ...).
    """
    version = retry_busy(lambda: current_version(conn))
    if version < schema.version:
        for migration in schema.migrations:
            retry_busy(lambda m=migration: _apply_one(conn, m))  # type: ignore[misc]
        version = retry_busy(lambda: current_version(conn))
    if version > schema.version:
        raise newer_schema(schema, path, version)
    return version


def _apply_one(conn: sqlite3.Connection, migration: Migration) -> None:
    """Apply ``migration`` in its own write transaction, unless the file records it already."""
    with immediate(conn):
        conn.execute(_BOOKKEEPING)
        done = conn.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)).fetchone()
        if done:
            return
        for statement in migration.statements:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (migration.version, migration.name, datetime.now(UTC).isoformat()),
        )
