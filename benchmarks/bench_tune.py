"""Benchmark: what a tuning run costs per trial, and a rerun with nothing new.

Figures (protocol in ``_common.py``; run alone: ``python benchmarks/bench_tune.py [--quick]``):

- ``tune: marginal trial / first trial``: a run of 1 trial and a run of 8
  trials over the same corpus, interleaved, each from fresh caches (an
  empty result cache, a fresh worker cache and the tokenizer unloaded, as
  a new worker process starts): (time of 8 - time of 1) / 7, over the time
  of 1. What a trial costs once the work that does not depend on its
  settings (reading each session, counting its texts, loading the
  tokenizer) is done, against the first trial, which does it all. One
  process (``LocalExecutor(1)``), on the fixture sessions and on the real
  sessions under ``../shared/transcripts`` (missing without them). Target:
  at most 0.4.
- ``tune: rerun with nothing new / first run``: the example space
  (``examples/tune.toml``) on the fixture sessions, first into a fresh
  cache folder (every replay runs, from a fresh worker cache), then again
  into the same folder (every replay comes from the cache). The warm run
  still reads the corpus, hashes every session, validates every trial's
  settings and ranks the trials; only the replays are skipped. Target: at
  most 0.1.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import tiktoken.registry
from _common import REPO, Figure, forget_remembered_results, main, missing, shared_sessions, timed

from ccr import tokens as ccr_tokens
from compactor.tune import LocalExecutor, ResultCache, SearchSpace, WorkerCache, jobs, load_space, run_tune

SPACE = REPO / "examples" / "tune.toml"
CORPUS = REPO / "fixtures" / "sessions"
ONE = SearchSpace.model_validate({"params": {"attachments.max_files": [5]}})
EIGHT = SearchSpace.model_validate(
    {
        "params": {
            "attachments.selection.strategy": ["recent", "activity"],
            "pipeline.tail_tokens": [8000, 12000],
            "attachments.max_files": [3, 5],
        }
    }
)


def fresh_worker() -> None:
    """Forget what this process kept between jobs, as a new worker starts: sessions, counts, the tokenizer,
    and the djb2 keys and error lines remembered for recent tool results."""
    jobs._WORKER = WorkerCache()
    ccr_tokens.offline_encoding.cache_clear()
    tiktoken.registry.ENCODINGS.clear()
    forget_remembered_results()


def marginal_figure(name: str, corpus: list[Path], pairs: int) -> Figure:
    def tune(space: SearchSpace) -> float:
        fresh_worker()
        seconds, results = timed(lambda: run_tune(corpus, space, executor=LocalExecutor(1)))
        assert results.jobs_run == len(space.trials()) * len(results.corpus) and not results.interrupted
        return seconds

    tune(ONE)  # imports and templates, not counted
    ratios, seconds = [], []
    for _ in range(pairs):
        first, eight = tune(ONE), tune(EIGHT)
        ratios.append((eight - first) / 7 / first)
        seconds.append((first, eight))
    return Figure(
        f"tune: marginal trial / first trial (8 trials vs 1, fresh caches): {name}",
        ratios,
        0.4,
        "<=",
        detail=f"{len(corpus)} corpus paths, one process; "
        + ", ".join(f"1 trial {a:.2f} s, 8 trials {b:.2f} s" for a, b in seconds),
    )


def rerun_figure(quick: bool) -> Figure:
    space = load_space(SPACE)
    ratios = []
    seconds: list[tuple[float, float]] = []
    for _ in range(1 if quick else 3):
        with tempfile.TemporaryDirectory() as folder:
            cache = ResultCache(Path(folder))
            fresh_worker()
            cold, first = timed(lambda: run_tune([CORPUS], space, executor=LocalExecutor(1), cache=cache))
            warm, second = timed(lambda: run_tune([CORPUS], space, executor=LocalExecutor(1), cache=cache))
            assert first.jobs_run > 0 and second.jobs_run == 0, "the second run must replay nothing"
            ratios.append(warm / cold)
            seconds.append((cold, warm))
    return Figure(
        name="tune: rerun with nothing new / first run",
        ratios=ratios,
        target=0.1,
        direction="<=",
        detail=f"{len(first.trials)} trials x {len(first.corpus)} sessions x 2 point kinds, one process; "
        + ", ".join(f"{c:.2f} s then {w:.3f} s ({w / c:.4f})" for c, w in seconds),
    )


def figures(quick: bool = False) -> list[Figure]:
    pairs = 1 if quick else 3
    out = [marginal_figure("fixture sessions", [CORPUS], pairs)]
    real = shared_sessions()
    if real:
        out.append(marginal_figure("real sessions", real, pairs))
    else:
        out.append(
            missing(
                "tune: marginal trial / first trial (8 trials vs 1, fresh caches): real sessions",
                0.4,
                "<=",
                "no transcript under ../shared/transcripts",
            )
        )
    out.append(rerun_figure(quick))
    return out


if __name__ == "__main__":
    raise SystemExit(main(figures))
