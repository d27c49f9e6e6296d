"""What the ``compactor`` and ``ccr`` command lines share: usage errors, exit codes, lazy commands.

Both parse with ``UsageParser`` (argparse, with its errors in the
project's ``prog: error_id: message`` form, exit 2) and run the chosen
command through ``run_command``, the one place where errors become exit
codes: a ``CompactorError`` prints ``prog: error_id: message`` to stderr
and exits with its ``exit_code``.

Commands are listed in a ``Commands`` table (name -> module, one-line help)
and imported only when chosen: ``run_lazy`` first parses with a stand-in
parser per command (named and summarised from the table, so ``--help``
lists them all), then builds the real parser of the one command the
arguments name and parses again. ``--help`` and a hook's cold start
therefore import no command module they do not run.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn

from compactor.errors import CompactorError

__all__ = [
    "Commands",
    "UsageParser",
    "VersionAction",
    "add_commands",
    "run_command",
    "run_lazy",
    "write_stdout",
]

Commands = Mapping[str, tuple[str, str]]
"""Command name -> (module defining ``register(subparsers)``, one-line help), in help order."""

DISTRIBUTION = "compactor"
"""The installed distribution both command lines belong to (its version is theirs)."""


class UsageParser(argparse.ArgumentParser):
    """argparse whose usage errors read ``prog: <prog>_usage: message`` and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        root = self.prog.split()[0]
        self.exit(2, f"{root}: {root}_usage: {message}\n")


class VersionAction(argparse.Action):
    """``--version``: print ``prog <version>`` from the installed package's metadata and exit.

    The metadata is read only when the flag is given, so other runs do not pay for it.
    """

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        kwargs.setdefault("help", "print the version and exit")
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: str | None = None
    ) -> NoReturn:
        from importlib.metadata import version

        print(f"{parser.prog} {version(DISTRIBUTION)}")
        parser.exit(0)


def add_commands(
    subparsers: argparse._SubParsersAction[Any], commands: Commands, chosen: str | None
) -> argparse.ArgumentParser | None:
    """Add every command of ``commands``: the ``chosen`` one for real, the others as stand-ins.

    A stand-in has the command's name and one-line help and accepts anything
    (it only has to be recognised). Returns the chosen command's parser, or
    None when ``chosen`` is None.
    """
    real: argparse.ArgumentParser | None = None
    for name, (module, summary) in commands.items():
        if name == chosen:
            importlib.import_module(module).register(subparsers)
            real = subparsers.choices[name]
        else:
            subparsers.add_parser(name, help=summary, add_help=False)
    return real


def run_lazy(build: Callable[[str | None], argparse.ArgumentParser], argv: Sequence[str] | None) -> int:
    """Run the command ``argv`` names, importing only that command's module.

    ``build(chosen)`` makes the program's parser with ``chosen`` registered
    for real (see ``add_commands``). The first parse, with stand-ins only,
    answers ``--help`` and ``--version`` and reports a missing or unknown
    command; the second runs the chosen command through ``run_command``.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        known, _ = build(None).parse_known_args(arguments)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    return run_command(build(known.command), arguments)


def run_command(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse ``argv``, run the command's ``func``, and turn its errors into an exit code."""
    prog = parser.prog
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return int(args.func(args))
    except CompactorError as exc:
        print(f"{prog}: {exc.error_id}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``): nothing more to say, and no traceback at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def write_stdout(text: str) -> None:
    """Write UTF-8 to stdout, a lone surrogate as its ``\\uXXXX`` escape.

    JSON strings may hold lone surrogates (``"\\ud800"``) and file names may
    not be UTF-8; printing them would fail. The escape is still valid JSON
    and reads back as the same string.
    """
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8", "backslashreplace"))
    sys.stdout.buffer.flush()
