"""``compactor watch [SESSION | TRANSCRIPT] [--once] [--config FILE] [--summarizer NAME]``: a live view.

Follows a Claude Code transcript as it grows (a running session, or one
being replayed into a file) and draws: the context over time under the
auto-compact threshold, the next compaction's estimated point, the summary
the configured summarizer would write now, the files it would restore and
why, and the store's growth. The figures are the status line's
(``compactor.claude_code.live_state``, the same saved state); the summary
and files are ``compactor.claude_code.compaction_preview``'s, worked out
in a background thread and again whenever the transcript has grown.

On a terminal it redraws on every change and on resize, and quits on ``q``
or Ctrl-C; into a pipe it prints one line per change; ``--once`` prints one
frame and exits. With an LLM summarizer the summary is asked for at most every
``LLM_PREVIEW_SECONDS`` (``--preview-every``), since each is a model call. ``SESSION`` is a session id, looked up under
``~/.claude/projects``; without an argument, the newest transcript there.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccr.root_errors import InputNotFound
from compactor.claude_code.compaction_gauge import figures, limits_for, stored_spans
from compactor.claude_code.live_state import LiveState, advance, live_state_path, load_live_state, save_live_state

if TYPE_CHECKING:
    from rich.console import RenderableType

    from compactor.claude_code.compaction_preview import CompactionPreview
    from compactor.view.live_view import StoreSample, WatchFrame

__all__ = ["find_transcript", "register", "run"]

_POLL_MS = 250
LLM_PREVIEW_SECONDS = 300.0
"""How often ``watch`` asks an LLM summarizer for the summary it would write (each time is a model call)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``watch`` subcommand."""
    parser = subparsers.add_parser(
        "watch",
        help="a live view of a running or replayed session: context, next compaction, its summary and files",
        description="Follow a Claude Code transcript and show the context over time against the "
        "auto-compact threshold, when the next compaction comes, the summary it would write now, "
        "the files it would restore and why, and the store's growth. q or Ctrl-C quits.",
    )
    parser.add_argument(
        "target",
        nargs="?",
        metavar="SESSION|TRANSCRIPT",
        help="a transcript file or a session id (default: the newest transcript under ~/.claude/projects)",
    )
    parser.add_argument("--once", action="store_true", help="print one frame and exit")
    parser.add_argument("--config", type=Path, metavar="FILE", help="settings file (default: $COMPACTOR_CONFIG)")
    parser.add_argument(
        "--summarizer",
        choices=("extractive", "anthropic", "openai"),
        help="the summarizer whose summary is shown (default: the configured one)",
    )
    parser.add_argument("--window", type=int, metavar="TOKENS", help="the context window (default: 200000)")
    parser.add_argument(
        "--preview-every",
        type=float,
        metavar="SECONDS",
        help="work out the summary again at most this often (default: on every change with the extractive "
        f"summarizer, every {LLM_PREVIEW_SECONDS:g} s with an LLM one, each preview being a model call)",
    )
    parser.set_defaults(func=run)


def find_transcript(target: str | None, projects: Path | None = None) -> Path:
    """The transcript ``target`` names: a file, or a session id under ``~/.claude/projects``.

    Raises:
        InputNotFound: no such file or session, or no transcript at all.
    """
    folder = projects if projects is not None else Path.home() / ".claude" / "projects"
    if target is not None:
        path = Path(target).expanduser()
        if path.is_file():
            return path
        found = sorted(folder.glob(f"*/{target}.jsonl")) if "/" not in target else []
        if found:
            return found[0]
        raise InputNotFound(f"{target}: no such transcript, nor a session under {folder}")
    newest = max(folder.glob("*/*.jsonl"), key=lambda p: p.stat().st_mtime, default=None)
    if newest is None:
        raise InputNotFound(f"no transcript under {folder}; name one")
    return newest


class _View:
    """The state being followed, its saved copy, the preview and the store's samples."""

    def __init__(self, path: Path, args: argparse.Namespace) -> None:
        from compactor.core.config import load_settings

        overrides = {"summarizer": args.summarizer} if args.summarizer else None
        self.settings = load_settings(args.config, overrides=overrides)
        self.path = path
        self.window = args.window if args.window and args.window > 0 else self.settings.policy.context_window
        self.key = path.stem
        self.saved = live_state_path(self.key)
        self.state: LiveState = advance(load_live_state(self.saved), path)
        self.preview: CompactionPreview | None = None
        self.note: str | None = None
        self.previewed_at = -1
        self.previewed_when = -math.inf
        every = args.preview_every
        self.preview_every = (
            every if every is not None else (0.0 if self.settings.summarizer == "extractive" else LLM_PREVIEW_SECONDS)
        )
        self.store: list[StoreSample] = []
        self._save()

    def _save(self) -> None:
        with contextlib.suppress(OSError):  # the view goes on; the next run reads the file again
            save_live_state(self.state, self.saved)

    def refresh(self) -> bool:
        """Read what the transcript gained; whether anything changed."""
        before = (self.state.lines, self.state.offset)
        try:
            self.state = advance(self.state, self.path)
        except OSError as exc:
            self.note = f"cannot read the transcript ({exc.strerror})"
            return False
        changed = (self.state.lines, self.state.offset) != before
        if changed:
            self._save()
        self._sample_store()
        return changed

    def _sample_store(self) -> None:
        from ccr import default_store_path, open_store
        from compactor.view.live_view import StoreSample

        path = default_store_path()
        if not path.is_file():
            return
        try:
            with open_store(path, readonly=True) as store:
                stats = store.stats()
        except Exception:  # a busy or damaged store only leaves the panel as it was
            return
        sample = StoreSample(entries=stats.entries, payload_bytes=stats.payload_bytes)
        if not self.store or self.store[-1] != sample:
            self.store.append(sample)

    def compute_preview(self) -> CompactionPreview:
        from compactor.claude_code.compaction_preview import preview_compaction

        return preview_compaction(self.path, self.settings)

    def frame(self) -> WatchFrame:
        from compactor.view.live_view import WatchFrame

        limits = limits_for(self.window, client=self.state.client)
        shown = figures(self.state, limits, stored=stored_spans(self.state.session_id or self.key))
        if self.preview is not None and self.preview.report.ok:  # the files the preview did restore
            restored = [a.path for a in self.preview.report.attachments if a.type == "file" and a.path]
            shown = shown._replace(files=restored)
        return WatchFrame(
            title=self.path.name,
            state=self.state,
            figures=shown,
            preview=self.preview,
            preview_note=self.note,
            store=self.store,
        )


