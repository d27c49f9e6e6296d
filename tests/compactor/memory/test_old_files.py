"""A memory database written before the shared SQLite kit opens, migrates and recalls as before.

The schema here is literal SQL, copied from the migrations as they were when
the kit replaced the memory store's own opener: importing today's migrations
would follow any change to them and could not catch it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from compactor.memory import memory_id, open_memory
from compactor.memory.errors import StoreError

SchemaOf = Callable[[Path], tuple[list[tuple[str, str]], list[int]]]

OLD_V1 = (
    """CREATE TABLE memories (
        id TEXT PRIMARY KEY, text TEXT NOT NULL, created_at TEXT NOT NULL, valid_from TEXT NOT NULL,
        valid_until TEXT, supersedes TEXT, superseded_by TEXT
    )""",
    """CREATE TABLE postings (
        term TEXT NOT NULL, id TEXT NOT NULL, tf INTEGER NOT NULL, length INTEGER NOT NULL, PRIMARY KEY (term, id)
    ) WITHOUT ROWID""",
    "CREATE TABLE corpus (id INTEGER PRIMARY KEY CHECK (id = 1), docs INTEGER NOT NULL, total_length INTEGER NOT NULL)",
    "INSERT INTO corpus VALUES (1, 0, 0)",
)
OLD_V2 = (
    "CREATE TABLE recall_index (id INTEGER PRIMARY KEY CHECK (id = 1), stop_words TEXT NOT NULL)",
    "INSERT INTO recall_index VALUES (1, '')",
)
TEXTS = ("The deploy key is in the vault under infra/deploy", "Payments retries use exponential backoff")
STAMP = "2026-01-01T00:00:00+00:00"


def write_old_database(path: Path, *, versions: int) -> None:
    """A memory database as the code before the kit left it at schema ``versions``, its index not built."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("PRAGMA journal_mode = WAL")
    raw.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for version, statements in ((1, OLD_V1), (2, OLD_V2))[:versions]:
        for statement in statements:
            raw.execute(statement)
        raw.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)", (version, f"v{version}", STAMP))
    raw.executemany(
        "INSERT INTO memories VALUES (?, ?, ?, ?, NULL, NULL, NULL)",
        [(memory_id(text), text, STAMP, STAMP) for text in TEXTS],
    )
    raw.close()
    path.chmod(0o600)


@pytest.mark.parametrize("versions", [1, 2])
def test_an_old_database_is_brought_up_to_version_2_and_reindexed_on_opening(
    tmp_path: Path, versions: int, schema_of: SchemaOf
) -> None:
    path = tmp_path / "home" / "memory.db"
    write_old_database(path, versions=versions)
    with open_memory(path, recovery=tmp_path / "ccr.db") as db:
        assert [hit.id for hit in db.recall("deploy key")] == [memory_id(TEXTS[0])]
    current = tmp_path / "current.db"
    write_old_database(current, versions=2)
    objects, recorded = schema_of(path)
    assert recorded == [1, 2]
    assert objects == schema_of(current)[0]
    with open_memory(path, readonly=True) as reader:
        assert [hit.id for hit in reader.recall("exponential backoff")] == [memory_id(TEXTS[1])]


def test_an_old_database_read_only_is_refused_with_the_command_that_upgrades_it(tmp_path: Path) -> None:
    for versions, reason in ((1, "older than this code's"), (2, "other stop words")):
        path = tmp_path / f"v{versions}.db"
        write_old_database(path, versions=versions)
        before = path.read_bytes()
        with pytest.raises(StoreError, match=reason) as caught:
            open_memory(path, readonly=True)
        assert caught.value.error_id == "store_error" and "memory remember" in str(caught.value)
        assert path.read_bytes() == before
