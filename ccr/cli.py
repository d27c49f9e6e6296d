"""The ``ccr`` command line: parse, call the store, print.

Each subcommand lives in ``ccr/commands/<name>.py`` with ``register``
(adds its parser, sets ``func``) and ``run(args) -> int``. Errors become
exit codes here, in one place: a ``CompactorError`` prints
``ccr: <error_id>: <message>`` to stderr and exits with its ``exit_code``;
a usage mistake caught by the parser exits 2 as ``ccr_usage``. stdout
carries only results (payloads byte-exact).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from compactor._cli import UsageParser, run_command

__all__ = ["COMMANDS", "build_parser", "main"]

PROG = "ccr"
COMMANDS: tuple[str, ...] = ("put", "get", "info", "stats", "verify", "mcp")
"""Subcommand modules under ``ccr.commands``, in help order."""


def build_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog=PROG,
        description="Content-addressed recovery store: put bytes, get them back exactly.",
        epilog="The store is --store PATH, else $COMPACTOR_HOME/ccr.db (~/.compactor/ccr.db).",
    )
    parser.add_argument("--store", metavar="PATH", help="store file (default: $COMPACTOR_HOME/ccr.db)")
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=UsageParser
    )
    for name in COMMANDS:
        sub = importlib.import_module(f"ccr.commands.{name}").register(subparsers)
        sub.add_argument(
            "--store", metavar="PATH", default=argparse.SUPPRESS, help="store file (overrides the env)"
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ccr`` script; returns the exit code."""
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
