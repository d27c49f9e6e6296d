"""``compactor memory recover HANDLE``: the exact bytes behind a cut hit's recovery handle."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "recover",
        help="write the whole text behind a hit's recovery_handle to stdout, byte-exact",
        description="Write the original bytes named by HANDLE (a hit's recovery_handle) to stdout, "
        "unchanged. They live in the recovery store (--ccr-store, default $COMPACTOR_HOME/ccr.db); "
        "no memory database is opened.",
    )
    parser.add_argument("handle", metavar="HANDLE", help="ccr_<hex> or <<ccr:ccr_...>>")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from ccr.cli_kit import write_stdout_bytes
    from ccr.handles import parse_ref
    from ccr.store import open_store

    parse_ref(args.handle)
    with open_store(getattr(args, "ccr_store", None), readonly=True) as store:
        data = store.get(args.handle)
    write_stdout_bytes(data)
    return 0
