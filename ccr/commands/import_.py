"""``ccr import FILE``: bring back an archive written by ``ccr export``, every handle checked first."""

from __future__ import annotations

import argparse
import gzip
import sys
import zlib
from typing import IO, Any, cast

from ccr.archive import Archive, read_archive
from ccr.commands._common import opened_store
from ccr.errors import ArchiveInvalid, InputError, InputNotFound
from ccr.files import open_regular
from ccr.records import Record

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "import",
        help="store the records of an archive written by 'ccr export'",
        description="Read an archive written by 'ccr export' (FILE, or - for stdin) and store its "
        "records under their own handles, keeping their metadata and creation times. "
        "Everything is checked first: a record whose bytes do not match its handle, or an "
        "archive that is cut short, stores nothing (exit 65). Records already stored are kept. "
        "Prints a line for each record that was new, then the counts.",
    )
    parser.add_argument("file", metavar="FILE", help="archive to read (.jsonl, .jsonl.gz, or -)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    blobs, objects = _read(args.file)
    with opened_store(args) as store:
        handles = list(dict.fromkeys(record.handle for record, _ in blobs))
        held = {h for h in handles if store.contains(h)}
        store.restore(blobs, objects)
    records = {record.handle: record for record, _ in blobs}
    new = [h for h in handles if h not in held]
    lines = [f"new {h}  {_kind(records[h])}  {records[h].size:,} bytes" for h in new]
    lines.append(
        f"imported {len(handles)} record(s), {len(new)} new and {len(held)} already stored, "
        f"and {len(objects)} typed object(s)"
    )
    print("\n".join(lines))
    return 0


def _kind(record: Record) -> str:
    """The record's kind as its producer recorded it (``head``, ``tool_result``, ...), else its producer."""
    kind = (record.metadata or {}).get("kind")
    return kind if isinstance(kind, str) and kind else record.producer or "-"


def _read(name: str) -> Archive:
    """The archive's records and objects, checked.

    Raises:
        InputNotFound: the file does not exist.
        InputError: it cannot be read.
        ArchiveInvalid: it is not a whole ccr archive.
        CorruptRecord: an item does not match its handle.
    """
    if name == "-":
        if sys.stdin is None:
            raise InputNotFound("stdin is closed: no archive to import")
        return read_archive(sys.stdin.buffer)
    try:
        with open_regular(name) as raw:  # a FIFO or a device is refused, never read
            if name.endswith(".gz"):
                with gzip.GzipFile(fileobj=raw, mode="rb") as source:
                    return read_archive(cast(IO[bytes], source))
            return read_archive(raw)
    except FileNotFoundError as exc:
        raise InputNotFound(f"no such file: {name}") from exc
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise ArchiveInvalid(f"{name} is not a whole gzip file: {exc}") from exc
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror or exc}") from exc
