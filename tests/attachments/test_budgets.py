"""Budgets: the defaults (Claude Code's, but for 12 files of 1,500), positive integers only, unknown keys refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from attachments import DEFAULT_BUDGETS, Budgets


def test_defaults_are_claude_codes_but_for_twelve_files_of_1500_tokens() -> None:
    """Claude Code's totals and skill budgets; 12 files of 1,500 where it restores 5 of 5,000 (what tune
    chose on real sessions). The memory budget and the file selection are this project's additions."""
    assert DEFAULT_BUDGETS.model_dump(exclude={"selection", "memory_tokens"}) == {
        "max_files": 12,
        "file_tokens": 1_500,
        "files_total": 50_000,
        "skill_tokens": 5_000,
        "skills_total": 25_000,
    }
    assert DEFAULT_BUDGETS.memory_tokens == 2_000


@pytest.mark.parametrize("field", ["max_files", "file_tokens", "files_total", "skill_tokens", "skills_total"])
@pytest.mark.parametrize("value", [0, -1, "many", 1.5])
def test_non_positive_or_non_integer_budgets_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValidationError):
        Budgets.model_validate({field: value})


def test_unknown_keys_are_refused() -> None:
    with pytest.raises(ValidationError):
        Budgets.model_validate({"file_token": 10})


@pytest.mark.parametrize("field", ["max_files", "file_tokens", "files_total", "skill_tokens", "skills_total"])
def test_a_boolean_is_not_taken_for_a_budget(field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        Budgets.model_validate({field: True})
