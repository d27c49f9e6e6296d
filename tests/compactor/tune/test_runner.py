"""run_tune: trials over a corpus, cached per job, resumable after Ctrl-C, the same through any executor."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from compactor.core.config import Settings
from compactor.core.errors import InputNotFound
from compactor.tune import (
    Job,
    LocalExecutor,
    RayExecutor,
    ResultCache,
    SearchSpace,
    SessionResult,
    TuneResults,
    WorkerCache,
    discover_sessions,
    results_json,
    run_job,
    run_tune,
)
from compactor.tune.jobs import session_hash
from compactor.tune.metrics import Metrics, next_requests
from compactor.tune.runner import IGNORE_MARKER, TIE_BREAKS, TrialResult, best_trial

SESSIONS = Path(__file__).resolve().parents[3] / "fixtures" / "sessions"
SMALL = SESSIONS / "small.jsonl"
LONG = SESSIONS / "long.jsonl"


def space(**params: list[object]) -> SearchSpace:
    return SearchSpace.model_validate({"params": params})


class InterruptAfter:
    """An executor that runs jobs in this process and is interrupted (Ctrl-C) after ``n`` results."""

    name = "interrupting"

    def __init__(self, n: int) -> None:
        self.n = n

    def run(self, jobs: Sequence[Job], on_result: Callable[[SessionResult], None]) -> None:
        for count, job in enumerate(jobs):
            if count == self.n:
                raise KeyboardInterrupt
            on_result(run_job(job))


def figures(results: TuneResults) -> dict[tuple[str, str, str], dict[str, object]]:
    return {
        (t.id, s.session, at): m.model_dump() for t in results.trials for s in t.sessions for at, m in s.metrics.items()
    }


def test_a_corpus_folder_yields_its_sessions_but_not_subagent_files(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "s" / "subagents").mkdir(parents=True)
    (tmp_path / "s" / "session.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "s" / "subagents" / "agent-1.jsonl").write_text("", encoding="utf-8")
    assert discover_sessions([tmp_path]) == [tmp_path / "a.jsonl", tmp_path / "s" / "session.jsonl"]
    with pytest.raises(InputNotFound):
        discover_sessions([tmp_path / "missing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputNotFound):
        discover_sessions([tmp_path / "empty"])


def test_every_trial_replays_every_session_at_both_point_kinds(tmp_path: Path) -> None:
    results = run_tune(
        [LONG],
        space(**{"attachments.selection.strategy": ["recent", "activity"]}),
        executor=LocalExecutor(1),
        cache=ResultCache(tmp_path),
    )
    assert len(results.trials) == 2 and all(t.complete for t in results.trials)
    for trial in results.trials:
        assert set(trial.totals) == {"recorded", "auto"}
        assert trial.totals["recorded"].compactions >= 2  # the interesting branch ran
    assert results.best in {t.id for t in results.trials}
    assert results.jobs_run == 2 and results.jobs_cached == 0


def test_a_second_run_takes_everything_from_the_cache_and_a_widened_space_runs_only_the_new(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    first = run_tune([SMALL], space(**{"attachments.max_files": [3, 5]}), executor=LocalExecutor(1), cache=cache)
    again = run_tune([SMALL], space(**{"attachments.max_files": [3, 5]}), executor=LocalExecutor(1), cache=cache)
    wider = run_tune([SMALL], space(**{"attachments.max_files": [3, 5, 8]}), executor=LocalExecutor(1), cache=cache)
    assert (first.jobs_run, first.jobs_cached) == (2, 0)
    assert (again.jobs_run, again.jobs_cached) == (0, 2)
    assert (wider.jobs_run, wider.jobs_cached) == (1, 2)
    assert figures(again) == figures(first)


def test_ctrl_c_keeps_the_finished_trials_and_the_rerun_resumes(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    searched = space(**{"attachments.max_files": [3, 5, 8]})
    stopped = run_tune([SMALL], searched, executor=InterruptAfter(2), cache=cache)
    assert stopped.interrupted
    assert sum(t.complete for t in stopped.trials) == 2
    resumed = run_tune([SMALL], searched, executor=LocalExecutor(1), cache=cache)
    assert not resumed.interrupted and (resumed.jobs_run, resumed.jobs_cached) == (1, 2)


def test_a_process_pool_gives_the_same_figures_as_one_process(tmp_path: Path) -> None:
    searched = space(**{"attachments.max_files": [3, 5]})
    one = run_tune([SMALL, LONG], searched, executor=LocalExecutor(1))
    pool = run_tune([SMALL, LONG], searched, executor=LocalExecutor(2))
    assert figures(pool) == figures(one)
    assert pool.best == one.best


class Unshared:
    """An executor that runs each job in this process from a fresh ``WorkerCache``: nothing shared between trials."""

    name = "unshared"

    def run(self, jobs: Sequence[Job], on_result: Callable[[SessionResult], None]) -> None:
        for job in jobs:
            on_result(run_job(job, WorkerCache()))


class Shared:
    """An executor that runs every job in this process with one ``WorkerCache`` (``cache``)."""

    name = "shared"

    def __init__(self) -> None:
        self.cache = WorkerCache()

    def run(self, jobs: Sequence[Job], on_result: Callable[[SessionResult], None]) -> None:
        for job in jobs:
            on_result(run_job(job, self.cache))


def written(results: TuneResults) -> dict[str, object]:
    """What ``results.json`` says of every trial and session, less what varies between runs (times, executor)."""
    data = json.loads(results_json(results))
    for trial in data["trials"]:
        trial.pop("wall_seconds")
        for session in trial["sessions"]:
            session.pop("wall_seconds")
    return {"trials": data["trials"], "best": data["best"]}


SHARING_SPACE = {"attachments.selection.strategy": ["recent", "activity"], "pipeline.tail_tokens": [6000, 12000]}


def test_trials_that_share_parsing_and_counts_write_the_same_results_as_trials_that_share_nothing() -> None:
    searched = space(**SHARING_SPACE)
    alone = written(run_tune([SMALL, LONG], searched, executor=Unshared()))
    shared = Shared()
    assert written(run_tune([SMALL, LONG], searched, executor=shared)) == alone
    assert shared.cache.reads == 2  # four trials, each session parsed once
    assert written(run_tune([SMALL, LONG], searched, executor=LocalExecutor(2))) == alone
    assert any(s["metrics"]["recorded"]["compactions"] for t in alone["trials"] for s in t["sessions"])


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (pip install '.[ray]')")
@pytest.mark.filterwarnings("ignore")
def test_ray_gives_the_same_figures_as_the_local_executor_and_as_trials_that_share_nothing() -> None:
    searched = space(**SHARING_SPACE)
    local = run_tune([SMALL, LONG], searched, executor=LocalExecutor(1))
    through_ray = run_tune([SMALL, LONG], searched, executor=RayExecutor(2))
    assert through_ray.executor == "ray"
    assert figures(through_ray) == figures(local)
    assert any(m["compactions"] for m in figures(local).values())
    assert written(through_ray) == written(run_tune([SMALL, LONG], searched, executor=Unshared()))


@pytest.mark.skipif(
    importlib.util.find_spec("optuna") is None, reason="optuna is not installed (pip install '.[optuna]')"
)
def test_optuna_asks_for_trials_within_the_space_and_repeats_come_from_the_run(tmp_path: Path) -> None:
    searched = SearchSpace.model_validate(
        {"search": {"method": "optuna", "trials": 4, "seed": 3}, "params": {"attachments.max_files": [3, 5]}}
    )
    results = run_tune([SMALL], searched, executor=LocalExecutor(1), cache=ResultCache(tmp_path))
    assert 1 <= len(results.trials) <= 2 and all(t.complete for t in results.trials)
    assert {t.params["attachments.max_files"] for t in results.trials} <= {3, 5}
    assert results.jobs_run == len(results.trials)


class Recording:
    """An executor that runs jobs in this process and remembers the order they came in."""

    name = "recording"

    def __init__(self) -> None:
        self.sessions: list[str] = []

    def run(self, jobs: Sequence[Job], on_result: Callable[[SessionResult], None]) -> None:
        for job in jobs:
            self.sessions.append(job.session)
            on_result(run_job(job))


def test_the_executor_gets_one_sessions_trials_in_a_row_so_a_worker_parses_it_once() -> None:
    executor = Recording()
    run_tune([SMALL, LONG], space(**{"attachments.max_files": [3, 5, 8]}), executor=executor)
    assert executor.sessions == [str(SMALL)] * 3 + [str(LONG)] * 3


def test_free_workers_keep_their_session_and_spread_over_the_others() -> None:
    from compactor.tune.executors import _Affinity

    jobs = [
        Job(trial_id=f"t{n}", session=s, session_hash="h", settings_json="{}", key=f"{s}{n}")
        for s in ("a", "b")
        for n in range(3)
    ]
    plan = _Affinity(jobs)
    first, second = plan.next_for(0), plan.next_for(1)
    assert first is not None and second is not None
    assert (first.session, second.session) == ("a", "b")  # one session each
    taken = [plan.next_for(0), plan.next_for(0), plan.next_for(1), plan.next_for(1)]
    assert [j.session for j in taken if j is not None] == ["a", "a", "b", "b"]
    assert plan.next_for(0) is None and plan.next_for(1) is None


def test_a_worker_with_nothing_left_of_its_session_helps_with_another() -> None:
    from compactor.tune.executors import _Affinity

    jobs = [Job(trial_id=f"t{n}", session="a", session_hash="h", settings_json="{}", key=f"a{n}") for n in range(4)]
    plan = _Affinity(jobs)
    handed = [plan.next_for(0), plan.next_for(1), plan.next_for(0), plan.next_for(1), plan.next_for(0)]
    assert [j.trial_id for j in handed if j is not None] == ["t0", "t1", "t2", "t3"]
    assert handed[-1] is None


def test_a_run_that_hands_each_session_on_keeps_only_totals_and_they_equal_a_kept_runs() -> None:
    searched = space(**{"attachments.max_files": [3, 5]})
    kept = run_tune([SMALL, LONG], searched, executor=LocalExecutor(1))
    handed: list[SessionResult] = []
    streamed = run_tune([SMALL, LONG], searched, executor=LocalExecutor(1), on_session=handed.append)
    assert all(t.sessions == [] and t.complete for t in streamed.trials)
    assert {t.id: t.totals for t in streamed.trials} == {t.id: t.totals for t in kept.trials}
    assert sorted(
        (r.trial_id, r.session, r.metrics == s.metrics)
        for r in handed
        for t in kept.trials
        for s in t.sessions
        if (s.trial_id, s.session) == (r.trial_id, r.session)
    ) == sorted((s.trial_id, s.session, True) for t in kept.trials for s in t.sessions)
    assert streamed.best == kept.best


def test_a_pool_task_is_one_sessions_jobs_split_only_when_workers_would_idle() -> None:
    from compactor.tune.executors import _by_session

    jobs = [
        Job(trial_id=f"t{n}", session=s, session_hash="h", settings_json="{}", key=f"{s}{n}")
        for s in ("a", "b", "c")
        for n in range(4)
    ]
    assert [[j.key for j in g] for g in _by_session(jobs, 2)] == [
        ["a0", "a1", "a2", "a3"],
        ["b0", "b1", "b2", "b3"],
        ["c0", "c1", "c2", "c3"],
    ]
    lone = [j for j in jobs if j.session == "a"]
    assert [[j.key for j in g] for g in _by_session(lone, 2)] == [["a0", "a1"], ["a2", "a3"]]
    assert sorted(j.key for g in _by_session(lone, 3) for j in g) == ["a0", "a1", "a2", "a3"]


def test_a_folder_marked_as_no_corpus_is_not_searched_and_the_fixture_shapes_are_marked(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "edge" / "deeper").mkdir(parents=True)
    (tmp_path / "edge" / IGNORE_MARKER).write_text("edge cases\n", encoding="utf-8")
    (tmp_path / "edge" / "deeper" / "b.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "edge" / "c.jsonl").write_text("", encoding="utf-8")
    assert discover_sessions([tmp_path]) == [tmp_path / "a.jsonl"]
    assert discover_sessions([tmp_path / "edge"]) == [
        tmp_path / "edge" / "c.jsonl",
        tmp_path / "edge" / "deeper" / "b.jsonl",
    ]
    assert [p.name for p in discover_sessions([SESSIONS])] == ["background.jsonl", "long.jsonl", "small.jsonl"]


def _trial(name: str, **counts: int) -> TrialResult:
    return TrialResult(id=name, params={}, settings={}, totals={"recorded": Metrics(**counts)}, complete=True)


def test_a_tie_never_goes_to_the_trial_that_restores_less() -> None:
    tie = space(**{"pipeline.tail_tokens": [3_000, 6_000]})
    tie.search.objective = "reread_coverage"
    less = _trial(
        "less", compactions=2, reread_files=4, reread_restored=0, attachment_tokens_sum=200, post_tokens_sum=10
    )
    more = _trial(
        "more", compactions=2, reread_files=4, reread_restored=0, attachment_tokens_sum=500, post_tokens_sum=90
    )
    assert best_trial([less, more], tie) is not None and best_trial([less, more], tie).id == "more"  # type: ignore[union-attr]
    held = _trial("held", compactions=2, reread_files=4, reread_restored=0, reread_in_tail=2, attachment_tokens_sum=100)
    assert best_trial([less, more, held], tie).id == "held", "what the tail holds breaks a tie first"  # type: ignore[union-attr]
    assert TIE_BREAKS[0] == "reread_coverage_with_tail" and "post_tokens" not in TIE_BREAKS


def test_the_context_is_measured_against_claude_codes_next_recorded_request() -> None:
    from compactor.claude_code.transcript import read_transcript

    transcript = read_transcript(LONG, subagents=False, state=False)
    recorded = next_requests(transcript)
    assert recorded and set(recorded) == {c.line for c in transcript.compactions}
    [result] = [
        run_job(
            Job(
                trial_id="t",
                session=str(LONG),
                session_hash=session_hash(LONG),
                settings_json=Settings().model_dump_json(),
                key="k",
            )
        )
    ]
    metrics = result.metrics["recorded"]
    assert metrics.next_request_tokens_sum == sum(recorded.values())
    assert metrics.post_vs_next_request == metrics.matched_post_tokens_sum / metrics.next_request_tokens_sum
    assert result.metrics["auto"].post_vs_next_request is None, "only where Claude Code compacted"
