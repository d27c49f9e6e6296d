"""The ``memory`` command line: parse, call the memory store, print JSON.

Each subcommand lives in ``compactor/memory/commands/<name>.py`` with ``register``
(adds its parser, sets ``func``) and ``run(args) -> int``; both import the
store only when a command runs, so ``memory --help`` opens no database and
loads neither pydantic nor the token counter. Errors become exit codes in
``ccr.cli_kit.run_command``, shared with ``compactor`` and ``ccr``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ccr.cli_kit import UsageParser, run_command

__all__ = ["COMMANDS", "build_parser", "main"]

PROG = "memory"
COMMANDS: tuple[str, ...] = ("remember", "recall", "supersede", "history", "forget", "recover", "mcp")
"""Subcommand modules under ``compactor.memory.commands``, in help order."""

_DB_HELP = "memory database (default: $COMPACTOR_MEMORY_DB, else $COMPACTOR_HOME/memory.db)"
_CCR_HELP = "recovery store for the whole text behind a cut hit (default: $COMPACTOR_HOME/ccr.db)"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("compactor")
    except PackageNotFoundError:
        return "unknown"


class _Version(argparse.Action):
    """``--version``, looked up only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"{PROG} {_version()}")
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog=PROG,
        description="Memory across sessions: remember what an agent learned, recall it by relevance "
        "within a token budget, supersede it with a newer version, see its history, forget it.",
        epilog="Results are JSON on stdout (recover writes the original bytes). Exit codes: 0 ok, "
        "2 usage, 65 bad data (for example memory_too_large), 66 not found, 73 store refused.",
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print the version and exit")
    parser.add_argument("--db", metavar="PATH", help=_DB_HELP)
    parser.add_argument("--ccr-store", metavar="PATH", help=_CCR_HELP)
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=UsageParser
    )
    for name in COMMANDS:
        sub = importlib.import_module(f"compactor.memory.commands.{name}").register(subparsers)
        sub.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS, help=_DB_HELP)
        sub.add_argument("--ccr-store", metavar="PATH", default=argparse.SUPPRESS, help=_CCR_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``memory`` script; returns the exit code."""
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
