"""run_job and the worker's cache: sessions parsed once, texts counted once, the same figures as a fresh worker."""

from __future__ import annotations

import shutil
from pathlib import Path

from compactor.core.config import load_settings
from compactor.tune import Job, SearchSpace, run_job, session_hash
from compactor.tune.jobs import WorkerCache

SESSIONS = Path(__file__).resolve().parents[3] / "fixtures" / "sessions"
SMALL = SESSIONS / "small.jsonl"
LONG = SESSIONS / "long.jsonl"

TRIALS = SearchSpace.model_validate(
    {"params": {"attachments.selection.strategy": ["recent", "activity"], "pipeline.tail_tokens": [6000, 12000]}}
).trials()


def job(session: Path, overrides: dict[str, object]) -> Job:
    settings = load_settings(None, overrides=overrides)
    return Job(
        trial_id="t",
        session=str(session),
        session_hash=session_hash(session),
        settings_json=settings.model_dump_json(),
        key="k",
    )


def test_a_worker_parses_each_session_once_and_its_figures_equal_a_fresh_workers() -> None:
    shared = WorkerCache()
    compacted = 0
    for session in (LONG, SMALL):
        for trial in TRIALS:
            kept = run_job(job(session, trial.overrides()), shared)
            fresh = run_job(job(session, trial.overrides()), WorkerCache())
            assert kept.metrics == fresh.metrics, (session.name, trial.params)
            compacted += kept.metrics["recorded"].compactions + kept.metrics["auto"].compactions
    assert compacted > 0  # the trials compacted: the settings had something to change
    assert shared.reads == 2


def test_a_later_trial_tokenizes_a_fraction_of_what_the_first_did() -> None:
    cache = WorkerCache()
    run_job(job(LONG, TRIALS[0].overrides()), cache)
    counter = cache.counter("tiktoken")
    first = counter._tokenized
    run_job(job(LONG, TRIALS[-1].overrides()), cache)
    assert first > 0
    assert counter._tokenized - first < first / 5


def test_a_changed_session_file_is_parsed_again(tmp_path: Path) -> None:
    copy = tmp_path / "session.jsonl"
    shutil.copyfile(SMALL, copy)
    cache = WorkerCache()
    run_job(job(copy, {}), cache)
    run_job(job(copy, {}), cache)
    assert cache.reads == 1
    copy.write_bytes(b"".join(SMALL.read_bytes().splitlines(keepends=True)[:-1]))
    run_job(job(copy, {}), cache)
    assert cache.reads == 2


def test_a_worker_keeps_only_its_most_recent_sessions() -> None:
    cache = WorkerCache(kept=1)
    for session in (SMALL, LONG, SMALL):
        run_job(job(session, {}), cache)
    assert cache.reads == 3 and list(cache.sessions) == [(str(SMALL), session_hash(SMALL))]
