"""``compactor hook pre-compact|session-start|post-compact``: Claude Code hook commands (JSON on stdin).

``pre-compact`` stores the conversation since the last compaction in CCR
(``--store`` or ``$COMPACTOR_HOME/ccr.db``) and prints extra instructions for
Claude Code's summarizer; ``session-start`` prints, after a compaction, the
``hookSpecificOutput`` JSON that reminds the model where that conversation is
stored; ``post-compact`` records Claude Code's summary in the session's
record. The logic is in ``compactor.claude_code.hooks`` (one module per event).

These commands never block Claude Code: when anything fails (bad input, a
missing transcript, a full store, a bad flag in the hook's command line)
they print nothing on stdout, one line ``compactor: error_id: message`` on
stderr, and exit 0. Exit code 2 would stop the compaction itself, leaving
the user at a full context; a compaction without a stored copy is the
lesser harm, and the stderr line says it happened. Only ``compactor hook``
without an event is a usage error (exit 2): no hook runs that.

Every hook is bounded: stdin is read up to ``HOOK_INPUT_MAX_BYTES`` (1 MiB);
files are opened only when they are regular files (``ccr.files``), so a FIFO
or a device never blocks; and a hook that runs past its time limit
(``HOOK_TIME_LIMITS``: pre-compact 100 s, session-start 20 s, under the
plugin's own 120 s and 30 s; ``COMPACTOR_HOOK_TIME_LIMIT`` seconds overrides
both) says so on stderr and exits 0. An unwritable stdout (``> /dev/full``)
is reported the same way, and still exits 0.

Once a hook has answered and closed its store, its process ends without
the interpreter's teardown (``ccr.cli_kit.skip_teardown``): freeing, object
by object, what a large transcript left in memory took about an eighth of a
pre-compact hook's time, and Claude Code waits for the exit.

``record-python`` writes the running interpreter to ``$COMPACTOR_HOME/python``,
where the plugin's launcher (``plugin/scripts/launch``) looks for it.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ccr import default_store_path
from ccr.cli_kit import skip_teardown
from compactor.claude_code.quick_hooks import DEFAULT_LISTED_RESULTS, HOOK_INPUT_MAX_BYTES, mark_pending
from compactor.core.errors import (
    CompactorError,
    ConfigError,
    HookError,
    HookTimedOut,
    InputInvalid,
    OutputWriteError,
    UsageError,
)

if TYPE_CHECKING:
    from compactor.claude_code.hook_input import HookInput

# The hooks' modules and the settings load pydantic, which costs many times Python's own start:
# the runs below import them only once the input shows there is something to do, and each run
# only the module of its own event (``compactor.claude_code.pre_compact_hook``, ...).

__all__ = [
    "HOOK_COUNTER",
    "HOOK_TIME_LIMITS",
    "TIME_LIMIT_ENV",
    "HookParser",
    "register",
    "run_post_compact",
    "run_pre_compact",
    "run_record_python",
    "run_session_start",
]

HOOK_TIME_LIMITS = {"pre-compact": 100.0, "session-start": 20.0}
"""Seconds a hook may run before it gives up and exits 0 (the plugin kills it at 120 s and 30 s)."""

TIME_LIMIT_ENV = "COMPACTOR_HOOK_TIME_LIMIT"
"""Seconds (more than 0, at most 600) that replace both limits."""

_MAX_TIME_LIMIT = 600.0

HOOK_COUNTER = "rough"
"""The counter the pre-compact hook sizes what it stores with: Claude Code's own estimate
(characters / 4). The counts only label the stored records (``tokens_before``); loading
tiktoken's ranks alone took about 0.23 s, some 40% of the hook on a 4 MB transcript, and an exact
count of a 30 MB message most of its time limit. Replays and the pipeline count with the
configured counter, as their budgets need."""


class HookParser(argparse.ArgumentParser):
    """The parser of one hook event: a bad flag is reported and exits 0, never blocking Claude Code."""

    def error(self, message: str) -> NoReturn:
        self.exit(0, f"compactor: {UsageError.error_id}: {message} (the hook did nothing; the compaction goes on)\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """As argparse's, but a word this event does not know is a bad flag here, not for the root parser."""
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``hook`` subcommand and its events."""
    parser = subparsers.add_parser(
        "hook",
        help="Claude Code hook commands (read the hook's JSON on stdin)",
        description="Commands for Claude Code hooks. Each reads the hook's JSON input on stdin. "
        "They never block Claude Code: on failure they print the reason on stderr and exit 0.",
    )
    events = parser.add_subparsers(dest="event", metavar="EVENT", required=True, parser_class=HookParser)
    pre = events.add_parser(
        "pre-compact",
        help="store the conversation before Claude Code compacts it; print summary instructions",
        description="PreCompact hook: store the messages since the last compaction in CCR and print "
        "extra instructions for the summarizer (keep the stored conversation's marker and the "
        "markers of the largest tool results).",
    )
    pre.add_argument("--store", type=Path, help="CCR store file (default: $COMPACTOR_HOME/ccr.db)")
    pre.add_argument("--config", type=Path, metavar="FILE", help="settings file (TOML or JSON)")
    pre.add_argument(
        "--limit",
        type=_count,
        default=DEFAULT_LISTED_RESULTS,
        metavar="N",
        help=f"name at most N stored tool results (default: {DEFAULT_LISTED_RESULTS})",
    )
    pre.set_defaults(func=run_pre_compact)
    start = events.add_parser(
        "session-start",
        help="after a compaction, remind the model where the earlier conversation is stored",
        description="SessionStart hook: when the source is 'compact', print hookSpecificOutput JSON "
        "whose additionalContext names the stored conversation and the ccr_retrieve tool (as Claude Code "
        "names it, and how to load it with ToolSearch); print nothing for other sources.",
    )
    start.set_defaults(func=run_session_start)
    post = events.add_parser(
        "post-compact",
        help="after a compaction, record Claude Code's summary in the session record",
        description="PostCompact hook: write the compact_summary (and trigger) Claude Code sends into the "
        "session's record under $COMPACTOR_HOME/sessions, for the hooks that run after it. Prints nothing.",
    )
    post.set_defaults(func=run_post_compact)
    record = events.add_parser(
        "record-python",
        help="record this Python for the plugin's launcher ($COMPACTOR_HOME/python)",
        description="Write the path of the Python running this command to $COMPACTOR_HOME/python, where "
        "the Claude Code plugin's launcher finds it whatever PATH Claude Code runs with.",
    )
    record.set_defaults(func=run_record_python)


def _count(text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    return int(text)


def _read_bytes() -> bytes:
    """The hook's stdin, at most ``HOOK_INPUT_MAX_BYTES`` (a longer input is refused, never held whole).

    Raises:
        InputInvalid: stdin is closed, cannot be read, or holds more than the limit.
    """
    if sys.stdin is None:
        raise InputInvalid("stdin is closed: a hook reads its input there")
    try:
        data = sys.stdin.buffer.read(HOOK_INPUT_MAX_BYTES + 1)
    except (OSError, ValueError) as exc:
        raise InputInvalid(f"cannot read the hook input on stdin: {exc}") from exc
    if len(data) > HOOK_INPUT_MAX_BYTES:
        raise InputInvalid(f"hook input is more than {HOOK_INPUT_MAX_BYTES:,} bytes; not read further")
    return data


def _time_limit(event: str) -> float:
    """The seconds ``event`` may run: ``COMPACTOR_HOOK_TIME_LIMIT`` if usable, else ``HOOK_TIME_LIMITS``."""
    default = HOOK_TIME_LIMITS[event]
    text = os.environ.get(TIME_LIMIT_ENV, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= _MAX_TIME_LIMIT:
        print(
            f"compactor: {ConfigError.error_id}: {TIME_LIMIT_ENV}={text!r} is not a number of seconds in (0, "
            f"{_MAX_TIME_LIMIT:g}]; using {default:g}",
            file=sys.stderr,
        )
        return default
    return value


def _start_watchdog(event: str, what: str) -> threading.Timer:
    """End the process with exit 0 once ``event``'s time limit has passed, saying so on stderr.

    A thread, not a signal, so that it fires even while the main thread waits
    in a C call (SQLite, a tokenizer). Whatever was half done is safe to drop:
    the store commits whole transactions and files are replaced by a rename.
    """
    limit = _time_limit(event)

    def give_up() -> None:
        message = f"compactor: {HookTimedOut.error_id}: {event} ran past its {limit:g}-second limit ({what})\n"
        try:
            os.write(2, message.encode("utf-8", "backslashreplace"))
        except OSError:
            pass
        os._exit(0)

    timer = threading.Timer(limit, give_up)
    timer.daemon = True
    timer.start()
    return timer


def _print_answer(text: str, what: str) -> None:
    """Print the hook's answer; an unwritable stdout is reported on stderr, never an exit code."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OutputWriteError as exc:
        _report(exc, what)
        silence = getattr(sys.stdout, "silence", None)
        if callable(silence):
            silence()


