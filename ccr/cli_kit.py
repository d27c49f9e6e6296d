"""What the ``compactor``, ``ccr`` and ``memory`` command lines share: usage errors, exit codes, lazy commands.

It lives in ``ccr``, the lowest package, so that ccr's command line needs
nothing from ``compactor``. Each parses with ``UsageParser`` (argparse, with its errors in the
project's ``prog: usage_error: message`` form after the usage of the command
that was mistyped, exit 2) and run the chosen
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
import contextlib
import importlib
import io
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NoReturn, TextIO, cast

from ccr.distribution import installed_version
from ccr.root_errors import CompactorError, OutputWriteError, UsageError

__all__ = [
    "Commands",
    "UsageParser",
    "VersionAction",
    "add_commands",
    "end_program",
    "run_command",
    "run_lazy",
    "skip_teardown",
    "write_stdout",
    "write_stdout_bytes",
]

Commands = Mapping[str, tuple[str, str]]
"""Command name -> (module defining ``register(subparsers)``, one-line help), in help order."""


class UsageParser(argparse.ArgumentParser):
    """argparse whose usage errors read ``prog: usage_error: message`` and exit 2.

    ``prog`` is the program (the first word of the parser's ``prog``); the id
    is ``UsageError``'s, as for every usage mistake a command finds itself,
    in every program.
    """

    usage_error_id: str | None = None
    """No longer read: every program's usage errors are ``usage_error``. Kept so that a parser that
    still sets it (``compactor memory`` set ``memory_usage``) goes on working."""
    reports_unknown = False
    """Set on a command's own parser (``add_commands``): a word it does not know is its mistake,
    shown with its usage, not the program's."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and self.reports_unknown:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        root = self.prog.split()[0]
        self.exit(2, f"{root}: {UsageError.error_id}: {message}\n")


class VersionAction(argparse.Action):
    """``--version``: print ``prog <version>`` from the installed distribution's metadata and exit.

    The metadata is read only when the flag is given, so other runs do not pay
    for it; a checkout that is not installed prints ``prog unknown``.
    """

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        kwargs.setdefault("help", "print the version and exit")
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> NoReturn:
        print(f"{parser.prog} {installed_version()}")
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
            _report_unknown_in(real)
        else:
            subparsers.add_parser(name, help=summary, add_help=False)
    return real


def _report_unknown_in(parser: argparse.ArgumentParser) -> None:
    """Make ``parser`` and the parsers of its subcommands report the words they do not know themselves."""
    if isinstance(parser, UsageParser):
        parser.reports_unknown = True
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _report_unknown_in(sub)


class _Stdout:
    """``sys.stdout`` while a command runs: a write or flush the system refuses is ``OutputWriteError``.

    A full disk (``> /dev/full``) or a closed stdout (``>&-``, where Python
    leaves ``sys.stdout`` None and ``print`` would drop the text silently)
    then reads ``prog: output_write_failed: ...`` and exits 73, as any other
    output the file system refuses. ``BrokenPipeError`` (the reader went
    away) passes through unchanged. Anything else goes to the real stream.
    """

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.failed = False

    def _refused(self, exc: OSError | None) -> OutputWriteError:
        self.failed = True
        reason = "stdout is closed" if exc is None else f"cannot write to stdout: {exc.strerror or exc}"
        return OutputWriteError(reason)

    def _call(self, action: Callable[[TextIO], Any]) -> Any:
        if self.stream is None:
            raise self._refused(None)
        try:
            return action(self.stream)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._refused(exc) from exc

    def write(self, text: str) -> int:
        """Write ``text``.

        Raises:
            OutputWriteError: stdout is closed or the system refused the write.
        """
        return int(self._call(lambda stream: stream.write(text)))

    def write_bytes(self, data: bytes) -> None:
        """Write ``data`` to the binary stream under stdout, after what was written as text.

        Raises:
            OutputWriteError: stdout is closed or the system refused the write.
        """

        def write(stream: TextIO) -> None:
            stream.flush()
            stream.buffer.write(data)
            stream.buffer.flush()

        self._call(write)

    def flush(self) -> None:
        """Flush what is buffered (nothing to do when stdout is closed).

        Raises:
            OutputWriteError: the system refused the write.
        """
        if self.stream is not None:
            self._call(lambda stream: stream.flush())

    def isatty(self) -> bool:
        return self.stream is not None and self.stream.isatty()

    def silence(self) -> None:
        """Point the file descriptor under stdout at the null device: what is still buffered goes nowhere.

        Called once stdout has failed, so the interpreter's last flush at exit
        does not fail again and print a second error.
        """
        if self.stream is None:
            return
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.stream.fileno())
            os.close(null)
        except (OSError, ValueError):
            pass

    def __getattr__(self, name: str) -> Any:
        if self.stream is None:
            raise AttributeError(name)
        return getattr(self.stream, name)


