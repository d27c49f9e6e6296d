"""``ccr export FILE``: write every record and typed object to a portable archive (see ``ccr.archive``)."""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path
from typing import IO, Any, cast

from ccr.archive import write_archive
from ccr.commands._common import opened_store
from ccr.errors import OutputWriteFailed
from ccr.files import check_output, describe_os_error, output_file

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "export",
        help="write the whole store to a portable archive file",
        description="Write every record (exact bytes, handle and metadata) and typed object to "
        "FILE as JSON Lines (gzip-compressed when FILE ends in .gz). The file is written "
        "whole or not at all, and a corrupt record refuses the export (exit 65): run "
        "'ccr repair' first. 'ccr import FILE' reads it back, checking every handle.",
    )
    parser.add_argument("file", metavar="FILE", help="archive to write (.jsonl, or .jsonl.gz)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    target = Path(args.file)
    store_path = getattr(args, "store", None)
    check_output(target, protected=[store_path], what="archive")  # before the store is even opened
    with opened_store(args, readonly=True) as store:
        path = getattr(store, "path", None)
        records = store.records()
        objects = list(store.iter_objects())
        blobs = ((r, store.get(r.handle)) for r in records)  # get refuses a corrupt record
        try:
            with output_file(target, protected=[store_path, path], what="archive") as raw:
                if target.name.endswith(".gz"):
                    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as out:
                        written = write_archive(
                            cast(IO[bytes], out), blobs, objects, counts=(len(records), len(objects))
                        )
                else:
                    written = write_archive(raw, blobs, objects, counts=(len(records), len(objects)))
        except OSError as exc:
            raise OutputWriteFailed(f"cannot write the archive {target}: {describe_os_error(exc)}") from exc
    print(f"exported {written[0]} record(s) and {written[1]} typed object(s) to {target}")
    return 0
