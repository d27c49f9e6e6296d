"""``compactor statusline [--install [--settings FILE] [--force] | --print]``: Claude Code's status line.

Claude Code runs the command after each answer with the session's JSON on
stdin (``session_id``, ``transcript_path``, ``model``, ``workspace``,
``cwd``, and in current clients ``context_window``); it prints one line:
the context against the auto-compact threshold, the turns (or tokens) left
at the current pace, and what a compaction now would keep (the ledger's
paths, commands and typed messages), the files it would restore, and the
spans of the session already in the store. The figures are
``compactor.claude_code.live_state``'s, folded from the lines the
transcript gained since the last run. ``NO_COLOR`` (or ``--no-color``)
prints it plain; ``COLUMNS`` (or ``--width``) bounds it.

The line never blanks without a reason and never shows a traceback: when
anything is missing (no transcript yet, bad input, an unreadable file) it
says so in a short line, the error goes to stderr as
``compactor statusline: error_id: message``, and the exit code is 0 (Claude
Code blanks the line on any other). Only a bad flag is a usage error (2).

``--install`` adds the command to ``~/.claude/settings.json`` (or
``--settings FILE``) with a backup first and nothing else changed;
``--print`` prints the ``statusLine`` JSON instead.

Standard library only on the way to the line (no pydantic, no tokenizer):
it runs after every answer.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compactor.claude_code.compaction_gauge import Figures, figures, limits_for, stored_spans
from compactor.claude_code.live_state import LiveState, advance, live_state_path, load_live_state, save_live_state

__all__ = ["DEFAULT_WIDTH", "INPUT_MAX_BYTES", "register", "run", "status_for"]

INPUT_MAX_BYTES = 1024 * 1024
"""Status input larger than this is refused: Claude Code sends a few KiB."""
DEFAULT_WIDTH = 120
"""Columns when neither ``--width`` nor ``COLUMNS`` says (Claude Code's pipe has no terminal size)."""
ONE_MILLION_WINDOW = 1_000_000
DEFAULT_WINDOW = 200_000


class _Missing(Exception):
    """Something the line needs is missing: ``line`` says what, ``error_id`` names it on stderr."""

    def __init__(self, error_id: str, line: str, detail: str | None = None) -> None:
        super().__init__(detail or line)
        self.error_id = error_id
        self.line = line


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``statusline`` subcommand."""
    parser = subparsers.add_parser(
        "statusline",
        help="Claude Code status line: context against the auto-compact threshold, what compaction keeps",
        description="Read Claude Code's status-line JSON on stdin and print one line: the context "
        "against the auto-compact threshold, the turns left at the current pace, and what a "
        "compaction now would keep and restore. With --install, add it to Claude Code's settings.",
    )
    parser.add_argument("--install", action="store_true", help="add the status line to Claude Code's settings")
    parser.add_argument(
        "--settings",
        type=Path,
        metavar="FILE",
        help="the settings file --install changes (default: ~/.claude/settings.json)",
    )
    parser.add_argument("--force", action="store_true", help="with --install: replace another statusLine")
    parser.add_argument("--print", action="store_true", dest="print_only", help="print the statusLine JSON only")
    parser.add_argument("--no-color", action="store_true", help="no colours (as NO_COLOR does)")
    parser.add_argument("--width", type=int, metavar="N", help="at most N columns (default: $COLUMNS, else 120)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the status line (or install it; see the module docstring).

    Raises:
        UsageError: --settings, --force or --print without --install where they need it.
        InvalidRequest, InputInvalid, InputError, OutputWriteError: see ``install_status_line``.
    """
    if args.install or args.print_only:
        return _install(args)
    colour = not args.no_color and not os.environ.get("NO_COLOR")
    width = args.width if args.width and args.width > 0 else _columns(os.environ)
    try:
        if sys.stdin is None or sys.stdin.isatty():  # run by hand: no JSON is coming, so wait for none
            raise _Missing("no_input", "no status input (Claude Code pipes it in; see --install)")
        data = sys.stdin.buffer.read(INPUT_MAX_BYTES + 1)
        line = status_for(data, os.environ, width=width, colour=colour)
    except _Missing as missing:
        print(f"compactor statusline: {missing.error_id}: {missing}", file=sys.stderr)
        line = f"compactor: {missing.line}"
    except Exception as exc:  # the status bar must show a reason, never a traceback
        print(f"compactor statusline: statusline_failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        line = f"compactor: status failed ({type(exc).__name__})"
    print(line)
    return 0


def _columns(environ: Mapping[str, str]) -> int:
    try:
        columns = int(environ.get("COLUMNS", ""))
    except ValueError:
        return DEFAULT_WIDTH
    return columns if columns > 0 else DEFAULT_WIDTH


def _install(args: argparse.Namespace) -> int:
    from ccr.root_errors import UsageError
    from compactor.claude_code.user_settings import (
        default_settings_path,
        install_status_line,
        status_line_setting,
    )

    setting = status_line_setting()
    if args.print_only:
        if args.install or args.force:
            raise UsageError("--print shows the statusLine JSON; it changes nothing, so it takes no --install")
        print(json.dumps({"statusLine": setting}, indent=2))
        return 0
    path = args.settings or default_settings_path()
    done = install_status_line(path, setting, force=args.force)
    if done.outcome == "unchanged":
        print(f"compactor: {path} already runs this status line; nothing changed", file=sys.stderr)
    else:
        saved = f" (the previous file is kept as {done.backup})" if done.backup else ""
        print(f"compactor: statusLine {done.outcome} in {path}{saved}", file=sys.stderr)
    return 0


# -- the line ------------------------------------------------------------------------------


def status_for(data: bytes, environ: Mapping[str, str], *, width: int = DEFAULT_WIDTH, colour: bool = False) -> str:
    """The status line for Claude Code's status JSON ``data``.

    Raises:
        _Missing: the input, the transcript or something else the line needs is missing.
    """
    from compactor.view.status_line import status_line

    return status_line(_figures(data, environ), width=width, colour=colour)


def _figures(data: bytes, environ: Mapping[str, str]) -> Figures:
    if len(data) > INPUT_MAX_BYTES:
        raise _Missing("input_too_large", "status input too large")
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _Missing("input_invalid", "status input is not JSON", f"status input is not JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise _Missing("input_invalid", "status input is not a JSON object")
    transcript = value.get("transcript_path")
    if not isinstance(transcript, str) or not transcript:
        raise _Missing("no_transcript", "no transcript yet", "the status input names no transcript_path")
    session = value.get("session_id")
    key = session if isinstance(session, str) and session else transcript
    state_path = live_state_path(key, environ)
    saved = load_live_state(state_path)
    known = (saved.transcript, saved.offset, saved.inode) if saved is not None else None
    state = _advanced(saved, transcript)
    try:
        if (state.transcript, state.offset, state.inode) != known:
            save_live_state(state, state_path)
    except OSError as exc:  # the line is still right; the next run reads the whole file again
        print(f"compactor statusline: state_unsaved: {state_path}: {exc.strerror}", file=sys.stderr)
    window = _window(value)
    limits = limits_for(window, client=state.client or _text(value.get("version")), environ=environ)
    return figures(state, limits, stored=stored_spans(key, environ))


def _advanced(state: LiveState | None, transcript: str) -> LiveState:
    try:
        return advance(state, transcript)
    except FileNotFoundError as exc:
        name = Path(transcript).name
        # Claude Code names the file before it writes the first record: at a session's start that is no error.
        raise _Missing("transcript_not_found", f"no transcript yet ({name})", f"{transcript}: not found") from exc
    except IsADirectoryError as exc:
        raise _Missing("transcript_invalid", "transcript is a folder", f"{transcript}: a folder") from exc
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise _Missing(
            "transcript_unreadable", f"cannot read the transcript ({reason})", f"{transcript}: {reason}"
        ) from exc


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _window(value: Mapping[str, Any]) -> int:
    """The context window Claude Code reports, else the model's (``[1m]`` variants), else 200,000."""
    window = value.get("context_window")
    if isinstance(window, dict):
        size = window.get("context_window_size")
        if isinstance(size, int) and not isinstance(size, bool) and size > 0:
            return size
    model = value.get("model")
    model_id = model.get("id") if isinstance(model, dict) else model
    if isinstance(model_id, str) and "[1m]" in model_id.lower():
        return ONE_MILLION_WINDOW
    return DEFAULT_WINDOW
