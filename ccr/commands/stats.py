"""``ccr stats [--json]``: how full the store is.

An existing store file is read directly (``ccr._sqlite_read``), with the
standard library alone: neither pydantic nor the store's models load. A
store that does not exist yet is opened as every reading command opens one:
the default reads as empty, a ``--store`` that names no file is an error, and
nothing is created.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path
from typing import Any

__all__ = ["register", "run", "stats_of_file"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "stats",
        help="print entries, payload bytes, budget and fullness",
        description="Print the number of records and typed objects, payload bytes, the byte "
        "budget and whether the store is full. Token figures are inferred from what "
        "producers declared.",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    stats = stats_of_file(getattr(args, "store", None))
    if stats is None:
        from ccr.commands._common import opened_store

        with opened_store(args, readonly=True) as store:
            stats = store.stats().model_dump()
    if args.json:
        print(json.dumps(stats, ensure_ascii=False, separators=(",", ":")))
        return 0
    for key, value in stats.items():
        shown = str(value).lower() if isinstance(value, bool) else value
        print(f"{key}: {shown}")
    return 0


def stats_of_file(path: str | Path | None) -> dict[str, Any] | None:
    """``StoreStats``'s fields for the store file at ``path`` (None: the default), read directly;
    None when there is no such file yet (or ``path`` names the in-memory store).

    Raises:
        StoreConfigError: the budget setting is invalid.
        UnsafeStorePath, NotAStore, StoreError: as opening the store read-only raises them.
    """
    from ccr._budget import resolve_max_bytes
    from ccr._sqlite_read import damage_hint, open_read_only, page_cap, read_stats
    from ccr.errors import StoreError
    from ccr.paths import default_store_path
    from ccr.sqlite_kit.files import file_size

    if path == ":memory:":
        return None
    target = default_store_path() if path is None else Path(path).expanduser()
    if file_size(target) == 0:  # no store there: opened_store says what that reads as
        return None
    max_bytes = resolve_max_bytes()
    conn, _ = open_read_only(target)
    try:
        return read_stats(conn, path=target, max_bytes=max_bytes, cap=page_cap(conn, max_bytes))
    except sqlite3.Error as exc:
        raise StoreError(f"store {target} failed: {exc}{damage_hint(exc)}") from exc
    finally:
        conn.close()
