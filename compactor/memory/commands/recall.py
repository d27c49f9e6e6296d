"""``compactor memory recall QUERY [--limit N] [--token-budget N]``: the best-matching current memories."""

from __future__ import annotations

import argparse
from typing import Any

from compactor.memory.commands._common import opened_memory, print_json

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "recall",
        help="the current memories that best match QUERY, within a token budget",
        description="Print {hits: [{id, text, score, tokens_added, basis, recovery_handle?}], basis} "
        "as JSON: current memories ranked by BM25, those scoring under 0.1 dropped (an off-topic "
        "query recalls nothing), packed greedily into the token budget. Within a budget, a hit over "
        "500 tokens (or a best hit larger than the whole budget) comes back as its head plus a "
        "recovery_handle (see: compactor memory recover).",
    )
    parser.add_argument("query", metavar="QUERY", help="what to recall")
    parser.add_argument("--limit", type=int, default=5, metavar="N", help="at most N hits (default 5)")
    parser.add_argument(
        "--token-budget",
        type=int,
        default=2000,
        metavar="N",
        help="at most N tokens of hits (default 2000; 0 means unlimited; negative is refused)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Recall; damaged matching memories are left out, named on stderr, and exit 65.

    Raises:
        DamagedMemory: some matching memories are damaged (the intact hits were printed).
    """
    from compactor.memory import answers
    from compactor.memory.errors import DamagedMemory
    from compactor.memory.store import check_token_budget

    check_token_budget(args.token_budget)
    with opened_memory(args, readonly=True) as db:
        print_json(answers.recall(db, args.query, limit=args.limit, token_budget=args.token_budget))
        damaged = sorted(db.damaged)
    if damaged:  # the intact hits were printed; the exit code and stderr say what was left out
        raise DamagedMemory(
            f"{len(damaged)} matching memor{'y is' if len(damaged) == 1 else 'ies are'} damaged and left out "
            f"(their text no longer matches their id): {', '.join(damaged)}; 'compactor memory forget ID' removes one",
            ids=damaged,
        )
    return 0
