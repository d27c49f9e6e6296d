"""Benchmark: ``compactor statusline`` on a 4 MB transcript, as Claude Code runs it after each answer.

Figures (protocol in ``_common.py``; run alone: ``python benchmarks/bench_statusline.py [--quick]``),
each the wall time of a fresh ``compactor statusline`` process against ``python -c pass``,
interleaved, on a generated session of 4 MB (tagged copies of the long fixture,
``make_corpus.long_session``) and on the largest real transcript under ``../shared/transcripts``
(missing without it):

- a later run: the session's state is saved and the transcript gained a few lines since (the
  next records of the session, appended before each run, as Claude Code writes them); at most
  5x, and from the same runs each run's seconds over the 150 ms goal: at most 1;
- a first run: no saved state, the whole transcript folded; at most 30x, and its seconds over
  the 1 s goal: at most 1.

Both kinds are printed because a ratio depends on how fast this machine starts Python
(``python -c pass``: about 30 ms here). Measure on a regular install (``pip install .``): an
editable one adds an import hook to every start, making ``python -c pass`` slower and the
ratios look better than they are. The runs go without ``PYTHONDONTWRITEBYTECODE``, so that the
warm-up run leaves the bytecode a regular install has.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _common import REPO, Figure, largest_transcript, main, missing
from make_corpus import long_session

BIN = Path(sys.executable).parent
LONG_FIXTURE = REPO / "fixtures" / "sessions" / "long.jsonl"
GENERATED_BYTES = 4_000_000
LATER_GOAL = 0.150
FIRST_GOAL = 1.0
LINES_PER_RUN = 3


def _seconds(action: Callable[[], None]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _python_pass() -> None:
    subprocess.run([sys.executable, "-c", "pass"], check=True)


class _Session:
    """A transcript in a home of its own, the lines still to come, and one status-line run."""

    def __init__(self, folder: Path, source: Path, held_back: int) -> None:
        lines = source.read_bytes().splitlines(keepends=True)
        self.rest = lines[-held_back:] if held_back else []
        self.transcript = folder / "session.jsonl"
        self.transcript.write_bytes(b"".join(lines[: len(lines) - held_back]))
        self.home = folder / "home"
        # A regular install carries its modules' bytecode: a run must not compile them again each time.
        environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env = {**environ, "COMPACTOR_HOME": str(self.home), "NO_COLOR": "1"}
        self.stdin = json.dumps(
            {"session_id": "bench-session", "transcript_path": str(self.transcript), "model": {"id": "claude"}}
        ).encode()

    def run(self) -> None:
        done = subprocess.run(
            [str(BIN / "compactor"), "statusline"], input=self.stdin, capture_output=True, env=self.env, check=False
        )
        if done.returncode != 0 or not done.stdout.strip() or done.stdout.startswith(b"compactor:"):
            raise RuntimeError(f"compactor statusline: {done.returncode} {done.stdout!r} {done.stderr[-300:]!r}")

    def grow(self) -> None:
        taken, self.rest = self.rest[:LINES_PER_RUN], self.rest[LINES_PER_RUN:]
        with self.transcript.open("ab") as handle:
            handle.writelines(taken)

    def forget(self) -> None:
        shutil.rmtree(self.home / "statusline", ignore_errors=True)


def _pairs(subject: Callable[[], float], runs: int) -> tuple[list[float], list[float]]:
    """(ratios to ``python -c pass``, subject seconds) of ``runs`` interleaved pairs after one warm-up."""
    subject()
    _python_pass()
    ratios, seconds = [], []
    for _ in range(runs):
        took = subject()
        base = _seconds(_python_pass)
        ratios.append(took / base)
        seconds.append(took)
    return ratios, seconds


def _figures_for(name: str, source: Path, runs: int) -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="bench-statusline-") as folder:
        session = _Session(Path(folder), source, held_back=LINES_PER_RUN * (runs + 2))
        session.run()

        def later() -> float:
            session.grow()
            return _seconds(session.run)

        def first() -> float:
            session.forget()
            return _seconds(session.run)

        later_ratios, later_seconds = _pairs(later, runs)
        first_ratios, first_seconds = _pairs(first, max(3, runs // 2))
        size = f"{session.transcript.stat().st_size / 1e6:.1f} MB"
    ms = [round(s * 1000) for s in sorted(later_seconds)]
    return [
        Figure(f"statusline later run, {name} vs python -c pass", later_ratios, 5, "<=", f"{size}; ms: {ms}"),
        Figure(f"statusline later run, {name} seconds / 150 ms goal", [s / LATER_GOAL for s in later_seconds], 1, "<="),
        Figure(f"statusline first run, {name} vs python -c pass", first_ratios, 30, "<=", size),
        Figure(f"statusline first run, {name} seconds / 1 s goal", [s / FIRST_GOAL for s in first_seconds], 1, "<="),
    ]


def figures(quick: bool = False) -> list[Figure]:
    """The status line's later and first runs on a generated and a real 4 MB transcript."""
    runs = 5 if quick else 15
    if not (BIN / "compactor").is_file():
        return [missing("statusline", 5, "<=", f"no compactor script beside {sys.executable}")]
    found: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="bench-statusline-source-") as folder:
        generated = long_session(LONG_FIXTURE, Path(folder) / "long.jsonl", GENERATED_BYTES)
        found += _figures_for("generated 4 MB", generated, runs)
    real = largest_transcript()
    if real is None:
        found.append(missing("statusline later run, real transcript", 5, "<=", "no ../shared/transcripts"))
    else:
        found += _figures_for(real.name, real, runs)
    return found


if __name__ == "__main__":
    sys.exit(main(figures))
