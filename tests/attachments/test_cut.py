"""plan_cut: a cut rendering's count is exact however it was had (whole, or from its parts)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from attachments._cut import CutInfo, _composed_size, _TailHandles, count_joined, plan_cut
from attachments.render import render_body, wrap
from ccr import handle_for
from ccr.truncate import LineCounts
from compactor.core.tokens import CachedCounter, TiktokenCounter
from tests.conftest import RecordingTiktoken

COUNTER = TiktokenCounter()


def render(head: str, cut: CutInfo | None) -> str:
    return wrap(
        render_body(
            "file.j2",
            path="src/app.py",
            partial=False,
            first_line=1,
            last_line=400,
            replay_note=False,
            changed=False,
            head=head,
            cut=cut,
        )
    )


LINE = st.one_of(
    st.text(alphabet=st.sampled_from(list(" \t\r{}()[]:;,.'\"#=<>-_/\\é中😀0123456789abcXYZ")), max_size=60),
    st.builds(
        lambda indent, words: " " * indent + " ".join(words),
        st.integers(0, 12),
        st.lists(st.sampled_from(["def", "return", "x", "1_000", "'s", "error:", "\u00a0", "ǅ"]), max_size=8),
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(LINE, min_size=1, max_size=120),
    newline=st.sampled_from(["\n", "\r\n", "\n\n"]),
    limit=st.integers(40, 900),
)
def test_a_cut_counts_exactly_what_it_renders_and_stays_within_its_limit(
    lines: list[str], newline: str, limit: int
) -> None:
    content = newline.join(lines) + newline
    cut = plan_cut(content, render, limit=limit, counter=COUNTER)
    if cut is None:
        return
    assert cut.tokens == COUNTER.count_text(cut.text) <= limit
    assert cut.head + cut.tail == content


def test_a_head_of_whole_lines_is_counted_from_its_lines_and_the_wrapper_exactly() -> None:
    content = Path(__file__).read_text(encoding="utf-8")
    lines = LineCounts(content, COUNTER)
    k = 20
    head = content[: lines.end(k)]
    cut = CutInfo(
        handle="ccr_" + "a" * 32,
        marker="<<ccr:ccr_" + "a" * 32 + ">>",
        head_lines=head.count("\n"),
        tail_lines=content.count("\n") - head.count("\n"),
        from_line=head.count("\n") + 1,
        mid_line=False,
    )
    text = render(head, cut)
    assert _composed_size(text, head, render, cut, lines, COUNTER) == COUNTER.count_text(text)
    assert _composed_size(text, head, render, cut, LineCounts(content, COUNTER), COUNTER) is None  # no ends found yet


def test_a_text_of_real_source_files_is_cut_to_exact_counts() -> None:
    for path in sorted(Path(__file__).resolve().parents[2].joinpath("attachments").glob("*.py")):
        content = path.read_text(encoding="utf-8")
        for limit in (300, 1_200):
            cut = plan_cut(content, render, limit=limit, counter=COUNTER)
            assert cut is not None and cut.tokens == COUNTER.count_text(cut.text) <= limit


@settings(max_examples=150, deadline=None)
@given(
    sections=st.lists(st.lists(LINE, min_size=1, max_size=30), min_size=1, max_size=4),
    ending=st.sampled_from(["", "\n", ".", ">"]),
    joint=st.sampled_from(["\n\n", "\n", "\n---\n"]),
)
def test_a_text_joined_from_counted_parts_counts_what_it_holds(
    sections: list[list[str]], ending: str, joint: str
) -> None:
    parts = ["<skill>\n" + "\n".join(lines) + ending for lines in sections]
    text = "<system-reminder>\nThese skills apply.\n\n" + joint.join(parts) + "\n</system-reminder>"
    counted = [(part, COUNTER.count_text(part)) for part in parts]
    assert count_joined(text, counted, COUNTER) == COUNTER.count_text(text)


def test_a_whole_content_counted_before_is_not_tokenized_again_when_it_fits() -> None:
    inner = RecordingTiktoken()
    counter = CachedCounter(inner)
    content = Path(__file__).read_text(encoding="utf-8")
    counter.count_text(content)  # as the tool result that loaded it was counted
    inner.texts.clear()
    cut = plan_cut(content, render, limit=100_000, counter=counter)
    assert cut is not None and cut.tail == ""
    assert cut.tokens == COUNTER.count_text(cut.text)
    assert inner.texts and all(len(t) < 300 for t in inner.texts)  # the wrapper's parts only


@given(st.text(st.characters(codec="utf-8")), st.data())
@settings(max_examples=300, deadline=None)
def test_a_tail_handle_is_the_content_handle_of_the_tails_utf8_bytes(content: str, data: st.DataObject) -> None:
    handles = _TailHandles(content)
    for at in data.draw(st.lists(st.integers(0, len(content)), max_size=6)):
        expected = handle_for(content[at:].encode("utf-8"))
        assert handles(at) == expected
        assert handles(at) == expected  # asked again: remembered, the same
