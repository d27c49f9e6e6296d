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

from compactor.errors import CompactorError

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: tuple[str, ...] = ("replay", "inspect", "tokens")
"""Subcommand modules under ``compactor.commands``, in help order."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compactor",
        description="Reversible, measurable context compaction for coding agents.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"compactor.commands.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``compactor`` script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CompactorError as exc:
        print(f"compactor: {exc.error_id}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
