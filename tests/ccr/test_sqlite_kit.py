"""The SQLite kit on its own: any schema opens with the same rules, on real files.

The ccr store and the memory database are two schemas of it; here a small
test schema stands for any, and the two real ones check that each refuses
the other's file.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from ccr._migrations import SCHEMA as STORE
from ccr.errors import NotAStore, StoreError, UnsafeStorePath
from ccr.sqlite_kit.connect import BUSY_TIMEOUT_MS, open_read_only, open_writable
from ccr.sqlite_kit.migrations import Migration, Schema, check_tables, current_version, immediate
from compactor.memory._schema import SCHEMA as MEMORY

NOTES = Schema(
    noun="notes database",
    kind="notes store",
    marker="notes",
    migrations=(
        Migration(version=1, name="notes", statements=("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)",)),
        Migration(version=2, name="tags", statements=("ALTER TABLE notes ADD COLUMN tag TEXT",)),
    ),
)


def test_a_new_file_is_private_in_a_private_folder_in_wal_mode_and_migrated(tmp_path: Path) -> None:
    path = tmp_path / "new" / "notes.db"
    conn = open_writable(path, NOTES)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS == 5000
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert current_version(conn) == NOTES.version == 2
        conn.execute("INSERT INTO notes (text, tag) VALUES ('kept', 't')")
    finally:
        conn.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    again = open_writable(path, NOTES)
    try:
        assert again.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == 2
        assert again.execute("SELECT text FROM notes").fetchall() == [("kept",)]
    finally:
        again.close()


def test_a_file_of_an_older_schema_is_migrated_forward(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    first = Schema(noun=NOTES.noun, kind=NOTES.kind, marker=NOTES.marker, migrations=NOTES.migrations[:1])
    open_writable(path, first).close()
    conn = open_writable(path, NOTES)
    try:
        assert current_version(conn) == 2
        assert [c[1] for c in conn.execute("PRAGMA table_info(notes)")] == ["id", "text", "tag"]
    finally:
        conn.close()


def test_a_file_of_a_newer_schema_is_refused_for_writing_and_reading(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    open_writable(path, NOTES).close()
    raw = sqlite3.connect(path)
    with raw:
        raw.execute("INSERT INTO schema_migrations VALUES (3, 'future', 'later')")
    raw.close()
    for opening in (open_writable, open_read_only):
        with pytest.raises(
            StoreError, match=r"notes database .* has schema version 3, newer than this code knows \(2\)"
        ):
            opening(path, NOTES)


def test_each_schema_refuses_the_other_ones_file_and_leaves_it_unchanged(tmp_path: Path) -> None:
    store, memory = tmp_path / "ccr.db", tmp_path / "memory.db"
    open_writable(store, STORE).close()
    open_writable(memory, MEMORY).close()
    for path, wrong in ((store, MEMORY), (memory, STORE), (store, NOTES)):
        before = path.read_bytes()
        for opening in (open_writable, open_read_only):
            with pytest.raises(NotAStore, match=f"not a {wrong.kind}; left unchanged"):
                opening(path, wrong)
        assert path.read_bytes() == before


def test_a_file_that_is_not_sqlite_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"just some notes\n")
    for opening in (open_writable, open_read_only):
        with pytest.raises(NotAStore):
            opening(path, NOTES)
    assert path.read_bytes() == b"just some notes\n"


def test_symlinks_and_non_regular_files_are_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.db"
    link = tmp_path / "link.db"
    link.symlink_to(real)
    with pytest.raises(UnsafeStorePath):
        open_writable(link, NOTES)
    assert not real.exists()
    fifo = tmp_path / "fifo.db"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeStorePath):
        open_writable(fifo, NOTES)
    path = tmp_path / "notes.db"
    open_writable(path, NOTES).close()
    (tmp_path / "notes.db-wal").symlink_to(tmp_path / "elsewhere")
    for opening in (open_writable, open_read_only):
        with pytest.raises(UnsafeStorePath):
            opening(path, NOTES)


def test_reading_only_reports_the_version_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    writer = open_writable(path, NOTES)
    writer.execute("INSERT INTO notes (text) VALUES ('kept')")
    writer.close()
    before = path.read_bytes()
    conn, version = open_read_only(path, NOTES)
    try:
        assert version == 2
        assert conn.execute("SELECT text FROM notes").fetchall() == [("kept",)]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("INSERT INTO notes (text) VALUES ('no')")
    finally:
        conn.close()
    assert path.read_bytes() == before


def test_an_sqlite_file_without_the_schema_reads_as_version_0(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("CREATE TABLE t (x)")
    raw.execute("DROP TABLE t")  # an SQLite file with its header written and no tables
    raw.close()
    conn, version = open_read_only(path, NOTES)
    conn.close()
    assert version == 0


def test_a_read_only_folder_is_read_as_immutable_when_no_wal_content_is_pending(
    tmp_path: Path, freeze: Callable[[Path], None]
) -> None:
    folder = tmp_path / "media"
    folder.mkdir()
    path = folder / "notes.db"
    writer = open_writable(path, NOTES)
    writer.execute("INSERT INTO notes (text) VALUES ('kept')")
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    writer.close()
    for sidecar in folder.glob("notes.db-*"):
        sidecar.unlink()
    freeze(folder)
    conn, version = open_read_only(path, NOTES)
    try:
        assert version == 2 and conn.execute("SELECT text FROM notes").fetchall() == [("kept",)]
    finally:
        conn.close()
    assert sorted(p.name for p in folder.iterdir()) == ["notes.db"]


def test_pending_wal_content_that_cannot_be_read_is_refused(tmp_path: Path, freeze: Callable[[Path], None]) -> None:
    folder = tmp_path / "media"
    folder.mkdir()
    path = folder / "notes.db"
    writer = open_writable(path, NOTES)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("INSERT INTO notes (text) VALUES ('only in the log')")
    wal = path.with_name("notes.db-wal").read_bytes()
    shm = path.with_name("notes.db-shm")
    writer.close()  # the last connection checkpoints and removes the log: put it back as a crash leaves it
    path.with_name("notes.db-wal").write_bytes(wal)
    shm.unlink(missing_ok=True)
    freeze(folder)
    with pytest.raises(StoreError, match="write-ahead log is pending"):
        open_read_only(path, NOTES)


def test_check_tables_accepts_an_empty_database_and_its_own_schema_only(tmp_path: Path) -> None:
    conn = sqlite3.connect(":memory:")
    check_tables(conn, "x", NOTES)
    conn.execute("CREATE TABLE notes (id)")
    with pytest.raises(NotAStore):
        check_tables(conn, "x", NOTES)
    conn.execute("CREATE TABLE schema_migrations (version)")
    check_tables(conn, "x", NOTES)
    conn.close()


def test_a_write_transaction_commits_on_success_and_rolls_back_on_any_error(tmp_path: Path) -> None:
    conn = open_writable(tmp_path / "notes.db", NOTES)
    try:
        with immediate(conn):
            conn.execute("INSERT INTO notes (text) VALUES ('kept')")
        with pytest.raises(KeyError), immediate(conn):
            conn.execute("INSERT INTO notes (text) VALUES ('dropped')")
            raise KeyError("any error")
        assert not conn.in_transaction
        assert conn.execute("SELECT text FROM notes").fetchall() == [("kept",)]
    finally:
        conn.close()
