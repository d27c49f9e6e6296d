"""Head-keeping truncation keeps whole lines within a token budget and loses nothing."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactor.core.messages import Message
from compactor.core.tokens import CachedCounter, RoughCounter, TiktokenCounter, TokenCounter
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


class NonAdditive:
    """tiktoken that does not declare its counts additive at line starts (so every piece is counted alone)."""

    name = "tiktoken"

    def count_text(self, text: str) -> int:
        return TIKTOKEN.count_text(text)

    def count_message(self, message: object) -> int:
        raise AssertionError("truncation counts text only")


class CountingCounter:
    """A counter wrapped to remember how many times, and on how many characters, it was called."""

    def __init__(self, inner: TokenCounter) -> None:
        self.inner = inner
        self.name = inner.name
        self.additive_at_line_starts: bool = getattr(inner, "additive_at_line_starts", False)
        self.calls = 0
        self.characters = 0

    def count_text(self, text: str) -> int:
        self.calls += 1
        self.characters += len(text)
        return self.inner.count_text(text)

    def count_message(self, message: Message) -> int:
        raise AssertionError("truncation counts text only")


COUNTERS: dict[str, Callable[[], TokenCounter]] = {
    "tiktoken": TiktokenCounter,
    "cached tiktoken": lambda: CachedCounter(TiktokenCounter()),
    "rough": RoughCounter,
    "non-additive": NonAdditive,
}

FRAGMENT = st.one_of(
    st.sampled_from(
        [
            "",
            "   ",
            "\t",
            "\r",
            "    return f(x)  # done",
            "def f(x):",
            "});",
            "}",
            "naïve café ☕ 日本語の行",
            "😀 emoji 👍🏽",
            "'s it",
            "1234567",
            "\u00a0nbsp",
            "x" * 3_000,
            "    " * 20 + "deep",
        ]
    ),
    st.text(st.characters(codec="utf-8"), max_size=30),
)


@st.composite
def texts(draw: st.DrawFn) -> str:
    """Texts of varied lines: blank, indented, CRLF, unicode, one huge line, a last line with or without newline."""
    lines = draw(st.lists(st.tuples(FRAGMENT, st.sampled_from(["\n", "\r\n", "\n\n", " \n", "\n\n\n"])), max_size=50))
    last = draw(st.sampled_from(["", "no newline at the end", "   "]))
    return "".join(line + end for line, end in lines) + last


def piece_sums(text: str, counter: TokenCounter) -> tuple[list[int], list[int]]:
    """The piece ends and ``[0, total(1), ...]`` summed piece by piece, as LineCounts defines them."""
    found = LineCounts(text, counter)
    ends: list[int] = []
    while found.exists(len(ends) + 1):
        ends.append(found.end(len(ends) + 1))
    sums = [0]
    for start, end in zip([0, *ends], ends, strict=False):
        sums.append(sums[-1] + counter.count_text(text[start:end]))
    return ends, sums


def expected_last_within(
    text: str, ends: list[int], sums: list[int], budget: int, lo: int, hi: int | None, proper: bool
) -> int:
    """The documented answer: the largest k in [lo, hi) with total(k) <= budget (lo when none is)."""
    fitting = [
        k
        for k in range(lo, len(sums))
        if (hi is None or k < hi) and sums[k] <= budget and not (proper and k and ends[k - 1] == len(text))
    ]
    return max(fitting, default=lo)


Query = tuple[str, float, float, float | None, bool]
QUERY = st.tuples(
    st.sampled_from(["total", "last_within", "all_within"]),
    st.floats(0, 1),
    st.floats(-0.05, 1.2),
    st.one_of(st.none(), st.floats(0, 1.1)),
    st.booleans(),
)


@pytest.mark.parametrize("name", sorted(COUNTERS))
@settings(max_examples=60, deadline=None)
@given(text=texts(), queries=st.lists(QUERY, min_size=1, max_size=25))
def test_totals_and_answers_equal_those_counted_piece_by_piece_in_any_order(
    name: str, text: str, queries: list[Query]
) -> None:
    counter = COUNTERS[name]()
    ends, sums = piece_sums(text, counter)
    lines = LineCounts(text, counter)
    n = len(ends)
    for kind, where, share, upper, proper in queries:
        budget = round(share * sums[-1])
        if kind == "total":
            k = round(where * n)
            assert lines.total(k) == sums[k]
        elif kind == "last_within":
            lo = min(round(where * n), n)
            hi = None if upper is None else round(upper * (n + 1))
            got = lines.last_within(budget, lo, hi, proper=proper)
            assert got == expected_last_within(text, ends, sums, budget, lo, hi, proper)
        else:
            assert lines.all_within(budget) == (sums[-1] <= budget)
        assert lines.counted <= n
    for k in range(n + 1):
        assert lines.total(k) == sums[k]


@settings(max_examples=60, deadline=None)
@given(text=texts(), cuts=st.lists(st.floats(0, 1), max_size=12), budget=st.integers(0, 400))
def test_pieces_given_by_the_caller_are_counted_one_by_one_even_inside_a_line(
    text: str, cuts: list[float], budget: int
) -> None:
    """Caller-given ends (cuts inside a line) are not line starts, so counts there do not add up as runs."""
    ends = sorted({max(1, round(c * len(text))) for c in cuts} | {len(text)}) if text else [0]
    counter = CountingCounter(TIKTOKEN)
    lines = LineCounts(text, counter, ends=ends)
    k = lines.last_within(budget)
    sums = [0]
    for start, end in zip([0, *ends], ends, strict=False):
        sums.append(sums[-1] + TIKTOKEN.count_text(text[start:end]))
    assert k == max(j for j in range(len(sums)) if sums[j] <= budget)
    assert [lines.total(j) for j in range(len(sums))] == sums
    assert counter.calls == len(ends)


LONG_FILE = "".join(
    f"    value_{i} = compute(record[{i}], factor={i % 7})  # {'step ' * (i % 5)}\n"
    + ("\n" if i % 9 == 0 else "")
    + ("        return value\n" if i % 4 == 0 else "")
    for i in range(3_000)
)


def test_a_long_file_is_cut_with_far_fewer_counter_calls_than_pieces() -> None:
    counter = CountingCounter(TIKTOKEN)
    lines = LineCounts(LONG_FILE, counter)
    assert not lines.all_within(2_000)
    head, tail = fit_head(LONG_FILE, 2_000, counter, measure=lambda h: wrapped(TIKTOKEN, h), whole=False, lines=lines)
    pieces = lines.pieces_in(len(head))
    assert pieces is not None and pieces > 100
    assert counter.calls < 30
    # Counting runs whole costs little more text than counting the head's pieces once.
    assert counter.characters < 2 * len(head)
    assert (head, tail) == fit_head(
        LONG_FILE, 2_000, NonAdditive(), measure=lambda h: wrapped(TIKTOKEN, h), whole=False
    )


def test_a_counter_not_additive_at_line_starts_counts_each_piece_once() -> None:
    counter = CountingCounter(NonAdditive())
    lines = LineCounts(LONG_FILE, counter)
    assert not lines.all_within(2_000)
    k = lines.last_within(1_500)
    assert lines.total(k) == TIKTOKEN.count_text(LONG_FILE[: lines.end(k)])
    assert counter.calls == lines.counted and counter.characters == lines.end(lines.counted)


def test_a_total_beyond_the_counted_pieces_is_one_counter_call() -> None:
    counter = CountingCounter(TIKTOKEN)
    lines = LineCounts(LONG_FILE, counter)
    assert lines.total(2_000) == TIKTOKEN.count_text(LONG_FILE[: lines.end(2_000)])
    assert counter.calls == 1
    assert lines.total(1_000) == TIKTOKEN.count_text(LONG_FILE[: lines.end(1_000)])
    assert counter.calls == 2
