"""Numbered schema migrations for the SQLite store.

Each migration runs in one ``BEGIN IMMEDIATE`` transaction together with the
row that records it, so a crash leaves it either fully applied or not at all.
Many processes may open a fresh file at once: each one re-checks the recorded
versions inside its write transaction, and ``apply_migrations`` retries on
SQLITE_BUSY for up to ``MIGRATION_RETRY_SECONDS``.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from ccr.errors import NotAStore, StoreError

__all__ = [
    "MIGRATIONS",
    "MIGRATION_RETRY_SECONDS",
    "Migration",
    "apply_migrations",
    "check_is_store",
    "current_version",
    "is_busy",
    "retry_busy",
]

MIGRATION_RETRY_SECONDS = 5.0

T = TypeVar("T")


@dataclass(frozen=True)
class Migration:
    """One numbered step of the schema (a plain dataclass: opening a store to read it needs no pydantic)."""

    version: int
    name: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        version=1,
        name="blobs, typed objects and usage totals",
        statements=(
            """CREATE TABLE blobs (
                handle TEXT PRIMARY KEY,
                content_type TEXT NOT NULL,
                producer TEXT NOT NULL,
                tokens_before INTEGER,
                tokens_after INTEGER,
                metadata TEXT,
                created_at TEXT NOT NULL,
                size INTEGER NOT NULL,
                data BLOB NOT NULL
            )""",
            """CREATE TABLE objects (
                id TEXT PRIMARY KEY,
                type TEXT NOT NULL,
                session_id TEXT NOT NULL,
                source TEXT NOT NULL,
                repo_state TEXT NOT NULL,
                content_hash TEXT NOT NULL,
                currentness TEXT NOT NULL DEFAULT 'current',
                lifecycle TEXT NOT NULL DEFAULT 'hot',
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                size INTEGER NOT NULL,
                content BLOB NOT NULL
            )""",
            """CREATE TABLE usage (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                payload_bytes INTEGER NOT NULL,
                entries INTEGER NOT NULL,
                objects INTEGER NOT NULL,
                tokens_before INTEGER NOT NULL,
                tokens_after INTEGER NOT NULL,
                tokens_saved INTEGER NOT NULL
            )""",
            "INSERT INTO usage VALUES (1, 0, 0, 0, 0, 0, 0)",
            """CREATE TRIGGER blobs_usage AFTER INSERT ON blobs BEGIN
                UPDATE usage SET
                    payload_bytes = payload_bytes + NEW.size,
                    entries = entries + 1,
                    tokens_before = tokens_before + coalesce(NEW.tokens_before, 0),
                    tokens_after = tokens_after + coalesce(NEW.tokens_after, 0),
                    tokens_saved = tokens_saved + CASE
                        WHEN NEW.tokens_before IS NULL OR NEW.tokens_after IS NULL THEN 0
                        ELSE NEW.tokens_before - NEW.tokens_after END
                WHERE id = 1;
            END""",
            """CREATE TRIGGER objects_usage AFTER INSERT ON objects BEGIN
                UPDATE usage SET
                    payload_bytes = payload_bytes + NEW.size,
                    objects = objects + 1
                WHERE id = 1;
            END""",
        ),
    ),
    Migration(
        version=2,
        name="session and kind columns for listing; usage follows deletes and heals",
        statements=(
            # Virtual columns read what producers already record in the metadata
            # (the hooks pass session_id, every span its kind): nothing to backfill,
            # and a record's stored row keeps the shape version 1 gave it.
            "ALTER TABLE blobs ADD COLUMN session_id TEXT"
            " GENERATED ALWAYS AS (json_extract(metadata, '$.session_id')) VIRTUAL",
            "ALTER TABLE blobs ADD COLUMN kind TEXT"
            " GENERATED ALWAYS AS (json_extract(metadata, '$.kind')) VIRTUAL",
            "CREATE INDEX blobs_session ON blobs (session_id)",
            "CREATE INDEX blobs_created ON blobs (created_at)",
            """CREATE TRIGGER blobs_usage_delete AFTER DELETE ON blobs BEGIN
                UPDATE usage SET
                    payload_bytes = payload_bytes - OLD.size,
                    entries = entries - 1,
                    tokens_before = tokens_before - coalesce(OLD.tokens_before, 0),
                    tokens_after = tokens_after - coalesce(OLD.tokens_after, 0),
                    tokens_saved = tokens_saved - CASE
                        WHEN OLD.tokens_before IS NULL OR OLD.tokens_after IS NULL THEN 0
                        ELSE OLD.tokens_before - OLD.tokens_after END
                WHERE id = 1;
            END""",
            """CREATE TRIGGER blobs_usage_heal AFTER UPDATE OF size ON blobs BEGIN
                UPDATE usage SET payload_bytes = payload_bytes + NEW.size - OLD.size WHERE id = 1;
            END""",
            """CREATE TRIGGER objects_usage_delete AFTER DELETE ON objects BEGIN
                UPDATE usage SET
                    payload_bytes = payload_bytes - OLD.size,
                    objects = objects - 1
                WHERE id = 1;
            END""",
        ),
    ),
)

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


def apply_migrations(conn: sqlite3.Connection, migrations: Sequence[Migration] | None = None) -> int:
    """Bring the schema up to date; return the resulting version.

    The connection must be in autocommit mode (``isolation_level=None``).
    An up-to-date store costs one read; only a stale one takes write locks.
    ``migrations`` are the store's own (``MIGRATIONS``) unless given; the memory store passes its own.

    Raises:
        StoreError: the file was written by a newer version of this code.
        sqlite3.Error: SQLite failed (busy beyond the retry budget, I/O, ...).
    """
    migrations = MIGRATIONS if migrations is None else migrations
    known = max(m.version for m in migrations)
    version = retry_busy(lambda: current_version(conn))
    if version < known:
        for migration in migrations:
            retry_busy(lambda m=migration: _run_in_transaction(conn, lambda: _apply_one(conn, m)))  # type: ignore[misc]
        version = retry_busy(lambda: current_version(conn))
    if version > known:
        raise StoreError(f"store schema version {version} is newer than this code knows ({known})")
    return version


def check_is_store(conn: sqlite3.Connection, path: object) -> None:
    """Refuse a database that holds tables but is not a ccr store.

    An empty database becomes a store; one with tables must have the store's
    own (migrations run in one transaction, so a store has all or none).
    Checked before anything is written, so another program's database is
    never given our tables or switched to WAL.

    Raises:
        NotAStore: the database holds tables and they are not a ccr store's.
        sqlite3.Error: SQLite failed (busy, not a database, ...).
    """
    tables = {
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }
    if tables and not {"schema_migrations", "blobs"} <= tables:
        raise NotAStore(f"{path} is an SQLite database but not a ccr store; left unchanged")


def current_version(conn: sqlite3.Connection) -> int:
    """The highest migration recorded in the file (0 for a file without the store's tables)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not exists:
        return 0
    return int(conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()[0])


def _apply_one(conn: sqlite3.Connection, migration: Migration) -> None:
    conn.execute(_BOOKKEEPING)
    done = conn.execute(
        "SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)
    ).fetchone()
    if done:
        return
    for statement in migration.statements:
        conn.execute(statement)
    conn.execute(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
        (migration.version, migration.name, datetime.now(UTC).isoformat()),
    )


def _run_in_transaction(conn: sqlite3.Connection, body: Callable[[], object]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        body()
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")

