"""The ``compactor`` command line: parse, call the library, print.

Each subcommand lives in ``compactor/commands/<name>.py`` and exposes
``register(subparsers)`` (adds its parser, sets ``func``) and a ``run(args)``
returning an exit code. Errors become exit codes here, in one place:
a ``CompactorError`` prints ``error_id: message`` to stderr and exits with
its ``exit_code``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from compactor._cli import UsageParser, run_command

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: tuple[str, ...] = ("replay", "inspect", "tokens", "hook")
"""Subcommand modules under ``compactor.commands``, in help order."""


def build_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="compactor",
        description="Reversible, measurable context compaction for coding agents.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=UsageParser)
    for name in COMMANDS:
        importlib.import_module(f"compactor.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``compactor`` script; returns the exit code."""
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
