"""The memory database's tables, created and upgraded by numbered migrations.

``memories`` holds every version of every memory; ``postings`` and
``corpus`` are the recall index, and hold only current versions. Pending
migrations run in one ``BEGIN IMMEDIATE`` transaction together with the rows
that record them; processes opening a fresh file at once retry on SQLITE_BUSY
for up to 5 seconds (``ccr._migrations.retry_busy``), and each re-checks the
recorded version inside its own write transaction.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from ccr._migrations import Migration, retry_busy
from memory.errors import NotAStore, StoreError

__all__ = ["MIGRATIONS", "apply_migrations", "check_is_memory_store"]

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        version=1,
        name="memories with their version links, and the recall index",
        statements=(
            """CREATE TABLE memories (
                id TEXT PRIMARY KEY,
                text TEXT NOT NULL,
                created_at TEXT NOT NULL,
                valid_from TEXT NOT NULL,
                valid_until TEXT,
                supersedes TEXT,
                superseded_by TEXT
            )""",
            """CREATE TABLE postings (
                term TEXT NOT NULL,
                id TEXT NOT NULL,
                tf INTEGER NOT NULL,
                length INTEGER NOT NULL,
                PRIMARY KEY (term, id)
            ) WITHOUT ROWID""",
            """CREATE TABLE corpus (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                docs INTEGER NOT NULL,
                total_length INTEGER NOT NULL
            )""",
            "INSERT INTO corpus VALUES (1, 0, 0)",
        ),
    ),
)

_BOOKKEEPING = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)"""

_LATEST = max(m.version for m in MIGRATIONS)


def check_is_memory_store(conn: sqlite3.Connection, path: object) -> None:
    """Refuse a database that holds tables but not a memory store's, before anything is written.

    Raises:
        NotAStore: the database holds tables and they are not a memory store's.
        sqlite3.Error: SQLite failed (busy, not a database, ...).
    """
    tables = {
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }
    if tables and not {"schema_migrations", "memories"} <= tables:
        raise NotAStore(f"{path} is an SQLite database but not a memory store; left unchanged")


def apply_migrations(conn: sqlite3.Connection) -> int:
    """Bring the schema up to date (the connection in autocommit mode); return its version.

    Raises:
        StoreError: the file was written by a newer version of this code.
        sqlite3.Error: SQLite failed (busy beyond the retry budget, I/O, ...).
    """
    version = retry_busy(lambda: _version(conn))
    if version < _LATEST:
        retry_busy(lambda: _migrate(conn))
        version = retry_busy(lambda: _version(conn))
    if version > _LATEST:
        raise StoreError(f"memory schema version {version} is newer than this code knows ({_LATEST})")
    return version


def _version(conn: sqlite3.Connection) -> int:
    if not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone():
        return 0
    return int(conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()[0])


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(_BOOKKEEPING)
        done = _version(conn)
        for migration in MIGRATIONS:
            if migration.version <= done:
                continue
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, datetime.now(UTC).isoformat()),
            )
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
