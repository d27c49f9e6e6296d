"""best.toml and the terminal table: settings written as a file load_settings reads back unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from compactor.config import Settings, load_settings
from compactor.tune import SearchSpace, TrialResult, TuneResults, best_toml, render_table, settings_toml
from compactor.tune.metrics import Metrics


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"counter": "rough", "policy": {"autocompact_pct": 80, "context_window": 1_000_000}},
        {"dedup": {"default_threshold": "unbounded", "thresholds": {"Bash": 300, "Read": None, "my tool": 9}}},
        {"attachments": {"max_files": 3, "selection": {"strategy": "recent", "tail_weight": 0.5}}},
        {"llm": {"model": "a \"quoted\" name"}, "pipeline": {"tail_tokens": 0}},
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
        return TrialResult(id=name, params={"attachments.max_files": restored + 1}, settings=settings, totals=totals, complete=complete)

    return TuneResults(
        version="0", space=SearchSpace(), corpus=["a.jsonl"], executor="local",
        trials=[trial("low", 1), trial("high", 3), trial("unfinished", 4, complete=False)], best=best,
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
