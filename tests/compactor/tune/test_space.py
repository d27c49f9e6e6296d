"""Search spaces: grid and random trials, every value checked against Settings before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from compactor.core.errors import ConfigError
from compactor.tune import Trial, load_space

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tune.toml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "space.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_grid_holds_every_combination_once(tmp_path: Path) -> None:
    space = load_space(
        write(
            tmp_path, '[params]\n"attachments.max_files" = [5, 8, 5]\n[params.pipeline]\ntail_tokens = [1000, 2000]\n'
        )
    )
    trials = space.trials()
    assert space.size == 4 and len(trials) == 4
    assert {(t.params["attachments.max_files"], t.params["pipeline.tail_tokens"]) for t in trials} == {
        (5, 1000),
        (5, 2000),
        (8, 1000),
        (8, 2000),
    }


def test_random_search_draws_distinct_trials_reproducibly(tmp_path: Path) -> None:
    text = '[search]\nmethod = "random"\ntrials = 3\nseed = 7\n[params]\n"attachments.max_files" = [3, 5, 8, 10]\n"pipeline.tail_tokens" = [1000, 2000]\n'
    first = load_space(write(tmp_path, text)).trials()
    again = load_space(write(tmp_path, text)).trials()
    assert len({t.id for t in first}) == 3
    assert [t.id for t in first] == [t.id for t in again]


def test_a_trial_id_depends_on_its_values_not_their_order() -> None:
    a = Trial(params={"x.y": 1, "z": "recent"})
    b = Trial(params={"z": "recent", "x.y": 1})
    assert a.id == b.id != Trial(params={"x.y": 2, "z": "recent"}).id


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('[params]\n"attachments.max_files" = [5, 0]\n', "attachments.max_files"),
        ('[params]\n"attachments.no_such_budget" = [1]\n', "attachments.no_such_budget"),
        ('[params]\n"attachments.selection.strategy" = ["newest"]\n', "attachments.selection.strategy"),
        ('[params]\n"pipeline.tail_tokens" = []\n', "pipeline.tail_tokens"),
        ('[search]\nobjective = "speed"\n', "objective"),
        ('[search]\nmethod = "annealing"\n', "method"),
        ("[params\n", "cannot be read"),
        ("a = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
    ],
)
def test_a_bad_space_is_refused_before_any_trial_runs(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        load_space(write(tmp_path, text))


def test_a_missing_space_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_space(tmp_path / "nope.toml")


def test_the_example_space_is_small_and_compares_recent_with_activity_tails_and_the_shared_ceiling() -> None:
    space = load_space(EXAMPLE)
    assert space.size <= 8
    assert set(space.params["attachments.selection.strategy"]) == {"recent", "activity"}
    assert len(space.params["pipeline.tail_tokens"]) > 1
    assert 0 in space.params["pipeline.context_tokens"], "no shared ceiling is one of the choices"
