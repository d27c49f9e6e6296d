"""The facts the extractive summary lists: lines of tool results read as a person would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compactor.summarizers._facts import last_line

_PIECES = st.sampled_from(["ok", "done.", " ", "\t", "\n", "\r\n", "\r", "\x0b", "\x1c", "\u2028", "x" * 5000, ""])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=20).map("".join))
def test_last_line_is_the_last_non_blank_line_without_its_trailing_space(text: str) -> None:
    expected = next((line for line in reversed(text.splitlines()) if line.strip()), "").rstrip()
    assert last_line(text) == expected


def test_a_last_line_longer_than_the_window_comes_back_whole() -> None:
    text = "first\n" + "y" * 10_000 + "\n\n"
    assert last_line(text) == "y" * 10_000
