"""The SQLite backend: one WAL-mode file, one connection per store, durable commits.

Opening is the SQLite kit's (``ccr.sqlite_kit.connect``) with the store's
schema (``ccr._migrations``): the path validated, SQLite checked to have
opened the validated file, which is empty or a ccr store, WAL,
``busy_timeout`` 5000 ms, ``synchronous=FULL`` (a put that returned survives
a crash), the numbered migrations. The file is then capped with
``max_page_count`` as a second budget guard behind the logical check.
SQLite's "full" error is reported as ``BudgetExceeded``; every other SQLite
or OS error becomes ``StoreError``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ccr._acknowledged import acknowledge, acknowledged, stored_total
from ccr._base import BaseStore, BlobRow, ObjectRow
from ccr._migrations import SCHEMA
from ccr._sqlite_read import (
    DISK_FULL_BYTES,
    PUT_PAGES,
    damage_hint,
    disk_free,
    open_read_only,
    page_cap,
    pages_left,
    read_stats,
    store_failure,
)
from ccr.errors import BudgetExceeded, DamagedMetadata, HandleNotFound, InvalidRequest, StoreError
from ccr.handles import handle_for
from ccr.objects import Currentness, Lifecycle, StoredObject, canonical_json, content_hash, object_id
from ccr.records import Record, RecordFilter, StoreStats
from ccr.sqlite_kit.connect import BUSY_TIMEOUT_MS, open_writable
from ccr.sqlite_kit.files import check_readable_file, file_size
from ccr.sqlite_kit.migrations import apply_migrations, check_tables, immediate

__all__ = ["BUSY_TIMEOUT_MS", "SQLiteStore"]

_IN_CHUNK = 500

_RECORD_COLUMNS = "handle, content_type, producer, tokens_before, tokens_after, metadata, created_at, size"
_OBJECT_COLUMNS = (
    "id, type, session_id, source, repo_state, content_hash, currentness, lifecycle, created_at, updated_at, content"
)


class SQLiteStore(BaseStore):
    """A store in one SQLite file.

    ``page_cap`` overrides the ``max_page_count`` backstop (tests use it to
    reach SQLite's own "full" error); by default it allows twice the budget.
    """

    def __init__(self, path: Path, *, max_bytes: int, page_cap: int | None = None, readonly: bool = False) -> None:
        super().__init__(max_bytes=max_bytes)
        self.path = path
        self.readonly = readonly
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._page_cap = page_cap
        self._cap = 0
        self._session_col = "session_id"
        self._kind_col = "kind"
        self._conn: sqlite3.Connection | None = None
        self._absent = False
        self._cramped = False
        if readonly and file_size(path) == 0:
            # No store there yet: read as an empty one, made in memory, nothing created on
            # disk; once a writer makes the file, the next read opens it (``_session``).
            self._absent = True
            self._conn = _empty_store()
            self._cap = self._compute_cap(self._conn)
            return
        if readonly:
            self._open_read_only()
            return
        try:
            conn = open_writable(path, SCHEMA)
        except sqlite3.Error as exc:
            raise store_failure("cannot open store", path, exc) from exc
        self._conn = conn
        conn.text_factory = _lenient_text
        try:
            conn.execute("PRAGMA secure_delete = ON")  # a removed record leaves no bytes behind
            # SQLite never sets the cap below the file's size; keep what it actually set.
            self._cap = int(conn.execute(f"PRAGMA max_page_count = {self._compute_cap(conn)}").fetchone()[0])
        except sqlite3.Error as exc:
            self.close()
            raise store_failure("cannot open store", path, exc) from exc

    def _open_read_only(self) -> None:
        conn, version = open_read_only(self.path)
        try:
            cap = self._compute_cap(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise store_failure("cannot read store", self.path, exc) from exc
        conn.text_factory = _lenient_text
        self._conn, self._cap = conn, cap
        # Opened on a full disk, the file may be read as immutable, or with an exclusive lock
        # (``ccr.sqlite_kit.connect``): once there is room again, the next read opens it as usual.
        self._cramped = disk_free(self.path) < DISK_FULL_BYTES
        if version < 2:  # an older store, not upgraded on read-only media
            self._session_col = "json_extract(metadata, '$.session_id')"
            self._kind_col = "json_extract(metadata, '$.kind')"

    # -- public -------------------------------------------------------------------

    def stats(self) -> StoreStats:
        with self._session() as conn:
            return StoreStats(**read_stats(conn, path=self.path, max_bytes=self.max_bytes, cap=self._cap))

    def lost_writes(self) -> tuple[int, int] | None:
        """``(acknowledged, held)`` when the file holds fewer records ever stored than the count beside
        it acknowledged (``ccr._acknowledged``): committed writes were lost. None when nothing shows it.

        Raises:
            StoreError: the store could not be read.
        """
        acked = acknowledged(self.path)  # first: a write committing meanwhile can only raise what is read next
        if acked is None:
            return None
        with self._session() as conn:
            held = stored_total(conn)
        return (acked, held) if held is not None and held < acked else None

    def verify(self, progress: Callable[[int], object] | None = None) -> list[str]:
        bad: list[str] = []
        with self._session() as conn:
            for *row, data in conn.execute(f"SELECT {_RECORD_COLUMNS}, data FROM blobs ORDER BY rowid"):
                handle = row[0]
                if handle_for(bytes(data)) != handle or metadata_problem(tuple(row)) is not None:
                    bad.append(handle)
                if progress is not None:
                    progress(len(data))
            rows = conn.execute(
                "SELECT id, type, session_id, source, repo_state, content_hash, content FROM objects ORDER BY rowid"
            )
            for oid, kind, session, source, repo, digest, content in rows:
                if progress is not None:
                    progress(len(content))
                try:
                    actual = content_hash(json.loads(bytes(content)))
                except ValueError:
                    bad.append(oid)
                    continue
                if actual != digest or object_id(kind, session, source, repo, actual) != oid:
                    bad.append(oid)
        return bad

    def vacuum(self) -> int:
        """Rebuild the file without the space removed records left; return the bytes it shrank by.

        Raises:
            StoreError: the store is read-only, busy, or SQLite failed.
        """
        before = file_size(self.path)
        with self._session() as conn:
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return max(0, before - file_size(self.path))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None

    # -- primitives -----------------------------------------------------------------

    def _insert_blobs(self, rows: list[BlobRow]) -> None:
        total: int | None = None
        with self._session() as conn, immediate(conn):
            used = int(conn.execute("SELECT payload_bytes FROM usage WHERE id = 1").fetchone()[0])
            new = rows
            if used + sum(len(r.data) for r in rows) > self.max_bytes or self._pages_left(conn) < PUT_PAGES:
                # Only near the budget is it worth asking which rows are already stored.
                present = self._existing(conn, [r.handle for r in rows])
                new = [r for r in rows if r.handle not in present]
                self._refuse_over_budget(used, sum(len(r.data) for r in new))
                if new and self._pages_left(conn) < PUT_PAGES:
                    raise BudgetExceeded(f"store file {self.path} reached its page cap (nothing is ever evicted)")
            stamps = {at: _stamp(at) for at in {r.created_at for r in rows}}
            # A handle already stored keeps its record; only a copy whose bytes no longer
            # match (the given bytes hash to the handle, so the stored ones are corrupt) is
            # healed, even in a full store: healing adds no bytes.
            conn.executemany(
                "INSERT INTO blobs (handle, content_type, producer, tokens_before,"
                " tokens_after, metadata, created_at, size, data)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (handle) DO UPDATE SET data = excluded.data, size = excluded.size"
                " WHERE blobs.data IS NOT excluded.data OR blobs.size IS NOT excluded.size",
                [
                    (
                        r.handle,
                        r.content_type,
                        r.producer,
                        r.tokens_before,
                        r.tokens_after,
                        r.metadata,
                        stamps[r.created_at],
                        len(r.data),
                        r.data,
                    )
                    for r in rows
                ],
            )
            total = stored_total(conn)
        if total is not None:  # committed: the count beside the file may now say so
            acknowledge(self.path, total)

    def _load_blob(self, handle: str) -> bytes | None:
        with self._session() as conn:
            row = conn.execute("SELECT data FROM blobs WHERE handle = ?", (handle,)).fetchone()
        return None if row is None else bytes(row[0])

    def _load_record(self, handle: str) -> Record | None:
        with self._session() as conn:
            row = conn.execute(f"SELECT {_RECORD_COLUMNS} FROM blobs WHERE handle = ?", (handle,)).fetchone()
        return None if row is None else _records_from_rows([row])[0]

    def _list_records(self, where: RecordFilter) -> list[Record]:
        clauses: list[str] = []
        params: list[Any] = []
        if where.session_id is not None:
            clauses.append(f"{self._session_col} = ?")
            params.append(where.session_id)
        if where.kind is not None:
            clauses.append(f"{self._kind_col} = ?")
            params.append(where.kind)
        if where.producer is not None:
            clauses.append("(producer = ? OR substr(producer, 1, ?) = ?)")
            params += [where.producer, len(where.producer) + 1, where.producer + ":"]
        if where.since is not None:
            clauses.append("created_at >= ?")
            params.append(_stamp(where.since))
        if where.before is not None:
            clauses.append("created_at < ?")
            params.append(_stamp(where.before))
        sql = f"SELECT {_RECORD_COLUMNS} FROM blobs"
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        try:
            with self._session() as conn:
                rows = conn.execute(sql + " ORDER BY created_at, handle", params).fetchall()
        except StoreError as exc:
            if not clauses or "malformed JSON" not in str(exc):
                raise
            # A record's metadata no longer reads, so SQLite cannot filter on it: read them all here.
            with self._session() as conn:
                rows = conn.execute(f"SELECT {_RECORD_COLUMNS} FROM blobs ORDER BY created_at, handle").fetchall()
            return _records_from_rows(rows, where)
        return _records_from_rows(rows)

    def _object_ids(self) -> list[str]:
        with self._session() as conn:
            return [oid for (oid,) in conn.execute("SELECT id FROM objects ORDER BY created_at, id")]

    def _delete(self, handles: list[str], object_ids: list[str]) -> None:
        with self._session() as conn, immediate(conn):
            missing = sorted(set(handles) - self._existing(conn, handles))
            for oid in object_ids:
                if not conn.execute("SELECT 1 FROM objects WHERE id = ?", (oid,)).fetchone():
                    missing.append(oid)
            if missing:
                raise HandleNotFound(f"nothing removed: no record for {', '.join(missing)}")
            conn.executemany("DELETE FROM blobs WHERE handle = ?", [(h,) for h in handles])
            conn.executemany("DELETE FROM objects WHERE id = ?", [(o,) for o in object_ids])

    def _insert_object(self, row: ObjectRow) -> None:
        obj = row.obj
        total: int | None = None
        with self._session() as conn, immediate(conn):
            if conn.execute("SELECT 1 FROM objects WHERE id = ?", (obj.id,)).fetchone():
                return
            used = int(conn.execute("SELECT payload_bytes FROM usage WHERE id = 1").fetchone()[0])
            self._refuse_over_budget(used, len(row.content))
            conn.execute(
                f"INSERT INTO objects ({_OBJECT_COLUMNS}, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    obj.id,
                    obj.type,
                    obj.session_id,
                    obj.source,
                    obj.repo_state,
                    obj.content_hash,
                    obj.currentness,
                    obj.lifecycle,
                    obj.created_at.isoformat(),
                    obj.updated_at.isoformat(),
                    row.content,
                    len(row.content),
                ),
            )
            total = stored_total(conn)
        if total is not None:
            acknowledge(self.path, total)

    def _load_object(self, object_id: str) -> StoredObject | None:
        with self._session() as conn:
            row = conn.execute(f"SELECT {_OBJECT_COLUMNS} FROM objects WHERE id = ?", (object_id,)).fetchone()
        return None if row is None else _object_from_row(row)

    def _update_object_state(
        self,
        object_id: str,
        currentness: Currentness | None,
        lifecycle: Lifecycle | None,
        stamp: datetime,
    ) -> StoredObject | None:
        with self._session() as conn, immediate(conn):
            conn.execute(
                "UPDATE objects SET currentness = coalesce(?, currentness),"
                " lifecycle = coalesce(?, lifecycle), updated_at = ? WHERE id = ?",
                (currentness, lifecycle, stamp.isoformat(), object_id),
            )
            row = conn.execute(f"SELECT {_OBJECT_COLUMNS} FROM objects WHERE id = ?", (object_id,)).fetchone()
        return None if row is None else _object_from_row(row)

    # -- helpers ----------------------------------------------------------------------

    @contextmanager
    def _session(self) -> Iterator[sqlite3.Connection]:
        """The connection under the lock, with SQLite errors translated.

        Raises:
            StoreError: the store is closed, was opened by another process, or SQLite failed.
            BudgetExceeded: SQLite reported the file full (the page cap).
        """
        with self._lock:
            if self._conn is None:
                raise StoreError("the store is closed")
            if os.getpid() != self._pid:
                raise StoreError("the store was opened in another process; open it again here")
            if (self._absent and file_size(self.path) > 0) or (  # a writer made the store meanwhile,
                self._cramped and disk_free(self.path) >= DISK_FULL_BYTES  # or the disk has room again
            ):
                self._conn.close()  # first: an exclusive reader's lock would keep the new one out
                self._conn = None
                try:
                    self._open_read_only()
                except BaseException:
                    if self._absent:
                        self._conn = _empty_store()
                    raise
                self._absent = False
            assert self._conn is not None
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise _translate(exc, self.path) from exc

    def _compute_cap(self, conn: sqlite3.Connection) -> int:
        return int(self._page_cap) if self._page_cap is not None else page_cap(conn, self.max_bytes)

    def _pages_left(self, conn: sqlite3.Connection) -> int:
        return pages_left(conn, self._cap)

    @staticmethod
    def _existing(conn: sqlite3.Connection, handles: list[str]) -> set[str]:
        found: set[str] = set()
        for i in range(0, len(handles), _IN_CHUNK):
            chunk = handles[i : i + _IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(h for (h,) in conn.execute(f"SELECT handle FROM blobs WHERE handle IN ({marks})", chunk))
        return found


def delete_in_place(path: Path, refs: list[str]) -> list[str]:
    """Remove records from a store whose disk is full, changing the file in place: it never grows.

    The usual way needs room (the write-ahead log and its index); here the
    file is opened alone (``locking_mode = EXCLUSIVE``, no index file) with
    the rollback journal in memory, the removed records' pages are zeroed
    and freed inside the file, and the file is put back in WAL mode. All or
    nothing, as ``Store.delete``; a crash in the middle of this one commit
    could damage the file (``ccr repair`` salvages it), which is why it is
    only the fallback for a full disk.

    Raises:
        InvalidHandle: a reference has no accepted shape, or selects a field.
        HandleNotFound: a reference names nothing stored; nothing was removed.
        StoreError: the store could not be read or written.
    """
    from ccr.errors import InvalidHandle
    from ccr.handles import parse_ref

    blobs: list[str] = []
    objects: list[str] = []
    for ref in refs:
        parsed = parse_ref(ref)
        if parsed.path:
            raise InvalidHandle(f"{ref!r} selects a field; remove the whole record by its handle")
        target = blobs if parsed.kind == "blob" else objects
        if parsed.handle not in target:
            target.append(parsed.handle)
    check_readable_file(path)
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.Error as exc:
        raise store_failure("cannot open store", path, exc) from exc
    try:
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("PRAGMA journal_mode = MEMORY")
        conn.execute("PRAGMA secure_delete = ON")
        check_tables(conn, path, SCHEMA)
        with immediate(conn):
            missing = sorted(set(blobs) - SQLiteStore._existing(conn, blobs))
            missing += [o for o in objects if not conn.execute("SELECT 1 FROM objects WHERE id = ?", (o,)).fetchone()]
            if missing:
                raise HandleNotFound(f"nothing removed: no record for {', '.join(missing)}")
            conn.executemany("DELETE FROM blobs WHERE handle = ?", [(h,) for h in blobs])
            conn.executemany("DELETE FROM objects WHERE id = ?", [(o,) for o in objects])
        conn.execute("PRAGMA journal_mode = WAL")
    except sqlite3.Error as exc:
        raise store_failure("cannot remove from store", path, exc) from exc
    finally:
        conn.close()
    return [*blobs, *objects]


def _empty_store() -> sqlite3.Connection:
    """An empty store in memory that only reads: what a store file that does not exist yet reads as."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    apply_migrations(conn, SCHEMA, ":memory:")
    conn.execute("PRAGMA query_only = ON")
    return conn


def _stamp(at: datetime) -> str:
    """A timestamp as stored: ISO 8601 in UTC, so stored stamps sort as text."""
    return at.astimezone(UTC).isoformat() if at.tzinfo is not None else at.isoformat()


def _records_from_rows(rows: list[tuple[Any, ...]], where: RecordFilter | None = None) -> list[Record]:
    """The records of ``rows`` (those ``where`` matches, when given).

    Raises:
        DamagedMetadata: a row's metadata no longer reads; it names them all and holds the rest.
    """
    records: list[Record] = []
    damaged: list[str] = []
    for row in rows:
        record = _record_from_row(row)
        if record is None:
            damaged.append(str(row[0]))
        elif where is None or where.matches(record):
            records.append(record)
    if damaged:
        raise DamagedMetadata(
            f"the metadata of {len(damaged)} record(s) is damaged: {', '.join(damaged)}; "
            "'ccr repair' rebuilds the store keeping every record whose bytes still match its handle",
            handles=damaged,
            readable=records,
        )
    return records


def _record_from_row(row: tuple[Any, ...]) -> Record | None:
    """The record a row holds; None when its metadata no longer reads (``metadata_problem``)."""
    if metadata_problem(row) is not None:
        return None
    handle, content_type, producer, before, after, metadata, created, size = row
    return Record(
        handle=handle,
        size=size,
        content_type=content_type,
        producer=producer,
        tokens_before=before,
        tokens_after=after,
        metadata=None if metadata is None else json.loads(metadata),
        created_at=datetime.fromisoformat(created),
    )


def metadata_problem(row: tuple[Any, ...]) -> str | None:
    """What is wrong with a stored row's metadata (``_RECORD_COLUMNS``), or None when it reads as written.

    Metadata is written as canonical JSON (``ccr.objects.canonical_json``), so a
    value that no longer is canonical JSON of an object was changed on disk; a
    change that leaves it canonical (one letter for another inside a value)
    cannot be told from what was written.
    """
    handle, content_type, producer, before, after, metadata, created, size = row
    if not all(isinstance(v, str) and _is_utf8(v) for v in (handle, content_type, producer)):
        return "a text field is not text"
    if not all(v is None or (isinstance(v, int) and v >= 0) for v in (before, after)):
        return "a token count is not a count"
    if not isinstance(size, int) or size < 0:
        return "its size is not a count"
    try:
        datetime.fromisoformat(created)
    except (TypeError, ValueError):
        return "its creation time does not read"
    if metadata is None:
        return None
    try:
        value = json.loads(metadata)
    except (TypeError, ValueError, RecursionError):
        return "its metadata is not JSON"
    if not isinstance(value, dict):
        return "its metadata is not a JSON object"
    try:
        if canonical_json(value).decode("utf-8") != metadata and not _written_otherwise(value, metadata):
            return "its metadata is not as it was written"
    except (InvalidRequest, ValueError):  # NaN, a lone surrogate: never written so
        return "its metadata is not as it was written"
    return None


def _written_otherwise(value: Any, metadata: str) -> bool:
    """Whether ``metadata`` is ``value`` as ``json.dumps`` writes it in another usual form (a store
    written by other code, or before metadata was canonical)."""
    return any(
        json.dumps(value, sort_keys=keys, ensure_ascii=ascii_, separators=separators) == metadata
        for keys in (False, True)
        for ascii_ in (True, False)
        for separators in ((", ", ": "), (",", ":"))
    )


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _lenient_text(raw: bytes) -> str:
    """A text column as Python reads it: a damaged byte that is not UTF-8 reads as a lone surrogate.

    SQLite's default would fail the whole query; this way the one damaged row is found
    (its text no longer reads as written) and the rest are read.
    """
    return raw.decode("utf-8", "surrogateescape")


def _translate(exc: sqlite3.Error, path: Path) -> BudgetExceeded | StoreError:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF == sqlite3.SQLITE_FULL:
        if disk_free(path) < DISK_FULL_BYTES:
            return store_failure("cannot write the store", path, exc)
        return BudgetExceeded(f"store file {path} reached its page cap: {exc}")
    if disk_free(path) < DISK_FULL_BYTES:
        return store_failure("store", path, exc)
    return StoreError(f"store {path} failed: {exc}{damage_hint(exc)}")


def _object_from_row(row: tuple[Any, ...]) -> StoredObject:
    oid, kind, session, source, repo, digest, currentness, lifecycle, created, updated, content = row
    return StoredObject.model_validate(
        {
            "id": oid,
            "type": kind,
            "session_id": session,
            "source": source,
            "repo_state": repo,
            "content_hash": digest,
            "content": json.loads(bytes(content)),
            "currentness": currentness,
            "lifecycle": lifecycle,
            "created_at": created,
            "updated_at": updated,
        }
    )