def run(args: argparse.Namespace) -> int:
    """Watch the transcript (see the module docstring).

    Raises:
        InputNotFound: no such transcript.
        ConfigError: bad settings.
    """
    path = find_transcript(args.target)
    view = _View(path, args)
    if args.once:
        return _once(view)
    if not sys.stdout.isatty():
        return _pipe(view)
    return _terminal(view)


def _preview_now(view: _View) -> None:
    from compactor.core.errors import CompactorError

    try:
        view.preview = view.compute_preview()
        view.note = None
    except CompactorError as exc:
        view.preview, view.note = None, f"no preview: {exc.error_id}: {exc}"
    view.previewed_at = view.state.lines
    view.previewed_when = time.monotonic()


def _once(view: _View) -> int:
    from rich.console import Console

    from compactor.view.live_view import frame

    _preview_now(view)
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    width = _columns()
    console = Console(width=width, color_system="auto" if colour else None, force_terminal=colour, soft_wrap=False)
    once = view.frame()
    once.hint = ""
    console.print(frame(once, width))
    return 0


def _columns() -> int:
    try:
        return max(40, int(os.environ.get("COLUMNS", "")))
    except ValueError:
        return os.get_terminal_size().columns if sys.stdout.isatty() else 100


def _changes(view: _View, stop: threading.Event) -> Iterator[bool]:
    """True for each change of the transcript, False every poll without one (until ``stop``)."""
    import watchfiles

    target = view.path.resolve()
    for changes in watchfiles.watch(
        target.parent,
        watch_filter=lambda _, name: Path(name).resolve() == target,
        stop_event=stop,
        rust_timeout=_POLL_MS,
        yield_on_timeout=True,
        debounce=100,
    ):
        yield bool(changes)


def _pipe(view: _View) -> int:
    from compactor.view.live_view import plain_change

    stop = threading.Event()
    last: str | None = None
    try:
        for changed in _changes(view, stop):
            if last is None:  # the first poll: the watcher is up, so no later line goes unseen
                last = plain_change(view.frame())
                print(last, flush=True)
            if changed and view.refresh():
                line = plain_change(view.frame())
                if line != last:
                    print(line, flush=True)
                    last = line
    except KeyboardInterrupt:
        pass
    return 0


def _terminal(view: _View) -> int:
    import termios
    import tty

    from rich.console import Console
    from rich.live import Live

    from compactor.view.live_view import frame

    console = Console()
    stop = threading.Event()
    resized = threading.Event()
    previous = signal.signal(signal.SIGWINCH, lambda _s, _f: resized.set())
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="compactor-preview")
    pending: Future[None] | None = None
    fd = sys.stdin.fileno() if sys.stdin.isatty() else None
    saved = termios.tcgetattr(fd) if fd is not None else None
    view.note = "working out the summary…"

    def draw() -> RenderableType:
        return frame(view.frame(), console.width)

    try:
        if fd is not None:
            tty.setcbreak(fd)
        with Live(get_renderable=draw, console=console, screen=True, auto_refresh=False) as live:
            live.refresh()
            for changed in _changes(view, stop):
                redraw = resized.is_set()
                resized.clear()
                if changed and view.refresh():
                    redraw = True
                due = time.monotonic() - view.previewed_when >= view.preview_every
                if pending is None and view.previewed_at != view.state.lines and due:
                    pending = worker.submit(_preview_now, view)
                elif pending is not None and pending.done():
                    failed = pending.exception()
                    if failed is not None:  # a bug in the preview must not leave the panel waiting forever
                        view.preview, view.note = None, f"no preview: {type(failed).__name__}: {failed}"
                        view.previewed_at = view.state.lines
                    pending, redraw = None, True
                if redraw:
                    live.refresh()
                if fd is not None and _quit_pressed(fd):
                    break
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        if saved is not None and fd is not None:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        signal.signal(signal.SIGWINCH, _restore(previous))
        worker.shutdown(wait=False, cancel_futures=True)
    return 0


def _restore(previous: Any) -> Any:
    return previous if previous is not None else signal.SIG_DFL


def _quit_pressed(fd: int) -> bool:
    while select.select([fd], [], [], 0)[0]:
        key = os.read(fd, 32)
        if not key or b"q" in key or b"Q" in key or b"\x03" in key:
            return True
    return False
