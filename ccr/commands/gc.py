"""``ccr gc --older-than DAYS | --session ID [--dry-run]``: remove old or finished sessions' records, on request.

Garbage collection is explicit: the store never evicts by itself, because
issued output may still cite any handle. ``gc`` removes records (typed
objects are left alone), then rebuilds the file so it shrinks on disk.
"""

from __future__ import annotations

import argparse
from typing import Any

from ccr.commands._common import ago, opened_store, shrink
from ccr.records import RecordFilter

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "gc",
        help="remove records older than DAYS or of one session (explicit; never automatic)",
        description="Remove the records created more than DAYS days ago, or those stored for one "
        "session, then rebuild the file so it shrinks. Prints each removed handle and a total. "
        "Typed objects are kept. Nothing is ever removed unless you run this.",
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--older-than", metavar="DAYS", type=_days, help="records older than DAYS days")
    which.add_argument("--session", metavar="ID", help="records stored for this session id")
    parser.add_argument("--dry-run", action="store_true", help="only print what would be removed")
    parser.add_argument("--no-vacuum", action="store_true", help="do not rebuild the file afterwards")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    if args.session is not None:
        where = RecordFilter(session_id=args.session)
    else:
        where = RecordFilter(before=ago(days=args.older_than))
    with opened_store(args, readonly=args.dry_run) as store:
        doomed = store.records(where)
        for record in doomed:
            print(record.handle)
        size = sum(r.size for r in doomed)
        if args.dry_run:
            print(f"would remove {len(doomed)} record(s), {size} bytes (dry run: nothing removed)")
            return 0
        if doomed:
            store.delete([r.handle for r in doomed])
        print(f"removed {len(doomed)} record(s), {size} bytes")
        if doomed and not args.no_vacuum:
            shrink(store)
    return 0


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        days = -1.0
    if not days >= 0 or days == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days (0 or more)")
    return days
