"""Salvage from a damaged store file: read every page as raw bytes, keep what still hashes right.

SQLite cannot answer a query once a page its B-tree walks through is
damaged, but most rows still sit intact in their leaf pages. This reads the
file the way SQLite lays it out (file format 3: the header, table and index
B-tree leaf pages, overflow chains, record encoding), with the write-ahead
log's committed frames laid over it, and collects every row that has the
shape of a stored blob or typed object. Content addressing decides what is
good: a blob is kept only when its bytes hash to its handle, an object only
when its content hashes to its id. Pages on the free list are skipped, so a
record removed on purpose is never brought back.

What was lost is named where the file still says so: a row whose handle is
readable but whose bytes are not, and every handle the store's primary-key
indexes list but no readable row matches. ``expected`` is the record count
the store's usage totals announced, when that row survived, so losses whose
handles are gone too are still counted.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ccr.handles import handle_for
from ccr.objects import StoredObject, content_hash, object_id
from ccr.records import Record
from ccr.sqlite_kit.wal import committed_pages

__all__ = ["Salvage", "salvage"]

_HEADER = b"SQLite format 3\x00"
_PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536, 512)
_BLOB_HANDLE = re.compile(r"ccr_[0-9a-f]{32}")
_OBJECT_ID = re.compile(r"ccr_obj_[0-9a-f]{32}")
_TABLE_LEAF = 0x0D
_INDEX_LEAF = 0x0A
_INDEX_INTERIOR = 0x02
_BLOB_COLUMNS = 9
_OBJECT_COLUMNS = 12
_USAGE_COLUMNS = 7


@dataclass
class Salvage:
    """What a damaged file still holds: verified blobs and objects, and what is known lost."""

    blobs: dict[str, tuple[Record, bytes]] = field(default_factory=dict)
    objects: dict[str, StoredObject] = field(default_factory=dict)
    lost: set[str] = field(default_factory=set)
    metadata_lost: set[str] = field(default_factory=set)
    """Salvaged blobs whose metadata no longer read as written: kept without it (and a damaged
    creation time replaced by the time of the repair)."""
    expected_records: int | None = None
    expected_objects: int | None = None

    @property
    def unnamed_lost(self) -> int:
        """Records and objects the usage totals announced beyond those salvaged or named lost."""
        missing = 0
        lost_blobs = sum(1 for h in self.lost if not h.startswith("ccr_obj_"))
        lost_objects = len(self.lost) - lost_blobs
        if self.expected_records is not None:
            missing += max(0, self.expected_records - len(self.blobs) - lost_blobs)
        if self.expected_objects is not None:
            missing += max(0, self.expected_objects - len(self.objects) - lost_objects)
        return missing


def salvage(path: Path) -> Salvage:
    """Read every verifiable record out of the store file at ``path`` (and its ``-wal``).

    Raises:
        OSError: the file cannot be read.
    """
    data = path.read_bytes()
    wal_path = path.with_name(path.name + "-wal")
    wal = wal_path.read_bytes() if wal_path.exists() else b""
    best: Salvage | None = None
    for page_size, reserved in _layouts(data, wal):
        found = _scan(_pages(data, wal, page_size), page_size, page_size - reserved)
        if best is None or len(found.blobs) + len(found.objects) > len(best.blobs) + len(best.objects):
            best = found
        if data[:16] == _HEADER and _declared_page_size(data) == page_size:
            break  # the header is intact: its page size is the truth
    return best or Salvage()


def _declared_page_size(data: bytes) -> int | None:
    if len(data) < 100:
        return None
    raw = struct.unpack(">H", data[16:18])[0]
    size = 65536 if raw == 1 else raw
    return size if size in _PAGE_SIZES else None


def _layouts(data: bytes, wal: bytes) -> list[tuple[int, int]]:
    """Page sizes (with reserved bytes per page) to try: the header's own first."""
    declared = _declared_page_size(data) if data[:16] == _HEADER else None
    if declared is not None:
        return [(declared, data[20])]
    from_wal = struct.unpack(">I", wal[8:12])[0] if len(wal) >= 32 else 0
    sizes = [from_wal] if from_wal in _PAGE_SIZES else []
    return [(s, 0) for s in [*sizes, *(s for s in _PAGE_SIZES if s not in sizes)]]


