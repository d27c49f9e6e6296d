"""The providers' own compaction: kept byte for byte, never cut off, never summarized again."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attachments import DiskFiles
from ccr import open_store
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.core.session import SessionState
from compactor.core.tokens import RoughCounter
from compactor.engine.pipeline import CompactionResult, CompactOptions, compact
from compactor.engine.spans import messages_jsonl
from compactor.summarizers import ExtractiveSummarizer
from compactor.summarizers.provider_compaction import (
    last_block_index,
    provider_kind,
    provider_text,
    provider_view,
    through_last_block,
)

COUNTER = RoughCounter()

_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
_json_leaf = st.none() | st.booleans() | st.integers(-10, 10**6) | _text
_json = st.recursive(
    _json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3), max_leaves=6
)


@st.composite
def anthropic_blocks(draw: st.DrawFn) -> dict[str, Any]:
    """An Anthropic compaction block as the API may return it: threshold or on-demand (signed),
    a failed one (``content`` null), with ``cache_control`` and fields of later versions, keys in any order."""
    fields: dict[str, Any] = {"type": "compaction", "content": draw(st.none() | _text)}
    if draw(st.booleans()):
        fields["signature"] = draw(_text)
    if draw(st.booleans()):
        fields["cache_control"] = draw(st.sampled_from([{"type": "ephemeral"}, {"type": "ephemeral", "ttl": None}]))
    for key, value in draw(st.dictionaries(st.sampled_from(["citations", "x_new", "meta"]), _json, max_size=2)).items():
        fields[key] = value
    keys = draw(st.permutations(list(fields)))
    return {k: fields[k] for k in keys}


def user(text: str) -> Message:
    return Message(role="user", content=text)


def say(text: str) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)])


def call(tool_id: str, **inputs: object) -> Message:
    return Message(role="assistant", content=[ToolUseBlock(id=tool_id, name="Bash", input=dict(inputs))])


def result(tool_id: str, text: str) -> Message:
    return Message(role="user", content=[ToolResultBlock(tool_use_id=tool_id, content=text)])


def with_block(block: dict[str, Any], *rest: dict[str, Any]) -> Message:
    return Message.model_validate({"role": "assistant", "content": [block, *rest]})


def work(prefix: str, rounds: int, size: int = 2_000) -> list[Message]:
    out = [user(f"{prefix}: build the report")]
    for i in range(rounds):
        out += [call(f"{prefix}{i}", command=f"make {prefix}-step{i}"), result(f"{prefix}{i}", "x" * size)]
    return out


def run(messages: Sequence[Message], tail_tokens: int = 2_000) -> tuple[CompactionResult, Any]:
    store = open_store(":memory:")
    out = compact(
        messages,
        SessionState(),
        store=store,
        counter=COUNTER,
        summarizer=ExtractiveSummarizer(),
        files=DiskFiles(),
        options=CompactOptions(tail_tokens=tail_tokens),
    )
    return out, store


def dumped(message: Message) -> list[Any]:
    return json.loads(json.dumps(message.to_api()))["content"]  # type: ignore[no-any-return]


@given(block=anthropic_blocks(), thinking=st.booleans())
def test_an_anthropic_compaction_block_reads_and_writes_back_byte_for_byte(
    block: dict[str, Any], thinking: bool
) -> None:
    content = [block] + ([{"type": "thinking", "thinking": "plan", "signature": "EqQB"}] if thinking else [])
    raw = {"role": "assistant", "content": [*content, {"type": "text", "text": "Next."}]}
    message = Message.model_validate(raw)
    assert json.dumps(message.to_api(), ensure_ascii=False) == json.dumps(raw, ensure_ascii=False)
    assert message.api_json() == json.dumps(raw, ensure_ascii=False, separators=(",", ":"))
    again = Message.model_validate_json(message.model_dump_json())
    assert json.dumps(again.to_api()) == json.dumps(raw)
    assert provider_kind(message.blocks()[0]) == "anthropic"


def test_an_openai_compaction_item_is_told_from_an_anthropic_block_by_its_encrypted_content() -> None:
    anthropic = Message.model_validate({"role": "assistant", "content": [{"type": "compaction", "content": "s"}]})
    openai = Message.model_validate(
        {"role": "assistant", "content": [{"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA"}]}
    )
    assert provider_kind(anthropic.blocks()[0]) == "anthropic"
    assert provider_kind(openai.blocks()[0]) == "openai"
    assert provider_text(anthropic.blocks()[0]) == "s"
    assert provider_text(openai.blocks()[0]) == ""
    assert provider_kind(TextBlock(text="compaction")) is None


def test_the_cut_moves_past_the_round_that_holds_the_last_provider_block() -> None:
    head = work("a", 2)
    tail = [
        user("go on"),
        with_block({"type": "compaction", "content": "s"}),
        call("b0", command="ls"),
        result("b0", "files"),
        user("and then"),
        say("done"),
    ]
    new_head, new_tail = through_last_block(head, tail)
    assert new_tail == [user("and then"), say("done")]
    assert new_head + new_tail == head + tail
    assert last_block_index(new_tail) is None


def test_a_block_in_the_tail_leads_the_summary_message_verbatim_and_nothing_before_it_is_summarized() -> None:
    block = {"content": "Provider summary: the parser was rewritten", "type": "compaction", "signature": "EuYB"}
    messages = [
        *work("early", 4),
        with_block(block, {"type": "text", "text": "Resuming."}),
        *work("late", 4),
        user("Now write the docs"),
        say("Writing them."),
    ]
    out, store = run(messages)
    assert out.ok, out.report.error
    summary = out.messages[0]
    assert dumped(summary)[0] == block
    assert json.dumps(summary.to_api()["content"][0]) == json.dumps(block)
    assert sum(provider_kind(b) is not None for m in out.messages for b in m.blocks()) == 1
    assert "early-step" not in out.report.summary  # the provider summarized that part already
    assert "late-step" in out.messages[-1].text()  # in the index that follows the summary
    assert "Anthropic had compacted part of the earlier conversation" in summary.text()
    tail = out.messages[1:]
    head = messages[: len(messages) - len([m for m in tail if not m.is_meta])]
    assert store.get(out.report.dropped[0].handle) == messages_jsonl(head)  # every byte before the block too


def test_an_earlier_block_is_superseded_and_named_with_the_stored_head() -> None:
    first = {"type": "compaction", "content": "old summary"}
    last = {"type": "compaction", "content": "new summary"}
    messages = [with_block(first), *work("a", 3), with_block(last), *work("b", 3), user("next"), say("ok")]
    out, _store = run(messages)
    assert out.ok, out.report.error
    assert dumped(out.messages[0])[0] == last
    text = out.messages[0].text()
    assert "replaces 1 earlier provider compaction" in text
    assert f"<<ccr:{out.report.dropped[0].handle}>>" in text


def test_a_head_that_ends_with_the_block_needs_no_summarizer() -> None:
    block = {"type": "compaction", "content": "all of it", "signature": "s"}
    messages = [*work("a", 3), user("carry on"), with_block(block), user("next"), say("ok " + "y" * 3000)]
    out, _store = run(messages, tail_tokens=100_000)
    assert out.ok, out.report.error
    assert dumped(out.messages[0])[0] == block


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """Rounds of work, some of them answered with a provider compaction block first."""
    messages: list[Message] = []
    for i in range(draw(st.integers(2, 8))):
        messages.append(user(f"task {i} " + "u" * draw(st.integers(0, 800))))
        if draw(st.integers(0, 3)) == 0:
            messages.append(with_block(draw(anthropic_blocks()), {"type": "text", "text": f"answer {i}"}))
        for j in range(draw(st.integers(0, 2))):
            messages += [
                call(f"t{i}_{j}", command=f"run {i} {j}"),
                result(f"t{i}_{j}", "r" * draw(st.integers(0, 3000))),
            ]
        messages.append(say(f"done {i}"))
    return messages


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=conversations(), tail_tokens=st.integers(0, 3_000))
def test_provider_blocks_survive_compaction_byte_for_byte_and_exactly_one_leads(
    messages: list[Message], tail_tokens: int
) -> None:
    blocks = [
        json.dumps(b.model_dump(mode="json", exclude_none=True))
        for m in messages
        for b in m.blocks()
        if provider_kind(b) is not None
    ]
    out, store = run(messages, tail_tokens=tail_tokens)
    if not out.ok:
        assert out.messages == messages  # fails closed, unchanged
        return
    in_output = [
        json.dumps(b.model_dump(mode="json", exclude_none=True))
        for m in out.messages
        for b in m.blocks()
        if provider_kind(b) is not None
    ]
    tail = [m for m in out.messages[1:] if not m.is_meta]
    head = messages[: len(messages) - len(tail)]
    assert store.get(out.report.dropped[0].handle) == messages_jsonl(head)
    assert head + tail == messages
    if blocks:
        assert in_output == [blocks[-1]]  # the last one, verbatim, and no other
        assert json.dumps(out.messages[0].to_api()["content"][0]) == blocks[-1]
        view = provider_view(head)
        assert view is not None and last_block_index(tail) is None
    else:
        assert in_output == []
