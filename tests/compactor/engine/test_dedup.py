"""Tool-result dedup: djb2 parity, eligibility edges, references and their expansion."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactor.claude_code.transcript import read_transcript
from compactor.core.config import DedupSettings
from compactor.core.errors import DanglingReference
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.core.session import DedupState
from compactor.engine.dedup import (
    Deduper,
    djb2,
    expand_all,
    expand_references,
    is_eligible,
    reference_text,
    reset_after_compaction,
    result_id_line,
    resume_counter,
    resume_state,
    tool_name_map,
)

# Values printed by node for: let h = 5381; for (...) h = ((h << 5) + h + s.charCodeAt(i)) | 0
JS_VECTORS = [
    ("", 5381),
    ("a", 177670),
    ("Ez", 5862308),
    ("FY", 5862308),
    ("hello world", 894552257),
    ("\U0001f600", 7743522),
    ("a\U0001f600b", -2142848475),
    ("\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8", 729862888),
    ("x" * 1000, -1724817723),
    ("\U0001f389" * 300 + "end", -616852488),
    ("\x00\uffff", 5925444),
    ("The quick brown fox jumps over the lazy dog", 885799134),
]

LONG = "line of output\n" * 40  # 600 code units: eligible everywhere


def slow_djb2(text: str) -> int:
    """The reference: one JavaScript step per UTF-16 code unit."""
    h = 5381
    data = text.encode("utf-16-le", "surrogatepass")
    for unit in memoryview(data).cast("H"):
        h = (h * 33 + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


@pytest.mark.parametrize(("text", "expected"), JS_VECTORS)
def test_djb2_equals_javascript(text: str, expected: int) -> None:
    assert djb2(text) == expected
    assert slow_djb2(text) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=3000))
def test_fast_djb2_equals_the_reference_loop(text: str) -> None:
    assert djb2(text) == slow_djb2(text)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=255), min_size=60, max_size=5000))
def test_fast_djb2_equals_the_reference_on_one_byte_text(text: str) -> None:
    assert djb2(text) == slow_djb2(text)


@pytest.mark.parametrize("size", [63, 64, 65, 127, 128, 129, 4095, 4096, 4097, 70_001])
def test_fast_djb2_around_folding_sizes(size: int) -> None:
    ascii_text = "".join(chr(32 + (i * 7) % 95) for i in range(size))
    wide_text = "".join(chr(0x100 + (i * 13) % 0xD000) for i in range(size))
    astral = "\U0001f600" * (size // 2) + "z" * (size % 2)
    for text in (ascii_text, wide_text, astral):
        assert djb2(text) == slow_djb2(text)


def test_lone_surrogates_hash_like_javascript() -> None:
    assert djb2("\ud83d" * 100) == slow_djb2("\ud83d" * 100)


PIECES = ["a", "\u00e9", "\u2192", "\u65e5", "\U0001f600", "\ud83d", "\ude00", "\x00", "\uffff"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PIECES), st.integers(1, 4000)), min_size=1, max_size=12))
def test_fast_djb2_equals_the_reference_on_long_texts_with_surrogates(runs: list[tuple[str, int]]) -> None:
    text = "".join(piece * count for piece, count in runs)
    assert djb2(text) == slow_djb2(text)


@pytest.mark.parametrize("units", [4095, 4096, 4097, 8191, 8192, 8193, 12_289, 40_000])
def test_fast_djb2_across_several_blocks(units: int) -> None:
    one_byte = "".join(chr(32 + (i * 31) % 224) for i in range(units))
    wide = "".join(chr(0x100 + (i * 131) % 0xD000) for i in range(units))
    pairs = "\U0001f389" * (units // 2) + "\u2192" * (units % 2)
    for text in (one_byte, wide, pairs, "\ud83d" + wide, wide + "\ude00"):
        assert djb2(text) == slow_djb2(text)


def deduper(**overrides: object) -> Deduper:
    return Deduper(DedupState(), DedupSettings.model_validate(overrides))


def test_first_occurrence_is_tagged_and_a_repeat_becomes_a_reference() -> None:
    d = deduper()
    first = d.apply("Bash", LONG)
    assert first.content == LONG + "\n[result-id: r1]" and first.result_id == "r1" and not first.hit
    second = d.apply("Bash", LONG)
    assert second.hit and second.result_id == "r1"
    assert second.content == reference_text("Bash", "r1")
    assert "r1" in second.content and "Bash" in second.content and "\n" not in second.content
    assert second.saved_bytes == len(LONG) - len(second.content)


def test_ids_count_up_per_session() -> None:
    d = deduper()
    assert [d.apply("Bash", LONG + str(i)).result_id for i in range(3)] == ["r1", "r2", "r3"]


def test_stats_count_hits_and_saved_bytes_per_tool() -> None:
    d = deduper()
    for tool in ("Bash", "Bash", "Grep", "Bash"):
        d.apply(tool, LONG)
    assert d.state.hits == {"Bash": 2, "Grep": 1}
    saved = len(LONG) - len(reference_text("Bash", "r1"))
    assert d.state.saved_bytes["Bash"] == 2 * saved


def test_colliding_hashes_stay_two_results() -> None:
    pad = "p" * 300
    a, b = pad + "Ez", pad + "FY"
    assert djb2(a) == djb2(b)
    d = deduper()
    assert d.apply("Bash", a).result_id == "r1"
    second = d.apply("Bash", b)
    assert not second.hit and second.result_id == "r2"
    assert d.apply("Bash", b).result_id == "r2"


def test_the_256_edge_is_exclusive() -> None:
    d = deduper()
    assert not d.apply("Bash", "x" * 256).result_id
    assert d.apply("Bash", "x" * 257).result_id == "r1"


def test_length_is_measured_in_utf16_code_units() -> None:
    emoji = "\U0001f600" * 129  # 129 characters, 258 code units
    assert is_eligible("Bash", emoji, DedupSettings())
    assert not is_eligible("Bash", "\U0001f600" * 128, DedupSettings())


@pytest.mark.parametrize(
    ("tool", "threshold"), [("Bash", 30_000), ("Grep", 20_000), ("Glob", 50_000), ("WebFetch", 50_000)]
)
def test_the_threshold_is_claude_codes_persistence_threshold_and_counts_the_26_characters_of_the_tag(
    tool: str, threshold: int
) -> None:
    """Claude Code persists Bash output above 30,000 characters and Grep's above 20,000, others above 50,000."""
    s = DedupSettings()
    assert is_eligible(tool, "x" * (threshold - 26), s)
    assert not is_eligible(tool, "x" * (threshold - 25), s)
    assert not is_eligible(tool, "\u00e9" * (threshold - 25), s), "the length is in UTF-16 code units, not bytes"
    assert is_eligible(tool, "\u00e9" * (threshold - 26), s)


