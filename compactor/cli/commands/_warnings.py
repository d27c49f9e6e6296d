"""How the commands that read transcripts print the reader's warnings on stderr.

Real Claude Code sessions hold shapes the reader repairs (a boundary whose
parent was never written, say), often several in one file: one line per
warning would bury the output. By default, held until the read is done, the
shapes Claude Code writes itself (``SHAPE_KINDS``) are one line per file with
their count by kind, and each other kind repeated in a file is one line with
its first occurrence and how many more there are. With ``verbose``
(``--verbose``, or ``--strict``, where the user asked to see every problem)
each warning is its own line, as it is found.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from compactor.claude_code.transcript import SHAPE_KINDS, ReadWarning

__all__ = ["WarningPrinter", "add_reading_options", "printed_warnings"]


def add_reading_options(parser: argparse.ArgumentParser) -> None:
    """The options of a command that reads a transcript: ``--strict`` and ``--verbose``."""
    parser.add_argument(
        "--strict",
        action="store_true",
        help="treat the first bad line as an error (exit 65); the shapes Claude Code writes itself stay warnings",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="print every warning about the transcript (default: one line per kind, with a count)",
    )


class WarningPrinter:
    """The ``warn`` callback for the reader: prints at once (verbose), or counts and prints at ``flush``."""

    def __init__(self, *, verbose: bool, prog: str = "compactor") -> None:
        self.verbose = verbose
        self.prog = prog
        self._held: dict[tuple[str, str], list[ReadWarning]] = {}

    def __call__(self, warning: ReadWarning) -> None:
        if self.verbose:
            self._print(str(warning))
        else:
            self._held.setdefault((warning.file, warning.kind), []).append(warning)

    def flush(self) -> None:
        """Print what was held, file by file in the order found: the shapes Claude Code writes itself on
        one line with their count by kind, each other kind on one line with its first occurrence."""
        files: dict[str, list[list[ReadWarning]]] = {}
        for (file, _), group in self._held.items():
            files.setdefault(file, []).append(group)
        for file, groups in files.items():
            shapes = [g for g in groups if g[0].kind in SHAPE_KINDS]
            if sum(len(g) for g in shapes) > 1:
                counts = ", ".join(f"{len(g)} {g[0].kind}" for g in sorted(shapes, key=lambda g: -len(g)))
                self._print(
                    f"{file}: {sum(len(g) for g in shapes)} shapes Claude Code writes, read as it meant "
                    f"({counts}; --verbose lists them)"
                )
                groups = [g for g in groups if g[0].kind not in SHAPE_KINDS]
            for group in groups:
                first = group[0]
                if len(group) == 1:
                    self._print(str(first))
                    continue
                self._print(
                    f"{file}: {len(group)} warnings of kind {first.kind}, the first: {_where(first)}{first.message} "
                    f"({len(group) - 1} more like it; --verbose lists each)"
                )
        self._held.clear()

    def _print(self, text: str) -> None:
        print(f"{self.prog}: warning: {text}", file=sys.stderr)


def _where(warning: ReadWarning) -> str:
    return "" if warning.line is None else f"line {warning.line}: "


@contextmanager
def printed_warnings(*, verbose: bool) -> Iterator[WarningPrinter]:
    """A ``WarningPrinter`` whose held warnings are printed on leaving, even when the read failed."""
    printer = WarningPrinter(verbose=verbose)
    try:
        yield printer
    finally:
        printer.flush()
