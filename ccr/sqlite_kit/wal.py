"""Reading an SQLite write-ahead log without SQLite: its committed frames, laid over the main file.

SQLite reads a log through its index (``-shm``), which a reader must be able to
create. Where it cannot (a full disk) and the log still holds commits, the
state the last commit left is built here from the file and the log, page by
page, checked as SQLite checks frames (salts and running checksums), and
``ccr._salvage`` reads damaged files the same way.
"""

from __future__ import annotations

import struct
from pathlib import Path

__all__ = ["committed_pages", "snapshot"]

_WAL_MAGIC = (0x377F0682, 0x377F0683)


def committed_pages(wal: bytes, page_size: int) -> tuple[dict[int, bytes], int | None]:
    """The pages of every committed transaction in ``wal`` whose frames check out, and the database's
    size in pages after the last of them (None when nothing was committed)."""
    if len(wal) < 32:
        return {}, None
    magic, _version, size, _seq, salt1, salt2, c1, c2 = struct.unpack(">8I", wal[:32])
    if magic not in _WAL_MAGIC or size != page_size:
        return {}, None
    order = ">" if magic & 1 else "<"
    s0, s1 = _checksum(wal[:24], 0, 0, order)
    if (s0, s1) != (c1, c2):
        return {}, None
    committed: dict[int, bytes] = {}
    pending: dict[int, bytes] = {}
    pages_after: int | None = None
    offset = 32
    frame = 24 + page_size
    while offset + frame <= len(wal):
        number, commit, f_salt1, f_salt2, f_c1, f_c2 = struct.unpack(">6I", wal[offset : offset + 24])
        page = wal[offset + 24 : offset + frame]
        if (f_salt1, f_salt2) != (salt1, salt2):
            break
        s0, s1 = _checksum(wal[offset : offset + 8], s0, s1, order)
        s0, s1 = _checksum(page, s0, s1, order)
        if (s0, s1) != (f_c1, f_c2):
            break
        pending[number] = page
        if commit:
            committed.update(pending)
            pending = {}
            pages_after = commit
        offset += frame
    return committed, pages_after


def snapshot(path: Path) -> bytes:
    """The database file at ``path`` as its last commit left it, the ``-wal`` file's commits applied.

    Raises:
        OSError: a file cannot be read.
    """
    data = path.read_bytes()
    wal_path = path.with_name(path.name + "-wal")
    wal = wal_path.read_bytes() if wal_path.exists() else b""
    if len(data) < 100:
        return data
    raw = struct.unpack(">H", data[16:18])[0]
    page_size = 65536 if raw == 1 else raw
    pages, count = committed_pages(wal, page_size)
    if count is None:
        return data
    out = bytearray(data[: count * page_size].ljust(count * page_size, b"\x00"))
    for number, page in pages.items():
        if number <= count:
            out[(number - 1) * page_size : number * page_size] = page
    out[18:20] = b"\x01\x01"  # a rollback-journal file now: no log goes with the copy
    return bytes(out)


def _checksum(block: bytes, s0: int, s1: int, order: str) -> tuple[int, int]:
    words = struct.unpack(f"{order}{len(block) // 4}I", block)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1
