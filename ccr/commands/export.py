"""``ccr export FILE``: write every record and typed object to a portable archive (see ``ccr.archive``)."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from ccr.archive import open_archive, write_archive
from ccr.commands._common import opened_store
from ccr.errors import InvalidRequest, StoreError

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
    with opened_store(args, readonly=True) as store:
        path = getattr(store, "path", None)
        if path is not None:
            _refuse_the_store_itself(target, Path(path))
        records = store.records()
        objects = list(store.iter_objects())
        blobs = ((r, store.get(r.handle)) for r in records)  # get refuses a corrupt record
        try:
            fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or Path("."))
        except OSError as exc:
            raise StoreError(f"cannot write the archive {target}: {exc.strerror or exc}") from exc
        os.close(fd)
        try:
            with open_archive(Path(temp), "wb", gzipped=target.name.endswith(".gz")) as out:
                written = write_archive(out, blobs, objects, counts=(len(records), len(objects)))
            os.replace(temp, target)
        except OSError as exc:
            raise StoreError(f"cannot write the archive {target}: {exc.strerror or exc}") from exc
        finally:
            if os.path.exists(temp):
                os.unlink(temp)
    print(f"exported {written[0]} record(s) and {written[1]} typed object(s) to {target}")
    return 0


def _refuse_the_store_itself(target: Path, store: Path) -> None:
    """Refuse an archive path that is the store file or one of its sidecars (it would replace the store).

    Raises:
        InvalidRequest: ``target`` names the store, its ``-wal`` or its ``-shm`` file.
    """
    folder = store.parent.resolve(strict=False)
    own = {store.resolve(strict=False)} | {folder / f"{store.name}{end}" for end in ("-wal", "-shm", "-journal")}
    if target.resolve(strict=False) in own:
        raise InvalidRequest(f"{target}: that is the store being exported; choose another FILE")
