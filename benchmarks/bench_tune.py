"""Benchmark: a tuning run with nothing new against the same run from an empty cache.

Runs the example space (``examples/tune.toml``) on the fixture sessions in
one process, in pairs: first into a fresh cache folder (every replay runs),
then again into the same folder (every replay comes from the cache). The
warm run still reads the corpus, hashes every session, validates every
trial's settings and ranks the trials; only the replays are skipped.

Figures (protocol in ``_common.py``; run alone: ``python benchmarks/bench_tune.py [--quick]``):
the warm run's time over the cold run's. Target: at most 0.1.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from _common import REPO, Figure, main, timed
from compactor.tune import LocalExecutor, ResultCache, load_space, run_tune

SPACE = REPO / "examples" / "tune.toml"
CORPUS = REPO / "fixtures" / "sessions"


def figures(quick: bool = False) -> list[Figure]:
    space = load_space(SPACE)
    ratios = []
    seconds: list[tuple[float, float]] = []
    for _ in range(1 if quick else 3):
        with tempfile.TemporaryDirectory() as folder:
            cache = ResultCache(Path(folder))
            cold, first = timed(lambda: run_tune([CORPUS], space, executor=LocalExecutor(1), cache=cache))
            warm, second = timed(lambda: run_tune([CORPUS], space, executor=LocalExecutor(1), cache=cache))
            assert first.jobs_run > 0 and second.jobs_run == 0, "the second run must replay nothing"
            ratios.append(warm / cold)
            seconds.append((cold, warm))
    return [
        Figure(
            name="tune: rerun with nothing new / first run",
            ratios=ratios,
            target=0.1,
            direction="<=",
            detail=f"{len(first.trials)} trials x {len(first.corpus)} sessions x 2 point kinds, one process; "
            + ", ".join(f"{c:.2f} s then {w:.3f} s ({w / c:.4f})" for c, w in seconds),
        )
    ]


if __name__ == "__main__":
    raise SystemExit(main(figures))
