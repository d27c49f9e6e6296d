"""``ccr stats [--json]``: how full the store is."""

from __future__ import annotations

import argparse
from typing import Any

from ccr.commands._common import opened_store

__all__ = ["register", "run"]


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
    with opened_store(args, readonly=True) as store:
        stats = store.stats()
    if args.json:
        print(stats.model_dump_json())
        return 0
    for key, value in stats.model_dump().items():
        shown = str(value).lower() if isinstance(value, bool) else value
        print(f"{key}: {shown}")
    return 0
