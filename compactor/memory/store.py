"""The memory store: what an agent learned, kept across sessions in one SQLite file.

``open_memory`` opens ``$COMPACTOR_HOME/memory.db`` (or ``COMPACTOR_MEMORY_DB``,
or a given path) with the SQLite kit the recovery store uses too
(``compactor.memory._opening``): a private file in a private folder,
symlinks refused, WAL, ``busy_timeout`` 5000 ms, durable commits, numbered
migrations; one connection per process.

A memory's id is ``mem_`` + the first 8 bytes of sha256 of its UTF-8 text, so
remembering the same text twice is one memory that keeps its first
``created_at``. ``supersede`` replaces a current memory with a new version in
one transaction; ``history`` walks the chain of versions; ``forget`` deletes
one version and links its neighbours. Only current versions (``valid_until``
unset) are in the recall index (``compactor.memory._index``), so only they
are ever recalled.
"""

from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from ccr.sqlite_kit.connect import BUSY_TIMEOUT_MS
from ccr.sqlite_kit.migrations import immediate
from ccr.store import DEFAULT_HOME, HOME_ENV, Store, open_store
from compactor.core.tokens import TokenCounter
from compactor.memory import _bm25, _index
from compactor.memory._opening import open_for_reading, open_for_writing
from compactor.memory._packing import pack
from compactor.memory.checks import MAX_TEXT_BYTES, check_id, check_text, check_token_budget
from compactor.memory.errors import (
    AlreadyStored,
    BrokenChain,
    DamagedMemory,
    InvalidRequest,
    MemoryConfigError,
    MemoryNotFound,
    NotCurrent,
    StoreError,
    SupersededText,
)
from compactor.memory.models import Hit, Memory, Remembered

__all__ = [
    "BUSY_TIMEOUT_MS",
    "DEFAULT_HIT_TOKENS",
    "DEFAULT_LIMIT",
    "DEFAULT_THRESHOLD",
    "DEFAULT_TOKEN_BUDGET",
    "MAX_TEXT_BYTES",
    "MEMORY_DB_ENV",
    "MemoryDB",
    "check_id",
    "check_text",
    "check_token_budget",
    "default_memory_path",
    "memory_id",
    "open_memory",
]

DEFAULT_LIMIT = 5
DEFAULT_TOKEN_BUDGET = 2_000
"""Tokens a recall may add when the caller does not say; 0 means unlimited."""
DEFAULT_THRESHOLD = 0.1
"""Hits scoring below this are dropped: an off-topic query recalls nothing."""
DEFAULT_HIT_TOKENS = 500
"""Within a budget, a hit longer than this many tokens comes back as its head plus a recovery handle."""
MEMORY_DB_ENV = "COMPACTOR_MEMORY_DB"

_IN_CHUNK = 500
_COLUMNS = "id, text, created_at, valid_from, valid_until, supersedes, superseded_by"


def memory_id(text: str) -> str:
    """``mem_`` + hex of the first 8 bytes of sha256 of the UTF-8 text."""
    return "mem_" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def default_memory_path(environ: Mapping[str, str] | None = None) -> Path:
    """``COMPACTOR_MEMORY_DB`` if set, else ``$COMPACTOR_HOME/memory.db`` (home ``~/.compactor``).

    Raises:
        MemoryConfigError: ``COMPACTOR_MEMORY_DB`` is set but blank.
    """
    env = os.environ if environ is None else environ
    named = env.get(MEMORY_DB_ENV)
    if named is not None:
        if not named.strip():
            raise MemoryConfigError(f"{MEMORY_DB_ENV} is set but empty; unset it or name a file")
        return Path(named).expanduser()
    return Path(env.get(HOME_ENV) or DEFAULT_HOME).expanduser() / "memory.db"