def _read_input() -> HookInput:
    """The hook input from stdin.

    Raises:
        InputInvalid: stdin is closed, or its bytes are not a usable hook input.
    """
    from compactor.claude_code.hook_input import parse_hook_input

    return parse_hook_input(_read_bytes(), warn=_warn)


def _warn(message: str) -> None:
    """``compactor: warning: message`` on stderr (nothing when stderr refuses it)."""
    try:
        print(f"compactor: warning: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _report_unexpected(exc: Exception, what: str) -> None:
    """Name an error no hook expects (a bug) in one line, in words first: the hook still exits 0."""
    detail = " ".join(str(exc).split()) or "no message"
    try:
        print(
            f"compactor: {HookError.error_id}: the hook stopped on an error it does not know how to handle, "
            f"a bug worth reporting ({type(exc).__name__}: {detail}) ({what})",
            file=sys.stderr,
            flush=True,
        )
    except (OSError, ValueError):
        pass


def _report(exc: CompactorError, what: str) -> None:
    try:
        print(f"compactor: {exc.error_id}: {exc} ({what})", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass  # stderr refuses too: the exit code (0) is all that is left to say


def run_pre_compact(args: argparse.Namespace) -> int:
    """Store the conversation and print the summary instructions; always exits 0."""
    what = "the compaction goes on without a stored copy"
    watchdog = _start_watchdog("pre-compact", what)
    try:
        return _pre_compact(args)
    except Exception as exc:  # a bug must not block the compaction either
        _report_unexpected(exc, what)
        return 0
    finally:
        watchdog.cancel()
        skip_teardown()


def _pre_compact(args: argparse.Namespace) -> int:
    hook: HookInput | None = None
    what = "the compaction goes on without a stored copy"
    try:
        data = _read_bytes()
        mark_pending(data, os.environ)  # first: a hook that runs out of time leaves the record unnamed
        from ccr import open_store
        from compactor.claude_code.hook_input import parse_hook_input
        from compactor.claude_code.pre_compact_hook import check_hook_transcript, pre_compact
        from compactor.core.config import load_settings
        from compactor.core.tokens import make_counter

        hook = parse_hook_input(data, warn=_warn)
        settings = load_settings(args.config)
        check_hook_transcript(hook)  # a transcript that is none fails before a store is made for it
        with open_store(args.store) as store:
            text = pre_compact(
                hook,
                store,
                counter=make_counter(HOOK_COUNTER),
                recovery_tools=settings.dedup.recovery_tools,
                limit=args.limit,
                warn=_warn,
            )
    except CompactorError as exc:
        _report(exc, what)
        if hook is not None:
            _forget(hook)
        return 0
    except Exception as exc:  # a bug must not block the compaction, nor leave an older copy named
        _report_unexpected(exc, what)
        if hook is not None:
            _forget(hook)
        return 0
    _print_answer(text, "the conversation is stored, but Claude Code gets no instructions")
    return 0


def _forget(hook: HookInput) -> None:
    from compactor.claude_code.session_record import forget_latest_head

    try:
        forget_latest_head(hook.session_id)
    except CompactorError as exc:
        _report(exc, "the session record may name an older conversation")


def run_session_start(args: argparse.Namespace) -> int:
    """Print the after-compaction reminder when there is one; always exits 0.

    Most starts have nothing to say (``compactor.claude_code.quick_hooks``): they are
    answered from the input before the settings and models load.
    """
    watchdog = _start_watchdog("session-start", "no reminder added")
    try:
        return _session_start()
    except Exception as exc:  # a bug must not fail the session's start either
        _report_unexpected(exc, "no reminder added")
        return 0
    finally:
        watchdog.cancel()
        skip_teardown()


def _session_start() -> int:
    from compactor.claude_code.quick_hooks import nothing_to_say

    try:
        data = _read_bytes()
        if nothing_to_say(data, os.environ):
            return 0
        from compactor.claude_code.hook_input import parse_hook_input
        from compactor.claude_code.session_start_hook import session_start
        from compactor.core.config import load_settings

        settings = load_settings()
        output = session_start(
            parse_hook_input(data, warn=_warn),
            memory_db=settings.pipeline.memory_db,
            memory_tokens=settings.attachments.memory_tokens,
            counter_name=settings.counter,
        )
    except CompactorError as exc:
        _report(exc, "no reminder added")
        return 0
    if output is not None:
        _print_answer(output + "\n", "no reminder added")
    return 0


def run_post_compact(args: argparse.Namespace) -> int:
    """Note Claude Code's summary in the session record; prints nothing, always exits 0."""
    what = "the summary is not recorded; nothing else changes"
    try:
        from compactor.claude_code.post_compact_hook import record_compact_summary

        record_compact_summary(_read_input())
    except CompactorError as exc:
        _report(exc, what)
    except Exception as exc:  # a bug must not fail the compaction's end either
        _report_unexpected(exc, what)
    finally:
        skip_teardown()
    return 0


def run_record_python(args: argparse.Namespace) -> int:
    """Write ``sys.executable`` to ``$COMPACTOR_HOME/python`` and say where.

    Raises:
        HookError: the file could not be written.
    """
    from ccr.files import describe_os_error, write_output

    path = default_store_path().parent / "python"
    try:
        write_output(
            path, [(os.path.abspath(sys.executable) + "\n").encode("utf-8")], what="Python path", make_folders=True
        )
    except OSError as exc:
        raise HookError(f"cannot write {path}: {describe_os_error(exc)}") from exc
    print(f"compactor: the plugin will run {sys.executable} (recorded in {path})")
    return 0