@contextlib.contextmanager
def _guarded_streams() -> Iterator[_Stdout]:
    """Install ``_Stdout`` as ``sys.stdout`` (and a sink for a closed stderr) while a command runs.

    A closed stderr is None in ``sys.stderr``, and ``print(file=None)`` would
    put an error message on stdout: it goes nowhere instead, and the exit code
    still says what happened. Both streams are put back afterwards.
    """
    saved_out, saved_err = sys.stdout, sys.stderr
    if isinstance(saved_out, _Stdout):  # already guarded (run_lazy, then run_command)
        yield saved_out
        return
    guard = _Stdout(saved_out)
    sys.stdout = cast(TextIO, guard)
    if saved_err is None:
        sys.stderr = io.StringIO()
    try:
        yield guard
    finally:
        sys.stdout, sys.stderr = saved_out, saved_err


def _say(prog: str, exc: CompactorError) -> None:
    """``prog: error_id: message`` on stderr; nothing when stderr cannot take it either."""
    try:
        print(f"{prog}: {exc.error_id}: {exc}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _failed(prog: str, guard: _Stdout, exc: CompactorError) -> int:
    """Say what failed on stderr and return its exit code (after silencing stdout if it was stdout)."""
    if guard.failed:
        guard.silence()
    _say(prog, exc)
    return exc.exit_code


def _finish(prog: str, guard: _Stdout, code: int) -> int:
    """Flush stdout and return ``code``, or the exit code of the write that failed."""
    try:
        guard.flush()
    except OutputWriteError as exc:
        return _failed(prog, guard, exc)
    except BrokenPipeError:
        guard.silence()
    return code


def run_lazy(build: Callable[[str | None], argparse.ArgumentParser], argv: Sequence[str] | None) -> int:
    """Run the command ``argv`` names, importing only that command's module.

    ``build(chosen)`` makes the program's parser with ``chosen`` registered
    for real (see ``add_commands``). The first parse, with stand-ins only,
    answers ``--help`` and ``--version`` and reports a missing or unknown
    command; the second runs the chosen command through ``run_command``.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build(None)
    with _guarded_streams() as guard:
        try:
            known, _ = parser.parse_known_args(arguments)
        except SystemExit as exc:
            return _finish(parser.prog, guard, exc.code if isinstance(exc.code, int) else 2)
        except OutputWriteError as exc:  # --help or --version with stdout closed
            return _failed(parser.prog, guard, exc)
        return run_command(build(known.command), arguments)


def run_command(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse ``argv``, run the command's ``func``, and turn its errors into an exit code.

    stdout is guarded while the command runs (see ``_Stdout``): a closed or
    unwritable stdout is ``output_write_failed``, exit 73; a reader that went
    away is a quiet exit 0.
    """
    prog = parser.prog
    with _guarded_streams() as guard:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:
            return _finish(prog, guard, exc.code if isinstance(exc.code, int) else 2)
        except OutputWriteError as exc:  # --help or --version with stdout closed
            return _failed(prog, guard, exc)
        try:
            return _finish(prog, guard, int(args.func(args)))
        except CompactorError as exc:
            return _failed(prog, guard, exc)
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:
            # The reader went away (``| head``): nothing more to say, and no traceback at exit.
            guard.silence()
            return 0


_teardown_skipped = False


def skip_teardown() -> None:
    """Say that the running command leaves nothing for the interpreter's teardown to do.

    A hook calls it once its answer is written and its store closed. Freeing
    what a 4 MB transcript left in memory, module by module, then takes
    longer than a Claude Code hook should wait for nothing: ``end_program``
    ends the process at once instead. Only what the command closed and
    flushed itself is certain to be done; no ``atexit`` handler runs.
    """
    global _teardown_skipped
    _teardown_skipped = True


def end_program(code: int) -> int:
    """When the command called ``skip_teardown``: flush stdout and stderr and end the process with ``code``.

    Otherwise return ``code``. Only a program's entry point calls it, after
    ``run_lazy``, and only for its own command line (no ``argv`` passed), so
    a caller running a command in its own process keeps that process.
    """
    if not _teardown_skipped:
        return code
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass  # nowhere left to say it: the exit code stands
    os._exit(code)


def write_stdout(text: str) -> None:
    """Write UTF-8 to stdout, a lone surrogate as its ``\\uXXXX`` escape.

    JSON strings may hold lone surrogates (``"\\ud800"``) and file names may
    not be UTF-8; printing them would fail. The escape is still valid JSON
    and reads back as the same string.

    Raises:
        OutputWriteError: stdout is closed or the system refused the write
            (inside ``run_command``; outside it, the ``OSError`` itself).
    """
    write_stdout_bytes(text.encode("utf-8", "backslashreplace"))


def write_stdout_bytes(data: bytes) -> None:
    """Write bytes to stdout unchanged, after anything already printed as text.

    Raises:
        OutputWriteError: stdout is closed or the system refused the write
            (inside ``run_command``; outside it, the ``OSError`` itself).
    """
    stream = sys.stdout
    if isinstance(stream, _Stdout):
        stream.write_bytes(data)
        return
    if stream is None:
        raise OutputWriteError("stdout is closed")
    stream.flush()
    stream.buffer.write(data)
    stream.buffer.flush()
