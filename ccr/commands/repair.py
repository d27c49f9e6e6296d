"""``ccr repair [--output PATH]``: salvage every readable record of a damaged store into a new one.

Reads the damaged file page by page (``ccr._salvage``), keeps each record
whose bytes still hash to its handle, writes them into a fresh store with
their metadata, and names what was lost. Without ``--output`` the new store
takes the old one's place and the damaged file is kept beside it as
``<name>.damaged-<UTC time>`` (``<name>.before-repair-<UTC time>`` when
SQLite found the file sound and every record was salvaged with its
metadata). A single corrupt record needs no repair:
``ccr put`` of its original bytes heals it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ccr._salvage import Salvage, salvage
from ccr.errors import InputNotFound, NotAStore, OutputRefused, RecordsLost, StoreError
from ccr.files import describe_os_error
from ccr.sqlite_kit.files import SIDECARS, SQLITE_HEADER
from ccr.store import default_store_path, open_store

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "repair",
        help="salvage every readable record of a damaged store",
        description="Read the store file page by page, keep every record whose bytes still hash "
        "to its handle (with its metadata), write them into a new store and name each record "
        "that was lost. Without --output the new store replaces the damaged one, which is kept "
        "as <store>.damaged-<time> (<store>.before-repair-<time> when it was sound). "
        "Exits 0 when nothing was lost, 65 when something was. "
        "Stop other users of the store (such as 'ccr mcp') first.",
    )
    parser.add_argument(
        "--output", metavar="PATH", help="write the salvaged store here and leave the damaged one as it is"
    )
    parser.set_defaults(func=run)
    return parser


def _build(target: Path, found: Salvage) -> None:
    """Write the salvaged records into a new store at ``target``, whole or not at all.

    The store is built under a temporary name in the same folder and renamed
    into place once closed, so a full disk or a ``kill -9`` leaves no half
    store at ``target``.

    Raises:
        OutputRefused: something appeared at ``target`` meanwhile.
        StoreError: the new store cannot be written (``DiskFull`` when the disk is full).
    """
    build = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(6)}.tmp")
    try:
        store = open_store(build)
        try:
            store.restore(
                sorted(found.blobs.values(), key=lambda item: (item[0].created_at, item[0].handle)),
                sorted(found.objects.values(), key=lambda obj: (obj.created_at, obj.id)),
            )
        finally:
            store.close()
        if os.path.lexists(target):
            raise OutputRefused(f"{target}: refusing to write the repaired store there: something appeared there")
        for suffix in (*SIDECARS, ""):  # the main file last, so that it never stands without its log
            if os.path.lexists(build.with_name(build.name + suffix)):
                os.rename(build.with_name(build.name + suffix), target.with_name(target.name + suffix))
    except OSError as exc:
        raise StoreError(f"cannot write the repaired store {target}: {describe_os_error(exc)}") from exc
    finally:
        for suffix in ("", *SIDECARS):
            with contextlib.suppress(OSError):
                os.unlink(build.with_name(build.name + suffix))


def _sound(path: Path) -> bool:
    """Whether SQLite finds nothing wrong with the file (``PRAGMA quick_check``) and it holds every write it
    acknowledged (``ccr._acknowledged``); reads only."""
    import sqlite3

    from ccr._acknowledged import acknowledged, stored_total
    from ccr._sqlite_read import open_read_only

    try:
        conn, _ = open_read_only(path)
    except StoreError:
        return False
    try:
        if [row[0] for row in conn.execute("PRAGMA quick_check")] != ["ok"]:
            return False
        held, acked = stored_total(conn), acknowledged(path)
        return held is None or acked is None or held >= acked  # else acknowledged writes are gone
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def run(args: argparse.Namespace) -> int:
    source = Path(args.store).expanduser() if getattr(args, "store", None) else default_store_path()
    if not source.is_file():
        raise InputNotFound(f"no store file at {source}")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    target = Path(args.output).expanduser() if args.output else source.with_name(f"{source.name}.repaired-{stamp}")
    if os.path.lexists(target):
        what = "a symlink" if os.path.islink(target) else "something"
        raise OutputRefused(
            f"{target}: refusing to write the repaired store there: {what} already exists there; "
            "nothing was changed; choose another --output"
        )
    for suffix in SIDECARS:
        if os.path.lexists(target.with_name(target.name + suffix)):
            raise OutputRefused(f"{target}: refusing to write the repaired store there: its {suffix} file exists")
    try:
        found = salvage(source)
        with source.open("rb") as head:
            sqlite_header = head.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError as exc:
        raise StoreError(f"cannot read {source}: {exc.strerror or exc}") from exc
    if not sqlite_header and not (found.blobs or found.objects or found.lost):
        raise NotAStore(f"{source} holds nothing of a ccr store; left as it is")
    _build(target, found)
    damaged = bool(found.lost or found.unnamed_lost or found.metadata_lost) or not _sound(source)
    if not args.output:
        kept = source.with_name(f"{source.name}.{'damaged' if damaged else 'before-repair'}-{stamp}")
        for suffix in ("", *SIDECARS):
            old = source.with_name(source.name + suffix)
            if os.path.lexists(old):
                os.replace(old, kept.with_name(kept.name + suffix))
        for suffix in ("", *SIDECARS):
            new = target.with_name(target.name + suffix)
            if os.path.lexists(new):
                os.replace(new, source.with_name(source.name + suffix))
        if damaged:
            print(f"the damaged store is kept as {kept}")
        else:
            print(f"the store as it was is kept as {kept} (every record in it was salvaged)")
        target = source
    print(f"salvaged {len(found.blobs)} record(s) and {len(found.objects)} typed object(s) into {target}")
    for handle in sorted(found.metadata_lost):
        print(f"kept without its damaged metadata: {handle}")
    for handle in sorted(found.lost):
        print(f"lost: {handle}")
    unnamed = found.unnamed_lost
    if unnamed:
        print(f"lost: {unnamed} more whose handles could not be read")
    lost = len(found.lost) + unnamed
    if lost:
        raise RecordsLost(f"{lost} record(s) could not be salvaged; the rest are in {target}")
    return 0
