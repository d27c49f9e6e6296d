"""``compactor memory remember TEXT|--stdin``: keep a memory, print its id."""

from __future__ import annotations

import argparse
from typing import Any

from compactor.memory.commands._common import add_text_arguments, opened_memory, print_json, read_text

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "remember",
        help="keep a memory (the same text twice is one memory)",
        description="Store TEXT as a current memory and print {id, created_at, created, basis} as JSON. "
        "The id is mem_ + 16 hex of the text's sha256; remembering the same text again changes "
        "nothing (created is false). Refused: empty text, over 256 KiB (memory_too_large, exit 65), "
        "and text stored only as a superseded version (memory_superseded, exit 65).",
    )
    add_text_arguments(parser, "the text to remember")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from compactor.memory import answers
    from compactor.memory.store import check_text

    text = check_text(read_text(args))
    with opened_memory(args) as db:
        print_json(answers.remember(db, text))
    return 0
