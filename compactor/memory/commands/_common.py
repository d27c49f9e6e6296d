"""What the subcommands share: the opened database, JSON out, text in (argv or stdin)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccr.cli_kit import write_stdout

if TYPE_CHECKING:
    from compactor.memory.store import MemoryDB

__all__ = ["add_text_arguments", "opened_memory", "print_json", "read_text"]


@contextmanager
def opened_memory(args: argparse.Namespace, *, readonly: bool = False) -> Iterator[MemoryDB]:
    """The database named by ``--db`` (else the default), its recovery store ``--ccr-store``; closed after.

    Reading commands pass ``readonly``: an existing database is then only
    read (it may be on read-only media), and nothing is created. The default
    database, while it does not exist, reads as an empty store (see
    ``open_memory``); a ``--db`` that names no file is most likely a typo and
    is refused, as is an empty file. Writing commands make a ``--db`` only in
    a folder that exists; the default database's folder is made as needed.

    Raises:
        InputNotFound: ``--db`` names no file (reading), or a folder that does not exist (writing).
        NotAStore: ``--db`` names an empty file (reading).
        MemoryConfigError, StoreError: the database cannot be opened.
    """
    from ccr.sqlite_kit.files import require_folder, require_store_file
    from compactor.memory.store import open_memory

    named = getattr(args, "db", None)
    if named is not None:
        path = Path(named).expanduser()
        if readonly:
            require_store_file(path, kind="memory database")
        else:
            require_folder(path, kind="memory database")
    db = open_memory(named, recovery=getattr(args, "ccr_store", None), readonly=readonly)
    try:
        yield db
    finally:
        db.close()


def print_json(value: Any) -> None:
    """One JSON document and a newline on stdout."""
    write_stdout(json.dumps(value, ensure_ascii=False) + "\n")


def add_text_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    """``TEXT`` or ``--stdin``, exactly one."""
    parser.add_argument("text", nargs="?", metavar="TEXT", help=f"{what} (or use --stdin)")
    parser.add_argument("--stdin", action="store_true", help=f"read {what} from stdin as UTF-8 (at most 256 KiB)")


def read_text(args: argparse.Namespace) -> str:
    """The text from argv or stdin; stdin is read up to one byte past the limit, never more.

    Raises:
        InvalidRequest: both or neither of TEXT and --stdin were given.
        InputNotFound: --stdin and stdin is closed.
        InputError: stdin cannot be read.
        TextTooLarge: stdin holds more than 256 KiB.
        InvalidText: stdin is not UTF-8.
    """
    from compactor.memory.errors import InputError, InputNotFound, InvalidRequest, InvalidText, TextTooLarge
    from compactor.memory.store import MAX_TEXT_BYTES

    if args.stdin == (args.text is not None):
        raise InvalidRequest("give the text as an argument or with --stdin, not both and not neither")
    if not args.stdin:
        return str(args.text)
    if sys.stdin is None:
        raise InputNotFound("stdin is closed: nothing to read")
    try:
        data = sys.stdin.buffer.read(MAX_TEXT_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read stdin: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise InputNotFound(f"stdin is closed: {exc}") from exc
    if len(data) > MAX_TEXT_BYTES:
        raise TextTooLarge(f"stdin holds more than {MAX_TEXT_BYTES:,} bytes (256 KiB); a memory holds at most that")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidText(f"stdin is not UTF-8 text: {exc.reason} at byte {exc.start}") from exc
