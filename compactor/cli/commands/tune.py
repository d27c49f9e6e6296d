"""``compactor tune CORPUS... --space SPACE.toml``: search settings on recorded sessions.

Writes ``results.json``, ``sessions.jsonl`` (streamed as results arrive),
``report.html`` and ``best.toml`` to ``--out`` (by default a new folder
under ``$COMPACTOR_HOME/tune/runs/``, never the current folder), says where
on stderr, and prints a table of the trials (``--json``: ``results.json``
itself). A progress bar (trials done, ETA, best so far) shows on a terminal
only. Ctrl-C keeps what finished: the reports are
written from the finished trials and the exit code is 130.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ccr.cli_kit import write_stdout
from compactor.core.errors import OutputWriteError, UsageError
from compactor.tune import (
    ResultCache,
    TrialResult,
    TuneResults,
    best_toml,
    default_cache_dir,
    load_space,
    make_executor,
    render_report,
    render_table,
    results_json,
    run_tune,
)
from compactor.tune.output import SESSIONS_FILE, SessionsFile, format_figure, read_sessions_file, write_text

__all__ = ["register", "run"]

_INTERRUPTED_EXIT = 130


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``tune`` subcommand."""
    parser = subparsers.add_parser(
        "tune",
        help="search budgets and strategies on recorded sessions",
        description="Replay every session of CORPUS under every trial of the search space (at the recorded "
        "compaction points and where the policy fires), and report which settings restore the most of what "
        "the sessions read again. Writes results.json, report.html and best.toml.",
    )
    parser.add_argument("corpus", nargs="+", type=Path, metavar="CORPUS", help="transcripts or folders of them")
    parser.add_argument("--space", type=Path, required=True, help="search space (TOML; see examples/tune.toml)")
    parser.add_argument("--config", type=Path, help="base settings every trial starts from (TOML or JSON)")
    parser.add_argument("--jobs", type=int, help="parallel replays (default: the CPU count)")
    parser.add_argument("--executor", choices=("local", "ray"), default="local", help="local process pool or Ray")
    parser.add_argument(
        "--address",
        metavar="ADDRESS",
        help="Ray cluster to join with --executor ray (auto, HOST:PORT or ray://HOST:10001; default: "
        "$RAY_ADDRESS, else a local Ray for this run)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="output folder (default: a new folder per run under $COMPACTOR_HOME/tune/runs/, named by its UTC time)",
    )
    parser.add_argument("--json", action="store_true", help="print results.json on stdout instead of the table")
    parser.add_argument("--no-cache", action="store_true", help="replay everything; neither read nor write the cache")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the search and write its reports; returns the exit code."""
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    space = load_space(args.space)
    out = args.out if args.out is not None else _run_folder()
    from ccr.files import check_output_folder

    check_output_folder(out, inputs=[args.space, args.config, *args.corpus], protected=[args.config])
    _writable_folder(out)
    cache = None if args.no_cache else ResultCache(default_cache_dir())
    executor = make_executor(args.executor, args.jobs, args.address)
    workers = f"{getattr(executor, 'workers', 1)} at a time" if args.executor == "local" else "on Ray"
    streamed = SessionsFile(out / SESSIONS_FILE)
    made = not os.path.lexists(out)
    try:
        with _progress_bar(space.search.objective, space.search.objective_at, workers) as progress:
            results = run_tune(
                args.corpus,
                space,
                executor=executor,
                config=args.config,
                cache=cache,
                progress=progress,
                on_session=streamed,
            )
        if streamed.close():
            results = results.model_copy(update={"sessions_file": SESSIONS_FILE})
    except OSError as exc:
        _give_up(streamed, out, made)
        raise OutputWriteError(f"{out}: cannot write the results there: {exc.strerror or exc}") from exc
    except BaseException:
        _give_up(streamed, out, made)
        raise
    _warn_failures(results)
    written = _write(results, out, inputs=[args.space, args.config], made=made)
    write_stdout(results_json(results) if args.json else render_table(results) + "\n")
    print(f"compactor: wrote {', '.join(written)} in {out}", file=sys.stderr)
    return _INTERRUPTED_EXIT if results.interrupted else 0


def _give_up(streamed: SessionsFile, out: Path, made: bool) -> None:
    """A run that failed keeps nothing half-written: the streamed lines go, and a folder it made."""
    streamed.discard()
    if made:
        with contextlib.suppress(OSError):
            out.rmdir()


def _warn_failures(results: TuneResults) -> None:
    """Say on stderr which trials had compactions that failed closed: their figures count none of them."""
    for trial in results.trials:
        failed = {at: m.failures for at, m in sorted(trial.totals.items()) if m.failures}
        if failed:
            counts = ", ".join(f"{n} at {at} points" for at, n in failed.items())
            print(
                f"compactor: warning: trial {trial.id}: compactions failed closed ({counts}); "
                "its figures leave them out (results.json counts them under failures)",
                file=sys.stderr,
            )


def _run_folder() -> Path:
    """A new folder for this run's results: ``$COMPACTOR_HOME/tune/runs/<UTC time>`` (never in the current
    folder, which may be a checkout). Named by the second; a second run in the same second gets ``-2``."""
    runs = default_cache_dir() / "runs"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    folder, n = runs / stamp, 1
    while folder.exists():
        n += 1
        folder = runs / f"{stamp}-{n}"
    return folder


def _writable_folder(out: Path) -> None:
    """Check the output folder now, so that an unusable one fails before any replay runs.

    Nothing is made yet (``_write`` makes the folder): a run that fails
    before it has results, a missing corpus say, leaves nothing behind. The
    folder, or the nearest folder above it that exists, must be a writable
    folder.

    Raises:
        OutputWriteError: ``out`` is not a folder, or cannot be made or written.
    """
    existing = out.absolute()
    while not _exists(out, existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OutputWriteError(f"{out}: cannot write the results there: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OutputWriteError(f"{out}: cannot write the results there: {existing} is not writable")


def _exists(out: Path, path: Path) -> bool:
    """Whether ``path`` exists.

    Raises:
        OutputWriteError: the file system cannot look (a name in it too long for it, no permission).
    """
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        shown = str(out) if len(str(out)) <= 80 else f"{str(out)[:60]}... ({len(str(out)):,} characters)"
        raise OutputWriteError(f"{shown}: cannot write the results there: {exc.strerror or exc}") from exc
    return True


def _write(results: TuneResults, out: Path, inputs: list[Path | None], *, made: bool) -> list[str]:
    """Write the reports; the names written (no best.toml without a finished trial; an old one is removed).

    Raises:
        OutputWriteError: the folder cannot be written.
    """
    from ccr.files import describe_os_error, private_dir

    streamed = [SESSIONS_FILE] if results.sessions_file else []
    try:
        private_dir(out)
        write_text(out / "results.json", results_json(results), inputs=inputs)
        sessions = read_sessions_file(out / SESSIONS_FILE) if results.sessions_file else None
        write_text(out / "report.html", render_report(results, sessions), inputs=inputs)
        toml = best_toml(results)
        if toml is None:
            (out / "best.toml").unlink(missing_ok=True)
            return ["results.json", *streamed, "report.html"]
        write_text(out / "best.toml", toml, inputs=inputs)
    except OSError as exc:
        if made:  # a folder this run made and could not fill is not left behind
            with contextlib.suppress(OSError):
                (out / SESSIONS_FILE).unlink(missing_ok=True)
                out.rmdir()
        raise OutputWriteError(f"{out}: cannot write the results there: {describe_os_error(exc)}") from exc
    return ["results.json", *streamed, "report.html", "best.toml"]


class _progress_bar:
    """A rich progress bar on stderr when it is a terminal; otherwise nothing.

    Until the first replay comes back (the workers start and import first)
    the bar pulses and the time spent runs; then it shows replays done, the
    time left and the best trial so far.
    """

    def __init__(self, objective: str, at: str, workers: str) -> None:
        self.objective = objective
        self.at = at
        self.workers = workers
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> Any:
        if not sys.stderr.isatty():
            return None
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn

        from ccr.progress import time_column

        self.bar = Progress(
            TextColumn("tuning"),
            BarColumn(),
            TextColumn("{task.fields[count]}"),
            time_column(),
            TextColumn("{task.fields[best]}"),
            console=Console(stderr=True),
            transient=True,
        )
        self.bar.start()
        self.task = self.bar.add_task("tune", total=None, count="starting", best="")
        return self.update

    def update(self, done: int, total: int, best: TrialResult | None) -> None:
        label = ""
        if best is not None and self.at in best.totals:
            value = best.totals[self.at].figures().get(self.objective)
            label = f"best {best.id}: {self.objective} {format_figure(self.objective, value)}"
        count = f"{done:,}/{total:,} replays" + (f", {self.workers}" if done < total else "")
        self.bar.update(self.task, completed=done, total=total if done else None, count=count, best=label)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
