"""``ccr rm HANDLE...``: remove records (and typed objects) by hand; the store never does it by itself."""

from __future__ import annotations

import argparse
from typing import Any

from ccr.commands._common import opened_store, shrink

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
    parser.add_argument(
        "--vacuum", action="store_true", help="then rebuild the file so that it shrinks on disk"
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    with opened_store(args) as store:
        removed = store.delete(args.handles)
        for handle in removed:
            print(handle)
        if args.vacuum:
            shrink(store)
    return 0
