"""``ccr list [--session ID] [--kind K] [--producer P] [--since T] [--json]``: what the store holds."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ccr.cli_kit import write_stdout
from ccr.commands._common import opened_store, parse_time, record_filter
from ccr.errors import DamagedMetadata
from ccr.records import Record

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "list",
        help="list stored records (handle, size, kind, session, created)",
        description="List the stored records, oldest first: handle, size in bytes, kind, session, "
        "creation time (UTC) and producer. Filters combine; the payloads are not read.",
    )
    add_filters(parser)
    parser.add_argument("--json", action="store_true", help="print a JSON array of records")
    parser.set_defaults(func=run)
    return parser


def add_filters(parser: argparse.ArgumentParser) -> None:
    """The record filters ``list`` offers."""
    parser.add_argument("--session", metavar="ID", help="only records stored for this session id")
    parser.add_argument("--kind", metavar="K", help="only records of this kind (head, message, tool_result, ...)")
    parser.add_argument(
        "--producer", metavar="P", help="only records from this producer (compactor.claude_code.hooks, ...)"
    )
    parser.add_argument(
        "--since",
        metavar="T",
        type=parse_time,
        help="only records created at or after T: an ISO date or time (UTC unless it says), "
        "or an age such as 7d, 12h, 30m",
    )


def run(args: argparse.Namespace) -> int:
    """List; records whose metadata no longer reads are named after the rest (exit 65).

    Raises:
        DamagedMetadata: some records' metadata is damaged; every other record was listed.
    """
    damaged: DamagedMetadata | None = None
    with opened_store(args, readonly=True) as store:
        try:
            records = store.records(record_filter(args))
        except DamagedMetadata as exc:
            damaged, records = exc, exc.readable
    _print(records, as_json=args.json)
    if damaged is not None:
        raise damaged
    return 0


def _print(records: list[Record], *, as_json: bool) -> None:
    if as_json:
        write_stdout(json.dumps([r.model_dump(mode="json") for r in records], ensure_ascii=False) + "\n")
        return
    lines = [f"{'HANDLE':<36}  {'BYTES':>10}  {'KIND':<12}  {'SESSION':<36}  {'CREATED':<25}  PRODUCER"]
    for r in records:
        meta = r.metadata or {}
        lines.append(
            f"{r.handle:<36}  {r.size:>10}  {meta.get('kind') or '-'!s:<12}  "
            f"{meta.get('session_id') or '-'!s:<36}  "
            f"{r.created_at.isoformat(timespec='seconds'):<25}  {r.producer or '-'}"
        )
    lines.append(f"{len(records)} record(s), {sum(r.size for r in records)} bytes")
    write_stdout("\n".join(lines) + "\n")
