"""Head-keeping truncation keeps whole lines within a token budget and loses nothing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compactor.tokens import RoughCounter, TiktokenCounter
from skills import fit_head, truncate_head

TIKTOKEN = TiktokenCounter()


def test_text_within_budget_is_kept_whole() -> None:
    assert truncate_head("one\ntwo\n", 100, TIKTOKEN) == ("one\ntwo\n", "")


def test_the_head_ends_on_a_line_boundary() -> None:
    text = "".join(f"line number {i}\n" for i in range(200))
    head, tail = truncate_head(text, 50, TIKTOKEN)
    assert head.endswith("\n") and tail
    assert TIKTOKEN.count_text(head) <= 50
    assert head + tail == text
    next_line = tail.split("\n", 1)[0] + "\n"
    assert TIKTOKEN.count_text(head + next_line) > 50


def test_a_single_overlong_line_is_cut_inside_the_line() -> None:
    text = "x" * 1_000
    head, tail = truncate_head(text, 10, RoughCounter())
    assert head == "x" * 40 and head + tail == text


def test_nothing_fits_gives_an_empty_head() -> None:
    assert fit_head("abc\ndef", lambda head: head == "") == ("", "abc\ndef")


@settings(max_examples=60, deadline=None)
@given(text=st.text(st.characters(codec="utf-8"), max_size=600), budget=st.integers(0, 120))
def test_head_is_within_budget_and_head_plus_tail_is_the_original(text: str, budget: int) -> None:
    head, tail = truncate_head(text, budget, TIKTOKEN)
    assert head + tail == text
    assert TIKTOKEN.count_text(head) <= budget
