"""The memory database's tables, created and upgraded by numbered migrations.

``memories`` holds every version of every memory; ``postings`` and
``corpus`` are the recall index, and hold only current versions. The migrations run
through the recovery store's runner: each in one ``BEGIN IMMEDIATE``
transaction with the row that records it, re-checked inside that transaction,
retried on SQLITE_BUSY for up to 5 seconds when processes open a fresh file
at once.
"""

from __future__ import annotations

import sqlite3

from ccr._migrations import Migration
from ccr._migrations import apply_migrations as run_migrations
from memory.errors import NotAStore

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

    The recovery store's runner (``ccr._migrations.apply_migrations``) with this store's migrations.

    Raises:
        ccr.StoreError: the file was written by a newer version of this code.
        sqlite3.Error: SQLite failed (busy beyond the retry budget, I/O, ...).
    """
    return run_migrations(conn, MIGRATIONS)
