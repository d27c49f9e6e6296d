"""The status line's text: the gauge first, then what fits the width; colour only when asked."""

from __future__ import annotations

import re

import pytest

from compactor.claude_code.compaction_gauge import Figures, limits_for
from compactor.view.status_line import format_tokens, status_line


def _figures(tokens: int, *, answers_left: int | None = 6) -> Figures:
    limits = limits_for(200_000, environ={})
    return Figures(
        tokens=tokens,
        threshold=limits.auto_compact,
        limits=limits,
        tokens_left=max(0, limits.auto_compact - tokens),
        per_answer=4_000,
        answers_left=answers_left,
        paths=12,
        commands=1,
        messages=3,
        files=["a.py", "b.py"],
        stored=7,
        compactions=1,
    )


@pytest.mark.parametrize("width", [10, 20, 40, 60, 80, 120, 200])
def test_the_line_never_exceeds_the_width_and_always_shows_the_share(width: int) -> None:
    line = status_line(_figures(100_000), width=width, colour=False)
    assert len(line) <= max(width, len("59%")) and "59%" in line


def test_the_parts_in_order_of_importance() -> None:
    line = status_line(_figures(100_000), width=300, colour=False)
    assert line == (
        "██████░░░░ 100k/167k 59% of auto-compact · ~6 turns (67.0k) to go · "
        "keeps 12 paths, 1 command, 3 messages · restores 2 files · 7 stored · 1 compaction"
    )


def test_colour_follows_the_levels_and_plain_has_no_escapes() -> None:
    assert status_line(_figures(100_000), colour=True).startswith("\033[32m")
    assert status_line(_figures(155_000), colour=True).startswith("\033[31m")  # >= 90%
    assert status_line(_figures(150_000), colour=True).startswith("\033[33m")  # past the warning level
    assert not re.search("\033", status_line(_figures(150_000), colour=False))


def test_past_the_threshold_it_says_the_next_turn_compacts() -> None:
    assert "compacts before the next turn" in status_line(_figures(170_000, answers_left=None), colour=False)


@pytest.mark.parametrize(("tokens", "shown"), [(950, "950"), (12_345, "12.3k"), (167_000, "167k"), (1_200_000, "1.2M")])
def test_token_counts_are_short(tokens: int, shown: str) -> None:
    assert format_tokens(tokens) == shown