def test_read_is_unbounded() -> None:
    assert is_eligible("Read", "x" * 2_000_000, DedupSettings())


def test_thresholds_are_configurable_per_tool() -> None:
    s = DedupSettings(thresholds={"Read": None, "Grep": 1_000}, default_threshold=None)
    assert not is_eligible("Grep", "x" * 975, s)
    assert is_eligible("Grep", "x" * 974, s)
    assert is_eligible("Glob", "x" * 2_000_000, s)
    assert not is_eligible("Bash", "x" * 30_000, s), "a tool not named keeps its default"


def test_errors_and_disabled_dedup_are_left_alone() -> None:
    d = deduper()
    assert d.apply("Bash", LONG, is_error=True).content == LONG
    off = deduper(enabled=False)
    off.apply("Bash", LONG)
    assert off.apply("Bash", LONG).content == LONG and off.state.counter == 0


def test_recovery_output_is_never_deduplicated() -> None:
    d = deduper()
    for _ in range(2):
        assert d.apply("mcp__compactor__ccr_get", LONG).content == LONG
        assert d.apply("Bash", "x" * 400, recovered=True).content == "x" * 400
    assert d.state.counter == 0 and not d.state.hits


@pytest.mark.parametrize("tool", ["tokenjuice_retrieve", "retrieve_tool_output", "mcp__tinyjuice__tokenjuice_retrieve"])
def test_tinyjuice_recovery_tools_are_recovery_tools_and_never_deduplicated(tool: str) -> None:
    d = deduper()
    for _ in range(2):
        assert d.apply(tool, LONG).content == LONG
    assert d.state.counter == 0 and not d.state.hits


def test_applying_twice_changes_nothing() -> None:
    d = deduper()
    tagged = d.apply("Bash", LONG).content
    ref = d.apply("Bash", LONG).content
    assert d.apply("Bash", tagged).content == tagged
    assert d.apply("Bash", ref).content == ref
    assert d.state.counter == 1 and d.state.hits == {"Bash": 1}


