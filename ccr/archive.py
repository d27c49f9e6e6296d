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

from ccr._budget import resolve_max_bytes
from ccr.errors import ArchiveInvalid, BudgetExceeded, CorruptRecord
from ccr.handles import handle_for
from ccr.objects import StoredObject, content_hash, object_id
from ccr.records import Record

__all__ = [
    "ARCHIVE_FORMAT",
    "ARCHIVE_VERSION",
    "Archive",
    "line_limit",
    "open_archive",
    "read_archive",
    "write_archive",
]

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


def line_limit(max_bytes: int) -> int:
    """The longest archive line read for a store of ``max_bytes``: its largest record in base64, and 1 MiB more."""
    return 4 * -(-max_bytes // 3) + _CHUNK


def read_archive(source: IO[bytes] | Iterable[bytes], *, max_bytes: int | None = None) -> Archive:
    """Parse and check a whole archive, every line read with a bound.

    ``source`` is a binary file (read a chunk at a time) or its lines.
    ``max_bytes`` is the budget of the store it is for (default: as
    ``COMPACTOR_CCR_MAX_BYTES`` says): no line may be longer than the largest
    record such a store holds, in base64 (``line_limit``), and reading stops
    as soon as the records pass the budget. A line holding bytes that JSON
    text never holds (NUL and other control characters) is refused at the
    first chunk that shows one, so that a stream of zeros costs one chunk.

    Raises:
        ArchiveInvalid: not a ccr archive, an unknown version, a malformed
            or over-long line, or fewer or more items than its header announces.
        BudgetExceeded: the records hold more bytes than the store's budget; nothing was stored.
        CorruptRecord: a record's bytes do not hash to its handle, or an
            object's content does not match its id.
        StoreConfigError: ``max_bytes`` is None and the budget setting is invalid.
        OSError: the file could not be read.
    """
    budget = resolve_max_bytes(max_bytes)
    limit = line_limit(budget)
    numbered = enumerate(_bounded_lines(source, limit), start=1)
    header = _header(next(numbered, (1, b""))[1])
    records: list[tuple[Record, bytes]] = []
    objects: list[StoredObject] = []
    payload = 0
    for number, raw in _items(numbered):
        item = _parse(raw, number)
        kind = item.pop("item", None)
        try:
            if kind == "record":
                data = base64.b64decode(item.pop("data", None) or "", validate=True)
                record = Record.model_validate(item)
                if handle_for(data) != record.handle or len(data) != record.size:
                    raise CorruptRecord(f"line {number}: the bytes of {record.handle} do not match its handle")
                payload += len(data)
                if payload > budget:
                    raise BudgetExceeded(
                        f"line {number}: the archive's records pass the store's budget of {budget:,} bytes; "
                        "nothing was stored (raise COMPACTOR_CCR_MAX_BYTES to import it)"
                    )
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
        except ValidationError as exc:
            raise ArchiveInvalid(f"line {number}: not a valid {kind}: {_problems(exc)}") from exc
        except (binascii.Error, TypeError) as exc:
            raise ArchiveInvalid(f"line {number}: not a valid {kind}: {_one_line(str(exc))}") from exc
    if (len(records), len(objects)) != (header["records"], header["objects"]):
        raise ArchiveInvalid(
            f"the archive announces {header['records']} records and {header['objects']} objects "
            f"but holds {len(records)} and {len(objects)}: it is cut short or was edited"
        )
    return records, objects


_CHUNK = 1 << 20
"""How much of a line is read at a time."""
_NOT_JSON_TEXT = bytes(b for b in range(0x20) if b not in b"\t\n\r")
"""Bytes that JSON text never holds: control characters other than the whitespace between tokens."""


def _bounded_lines(source: IO[bytes] | Iterable[bytes], limit: int) -> Iterator[bytes]:
    """The lines of ``source``, none longer than ``limit`` bytes, none holding a byte JSON text never holds.

    Raises:
        ArchiveInvalid: a line is longer than ``limit`` or holds such a byte.
    """
    readline = getattr(source, "readline", None)
    if readline is None:
        for number, line in enumerate(source, start=1):
            _check_chunk(line, number, len(line), limit)
            yield line
        return
    number = 0
    while True:
        number += 1
        parts: list[bytes] = []
        size = 0
        while True:
            chunk = readline(_CHUNK)
            size += len(chunk)
            _check_chunk(chunk, number, size, limit)
            parts.append(chunk)
            if not chunk or chunk.endswith(b"\n"):
                break
        if not size:
            return
        yield b"".join(parts)


def _check_chunk(chunk: bytes, number: int, size: int, limit: int) -> None:
    if size > limit:
        raise ArchiveInvalid(
            f"line {number} is longer than {limit:,} bytes, more than any record of this store's budget "
            "takes in an archive: not a ccr archive, or one for a larger budget (COMPACTOR_CCR_MAX_BYTES)"
        )
    if len(chunk.translate(None, _NOT_JSON_TEXT)) != len(chunk):
        raise ArchiveInvalid(f"line {number} holds control bytes (such as NUL) that no archive line holds")


def _problems(exc: ValidationError) -> str:
    """A pydantic error on one line: each problem's place and message, without the input it quotes."""
    return "; ".join(
        f"{'.'.join(map(str, error['loc'])) or 'item'}: {_one_line(error['msg'])}" for error in exc.errors()
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _line(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def _parse(raw: bytes, number: int) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ArchiveInvalid(f"line {number} is not JSON: {_one_line(str(exc))}") from exc
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
