"""The ``ccr`` command line: parse, call the store, print.

Each subcommand lives in a module (``ccr/commands/<name>.py``) with
``register`` (adds its parser, sets ``func``) and ``run(args) -> int``.
``COMMANDS`` names them; a command's module is imported only when that
command runs (``ccr.cli_kit.run_lazy``). Errors become exit codes here,
in one place: a ``CompactorError`` prints ``ccr: <error_id>: <message>`` to
stderr and exits with its ``exit_code``; a usage mistake caught by the
parser exits 2 as ``usage_error``. stdout carries only results (payloads
byte-exact).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ccr.cli_kit import Commands, UsageParser, VersionAction, add_commands, run_lazy

__all__ = ["COMMANDS", "build_parser", "main"]

PROG = "ccr"
COMMANDS: Commands = {
    "put": ("ccr.commands.put", "store a file (or stdin) and print its handle"),
    "get": ("ccr.commands.get", "write what a handle names to stdout, byte-exact"),
    "info": ("ccr.commands.info", "print a record's metadata as JSON"),
    "stats": ("ccr.commands.stats", "print entries, payload bytes, budget and fullness"),
    "verify": ("ccr.commands.verify", "re-hash every record, check its metadata, and name the damaged ones"),
    "list": ("ccr.commands.list", "list stored records (handle, size, kind, session, created)"),
    "rm": ("ccr.commands.rm", "remove records by handle"),
    "gc": ("ccr.commands.gc", "remove records older than DAYS or of one session (explicit; never automatic)"),
    "export": ("ccr.commands.export", "write the whole store to a portable archive file"),
    "import": ("ccr.commands.import_", "store the records of an archive written by 'ccr export'"),
    "repair": ("ccr.commands.repair", "salvage every readable record of a damaged store"),
    "mcp": ("ccr.commands.mcp", "serve ccr_retrieve and ccr_stats to a model over MCP (stdio)"),
}
"""Command name -> (module, one-line help), in help order. Adding a command is one line here."""


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The ``ccr`` parser with ``chosen``'s real parser and a stand-in for every other command."""
    parser = UsageParser(
        prog=PROG,
        description="Content-addressed recovery store: put bytes, get them back exactly.",
        epilog="The store is --store PATH, else $COMPACTOR_HOME/ccr.db (~/.compactor/ccr.db).",
    )
    parser.add_argument("--version", action=VersionAction)
    parser.add_argument("--store", metavar="PATH", help="store file (default: $COMPACTOR_HOME/ccr.db)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=UsageParser)
    real = add_commands(subparsers, COMMANDS, chosen)
    if real is not None:
        real.add_argument("--store", metavar="PATH", default=argparse.SUPPRESS, help="store file (overrides the env)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ccr`` script; returns the exit code."""
    return run_lazy(build_parser, argv)


if __name__ == "__main__":
    sys.exit(main())