def call(tool_id: str, name: str) -> Message:
    return Message(role="assistant", content=[ToolUseBlock(id=tool_id, name=name, input={})])


def result(tool_id: str, content: str, is_error: bool = False) -> Message:
    return Message(role="user", content=[ToolResultBlock(tool_use_id=tool_id, content=content, is_error=is_error)])


def results_of(messages: list[Message]) -> list[str]:
    return [b.content for m in messages for b in m.tool_results() if isinstance(b.content, str)]


def test_messages_are_deduplicated_by_tool_name() -> None:
    history = [call("a", "Read"), result("a", LONG), call("b", "Read"), result("b", LONG)]
    out = Deduper(DedupState()).apply_to_messages(history)
    assert results_of(out) == [LONG + result_id_line("r1"), reference_text("Read", "r1")]
    assert tool_name_map(history) == {"a": "Read", "b": "Read"}


def test_an_unchanged_message_is_the_same_object() -> None:
    message = Message(role="user", content=[TextBlock(text="hi")])
    assert Deduper(DedupState()).apply_to_message(message, {}) is message


def test_block_list_results_are_not_strings_and_stay() -> None:
    block = ToolResultBlock(tool_use_id="a", content=[TextBlock(text=LONG)])
    message = Message(role="user", content=[block])
    d = Deduper(DedupState())
    assert d.apply_to_message(message, {"a": "Bash"}) is message
    assert d.apply_to_message(message, {"a": "Bash"}) is message


def test_after_compaction_the_seen_set_is_cleared_and_the_counter_kept() -> None:
    d = deduper()
    d.apply("Bash", LONG)
    reset_after_compaction(d.state)
    again = d.apply("Bash", LONG)
    assert not again.hit and again.result_id == "r2"


def compacted_history() -> tuple[list[Message], list[Message], DedupState]:
    """A deduplicated history, and its tail after dropping the first occurrence."""
    history = [
        call("a", "Read"),
        result("a", LONG),
        call("b", "Bash"),
        result("b", "y" * 300),
        call("c", "Read"),
        result("c", LONG),
        call("d", "Read"),
        result("d", LONG),
    ]
    d = Deduper(DedupState())
    deduped = d.apply_to_messages(history)
    return history, deduped, d.state


def test_a_reference_whose_original_was_dropped_is_re_expanded_once() -> None:
    _, deduped, state = compacted_history()
    reset_after_compaction(state)
    tail = deduped[4:]
    expanded = expand_references(tail, state)
    assert results_of(expanded) == [LONG + result_id_line("r1"), reference_text("Read", "r1")]


def test_a_reference_can_point_at_the_ccr_handle_instead() -> None:
    _, deduped, state = compacted_history()
    handle = "ccr_" + "ab" * 16
    expanded = expand_references(deduped[4:], state, {"r1": handle})
    assert results_of(expanded) == [reference_text("Read", "r1", handle)] * 2
    assert f"<<ccr:{handle}>>" in results_of(expanded)[0]


def test_a_reference_whose_original_is_kept_is_left_alone() -> None:
    _, deduped, state = compacted_history()
    assert expand_references(deduped, state) == deduped


def test_a_reference_to_unknown_content_is_an_error_not_a_dangling_pointer() -> None:
    with pytest.raises(DanglingReference, match="r7"):
        expand_references([result("x", reference_text("Bash", "r7"))], DedupState(originals={"r1": "?"}))


def test_expanding_every_reference_gives_back_the_original_history() -> None:
    history, deduped, state = compacted_history()
    assert deduped != history
    assert expand_all(deduped, state) == history
    assert expand_all(expand_references(deduped[4:], state), state) == history[4:]


def test_the_counter_resumes_after_the_highest_id() -> None:
    _, deduped, state = compacted_history()
    assert resume_counter(deduped) == state.counter == 2
    assert resume_counter(deduped[6:]) == 1
    assert resume_counter([]) == 0


def test_a_resumed_state_keeps_numbering_and_recognises_repeats() -> None:
    _, deduped, _ = compacted_history()
    state = resume_state(deduped)
    assert state.counter == 2 and state.originals["r1"] == LONG
    d = Deduper(state)
    assert d.apply("Read", LONG).hit
    assert d.apply("Bash", "z" * 400).result_id == "r3"


