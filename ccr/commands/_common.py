"""What the subcommands share: opening the chosen store, writing bytes out."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ccr.errors import InvalidRequest
from ccr.store import Store, open_store

__all__ = ["opened_store", "parse_span", "write_stdout"]


@contextmanager
def opened_store(args: argparse.Namespace) -> Iterator[Store]:
    """The store named by ``--store``, else the default (``$COMPACTOR_HOME/ccr.db``); closed after.

    Raises:
        StoreConfigError: the budget setting is invalid.
        StoreError: the store cannot be opened.
    """
    store = open_store(getattr(args, "store", None))
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
    """Write bytes to stdout unchanged (no newline translation, no encoding)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
