"""``compactor hook pre-compact|session-start|post-compact``: Claude Code hook commands (JSON on stdin).

``pre-compact`` stores the conversation since the last compaction in CCR
(``--store`` or ``$COMPACTOR_HOME/ccr.db``) and prints extra instructions for
Claude Code's summarizer; ``session-start`` prints, after a compaction, the
``hookSpecificOutput`` JSON that reminds the model where that conversation is
stored; ``post-compact`` records Claude Code's summary in the session's
record. The logic is in ``compactor.hooks``.

These commands never block Claude Code: when anything fails (bad input, a
missing transcript, a full store, a bad flag in the hook's command line)
they print nothing on stdout, one line ``compactor: error_id: message`` on
stderr, and exit 0. Exit code 2 would stop the compaction itself, leaving
the user at a full context; a compaction without a stored copy is the
lesser harm, and the stderr line says it happened. Only ``compactor hook``
without an event is a usage error (exit 2): no hook runs that.

``record-python`` writes the running interpreter to ``$COMPACTOR_HOME/python``,
where the plugin's launcher (``plugin/scripts/launch``) looks for it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ccr import default_store_path
from compactor._quick_hooks import DEFAULT_LISTED_RESULTS
from compactor.errors import CompactorError, HookError, InputInvalid

if TYPE_CHECKING:
    from compactor.hooks import HookInput

# ``compactor.hooks`` and the settings load pydantic, which costs many times Python's own start:
# the runs below import them only once the input shows there is something to do.

__all__ = ["HookParser", "register", "run_post_compact", "run_pre_compact", "run_record_python", "run_session_start"]


class HookParser(argparse.ArgumentParser):
    """The parser of one hook event: a bad flag is reported and exits 0, never blocking Claude Code."""

    def error(self, message: str) -> NoReturn:
        self.exit(0, f"compactor: compactor_usage: {message} (the hook did nothing; the compaction goes on)\n")

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
    """The hook's stdin.

    Raises:
        InputInvalid: stdin is closed.
    """
    if sys.stdin is None:
        raise InputInvalid("stdin is closed: a hook reads its input there")
    return sys.stdin.buffer.read()


def _read_input() -> HookInput:
    """The hook input from stdin.

    Raises:
        InputInvalid: stdin is closed, or its bytes are not a usable hook input.
    """
    from compactor.hooks import parse_hook_input

    return parse_hook_input(_read_bytes())


def _report(exc: CompactorError, what: str) -> None:
    print(f"compactor: {exc.error_id}: {exc} ({what})", file=sys.stderr)


def run_pre_compact(args: argparse.Namespace) -> int:
    """Store the conversation and print the summary instructions; always exits 0."""
    hook: HookInput | None = None
    from ccr import open_store
    from compactor.config import load_settings
    from compactor.hooks import pre_compact
    from compactor.tokens import make_counter

    try:
        hook = _read_input()
        settings = load_settings(args.config)
        with open_store(args.store) as store:
            text = pre_compact(
                hook,
                store,
                counter=make_counter(settings.counter),
                recovery_tools=settings.dedup.recovery_tools,
                limit=args.limit,
            )
    except CompactorError as exc:
        _report(exc, "the compaction goes on without a stored copy")
        if hook is not None:
            _forget(hook)
        return 0
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0


def _forget(hook: HookInput) -> None:
    from compactor.hooks import forget_latest_head

    try:
        forget_latest_head(hook.session_id)
    except CompactorError as exc:
        _report(exc, "the session record may name an older conversation")


def run_session_start(args: argparse.Namespace) -> int:
    """Print the after-compaction reminder when there is one; always exits 0.

    Most starts have nothing to say (``compactor._quick_hooks``): they are
    answered from the input before the settings and models load.
    """
    from compactor._quick_hooks import nothing_to_say

    try:
        data = _read_bytes()
        if nothing_to_say(data, os.environ):
            return 0
        from compactor.config import load_settings
        from compactor.hooks import parse_hook_input, session_start

        settings = load_settings()
        output = session_start(
            parse_hook_input(data),
            memory_db=settings.pipeline.memory_db,
            memory_tokens=settings.attachments.memory_tokens,
            counter_name=settings.counter,
        )
    except CompactorError as exc:
        _report(exc, "no reminder added")
        return 0
    if output is not None:
        print(output)
    return 0


def run_post_compact(args: argparse.Namespace) -> int:
    """Note Claude Code's summary in the session record; prints nothing, always exits 0."""
    try:
        from compactor.hooks import record_compact_summary

        record_compact_summary(_read_input())
    except CompactorError as exc:
        _report(exc, "the summary is not recorded; nothing else changes")
    return 0


def run_record_python(args: argparse.Namespace) -> int:
    """Write ``sys.executable`` to ``$COMPACTOR_HOME/python`` and say where.

    Raises:
        HookError: the file could not be written.
    """
    path = default_store_path().parent / "python"
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.write_text(os.path.abspath(sys.executable) + "\n", encoding="utf-8")
    except OSError as exc:
        raise HookError(f"cannot write {path}: {exc.strerror or exc}") from exc
    print(f"compactor: the plugin will run {sys.executable} (recorded in {path})")
    return 0