def test_a_state_survives_a_json_round_trip() -> None:
    _, _, state = compacted_history()
    assert DedupState.model_validate_json(state.model_dump_json()) == state


def test_a_natural_tag_like_ending_is_not_mistaken_for_ours() -> None:
    text = "z" * 50 + "\n[result-id: r1]"
    history = [call("a", "Bash"), result("a", text), call("b", "Read"), result("b", LONG)]
    d = Deduper(DedupState())
    assert expand_all(d.apply_to_messages(history), d.state) == history


contents = st.sampled_from(
    ["short", "x" * 300, "y" * 300, "p" * 300 + "Ez", "p" * 300 + "FY", "z" * 600, "\U0001f600" * 200]
)
steps = st.lists(
    st.tuples(st.sampled_from(["Read", "Bash", "Grep", "mcp__c__ccr_get"]), contents, st.booleans()),
    max_size=25,
)


def build(history_steps: list[tuple[str, str, bool]]) -> list[Message]:
    messages: list[Message] = []
    for i, (tool, content, error) in enumerate(history_steps):
        messages += [call(f"t{i}", tool), result(f"t{i}", content, is_error=error)]
    return messages


@settings(max_examples=150, deadline=None)
@given(history_steps=steps)
def test_dedup_is_reversible(history_steps: list[tuple[str, str, bool]]) -> None:
    history = build(history_steps)
    d = Deduper(DedupState())
    deduped = d.apply_to_messages(history)
    assert expand_all(deduped, d.state) == history
    assert sum(d.state.hits.values()) == sum(r.startswith("[") for r in results_of(deduped))


TAG = re.compile(r"\n\[result-id: (r\d+)\]\Z")
REFERENCE = re.compile(r"\A\[.+ returned the same output as \[result-id: (r\d+)\]")


@settings(max_examples=150, deadline=None)
@given(history_steps=steps, cut=st.integers(0, 50), later=steps)
def test_no_reference_dangles_after_a_compaction(
    history_steps: list[tuple[str, str, bool]], cut: int, later: list[tuple[str, str, bool]]
) -> None:
    history = build(history_steps)
    d = Deduper(DedupState())
    deduped = d.apply_to_messages(history)
    cut -= cut % 2
    issued = d.state.counter
    reset_after_compaction(d.state)
    tail = expand_references(deduped[cut:], d.state)
    tagged = {m.group(1) for r in results_of(tail) if (m := TAG.search(r))}
    referenced = {m.group(1) for r in results_of(tail) if (m := REFERENCE.match(r))}
    assert referenced <= tagged
    assert expand_all(tail, d.state) == history[cut:]
    more = Deduper(d.state).apply_to_messages(build(later))
    new_ids = {int(m.group(1)[1:]) for r in results_of(more) if (m := TAG.search(r))}
    assert all(n > issued for n in new_ids)


def test_a_real_session_deduplicated_expands_back_exactly(shared_transcript: Path) -> None:
    messages = read_transcript(shared_transcript).messages
    assert messages
    d = Deduper(DedupState())
    deduped = d.apply_to_messages(messages)
    assert expand_all(deduped, d.state) == messages
    assert resume_counter(deduped) == d.state.counter


def test_a_known_result_still_obeys_the_threshold_of_the_tool_repeating_it() -> None:
    d = deduper()
    big = "x" * 49_990
    assert d.apply("Read", big).result_id == "r1"
    assert d.apply("Bash", big).content == big
    assert d.apply("Read", big).hit


def test_a_new_deduper_on_a_saved_state_recognises_repeats() -> None:
    d = deduper()
    d.apply("Bash", LONG)
    again = Deduper(DedupState.model_validate_json(d.state.model_dump_json()))
    assert again.apply("Bash", LONG).hit


@settings(max_examples=50)
@given(texts=st.lists(st.text(min_size=300, max_size=400), min_size=1, max_size=6))
def test_a_result_met_again_is_keyed_as_when_first_met(texts: list[str]) -> None:
    """Keys remembered from an earlier session (equal text, another string) are the keys djb2 gives."""
    first = Deduper(DedupState())
    for text in texts:
        first.apply("Bash", text)
    again = Deduper(DedupState())
    for text in texts:
        again.apply("Bash", "".join([text[:1], text[1:]]))  # equal, but not the same object
    assert again.state.seen.keys() == first.state.seen.keys() == {djb2(t) for t in texts}
    assert again.state.originals == first.state.originals