def _pages(data: bytes, wal: bytes, page_size: int) -> dict[int, bytes]:
    """Page number -> page bytes: the main file, then the WAL's committed frames on top."""
    pages = {
        number + 1: data[offset : offset + page_size]
        for number, offset in enumerate(range(0, len(data) - page_size + 1, page_size))
    }
    pages.update(_wal_pages(wal, page_size))
    return pages


def _wal_pages(wal: bytes, page_size: int) -> dict[int, bytes]:
    """The pages of every committed transaction in a WAL whose frames check out."""
    return committed_pages(wal, page_size)[0]


def _freelist(pages: dict[int, bytes], header: bytes) -> set[int]:
    """Page numbers on the free list (trunks and leaves), as far as the chain can be followed."""
    if len(header) < 40 or header[:16] != _HEADER:
        return set()
    trunk = struct.unpack(">I", header[32:36])[0]
    free: set[int] = set()
    while trunk and trunk in pages and trunk not in free:
        free.add(trunk)
        page = pages[trunk]
        following, count = struct.unpack(">II", page[:8])
        count = min(count, (len(page) - 8) // 4)
        free.update(struct.unpack(f">{count}I", page[8 : 8 + 4 * count]))
        trunk = following
    return free


def _scan(pages: dict[int, bytes], page_size: int, usable: int) -> Salvage:
    found = Salvage()
    indexed: set[str] = set()
    named: set[str] = set()
    skip = _freelist(pages, pages.get(1, b""))
    for number, page in pages.items():
        if number in skip:
            continue
        start = 100 if number == 1 else 0
        if len(page) < start + 8:
            continue
        kind = page[start]
        if kind not in (_TABLE_LEAF, _INDEX_LEAF, _INDEX_INTERIOR):
            continue
        for payload in _cells(pages, page, start, kind, usable):
            values = _record(payload)
            if values is None and payload:
                values = _record(payload, partial=True)
            if not values:
                continue
            if kind != _TABLE_LEAF:
                key = values[0]
                if isinstance(key, str) and (_BLOB_HANDLE.fullmatch(key) or _OBJECT_ID.fullmatch(key)):
                    indexed.add(key)
                continue
            _take_row(found, values, named)
    good = set(found.blobs) | set(found.objects)
    found.lost = (indexed | named) - good
    return found


def _take_row(found: Salvage, values: list[Any], named: set[str]) -> None:
    """Keep a table row that is a verified blob or object; name a damaged one as lost."""
    key = values[0]
    if len(values) == _USAGE_COLUMNS and key is None and all(isinstance(v, int) for v in values[1:]):
        # The usage row (its id is the rowid, so the record holds NULL there).
        found.expected_records, found.expected_objects = values[2], values[3]
        return
    if not isinstance(key, str):
        return
    if _OBJECT_ID.fullmatch(key):
        named.add(key)
        if len(values) == _OBJECT_COLUMNS:
            obj = _object(values)
            if obj is not None:
                found.objects[key] = obj
        return
    if _BLOB_HANDLE.fullmatch(key):
        named.add(key)
        data = values[-1] if len(values) == _BLOB_COLUMNS else None
        if isinstance(data, bytes) and handle_for(data) == key:
            from ccr._sqlite import metadata_problem

            record = _blob_record(values, data)
            if metadata_problem(tuple(values[:8])) is not None:  # kept, but what it says is not trusted
                found.metadata_lost.add(key)
                record = record.model_copy(update={"metadata": None})
            found.blobs[key] = (record, data)


def _blob_record(values: list[Any], data: bytes) -> Record:
    handle, content_type, producer, before, after, metadata, created, _size, _data = values
    try:
        meta = json.loads(metadata) if isinstance(metadata, str) else None
    except ValueError:
        meta = None
    try:
        stamp = datetime.fromisoformat(created) if isinstance(created, str) else datetime.now(UTC)
    except ValueError:
        stamp = datetime.now(UTC)
    return Record(
        handle=handle,
        size=len(data),
        content_type=content_type if isinstance(content_type, str) else "application/octet-stream",
        producer=producer if isinstance(producer, str) else "",
        tokens_before=before if isinstance(before, int) and before >= 0 else None,
        tokens_after=after if isinstance(after, int) and after >= 0 else None,
        metadata=meta if isinstance(meta, dict) else None,
        created_at=stamp,
    )


def _object(values: list[Any]) -> StoredObject | None:
    oid, kind, session, source, repo, digest, currentness, lifecycle, created, updated, _size, content = values
    try:
        parsed = json.loads(content)
        actual = content_hash(parsed)
        if actual != digest or object_id(kind, session, source, repo, actual) != oid:
            return None
        return StoredObject.model_validate(
            {
                "id": oid,
                "type": kind,
                "session_id": session,
                "source": source,
                "repo_state": repo,
                "content_hash": digest,
                "content": parsed,
                "currentness": currentness,
                "lifecycle": lifecycle,
                "created_at": created,
                "updated_at": updated,
            }
        )
    except (ValueError, TypeError, RecursionError):
        return None


def _cells(pages: dict[int, bytes], page: bytes, start: int, kind: int, usable: int) -> list[bytes]:
    """The payload of every cell a B-tree page lists (overflow followed; a broken chain gives what it can)."""
    header = 12 if kind == _INDEX_INTERIOR else 8
    count = struct.unpack(">H", page[start + 3 : start + 5])[0]
    out: list[bytes] = []
    for i in range(count):
        at = start + header + 2 * i
        if at + 2 > len(page):
            break
        pointer = struct.unpack(">H", page[at : at + 2])[0]
        try:
            out.append(_cell_payload(pages, page, pointer, kind, usable))
        except (IndexError, ValueError, struct.error):
            continue
    return out


def _cell_payload(pages: dict[int, bytes], page: bytes, pos: int, kind: int, usable: int) -> bytes:
    if pos >= usable:
        raise ValueError("cell pointer outside the page")
    if kind == _INDEX_INTERIOR:
        pos += 4  # left child page number
    size, pos = _varint(page, pos)
    if kind == _TABLE_LEAF:
        _rowid, pos = _varint(page, pos)
    if kind == _TABLE_LEAF:
        most = usable - 35
    else:
        most = (usable - 12) * 64 // 255 - 23
    if size <= most:
        return page[pos : pos + size]
    least = (usable - 12) * 32 // 255 - 23
    local = least + (size - least) % (usable - 4)
    if local > most:
        local = least
    payload = bytearray(page[pos : pos + local])
    following = struct.unpack(">I", page[pos + local : pos + local + 4])[0]
    seen: set[int] = set()
    while len(payload) < size and following and following not in seen:
        seen.add(following)
        chunk = pages.get(following)
        if chunk is None:
            break
        payload += chunk[4:usable][: size - len(payload)]
        following = struct.unpack(">I", chunk[:4])[0]
    return bytes(payload)  # short when the chain broke: the record decoder then fails its last value


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = 0
    for i in range(9):
        byte = data[pos + i]
        if i == 8:
            return (value << 8) | byte, pos + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos + i + 1
    raise ValueError("unterminated varint")


def _record(payload: bytes, *, partial: bool = False) -> list[Any] | None:
    """Decode an SQLite record; ``partial`` keeps the values before the first unreadable one."""
    try:
        header_size, pos = _varint(payload, 0)
        types: list[int] = []
        while pos < header_size:
            serial, pos = _varint(payload, pos)
            types.append(serial)
    except (IndexError, ValueError):
        return None
    if pos != header_size or header_size > len(payload):
        return None
    values: list[Any] = []
    at = header_size
    for serial in types:
        try:
            value, at = _value(payload, at, serial)
        except (IndexError, ValueError, UnicodeDecodeError, struct.error):
            return values if partial else None
        values.append(value)
    if at != len(payload) and not partial:
        return None
    return values


_INT_SIZES = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


class _Unreadable:
    """A text field whose bytes are not UTF-8 any more."""


UNREADABLE = _Unreadable()


def _value(payload: bytes, at: int, serial: int) -> tuple[Any, int]:
    if serial == 0:
        return None, at
    if serial in _INT_SIZES:
        n = _INT_SIZES[serial]
        if at + n > len(payload):
            raise IndexError("value past the payload")
        return int.from_bytes(payload[at : at + n], "big", signed=True), at + n
    if serial == 7:
        return struct.unpack(">d", payload[at : at + 8])[0], at + 8
    if serial in (8, 9):
        return serial - 8, at
    if serial >= 12:
        n = (serial - 12) // 2
        if at + n > len(payload):
            raise IndexError("value past the payload")
        raw = payload[at : at + n]
        if serial % 2 == 0:
            return raw, at + n
        try:
            return raw.decode("utf-8"), at + n
        except UnicodeDecodeError:  # a damaged text field: the rest of the row may still be good
            return UNREADABLE, at + n
    raise ValueError(f"reserved serial type {serial}")
