"""What the subcommands share: opening the chosen store, writing bytes out."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from ccr.cli_kit import write_stdout_bytes
from ccr.errors import InvalidRequest
from ccr.records import RecordFilter
from ccr.store import Store, open_store

__all__ = ["ago", "opened_store", "parse_span", "parse_time", "record_filter", "shrink", "write_stdout"]

_AGE = re.compile(r"(\d+)([dhm])")
_AGE_UNITS = {"d": "days", "h": "hours", "m": "minutes"}


@contextmanager
def opened_store(args: argparse.Namespace, *, readonly: bool = False) -> Iterator[Store]:
    """The store named by ``--store``, else the default (``$COMPACTOR_HOME/ccr.db``); closed after.

    Reading commands pass ``readonly``: an existing store is then only read,
    so one on read-only media works, and nothing is ever created (a ``--store``
    that names no file is ``InputNotFound``). Writing commands make a store
    named by ``--store`` only in a folder that exists; the default one's
    folder (``$COMPACTOR_HOME``) is made as needed.

    Raises:
        StoreConfigError: the budget setting is invalid.
        InputNotFound: ``--store`` names no file (reading), or a folder that does not exist.
        StoreError: the store cannot be opened.
    """
    named = getattr(args, "store", None)
    store = open_store(named, readonly=readonly, make_folders=named is None, must_exist=readonly and named is not None)
    try:
        yield store
    finally:
        store.close()


def parse_span(text: str, *, first_default: int, last_default: int) -> tuple[int, int]:
    """Parse ``A:B`` where either side may be omitted (``A:``, ``:B``).

    Raises:
        InvalidRequest: not two optional non-negative integers around one colon.
    """
    head, sep, tail = text.partition(":")
    if not sep or not all(part == "" or (part.isascii() and part.isdigit()) for part in (head, tail)):
        raise InvalidRequest(f"bad range {text!r}: expected A:B with non-negative integers")
    first = int(head) if head else first_default
    last = int(tail) if tail else last_default
    return first, last


def write_stdout(data: bytes) -> None:
    """Write bytes to stdout unchanged (no newline translation, no encoding).

    Raises:
        OutputWriteError: stdout is closed or the system refused the write.
    """
    write_stdout_bytes(data)


def parse_time(text: str) -> datetime:
    """A point in time: ISO 8601 (UTC when no offset is given) or an age back from now (``7d``, ``12h``, ``30m``).

    Raises:
        argparse.ArgumentTypeError: neither form.
    """
    age = _AGE.fullmatch(text.strip())
    if age:
        return ago(**{_AGE_UNITS[age.group(2)]: int(age.group(1))})
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither an ISO date or time nor an age such as 7d, 12h or 30m"
        ) from exc
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def ago(**age: float) -> datetime:
    """Now (UTC) less ``age`` (``timedelta`` keywords); an age reaching before year 1 gives the earliest time."""
    try:
        return datetime.now(UTC) - timedelta(**age)
    except OverflowError:
        return datetime.min.replace(tzinfo=UTC)


def record_filter(args: argparse.Namespace) -> RecordFilter:
    """The ``RecordFilter`` the ``--session``, ``--kind``, ``--producer`` and ``--since`` options ask for."""
    return RecordFilter(
        session_id=getattr(args, "session", None),
        kind=getattr(args, "kind", None),
        producer=getattr(args, "producer", None),
        since=getattr(args, "since", None),
    )


def shrink(store: Store) -> None:
    """Rebuild the store file after removals and say on stderr how much it shrank.

    A store busy with another process is left as it is (the removal already
    happened); the next ``ccr gc`` or ``ccr rm --vacuum`` shrinks it.
    """
    from ccr.errors import StoreError

    try:
        saved = store.vacuum()
    except StoreError as exc:
        print(f"ccr: warning: the file was not shrunk: {exc}", file=sys.stderr)
        return
    print(f"ccr: the store file shrank by {saved} bytes", file=sys.stderr)
