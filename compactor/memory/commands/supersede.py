"""``compactor memory supersede ID TEXT|--stdin``: replace a current memory by a new version."""

from __future__ import annotations

import argparse
from typing import Any

from compactor.memory.commands._common import add_text_arguments, opened_memory, print_json, read_text

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "supersede",
        help="replace a current memory by a new version",
        description="In one transaction, end memory ID (it stays in its history but is never "
        "recalled again) and store TEXT as the version that supersedes it; print the new version "
        "as JSON ({id, supersedes, created_at, basis}, and for this release its other fields too). "
        "ID must be current, and TEXT different and not already stored.",
    )
    parser.add_argument("id", metavar="ID", help="the current memory to replace (mem_...)")
    add_text_arguments(parser, "the new version's text")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from compactor.memory import answers
    from compactor.memory.store import check_id, check_text

    check_id(args.id)
    text = check_text(read_text(args))
    with opened_memory(args) as db:
        print_json(answers.supersede(db, args.id, text, legacy=True))
    return 0
