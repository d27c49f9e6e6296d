"""``compactor memory history ID``: every version of a memory, oldest first."""

from __future__ import annotations

import argparse
from typing import Any

from compactor.memory.commands._common import opened_memory, print_json

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "history",
        help="every version of a memory, oldest first",
        description='Print {history: [...], basis: "inferred"} as JSON: the whole chain of versions '
        "that ID belongs to (ID may be any of them), oldest first. The same list is also under "
        "versions, its old key, for this release. A broken chain or a cycle is an error "
        "(memory_broken_chain, exit 65), never a partial answer.",
    )
    parser.add_argument("id", metavar="ID", help="any version of the memory (mem_...)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from compactor.memory import answers
    from compactor.memory.store import check_id

    check_id(args.id)
    with opened_memory(args, readonly=True) as db:
        print_json(answers.history(db, args.id, legacy=True))
    return 0
