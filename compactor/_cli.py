"""What the ``compactor`` and ``ccr`` command lines share: usage errors and exit codes.

Both parse with ``UsageParser`` (argparse, with its errors in the
project's ``prog: error_id: message`` form, exit 2) and run the chosen
command through ``run_command``, the one place where errors become exit
codes: a ``CompactorError`` prints ``prog: error_id: message`` to stderr
and exits with its ``exit_code``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from compactor.errors import CompactorError

__all__ = ["UsageParser", "run_command", "write_stdout"]


class UsageParser(argparse.ArgumentParser):
    """argparse whose usage errors read ``prog: <prog>_usage: message`` and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        root = self.prog.split()[0]
        self.exit(2, f"{root}: {root}_usage: {message}\n")


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
