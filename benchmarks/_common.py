"""What the benchmark scripts share: the protocol ``run.py`` collects, and timing helpers.

The protocol
------------
A script ``benchmarks/bench_<name>.py`` takes part in ``python
benchmarks/run.py`` by defining, at module level::

    def figures(quick: bool = False) -> list[Figure]: ...

Each ``Figure`` is one judged ratio: a name, the ratios measured (one per
interleaved pair of runs, see ``interleaved``), a target and its direction
(``"<="``: the ratio must be at most the target; ``">="``: at least). A
figure that cannot be measured here (a missing input or program) is a
``Figure`` with no ratios and a ``missing`` reason; it is shown, not
failed. ``quick`` asks for fewer repetitions (``run.py --quick``). Importing
the script must do no work: everything happens inside ``figures``. Running
the script alone prints its figures the same way (``main(figures)``).

Every figure is a ratio of runs interleaved in one process (subject,
baseline, subject, baseline, ...), so that a busy machine slows both sides
alike; its median, min and max are reported.

The scripts run as ``python benchmarks/bench_x.py`` (or are imported by
``run.py``), which puts this folder on ``sys.path``, so they import this
module as ``_common``.
"""

from __future__ import annotations

import gc
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

__all__ = [
    "Figure",
    "REPO",
    "SHARED_TRANSCRIPTS",
    "best",
    "claude_code_next_requests",
    "cold_start_ratios",
    "forget_remembered_results",
    "interleaved",
    "largest_transcript",
    "main",
    "missing",
    "print_figures",
    "session_name",
    "shared_sessions",
    "timed",
]

T = TypeVar("T")

REPO = Path(__file__).resolve().parent.parent
"""The repository's root folder."""

SHARED_TRANSCRIPTS = REPO.parent / "shared" / "transcripts"
"""Real Claude Code transcripts next to the repository (absent on most machines)."""


@dataclass(frozen=True)
class Figure:
    """One judged ratio: the runs measured, the target and which side of it passes."""

    name: str
    ratios: Sequence[float]
    target: float
    direction: Literal["<=", ">="]
    detail: str = ""
    missing: str | None = None
    """Why the figure could not be measured (then ``ratios`` is empty and it neither passes nor fails)."""

    @property
    def median(self) -> float:
        return statistics.median(self.ratios)

    @property
    def passed(self) -> bool | None:
        """True or False against the target (judged on the median); None when missing."""
        if self.missing is not None or not self.ratios:
            return None
        return self.median <= self.target if self.direction == "<=" else self.median >= self.target

    def shown(self) -> str:
        """``median (min–max)`` with two decimals, or the reason it is missing."""
        if self.missing is not None or not self.ratios:
            return f"missing: {self.missing or 'no runs'}"
        return f"{self.median:.2f}x ({min(self.ratios):.2f}–{max(self.ratios):.2f})"


def missing(name: str, target: float, direction: Literal["<=", ">="], reason: str) -> Figure:
    """A figure that could not be measured here, and why."""
    return Figure(name=name, ratios=(), target=target, direction=direction, missing=reason)


def timed(action: Callable[[], T]) -> tuple[float, T]:
    """Seconds one call of ``action()`` took, and what it returned.

    Garbage left by whatever ran before is collected first, so that a
    collection it would trigger is not charged to ``action``; what
    ``action`` itself allocates is.
    """
    gc.collect()
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def best(runs: int, action: Callable[[], object]) -> float:
    """The fastest of ``runs`` timings of ``action()``, in seconds."""
    return min(timed(action)[0] for _ in range(runs))


def interleaved(
    subject: Callable[[], object], baseline: Callable[[], object], *, runs: int, warmup: int = 1
) -> list[float]:
    """``runs`` ratios subject time / baseline time, the two run alternately in this process.

    ``warmup`` rounds of both run first and are not counted (caches, lazy imports).
    """
    for _ in range(warmup):
        subject()
        baseline()
    ratios = []
    for _ in range(runs):
        subject_seconds, _ = timed(subject)
        baseline_seconds, _ = timed(baseline)
        ratios.append(subject_seconds / baseline_seconds)
    return ratios


def cold_start_ratios(command: Sequence[str], *, runs: int, stdin: bytes = b"") -> list[float]:
    """Wall time of running ``command`` against ``python -c pass``, interleaved, one ratio per pair.

    Raises:
        RuntimeError: the command exits non-zero (it would not be a start-up worth timing).
    """

    def run_command() -> None:
        done = subprocess.run(list(command), input=stdin, capture_output=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-300:]}")

    def run_nothing() -> None:
        subprocess.run([sys.executable, "-c", "pass"], check=True)

    return interleaved(run_command, run_nothing, runs=runs)


def forget_remembered_results() -> None:
    """Empty what compactor remembers of recent tool results and texts in this process (their djb2
    keys, error lines, the statements judged in a text and its words), so that a timed run meets
    every result and text for the first time, as a new process would."""
    from compactor.engine import dedup
    from compactor.summarizers import _errors, ledger_words, statements

    dedup._length_and_key.cache_clear()
    _errors.error_lines.cache_clear()
    statements._remembered.cache_clear()
    ledger_words._terms.cache_clear()


def largest_transcript() -> Path | None:
    """The largest main-session transcript under ``SHARED_TRANSCRIPTS`` (subagent files left out), or None."""
    sessions = shared_sessions()
    return max(sessions, key=lambda p: p.stat().st_size) if sessions else None


def shared_sessions() -> list[Path]:
    """Every main-session transcript under ``SHARED_TRANSCRIPTS`` (subagent files left out), sorted."""
    if not SHARED_TRANSCRIPTS.is_dir():
        return []
    return sorted(p for p in SHARED_TRANSCRIPTS.rglob("*.jsonl") if "subagents" not in p.parts)


def claude_code_next_requests(records: Sequence[dict[str, Any]]) -> list[int]:
    """What Claude Code's first request after each recorded compaction carried (the usage of the first
    assistant record with one: input, cache creation and cache reads), in the order of the boundaries."""
    found: list[int] = []
    waiting = False
    for record in records:
        if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
            waiting = True
        elif waiting and record.get("type") == "assistant":
            usage = (record.get("message") or {}).get("usage")
            if isinstance(usage, dict):
                keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
                found.append(sum(int(usage.get(k) or 0) for k in keys))
                waiting = False
    return found


def session_name(path: Path) -> str:
    """A real session's name in a figure (its folder's name for a ``session.jsonl``)."""
    return path.parent.name if path.stem == "session" else path.stem


def print_figures(figures: Sequence[Figure]) -> None:
    """Print a table of figure, ratio (median, min–max), target and pass/fail/missing."""
    rows = [(f.name, f.shown(), f"{f.direction} {f.target:g}x", _verdict(f)) for f in figures]
    headers = ("figure", "ratio (median, min–max)", "target", "result")
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    print(line)
    print("-" * len(line))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    for figure in figures:
        if figure.detail:
            print(f"  {figure.name}: {figure.detail}")


def _verdict(figure: Figure) -> str:
    passed = figure.passed
    return "missing" if passed is None else ("pass" if passed else "FAIL")


def main(make: Callable[..., Sequence[Figure]]) -> int:
    """Run one script's ``figures`` and print them (``--quick`` for fewer runs); 1 if any failed."""
    figures = make(quick="--quick" in sys.argv[1:])
    print_figures(figures)
    return 1 if any(f.passed is False for f in figures) else 0
