"""``ccr put [FILE|-]``: store bytes, print their handle."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ccr._budget import resolve_max_bytes
from ccr.commands._common import opened_store
from ccr.errors import InputError, InputNotFound

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "put",
        help="store a file (or stdin) and print its handle",
        description="Store the exact bytes of FILE (or stdin) and print the handle. "
        "Storing the same bytes again prints the same handle and writes nothing.",
    )
    parser.add_argument("file", nargs="?", default="-", metavar="FILE", help="file to store; - for stdin")
    parser.add_argument("--content-type", default="text/plain", help="content type to record")
    parser.add_argument("--producer", default="ccr-cli", help="who stored it (recorded)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    data = _read(args.file)
    with opened_store(args) as store:
        handle = store.put(data, content_type=args.content_type, producer=args.producer)
    print(handle)
    return 0


def _read(name: str) -> bytes:
    """The input bytes.

    Raises:
        InputNotFound: the file does not exist.
        InputError: it cannot be read.
    """
    if name == "-":
        if sys.stdin is None:
            raise InputNotFound("stdin is closed: nothing to store")
        return sys.stdin.buffer.read(resolve_max_bytes() + 1)  # one byte past the budget is enough to refuse
    from ccr.files import open_regular

    try:
        with open_regular(name) as handle:  # a FIFO or a device is refused, never read
            return handle.read(resolve_max_bytes() + 1)
    except FileNotFoundError as exc:
        raise InputNotFound(f"no such file: {name}") from exc
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror or exc}") from exc
