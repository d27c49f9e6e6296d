"""The memory database's tables, created and upgraded by numbered migrations.

``memories`` holds every version of every memory; ``postings`` and
``corpus`` are the recall index, and hold only current versions;
``recall_index`` records the stop words it was built with, so that a
database indexed with other stop words is reindexed when opened for writing
(``reindex_if_stale``). The migrations run through the SQLite kit's runner
(``ccr.sqlite_kit.migrations``): each in one ``BEGIN IMMEDIATE`` transaction
with the row that records it, re-checked inside that transaction, retried
on SQLITE_BUSY for up to 5 seconds when processes open a fresh file at once.
"""

from __future__ import annotations

import sqlite3

from ccr.sqlite_kit.migrations import Migration, Schema, immediate
from compactor.memory import _index
from compactor.memory._bm25 import STOP_WORDS_SIGNATURE

__all__ = ["MIGRATIONS", "SCHEMA", "index_is_current", "reindex_if_stale"]

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

SCHEMA = Schema(noun="memory database", kind="memory store", marker="memories", migrations=MIGRATIONS)
"""The memory database, as the kit opens it: a file holding ``schema_migrations`` and ``memories``."""


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
    with immediate(conn):
        if index_is_current(conn):
            return False
        conn.execute("DELETE FROM postings")
        conn.execute("UPDATE corpus SET docs = 0, total_length = 0 WHERE id = 1")
        _index.add(conn, conn.execute("SELECT id, text FROM memories WHERE valid_until IS NULL").fetchall())
        conn.execute("UPDATE recall_index SET stop_words = ? WHERE id = 1", (STOP_WORDS_SIGNATURE,))
    return True