def open_memory(
    path: str | Path | None = None, *, recovery: Store | str | Path | None = None, readonly: bool = False
) -> MemoryDB:
    """Open (creating if needed) the memory database at ``path`` (default: ``default_memory_path()``).

    ``recovery`` is where the whole text behind a cut hit is stored: an open
    store (used, not closed), a path, or None for the default recovery store
    (``$COMPACTOR_HOME/ccr.db``), opened only when first needed.

    ``readonly`` is for reading only (recall, history, get): nothing is
    created, migrated or changed, so a database on read-only media (a 0444
    file, a read-only folder) can be read. A file that does not exist yet (or
    is empty) reads as an empty store, and neither it nor its folder is
    created. Writes through a read-only database fail with ``StoreError``.

    Raises:
        MemoryConfigError: ``COMPACTOR_MEMORY_DB`` is blank.
        UnsafeStorePath: the path or a sidecar is a symlink or not a regular file.
        NotAStore: the file is not a memory database; it was left unchanged.
        StoreError: the file cannot be created, opened or migrated.
    """
    target = default_memory_path() if path is None else Path(path).expanduser()
    return MemoryDB(target, recovery=recovery, readonly=readonly)


class MemoryDB:
    """An open memory database. One per process; close it (or use ``with``)."""

    def __init__(self, path: Path, *, recovery: Store | str | Path | None = None, readonly: bool = False) -> None:
        self.path = path
        self.readonly = readonly
        self._recovery_path: str | Path | None = None
        self._recovery: Store | None = None
        if recovery is None or isinstance(recovery, str | Path):
            self._recovery_path = recovery
        else:
            self._recovery = recovery
        self._owns_recovery = False
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._conn: sqlite3.Connection | None = open_for_reading(path) if readonly else open_for_writing(path)
        self._conn.text_factory = lenient_text
        self.damaged: set[str] = set()
        """Ids of the memories recall found damaged (their text no longer matches the id) and left out."""

    # -- writing ------------------------------------------------------------------------

    def remember(self, text: str) -> Remembered:
        """Store ``text`` as a current memory; the same text again is the same memory, unchanged.

        Raises:
            InvalidText, TextTooLarge: the text may not be remembered.
            SupersededText: the text is stored only as a superseded version,
                which recall would never return.
            StoreError: the database failed.
        """
        return self.remember_many([text])[0]

    def remember_many(self, texts: Sequence[str]) -> list[Remembered]:
        """``remember`` each text, all in one transaction (all stored, or none).

        Raises:
            The errors of ``remember``, for the first text that fails; nothing is stored then.
        """
        checked = [check_text(t) for t in texts]
        ids = [memory_id(t) for t in checked]
        now = _now()
        out: list[Remembered] = []
        with self._write() as conn:
            stored = _load_many(conn, ids)
            new: dict[str, str] = {}
            for mid, text in zip(ids, checked, strict=True):
                row = stored.get(mid)
                if row is None:
                    new.setdefault(mid, text)
                    out.append(Remembered(id=mid, created_at=now, created=True))
                    continue
                _same_text(row, text)
                if not row.current:
                    successor = row.superseded_by or "a version since forgotten"
                    raise SupersededText(
                        f"this text is {mid}, which was superseded by {successor}"
                        "; recall only returns current memories, so it was not stored again"
                        + (f" (see: compactor memory history {mid})" if row.superseded_by else "")
                    )
                out.append(Remembered(id=mid, created_at=row.created_at, created=False))
            _insert(conn, list(new.items()), now, supersedes=None)
        return out

    def supersede(self, old_id: str, text: str) -> Memory:
        """Replace the current memory ``old_id`` by a new version holding ``text``; return the new one.

        One transaction: the old version stops being current (``valid_until``,
        ``superseded_by``) exactly when the new one starts (``supersedes``).

        Raises:
            InvalidRequest: ``old_id`` is not a memory id.
            InvalidText, TextTooLarge: the new text may not be remembered.
            MemoryNotFound: no memory has ``old_id``.
            NotCurrent: ``old_id`` has already been superseded.
            AlreadyStored: the new text is the old one's, or already stored.
            StoreError: the database failed.
        """
        check_id(old_id)
        check_text(text)
        new_id = memory_id(text)
        now = _now()
        with self._write() as conn:
            old = _load(conn, old_id)
            if old is None:
                raise MemoryNotFound(f"no memory {old_id}")
            if not old.current:
                raise NotCurrent(
                    f"{old_id} is not current (superseded by {old.superseded_by or 'a version since forgotten'});"
                    " supersede the current version instead"
                )
            if new_id == old_id:
                raise AlreadyStored(f"the new text is the same as {old_id}'s; nothing to supersede")
            existing = _load(conn, new_id)
            if existing is not None:
                raise AlreadyStored(f"the new text is already stored as {new_id}; forget or supersede that one")
            _index.remove(conn, old.id, old.text)
            updated = conn.execute(
                "UPDATE memories SET valid_until = ?, superseded_by = ? WHERE id = ? AND valid_until IS NULL",
                (now.isoformat(), new_id, old_id),
            ).rowcount
            if updated != 1:
                raise NotCurrent(f"{old_id} changed while it was being superseded; nothing was changed")
            _insert(conn, [(new_id, text)], now, supersedes=old_id)
            new = _load(conn, new_id)
        assert new is not None
        return new

    def forget(self, mid: str) -> bool:
        """Delete one version and link its neighbours to each other; False if there was none.

        Forgetting the current version leaves the one it superseded superseded:
        a forgotten fact does not bring back the fact it replaced.

        Raises:
            InvalidRequest: ``mid`` is not a memory id.
            StoreError: the database failed.
        """
        check_id(mid)
        with self._write() as conn:
            row = _load(conn, mid, check=False)  # a damaged memory can be forgotten too
            if row is None:
                return False
            if row.supersedes is not None:
                conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (row.superseded_by, row.supersedes))
            if row.superseded_by is not None:
                conn.execute("UPDATE memories SET supersedes = ? WHERE id = ?", (row.supersedes, row.superseded_by))
            if row.current:
                _index.remove(conn, row.id, row.text if intact(row.id, row.text) else None)
            conn.execute("DELETE FROM memories WHERE id = ?", (mid,))
        return True

    # -- reading ------------------------------------------------------------------------

    def get(self, mid: str) -> Memory:
        """The version stored under ``mid``.

        Raises:
            InvalidRequest: ``mid`` is not a memory id.
            MemoryNotFound: no memory has it.
        """
        check_id(mid)
        with self._read() as conn:
            row = _load(conn, mid)
        if row is None:
            raise MemoryNotFound(f"no memory {mid}")
        return row

    def history(self, mid: str) -> list[Memory]:
        """Every version in ``mid``'s chain, oldest first, from any version in it.

        Raises:
            InvalidRequest: ``mid`` is not a memory id.
            MemoryNotFound: no memory has it.
            BrokenChain: a link points at a missing version, the two ends of a
                link disagree, or the chain loops; no partial chain is returned.
        """
        check_id(mid)
        with self._read() as conn:
            start = _load(conn, mid)
            if start is None:
                raise MemoryNotFound(f"no memory {mid}")
            seen = {mid}
            older: list[Memory] = []
            row = start
            while row.supersedes is not None:
                prev = _linked(conn, row.supersedes, seen, row.id, "supersedes")
                if prev.superseded_by != row.id:
                    raise BrokenChain(
                        f"{row.id} supersedes {prev.id}, but {prev.id} says it was superseded by {prev.superseded_by}"
                    )
                older.append(prev)
                row = prev
            newer: list[Memory] = []
            row = start
            while row.superseded_by is not None:
                nxt = _linked(conn, row.superseded_by, seen, row.id, "superseded_by")
                if nxt.supersedes != row.id:
                    raise BrokenChain(
                        f"{row.id} was superseded by {nxt.id}, but {nxt.id} says it supersedes {nxt.supersedes}"
                    )
                newer.append(nxt)
                row = nxt
        return [*reversed(older), start, *newer]

    def recall(
        self,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        token_budget: int = DEFAULT_TOKEN_BUDGET,
        threshold: float = DEFAULT_THRESHOLD,
        counter: TokenCounter | None = None,
        hit_tokens: int | None = DEFAULT_HIT_TOKENS,
    ) -> list[Hit]:
        """The current memories that best match ``query``, packed into ``token_budget`` tokens.

        BM25 (``compactor.memory._index``) over current memories; hits scoring below
        ``threshold`` are dropped (an off-topic query answers nothing), ties
        go to the smaller id, and hits are packed greedily in rank order. An
        explicit ``token_budget=0`` means unlimited, every hit whole.
        Within a budget each hit is compressed on its way out: one longer
        than ``hit_tokens`` (None: no cap per hit) comes back as its head,
        with the whole text stored in the recovery store under
        ``recovery_handle``; so does a first hit larger than the whole
        budget (its head then fills the budget). Tokens are counted with
        ``counter`` (default: the project's tiktoken counter).

        Raises:
            InvalidRequest: an empty query, ``limit`` below 1, a negative
                budget, ``hit_tokens`` below 1, or a negative or non-finite threshold.
            ccr.BudgetExceeded, ccr.StoreError: the whole text of a cut hit could not be stored.
            StoreError: the database failed.
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidRequest("the query is empty: say what to recall")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidRequest(f"limit must be a positive integer, not {limit!r}")
        budget = check_token_budget(token_budget)
        if hit_tokens is not None and (
            isinstance(hit_tokens, bool) or not isinstance(hit_tokens, int) or hit_tokens < 1
        ):
            raise InvalidRequest(f"hit_tokens must be a positive integer or None, not {hit_tokens!r}")
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold < math.inf:
            raise InvalidRequest(f"threshold must be a finite number >= 0, not {threshold!r}")
        terms = _bm25.query_terms(query)
        if not terms:
            return []
        if counter is None:
            from compactor.core.tokens import TiktokenCounter

            counter = TiktokenCounter()
        with self._read() as conn:
            return pack(
                _index.search(conn, terms, threshold, check=self._intact),
                limit=limit,
                budget=budget,
                counter=counter,
                stash=self._stash,
                hit_tokens=hit_tokens,
            )

    def _intact(self, mid: str, text: str) -> bool:
        if intact(mid, text):
            return True
        self.damaged.add(mid)
        return False

    def recover(self, handle: str) -> bytes:
        """The exact bytes behind a hit's ``recovery_handle`` (any form the recovery store accepts).

        Raises:
            ccr.InvalidHandle: not a handle.
            ccr.HandleNotFound: the recovery store holds nothing under it.
            ccr.StoreError: the recovery store failed.
        """
        return self._recovery_store().get(handle)

    # -- lifetime -----------------------------------------------------------------------

    def close(self) -> None:
        """Close the database (and the recovery store, if this object opened it)."""
        with self._lock:
            self._close_connection()
            if self._owns_recovery and self._recovery is not None:
                self._recovery.close()
                self._recovery = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- helpers ------------------------------------------------------------------------

    def _close_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def _recovery_store(self) -> Store:
        if self._recovery is None:
            self._recovery = open_store(self._recovery_path)
            self._owns_recovery = True
        return self._recovery

    def _stash(self, text: str) -> str:
        return self._recovery_store().put(text.encode("utf-8"), content_type="text/plain", producer="memory.recall")

    @contextmanager
    def _session(self) -> Iterator[sqlite3.Connection]:
        """The connection under the lock, with SQLite errors translated.

        Raises:
            StoreError: closed, opened in another process, or SQLite failed.
        """
        with self._lock:
            if self._conn is None:
                raise StoreError("the memory database is closed")
            if os.getpid() != self._pid:
                raise StoreError("the memory database was opened in another process; open it again here")
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise StoreError(f"memory database {self.path} failed: {exc}") from exc

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on any error.

        Raises:
            StoreError: the database was opened read-only.
        """
        if self.readonly:
            raise StoreError(f"memory database {self.path} was opened read-only; nothing was changed")
        with self._session() as conn, immediate(conn):
            yield conn

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction, so that every query inside sees the same snapshot."""
        with self._session() as conn:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")


def _now() -> datetime:
    return datetime.now(UTC)


def intact(mid: str, text: str) -> bool:
    """Whether ``text`` is still the text stored under ``mid`` (its id is the hash of its text)."""
    try:
        return memory_id(text) == mid
    except UnicodeEncodeError:  # bytes that were not UTF-8 any more (read with ``_lenient_text``)
        return False


def lenient_text(raw: bytes) -> str:
    """A text column as read here: bytes no longer UTF-8 read as lone surrogates, so the one
    damaged row is found (``intact``) instead of the whole query failing."""
    return raw.decode("utf-8", "surrogateescape")


def _damaged(mid: str) -> DamagedMemory:
    return DamagedMemory(
        f"memory {mid} is damaged: its text no longer matches its id (it was changed on disk), so it is not "
        f"given out; 'compactor memory forget {mid}' removes it",
        ids=[mid],
    )


def _memory(row: tuple[Any, ...], *, check: bool = True) -> Memory:
    """The memory a row holds.

    Raises:
        DamagedMemory: ``check`` and the text no longer matches the id, or a time no longer reads.
    """
    mid, text = row[0], row[1]
    if check and not intact(mid, text):
        raise _damaged(mid)
    try:
        return _memory_of(row)
    except (TypeError, ValueError) as exc:
        if not check:
            raise DamagedMemory(f"memory {mid} is damaged: {exc}", ids=[mid]) from exc
        raise _damaged(mid) from exc


def _memory_of(row: tuple[Any, ...]) -> Memory:
    mid, text, created, valid_from, valid_until, supersedes, superseded_by = row
    return Memory(
        id=mid,
        text=text,
        created_at=datetime.fromisoformat(created),
        valid_from=datetime.fromisoformat(valid_from),
        valid_until=None if valid_until is None else datetime.fromisoformat(valid_until),
        supersedes=supersedes,
        superseded_by=superseded_by,
    )


def _load(conn: sqlite3.Connection, mid: str, *, check: bool = True) -> Memory | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE id = ?", (mid,)).fetchone()
    return None if row is None else _memory(row, check=check)


def _same_text(row: Memory, text: str) -> None:
    if row.text != text:
        raise StoreError(f"{row.id} already holds a different text (a hash prefix collision); nothing was stored")


def _linked(conn: sqlite3.Connection, mid: str, seen: set[str], source: str, link: str) -> Memory:
    if mid in seen:
        raise BrokenChain(f"the version chain loops: {source}.{link} points back at {mid}")
    row = _load(conn, mid)
    if row is None:
        raise BrokenChain(f"{source}.{link} names {mid}, which is not stored")
    seen.add(mid)
    return row


def _load_many(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, Memory]:
    found: dict[str, Memory] = {}
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), _IN_CHUNK):
        chunk = unique[start : start + _IN_CHUNK]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE id IN ({marks})", chunk):
            found[row[0]] = _memory(row)
    return found


def _insert(
    conn: sqlite3.Connection, rows: Sequence[tuple[str, str]], now: datetime, *, supersedes: str | None
) -> None:
    """Insert new current memories ``(id, text)`` and index them for recall."""
    stamp = now.isoformat()
    conn.executemany(
        "INSERT INTO memories (id, text, created_at, valid_from, valid_until, supersedes, superseded_by)"
        " VALUES (?, ?, ?, ?, NULL, ?, NULL)",
        [(mid, text, stamp, stamp, supersedes) for mid, text in rows],
    )
    _index.add(conn, rows)
