"""The ``compactor`` command line: parse, call the library, print.

Each subcommand lives in a module (``compactor/cli/commands/<name>.py``; the
``memory`` command and its own subcommands in ``compactor/memory/cli.py``)
that exposes ``register(subparsers)`` (adds its parser, sets ``func``) and a
``run(args)`` returning an exit code. ``COMMANDS`` names them; a command's
module is imported only when that command runs (``ccr.cli_kit.run_lazy``).
Errors become exit codes in one place: a ``CompactorError`` prints
``error_id: message`` to stderr and exits with its ``exit_code``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ccr.cli_kit import Commands, UsageParser, VersionAction, add_commands, end_program, run_lazy

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: Commands = {
    "replay": ("compactor.cli.commands.replay", "replay a recorded Claude Code session and report each compaction"),
    "inspect": ("compactor.cli.commands.inspect", "summarize a recorded Claude Code session"),
    "tokens": ("compactor.cli.commands.tokens", "count the tokens of a text file or stdin"),
    "hook": ("compactor.cli.commands.hook", "Claude Code hook commands (read the hook's JSON on stdin)"),
    "restore": (
        "compactor.cli.commands.restore",
        "undo compactions: write the session as it stood before compaction N",
    ),
    "show": (
        "compactor.cli.commands.show",
        "show what a compaction did: summary, context, dropped spans (or an HTML page)",
    ),
    "tune": ("compactor.cli.commands.tune", "search budgets and strategies on recorded sessions"),
    "plugin": ("compactor.cli.commands.plugin", "where the Claude Code plugin of this installation is"),
    "statusline": (
        "compactor.cli.commands.statusline",
        "Claude Code status line: context against the auto-compact threshold, what compaction keeps",
    ),
    "watch": (
        "compactor.cli.commands.watch",
        "a live view of a running or replayed session: context, next compaction, its summary and files",
    ),
    "memory": (
        "compactor.memory.cli",
        "memories across sessions: remember, recall, supersede, history, forget, recover, mcp",
    ),
}
"""Command name -> (module, one-line help), in help order. Adding a command is one line here."""


def build_parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The ``compactor`` parser with ``chosen``'s real parser and a stand-in for every other command."""
    parser = UsageParser(
        prog="compactor",
        description="Reversible, measurable context compaction for coding agents.",
    )
    parser.add_argument("--version", action=VersionAction)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=UsageParser)
    add_commands(subparsers, COMMANDS, chosen)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``compactor`` script; returns the exit code.

    Without ``argv`` (the script's own command line) a hook's process ends as
    soon as its exit code is known (``ccr.cli_kit.end_program``).
    """
    code = run_lazy(build_parser, argv)
    return end_program(code) if argv is None else code


if __name__ == "__main__":
    sys.exit(main())
