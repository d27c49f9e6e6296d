"""``ccr info HANDLE``: a record's metadata (or a typed object's states) as JSON."""

from __future__ import annotations

import argparse
from typing import Any

from ccr.commands._common import opened_store
from ccr.handles import parse_ref

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "info",
        help="print a record's metadata as JSON",
        description="Print the metadata of the record HANDLE names (size, content type, producer, "
        "tokens, created_at), or a typed object with its currentness and lifecycle, as JSON.",
    )
    parser.add_argument("handle", metavar="HANDLE", help="handle, marker or object id")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    ref = parse_ref(args.handle)
    with opened_store(args, readonly=True) as store:
        if ref.kind == "object":
            print(store.get_object(ref.handle).model_dump_json(indent=2))
        else:
            print(store.record(ref.handle).model_dump_json(indent=2))
    return 0
