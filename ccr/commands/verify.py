"""``ccr verify``: re-hash every record; name the corrupt ones and fail if any."""

from __future__ import annotations

import argparse
import json
import sqlite3
from typing import Any

from ccr._sqlite import SQLiteStore
from ccr._sqlite_read import damage_hint
from ccr.commands._common import opened_store
from ccr.errors import CorruptRecord, DamagedFile, StoreError, WritesLost
from ccr.progress import progress

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "verify",
        help="re-hash every record, check its metadata, and name the damaged ones",
        description="Re-hash every stored record and typed object, and check that each record's "
        "metadata still reads as it was written. Prints the handle of each one whose bytes no "
        "longer match or whose metadata is damaged, one per line, and exits 65 if there is any; "
        "otherwise prints one line saying how many were checked. Exit codes: 65 for damage "
        "found (a corrupt record, damaged metadata, acknowledged writes the file no longer holds, or a file "
        "SQLite reports damaged: run 'ccr repair'), 73 when "
        "the store cannot be read at all, 0 when every record matches.",
    )
    parser.add_argument("--json", action="store_true", help='print {"corrupt": [...]} as JSON')
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Verify; the exit code rule: 65 for damage found (a corrupt record or a damaged file), 73 when
    the store cannot be read at all (missing, not a store, permissions, I/O), 0 when all is well."""
    try:
        with opened_store(args, readonly=True) as store:
            stats = store.stats()
            # A bar on a terminal only (ccr.progress): piped, the output is exactly the same.
            with progress("verifying", stats.payload_bytes, unit="bytes") as bar:
                corrupt = store.verify(progress=bar.advance)
            lost = store.lost_writes() if isinstance(store, SQLiteStore) else None
    except StoreError as exc:
        cause = exc.__cause__
        if not isinstance(exc, CorruptRecord) and isinstance(cause, sqlite3.Error) and damage_hint(cause):
            raise DamagedFile(str(exc)) from exc
        raise
    if args.json:
        missing = 0 if lost is None else lost[0] - lost[1]
        print(
            json.dumps({"corrupt": corrupt, "records": stats.entries, "objects": stats.objects, "writes_lost": missing})
        )
    else:
        for handle in corrupt:
            print(handle)
        if not corrupt and lost is None:
            print(
                f"verified {stats.entries} record(s) and {stats.objects} typed object(s): every one matches its handle"
            )
    if lost is not None:
        acked, held = lost
        raise WritesLost(
            f"the store acknowledged {acked} record(s) ever stored but holds {held}: {acked - held} acknowledged "
            "write(s) are gone (its write-ahead log was deleted before a checkpoint, or the file was put back "
            "from an older copy); 'ccr repair' keeps what is left and starts a new count"
        )
    if corrupt:
        raise CorruptRecord(
            f"{len(corrupt)} record(s) are damaged (their bytes no longer match their handle, or their "
            f"metadata no longer reads as written): {', '.join(corrupt)}; 'ccr repair' keeps every record "
            "whose bytes still match"
        )
    return 0
