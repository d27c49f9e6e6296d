"""Portable archives of a store: JSON Lines that keep every handle, checked on the way back in.

The format (``ccr export`` writes it, ``ccr import`` reads it), one JSON
object per line, UTF-8::

    {"format": "ccr-archive", "version": 1, "records": N, "objects": M, "created_at": "..."}
    {"item": "record", "handle": "ccr_...", "size": ..., "content_type": ..., "producer": ...,
     "tokens_before": ..., "tokens_after": ..., "metadata": {...}, "created_at": "...",
     "data": "<base64 of the exact bytes>"}
    {"item": "object", "id": "ccr_obj_...", "type": ..., ... every field of a typed object ...}

A file whose name ends in ``.gz`` is gzip-compressed. Reading checks
everything before a single record is stored: the header, the counts (a cut
archive is refused), and that every record's bytes hash to its handle and
every object's content to its id. Nothing here touches a store; the command
line hands what it read to ``Store.restore``.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from ccr.errors import ArchiveInvalid, CorruptRecord
from ccr.handles import handle_for
from ccr.objects import StoredObject, content_hash, object_id
from ccr.records import Record

__all__ = ["ARCHIVE_FORMAT", "ARCHIVE_VERSION", "Archive", "open_archive", "read_archive", "write_archive"]

ARCHIVE_FORMAT = "ccr-archive"
ARCHIVE_VERSION = 1

Archive = tuple[list[tuple[Record, bytes]], list[StoredObject]]
"""What an archive holds: records with their bytes, and typed objects."""


def open_archive(path: Path, mode: str, *, gzipped: bool | None = None) -> IO[bytes]:
    """The archive file opened in binary ``mode`` (``"rb"`` or ``"wb"``).

    It is gzip-compressed when ``gzipped`` says so, else when its name ends in ``.gz``.
    """
    if path.name.endswith(".gz") if gzipped is None else gzipped:
        return gzip.open(path, mode)  # type: ignore[return-value]
    return open(path, mode)


def write_archive(
    out: IO[bytes],
    records: Iterable[tuple[Record, bytes]],
    objects: Iterable[StoredObject],
    *,
    counts: tuple[int, int],
) -> tuple[int, int]:
    """Write the header, the records, then the objects; return how many of each were written.

    ``counts`` (records, objects) go in the header; a reader refuses an
    archive whose lines do not add up to them.

    Raises:
        CorruptRecord: a record's bytes no longer hash to its handle (nothing
            corrupt is ever archived; the caller discards the partial file).
        OSError: the file could not be written.
    """
    header = {
        "format": ARCHIVE_FORMAT,
        "version": ARCHIVE_VERSION,
        "records": counts[0],
        "objects": counts[1],
        "created_at": datetime.now(UTC).isoformat(),
    }
    out.write(_line(header))
    written = [0, 0]
    for record, data in records:
        if handle_for(data) != record.handle:
            raise CorruptRecord(f"{record.handle} no longer matches its bytes; run ccr repair before exporting")
        item = {"item": "record", **record.model_dump(mode="json"), "data": base64.b64encode(data).decode()}
        out.write(_line(item))
        written[0] += 1
    for obj in objects:
        out.write(_line({"item": "object", **obj.model_dump(mode="json")}))
        written[1] += 1
    if tuple(written) != counts:
        raise CorruptRecord(
            f"the store changed while it was exported ({written[0]} records and {written[1]} "
            f"objects written, {counts[0]} and {counts[1]} expected); export again"
        )
    return written[0], written[1]


def read_archive(lines: Iterable[bytes]) -> Archive:
    """Parse and check a whole archive.

    Raises:
        ArchiveInvalid: not a ccr archive, an unknown version, a malformed
            line, or fewer or more items than its header announces.
        CorruptRecord: a record's bytes do not hash to its handle, or an
            object's content does not match its id.
    """
    numbered = enumerate(lines, start=1)
    header = _header(next(numbered, (1, b""))[1])
    records: list[tuple[Record, bytes]] = []
    objects: list[StoredObject] = []
    for number, raw in _items(numbered):
        item = _parse(raw, number)
        kind = item.pop("item", None)
        try:
            if kind == "record":
                data = base64.b64decode(item.pop("data", None) or "", validate=True)
                record = Record.model_validate(item)
                if handle_for(data) != record.handle or len(data) != record.size:
                    raise CorruptRecord(f"line {number}: the bytes of {record.handle} do not match its handle")
                records.append((record, data))
            elif kind == "object":
                obj = StoredObject.model_validate(item)
                digest = content_hash(obj.content)
                if (
                    digest != obj.content_hash
                    or object_id(obj.type, obj.session_id, obj.source, obj.repo_state, digest) != obj.id
                ):
                    raise CorruptRecord(f"line {number}: object {obj.id} does not match its content")
                objects.append(obj)
            else:
                raise ArchiveInvalid(f"line {number}: unknown item type {kind!r}")
        except (ValidationError, binascii.Error, TypeError) as exc:
            raise ArchiveInvalid(f"line {number}: not a valid {kind}: {exc}") from exc
    if (len(records), len(objects)) != (header["records"], header["objects"]):
        raise ArchiveInvalid(
            f"the archive announces {header['records']} records and {header['objects']} objects "
            f"but holds {len(records)} and {len(objects)}: it is cut short or was edited"
        )
    return records, objects


def _line(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def _parse(raw: bytes, number: int) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ArchiveInvalid(f"line {number} is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ArchiveInvalid(f"line {number} is not a JSON object")
    return value


def _header(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        raise ArchiveInvalid("the archive is empty")
    header = _parse(raw, 1)
    if header.get("format") != ARCHIVE_FORMAT:
        raise ArchiveInvalid("not a ccr archive (its first line does not say format: ccr-archive)")
    if header.get("version") != ARCHIVE_VERSION:
        raise ArchiveInvalid(f"archive version {header.get('version')!r} is not one this code reads")
    for key in ("records", "objects"):
        count = header.get(key)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ArchiveInvalid(f"the archive header's {key!r} is not a count")
    return header


def _items(numbered: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
    for number, raw in numbered:
        if raw.strip():
            yield number, raw
