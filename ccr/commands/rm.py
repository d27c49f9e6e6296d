"""``ccr rm HANDLE...``: remove records (and typed objects) by hand; the store never does it by itself."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ccr.commands._common import opened_store, shrink
from ccr.errors import DiskFull
from ccr.paths import default_store_path

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "rm",
        help="remove records by handle",
        description="Remove the records (or typed objects) the handles name, all in one "
        "transaction: if any handle names nothing stored, nothing is removed (exit 66). "
        "Prints each removed handle. Output that cites a removed handle can no longer be "
        "recovered; the store never removes anything by itself.",
    )
    parser.add_argument("handles", nargs="+", metavar="HANDLE", help="handle, marker or object id")
    parser.add_argument("--vacuum", action="store_true", help="then rebuild the file so that it shrinks on disk")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    try:
        with opened_store(args) as store:
            removed = store.delete(args.handles)
            for handle in removed:
                print(handle)
            if args.vacuum:
                shrink(store)
    except DiskFull as exc:
        # The usual removal needs room for its log; on a full disk the file is changed in place.
        path = Path(args.store).expanduser() if getattr(args, "store", None) else default_store_path()
        print(f"ccr: warning: {exc}; removing in place instead (the file keeps its size)", file=sys.stderr)
        from ccr._sqlite import delete_in_place

        for handle in delete_in_place(path, args.handles):
            print(handle)
        if args.vacuum:
            print(
                "ccr: warning: the file was not shrunk: there is no room on the disk to rebuild it; "
                "run 'ccr rm --vacuum' or 'ccr gc' again once there is",
                file=sys.stderr,
            )
    return 0
