"""What the benchmark scripts share: timing a call, and finding the largest real transcript.

The scripts run as ``python benchmarks/bench_x.py``, which puts this folder
on ``sys.path``, so they import it as ``_common``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

SHARED_TRANSCRIPTS = Path(__file__).resolve().parent.parent.parent / "shared" / "transcripts"
"""Real Claude Code transcripts next to the repository (absent on most machines)."""


def timed(action: Callable[[], T]) -> tuple[float, T]:
    """Seconds one call of ``action()`` took, and what it returned."""
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def best(runs: int, action: Callable[[], object]) -> float:
    """The fastest of ``runs`` timings of ``action()``, in seconds."""
    return min(timed(action)[0] for _ in range(runs))


def largest_transcript() -> Path | None:
    """The largest main-session transcript under ``SHARED_TRANSCRIPTS`` (subagent files left out), or None."""
    if not SHARED_TRANSCRIPTS.is_dir():
        return None
    candidates = [p for p in SHARED_TRANSCRIPTS.rglob("*.jsonl") if "subagents" not in p.parts]
    return max(candidates, key=lambda p: p.stat().st_size) if candidates else None
