"""The memory database's tables, created and upgraded by numbered migrations.

``memories`` holds every version of every memory; ``postings`` and
``corpus`` are the recall index, and hold only current versions;
``recall_index`` records the stop words it was built with, so that a
database indexed with other stop words is reindexed when opened for writing
(``reindex_if_stale``). The migrations run
through the recovery store's runner: each in one ``BEGIN IMMEDIATE``
transaction with the row that records it, re-checked inside that transaction,
retried on SQLITE_BUSY for up to 5 seconds when processes open a fresh file
at once.
"""

from __future__ import annotations

import sqlite3

from ccr import Migration
from ccr import apply_migrations as run_migrations
from compactor.memory._bm25 import STOP_WORDS_SIGNATURE, term_counts
from compactor.memory.errors import NotAStore

__all__ = ["MIGRATIONS", "apply_migrations", "check_is_memory_store", "index_is_current", "reindex_if_stale"]

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
    Migration(
        version=2,
        name="the stop words the recall index was built with",
        statements=(
            """CREATE TABLE recall_index (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                stop_words TEXT NOT NULL
            )""",
            "INSERT INTO recall_index VALUES (1, '')",  # built with version 1's list: rebuilt on opening
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


def index_is_current(conn: sqlite3.Connection) -> bool:
    """Whether the recall index was built with today's stop words (the schema up to date)."""
    row = conn.execute("SELECT stop_words FROM recall_index WHERE id = 1").fetchone()
    return row is not None and row[0] == STOP_WORDS_SIGNATURE


def reindex_if_stale(conn: sqlite3.Connection) -> bool:
    """Rebuild the recall index from the current memories if it was built with other stop words.

    One ``BEGIN IMMEDIATE`` transaction, re-checked inside it, so processes
    opening the file at once rebuild it once. Returns whether it rebuilt.

    Raises:
        sqlite3.Error: SQLite failed (busy, I/O, ...).
    """
    if index_is_current(conn):
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        if index_is_current(conn):
            conn.execute("COMMIT")
            return False
        conn.execute("DELETE FROM postings")
        docs = total = 0
        for mid, text in conn.execute("SELECT id, text FROM memories WHERE valid_until IS NULL").fetchall():
            counts, length = term_counts(text)
            docs += 1
            total += length
            conn.executemany(
                "INSERT INTO postings (term, id, tf, length) VALUES (?, ?, ?, ?)",
                [(term, mid, tf, length) for term, tf in counts.items()],
            )
        conn.execute("UPDATE corpus SET docs = ?, total_length = ? WHERE id = 1", (docs, total))
        conn.execute("UPDATE recall_index SET stop_words = ? WHERE id = 1", (STOP_WORDS_SIGNATURE,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return True
