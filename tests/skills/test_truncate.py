"""Head-keeping truncation keeps whole lines within a token budget and loses nothing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compactor.tokens import RoughCounter, TiktokenCounter
from skills import LineCounts, fit_head, truncate_head

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
    measure = lambda head: 0 if head == "" else 1  # noqa: E731
    assert fit_head("abc\ndef", 0, TIKTOKEN, measure=measure) == ("", "abc\ndef")


@settings(max_examples=60, deadline=None)
@given(text=st.text(st.characters(codec="utf-8"), max_size=600), budget=st.integers(0, 120))
def test_head_is_within_budget_and_head_plus_tail_is_the_original(text: str, budget: int) -> None:
    head, tail = truncate_head(text, budget, TIKTOKEN)
    assert head + tail == text
    assert TIKTOKEN.count_text(head) <= budget


class RecordingCounter:
    """tiktoken, remembering how many characters it was asked to count."""

    name = "tiktoken"

    def __init__(self) -> None:
        self.characters = 0

    def count_text(self, text: str) -> int:
        self.characters += len(text)
        return TIKTOKEN.count_text(text)

    def count_message(self, message: object) -> int:
        raise AssertionError("truncation counts text only")


def wrapped(counter: RecordingCounter | TiktokenCounter, head: str) -> int:
    return counter.count_text(f"<file>\n{head}</file>\n[the rest is stored]")


def test_a_long_text_is_cut_counting_each_line_about_once() -> None:
    text = "".join(f"    value_{i} = compute(record[{i}], factor={i % 7})\n" for i in range(20_000))
    counter = RecordingCounter()
    head, tail = fit_head(text, 2_000, counter, measure=lambda h: wrapped(counter, h), whole=False)
    assert head and tail and head + tail == text
    assert wrapped(TIKTOKEN, head) <= 2_000
    next_line = tail.split("\n", 1)[0] + "\n"
    assert wrapped(TIKTOKEN, head + next_line) > 2_000
    # The lines of the head are counted once, the head whole about once more; nothing near the rest.
    assert counter.characters < 3.5 * len(head)


def test_counts_of_line_pieces_add_up_to_the_count_of_the_head() -> None:
    text = "def f(x):\n    return x + 1\n\n\n    \nclass A:\n\tpass\n});\n\n'tis\n" * 40
    lines = LineCounts(text, TIKTOKEN)
    k = 1
    while lines.exists(k):
        assert lines.total(k) == TIKTOKEN.count_text(text[: lines.end(k)])
        k += 1
    assert lines.all_within(TIKTOKEN.count_text(text))
    assert not lines.all_within(TIKTOKEN.count_text(text) - 1)


def test_a_cut_is_never_the_whole_text_when_a_cut_is_asked_for() -> None:
    head, tail = fit_head("one\ntwo\n", 100, TIKTOKEN, whole=False)
    assert tail and head + tail == "one\ntwo\n"


@settings(max_examples=80, deadline=None)
@given(
    lines=st.lists(st.text(st.characters(codec="utf-8"), max_size=40), max_size=60),
    budget=st.integers(0, 200),
    whole=st.booleans(),
)
def test_a_wrapped_head_is_within_budget_and_loses_nothing(lines: list[str], budget: int, whole: bool) -> None:
    text = "\n".join(lines)
    head, tail = fit_head(text, budget, TIKTOKEN, measure=lambda h: wrapped(TIKTOKEN, h), whole=whole)
    assert head + tail == text
    assert head == "" or wrapped(TIKTOKEN, head) <= budget
    assert whole or not text or tail
