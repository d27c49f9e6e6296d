"""``ccr get HANDLE [--query Q | --lines A:B | --bytes A:B]``: recover bytes to stdout."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ccr.commands._common import opened_store, parse_span, write_stdout
from ccr.handles import parse_ref
from ccr.retrieval import check_selection, notice_text

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "get",
        help="write what a handle names to stdout, byte-exact",
        description="Write the original bytes named by HANDLE to stdout, unchanged. "
        "HANDLE may be ccr_<hex>, <<ccr:ccr_...>>, ccr:ccr_... or ccr://<id>[/field/path].",
    )
    parser.add_argument("handle", metavar="HANDLE", help="handle, marker or ccr:// pointer")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument(
        "--query",
        metavar="Q",
        help="only the best-matching whole units, with gap markers "
        "(no match: says so on stderr and writes the whole original)",
    )
    choice.add_argument(
        "--lines",
        metavar="A:B",
        help="lines A to B, 1-based and inclusive (A: or :B allowed); past the end: says so on stderr",
    )
    choice.add_argument(
        "--bytes",
        metavar="A:B",
        dest="byte_range",
        help="bytes [A, B), widened to whole UTF-8 characters (A: or :B allowed)",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    ref = args.handle
    parse_ref(ref)
    lines = parse_span(args.lines, first_default=1, last_default=sys.maxsize) if args.lines is not None else None
    byte_range = (
        parse_span(args.byte_range, first_default=0, last_default=sys.maxsize) if args.byte_range is not None else None
    )
    check_selection(query=args.query, lines=lines, byte_range=byte_range)
    with opened_store(args, readonly=True) as store:
        result = store.retrieve(ref, query=args.query, lines=lines, byte_range=byte_range)
    notice = notice_text(result, query=args.query)
    if notice is not None:  # before the data, so a reader of both streams sees it first
        print(notice, file=sys.stderr, flush=True)
    write_stdout(result.data)
    return 0
