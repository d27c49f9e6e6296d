"""``compactor memory forget ID``: delete one version and link its neighbours."""

from __future__ import annotations

import argparse
from typing import Any

from compactor.memory.commands._common import opened_memory, print_json

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "forget",
        help="delete one version of a memory",
        description="Delete version ID and link the versions before and after it to each other, in "
        "one transaction; print {forgotten: true|false, basis}. Forgetting the current version does not "
        "make the one it superseded current again. An unknown ID prints {forgotten: false}.",
    )
    parser.add_argument("id", metavar="ID", help="the version to delete (mem_...)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from compactor.memory import answers
    from compactor.memory.store import check_id

    check_id(args.id)
    with opened_memory(args) as db:
        print_json(answers.forget(db, args.id))
    return 0
