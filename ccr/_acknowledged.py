"""How many records the store has acknowledged, kept beside it, so that losing committed writes is seen.

Every record stored counts in the file's ``stored`` total (migration 3:
records and typed objects ever inserted; removals do not lower it). Once a
write has committed (durably: ``synchronous=FULL``), its total is written to
``<store>-ack`` if it is higher than what that file holds. A store file that
comes back with a lower total than its ``-ack`` lost writes it had
acknowledged: its write-ahead log was deleted before a checkpoint, or the
file was put back from an older copy. SQLite itself cannot tell (the file
is consistent, only older), which is why the count lives outside it.

The ``-ack`` file is written after each commit, never before, so it is
never ahead of a commit that did not happen; two writers racing may leave
it a little behind, which can only hide a loss, never invent one. It is not
synced: after a crash it may hold an older total, with the same effect.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from pathlib import Path

__all__ = ["ACK_SUFFIX", "acknowledge", "acknowledged", "stored_total"]

ACK_SUFFIX = "-ack"
"""The name the count file takes after the store's (``ccr.db-ack``); one of the store's sidecars."""

_WIDTH = 20


def stored_total(conn: sqlite3.Connection) -> int | None:
    """The file's total of records ever stored (None for a store from before migration 3)."""
    try:
        row = conn.execute("SELECT stored FROM acknowledged WHERE id = 1").fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else int(row[0])


def acknowledge(path: Path, total: int) -> None:
    """Raise the count beside the store at ``path`` to ``total`` (never lower it); best effort.

    A count that cannot be written (a read-only folder, a full disk) only
    means a later loss may go unseen: the write itself has committed.
    """
    try:
        fd = os.open(_ack_path(path), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if total > _parse(os.pread(fd, _WIDTH + 1, 0)):
            os.pwrite(fd, str(total).rjust(_WIDTH).encode("ascii") + b"\n", 0)
    except OSError:
        return
    finally:
        os.close(fd)


def acknowledged(path: Path) -> int | None:
    """The count beside the store at ``path``; None when there is none (or it does not read)."""
    try:
        fd = os.open(_ack_path(path), os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        value = _parse(os.pread(fd, _WIDTH + 1, 0))
    except OSError:
        return None
    finally:
        os.close(fd)
    return value if value > 0 else None


def _ack_path(path: Path) -> Path:
    return path.with_name(path.name + ACK_SUFFIX)


def _parse(raw: bytes) -> int:
    text = raw.strip()
    return int(text) if text.isdigit() else 0
