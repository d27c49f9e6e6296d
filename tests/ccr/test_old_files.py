"""A store file written before the shared SQLite kit opens, reads and stays as it was.

The schema here is literal SQL, copied from the migrations as they were when
the kit replaced ccr's own opener: a test that imported today's migrations
would follow any change to them and could not catch it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from ccr import RecordFilter, handle_for, open_store
from ccr.store import Store

SchemaOf = Callable[[Path], tuple[list[tuple[str, str]], list[int]]]

OLD_V1 = (
    """CREATE TABLE blobs (
        handle TEXT PRIMARY KEY, content_type TEXT NOT NULL, producer TEXT NOT NULL, tokens_before INTEGER,
        tokens_after INTEGER, metadata TEXT, created_at TEXT NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL
    )""",
    """CREATE TABLE objects (
        id TEXT PRIMARY KEY, type TEXT NOT NULL, session_id TEXT NOT NULL, source TEXT NOT NULL,
        repo_state TEXT NOT NULL, content_hash TEXT NOT NULL, currentness TEXT NOT NULL DEFAULT 'current',
        lifecycle TEXT NOT NULL DEFAULT 'hot', created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        size INTEGER NOT NULL, content BLOB NOT NULL
    )""",
    """CREATE TABLE usage (
        id INTEGER PRIMARY KEY CHECK (id = 1), payload_bytes INTEGER NOT NULL, entries INTEGER NOT NULL,
        objects INTEGER NOT NULL, tokens_before INTEGER NOT NULL, tokens_after INTEGER NOT NULL,
        tokens_saved INTEGER NOT NULL
    )""",
    "INSERT INTO usage VALUES (1, 0, 0, 0, 0, 0, 0)",
    """CREATE TRIGGER blobs_usage AFTER INSERT ON blobs BEGIN
        UPDATE usage SET payload_bytes = payload_bytes + NEW.size, entries = entries + 1,
            tokens_before = tokens_before + coalesce(NEW.tokens_before, 0),
            tokens_after = tokens_after + coalesce(NEW.tokens_after, 0),
            tokens_saved = tokens_saved + CASE WHEN NEW.tokens_before IS NULL OR NEW.tokens_after IS NULL THEN 0
                ELSE NEW.tokens_before - NEW.tokens_after END
        WHERE id = 1;
    END""",
    """CREATE TRIGGER objects_usage AFTER INSERT ON objects BEGIN
        UPDATE usage SET payload_bytes = payload_bytes + NEW.size, objects = objects + 1 WHERE id = 1;
    END""",
)
OLD_V2 = (
    "ALTER TABLE blobs ADD COLUMN session_id TEXT GENERATED ALWAYS AS (json_extract(metadata, '$.session_id')) VIRTUAL",
    "ALTER TABLE blobs ADD COLUMN kind TEXT GENERATED ALWAYS AS (json_extract(metadata, '$.kind')) VIRTUAL",
    "CREATE INDEX blobs_session ON blobs (session_id)",
    "CREATE INDEX blobs_created ON blobs (created_at)",
    """CREATE TRIGGER blobs_usage_delete AFTER DELETE ON blobs BEGIN
        UPDATE usage SET payload_bytes = payload_bytes - OLD.size, entries = entries - 1,
            tokens_before = tokens_before - coalesce(OLD.tokens_before, 0),
            tokens_after = tokens_after - coalesce(OLD.tokens_after, 0),
            tokens_saved = tokens_saved - CASE WHEN OLD.tokens_before IS NULL OR OLD.tokens_after IS NULL THEN 0
                ELSE OLD.tokens_before - OLD.tokens_after END
        WHERE id = 1;
    END""",
    """CREATE TRIGGER blobs_usage_heal AFTER UPDATE OF size ON blobs BEGIN
        UPDATE usage SET payload_bytes = payload_bytes + NEW.size - OLD.size WHERE id = 1;
    END""",
    """CREATE TRIGGER objects_usage_delete AFTER DELETE ON objects BEGIN
        UPDATE usage SET payload_bytes = payload_bytes - OLD.size, objects = objects - 1 WHERE id = 1;
    END""",
)
RECORDS = ((b"kept", {"session_id": "s1", "kind": "head"}), (b"other", {"session_id": "s2", "kind": "message"}))


def write_old_store(path: Path, *, versions: int) -> None:
    """A store as the code before the kit left it at schema ``versions`` (1 or 2), holding ``RECORDS``."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("PRAGMA journal_mode = WAL")
    raw.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at TEXT NOT NULL)"
    )
    for version, statements in ((1, OLD_V1), (2, OLD_V2))[:versions]:
        for statement in statements:
            raw.execute(statement)
        raw.execute(
            "INSERT INTO schema_migrations VALUES (?, ?, '2026-01-01T00:00:00+00:00')", (version, f"v{version}")
        )
    for data, meta in RECORDS:
        raw.execute(
            "INSERT INTO blobs (handle, content_type, producer, metadata, created_at, size, data)"
            " VALUES (?, 'text/plain', 'old', ?, '2026-01-01T00:00:00+00:00', ?, ?)",
            (handle_for(data), json.dumps(meta), len(data), data),
        )
    raw.close()
    path.chmod(0o600)


def check_records(store: Store) -> None:
    assert store.get(handle_for(b"kept")) == b"kept"
    assert [r.handle for r in store.records(RecordFilter(session_id="s1"))] == [handle_for(b"kept")]
    assert [r.handle for r in store.records(RecordFilter(kind="message"))] == [handle_for(b"other")]


def test_a_version_2_old_store_is_upgraded_to_version_3_keeping_its_records_and_counting_them(
    db_path: Path, schema_of: SchemaOf
) -> None:
    write_old_store(db_path, versions=2)
    with open_store(db_path) as store:
        check_records(store)
        assert store.stats().entries == 2
    _objects, versions = schema_of(db_path)
    assert versions == [1, 2, 3]
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT stored FROM acknowledged").fetchone() == (2,)  # what it held when upgraded
    conn.close()


def test_a_version_1_old_store_is_upgraded_to_the_current_version_as_before(db_path: Path, schema_of: SchemaOf) -> None:
    write_old_store(db_path, versions=1)
    with open_store(db_path) as store:
        check_records(store)
    upgraded = db_path.with_name("upgraded.db")
    write_old_store(upgraded, versions=2)
    open_store(upgraded).close()
    objects, versions = schema_of(db_path)
    assert versions == [1, 2, 3]
    assert objects == schema_of(upgraded)[0]


@pytest.mark.parametrize("versions", [1, 2])
def test_an_old_store_reads_read_only_without_being_changed(db_path: Path, versions: int, schema_of: SchemaOf) -> None:
    write_old_store(db_path, versions=versions)
    before = schema_of(db_path)
    with open_store(db_path, readonly=True) as store:
        check_records(store)
    assert schema_of(db_path) == before
