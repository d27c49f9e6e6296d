"""best.toml and the terminal table: settings written as a file load_settings reads back unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compactor.core.config import Settings, load_settings
from compactor.tune import SearchSpace, TrialResult, TuneResults, best_toml, render_table, settings_toml
from compactor.tune.jobs import SessionResult
from compactor.tune.metrics import Metrics
from compactor.tune.output import SessionsFile, read_sessions_file


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"counter": "rough", "policy": {"autocompact_pct": 80, "context_window": 1_000_000}},
        {"dedup": {"default_threshold": "unbounded", "thresholds": {"Bash": 300, "Read": None, "my tool": 9}}},
        {"attachments": {"max_files": 3, "selection": {"strategy": "recent", "tail_weight": 0.5}}},
        {"llm": {"model": 'a "quoted" name'}, "pipeline": {"tail_tokens": 0}},
    ],
)
def test_settings_written_as_toml_load_back_equal(tmp_path: Path, data: dict[str, object]) -> None:
    settings = Settings.model_validate(data)
    path = tmp_path / "best.toml"
    path.write_text(settings_toml(settings.model_dump(mode="json")), encoding="utf-8")
    assert load_settings(path, env={}) == settings


def results(best: str | None) -> TuneResults:
    def trial(name: str, restored: int, complete: bool = True) -> TrialResult:
        settings = Settings.model_validate({"attachments": {"max_files": restored + 1}}).model_dump(mode="json")
        totals = {"recorded": Metrics(compactions=1, reread_files=4, reread_restored=restored)}
        return TrialResult(
            id=name, params={"attachments.max_files": restored + 1}, settings=settings, totals=totals, complete=complete
        )

    return TuneResults(
        version="0",
        space=SearchSpace(),
        corpus=["a.jsonl"],
        executor="local",
        trials=[trial("low", 1), trial("high", 3), trial("unfinished", 4, complete=False)],
        best=best,
    )


def test_best_toml_names_the_trial_and_holds_its_settings(tmp_path: Path) -> None:
    text = best_toml(results("high"))
    assert text is not None and "best trial high" in text
    (tmp_path / "best.toml").write_text(text, encoding="utf-8")
    assert load_settings(tmp_path / "best.toml", env={}).attachments.max_files == 4
    assert best_toml(results(None)) is None


def test_the_table_ranks_finished_trials_best_first() -> None:
    table = render_table(results("high"))
    lines = table.splitlines()
    assert lines[1].startswith("*") and "high" in lines[1] and "low" in lines[2]
    assert "unfinished" not in table and "2 of 3 trials complete" in table


def a_result(trial: str, session: str, compactions: int) -> SessionResult:
    metrics = Metrics(
        compactions=compactions,
        post_tokens_sum=1000 * compactions,
        survival_found={"paths": 1},
        survival_total={"paths": 2},
    )
    return SessionResult(
        trial_id=trial, session=session, session_hash="h", metrics={"recorded": metrics}, wall_seconds=0.5
    )


def test_the_sessions_file_reads_back_the_results_it_was_handed(tmp_path: Path) -> None:
    path = tmp_path / "out" / "sessions.jsonl"
    written = SessionsFile(path)
    results = [a_result("t1", "a.jsonl", 2), a_result("t2", "a.jsonl", 0)]
    for result in results:
        written(result)
    assert not path.exists()  # under a temporary name until closed
    assert written.close() is True
    assert list(read_sessions_file(path)) == results
    line = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert line["metrics"]["recorded"]["post_tokens"] == 1000.0  # the figures are there for readers


def test_a_sessions_file_with_nothing_written_makes_nothing_and_a_discarded_one_leaves_nothing(tmp_path: Path) -> None:
    assert SessionsFile(tmp_path / "none" / "sessions.jsonl").close() is False
    assert not (tmp_path / "none").exists()
    failed = SessionsFile(tmp_path / "failed" / "sessions.jsonl")
    failed(a_result("t1", "a.jsonl", 1))
    failed.discard()
    assert list((tmp_path / "failed").iterdir()) == []
