"""Schema changes go through numbered migrations recorded in the same transaction."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ccr import NotAStore, StoreError, open_store
from ccr._migrations import MIGRATIONS, SCHEMA
from ccr.sqlite_kit.migrations import Migration, Schema, apply_migrations, is_busy, retry_busy


def test_a_fresh_store_records_every_migration_once(db_path: Path) -> None:
    open_store(db_path).close()
    open_store(db_path).close()
    raw = sqlite3.connect(db_path)
    versions = [v for (v,) in raw.execute("SELECT version FROM schema_migrations ORDER BY version")]
    mode = raw.execute("PRAGMA journal_mode").fetchone()[0]
    raw.close()
    assert versions == [m.version for m in MIGRATIONS]
    assert mode == "wal"


def test_migration_versions_are_numbered_from_one_without_gaps() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))


def test_the_store_schema_is_marked_by_its_blobs_table() -> None:
    assert (SCHEMA.marker, SCHEMA.migrations, SCHEMA.version) == ("blobs", MIGRATIONS, 3)


def test_a_failing_migration_leaves_no_trace(tmp_path: Path) -> None:
    broken = Migration(version=1, name="broken", statements=("CREATE TABLE t (x)", "NOT SQL"))
    schema = Schema(noun="test database", kind="test database", marker="t", migrations=(broken,))
    conn = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    with pytest.raises(sqlite3.OperationalError):
        apply_migrations(conn, schema, tmp_path / "m.db")
    tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert "t" not in tables
    assert "schema_migrations" not in tables


def test_a_store_from_a_newer_version_is_refused(db_path: Path) -> None:
    open_store(db_path).close()
    raw = sqlite3.connect(db_path)
    with raw:
        raw.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'later')")
    raw.close()
    with pytest.raises(StoreError, match="newer"):
        open_store(db_path)


def test_another_programs_database_is_refused_without_being_changed(db_path: Path) -> None:
    db_path.parent.mkdir()
    with sqlite3.connect(db_path) as conn:
        conn.execute("CREATE TABLE schema_migrations (version TEXT PRIMARY KEY)")
        conn.execute("INSERT INTO schema_migrations VALUES ('20240101120000')")
    conn.close()
    before = db_path.read_bytes()
    with pytest.raises(NotAStore):
        open_store(db_path)
    assert db_path.read_bytes() == before
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == [
            "schema_migrations",
            "sqlite_autoindex_schema_migrations_1",
        ]
    finally:
        conn.close()


def test_retry_gives_up_on_errors_that_are_not_busy() -> None:
    calls = []

    def fail() -> None:
        calls.append(1)
        raise sqlite3.OperationalError("no such table: x")

    with pytest.raises(sqlite3.OperationalError):
        retry_busy(fail)
    assert calls == [1]


def test_retry_repeats_while_the_database_is_busy() -> None:
    outcomes: list[Exception | None] = [sqlite3.OperationalError("database is locked")] * 3 + [None]

    def flaky() -> str:
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome
        return "done"

    assert retry_busy(flaky) == "done"
    assert outcomes == []


def test_busy_and_locked_are_recognised() -> None:
    assert is_busy(sqlite3.OperationalError("database is locked"))
    assert not is_busy(sqlite3.OperationalError("disk I/O error"))


def test_a_version_1_store_with_records_upgrades_and_lists_them_by_session(db_path: Path) -> None:
    import json
    from datetime import UTC, datetime

    from ccr import RecordFilter, handle_for

    db_path.parent.mkdir()
    raw = sqlite3.connect(db_path, isolation_level=None)
    raw.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for statement in MIGRATIONS[0].statements:  # the schema as version 1 left it
        raw.execute(statement)
    raw.execute("INSERT INTO schema_migrations VALUES (1, 'v1', ?)", (datetime.now(UTC).isoformat(),))
    for data, meta in (
        (b"kept", {"session_id": "s1", "kind": "head"}),
        (b"gone!", {"session_id": "s2", "kind": "message"}),
    ):
        raw.execute(
            "INSERT INTO blobs (handle, content_type, producer, metadata, created_at, size, data)"
            " VALUES (?, 'text/plain', 'old', ?, ?, ?, ?)",
            (handle_for(data), json.dumps(meta), datetime.now(UTC).isoformat(), len(data), data),
        )
    raw.close()
    kept, gone = handle_for(b"kept"), handle_for(b"gone!")
    with open_store(db_path) as store:
        assert [r.handle for r in store.records(RecordFilter(session_id="s1"))] == [kept]
        assert [r.handle for r in store.records(RecordFilter(kind="message"))] == [gone]
        store.delete([gone])
        stats = store.stats()
    assert (stats.entries, stats.payload_bytes) == (1, len(b"kept"))
