"""The ``compactor memory`` command: parse, call the memory store, print JSON.

``compactor memory`` is one command of the ``compactor`` command line
(``compactor.cli.COMMANDS`` names this module); ``python -m
compactor.memory ARGS`` runs ``compactor memory ARGS``. Each subcommand
lives in ``compactor/memory/commands/<name>.py`` with ``register`` (adds
its parser, sets ``func``) and ``run(args) -> int``; both import the store
only when a command runs, so ``compactor memory --help`` opens no database
and loads neither pydantic nor the token counter. Errors become exit codes
in ``ccr.cli_kit.run_command``: ``compactor: error_id: message`` on
stderr, with the ids the memory commands always had (a usage error is
``memory_usage``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from ccr.cli_kit import UsageParser, VersionAction

__all__ = ["COMMANDS", "NAME", "MemoryParser", "main", "register"]

NAME = "memory"
"""The command's name under ``compactor``."""

COMMANDS: tuple[str, ...] = ("remember", "recall", "supersede", "history", "forget", "recover", "mcp")
"""Subcommand modules under ``compactor.memory.commands``, in help order."""

USAGE_ERROR_ID = "memory_usage"

_SUMMARY = "memories across sessions: remember, recall, supersede, history, forget, recover, mcp"
_DB_HELP = "memory database (default: $COMPACTOR_MEMORY_DB, else $COMPACTOR_HOME/memory.db)"
_CCR_HELP = "recovery store for the whole text behind a cut hit (default: $COMPACTOR_HOME/ccr.db)"


class MemoryParser(UsageParser):
    """A memory subcommand's parser: its usage errors are ``memory_usage``, exit 2."""

    usage_error_id = USAGE_ERROR_ID


def register(subparsers: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
    """Add ``memory`` with its global options and every subcommand to ``subparsers``; returns its parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        NAME,
        help=_SUMMARY,
        description="Memory across sessions: remember what an agent learned, recall it by relevance "
        "within a token budget, supersede it with a newer version, see its history, forget it.",
        epilog="Results are JSON on stdout (recover writes the original bytes). Exit codes: 0 ok, "
        "2 usage, 65 bad data (for example memory_too_large), 66 not found, 73 store refused.",
    )
    if isinstance(parser, UsageParser):
        parser.usage_error_id = USAGE_ERROR_ID
    parser.add_argument("--version", action=VersionAction)
    parser.add_argument("--db", metavar="PATH", help=_DB_HELP)
    parser.add_argument("--ccr-store", metavar="PATH", help=_CCR_HELP)
    commands = parser.add_subparsers(dest="memory_command", metavar="COMMAND", required=True, parser_class=MemoryParser)
    for name in COMMANDS:
        sub = importlib.import_module(f"compactor.memory.commands.{name}").register(commands)
        sub.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS, help=_DB_HELP)
        sub.add_argument("--ccr-store", metavar="PATH", default=argparse.SUPPRESS, help=_CCR_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m compactor.memory ARGS``: runs ``compactor memory ARGS``; returns the exit code."""
    from compactor.cli import main as compactor_main

    return compactor_main([NAME, *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
