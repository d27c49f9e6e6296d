"""LangChain message histories in and out of the Message shape."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("langchain_core")

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from compactor.adapters.langchain import LangChainAdapter
from compactor.core.messages import Message, ToolResultBlock
from tests.compactor.adapters.conftest import (
    COMPACTIONS,
    ROUND_TRIPS,
    assert_anthropic_history_comes_back,
    assert_reads_and_writes_back,
    compact_once,
)

_text = st.text(max_size=20)
_text_part = st.builds(lambda t: {"type": "text", "text": t}, _text)
_image_part = st.just({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}})


@st.composite
def langchain_history(draw: st.DrawFn, inputs: st.SearchStrategy[dict[str, Any]]) -> list[BaseMessage]:
    """A valid LangChain history: system messages, then rounds with (parallel) tool calls."""
    items: list[BaseMessage] = [SystemMessage(content=draw(_text)) for _ in range(draw(st.integers(0, 2)))]
    ids = iter(range(10**6))
    for _ in range(draw(st.integers(1, 4))):
        content: Any = draw(_text | st.lists(_text | _text_part | _image_part, min_size=1, max_size=3))
        items.append(HumanMessage(content=content, id=draw(st.none() | st.just("run-1"))))
        if draw(st.integers(0, 6)) == 0:
            items.append(ChatMessage(role="critic", content=draw(_text)))
        for _ in range(draw(st.integers(0, 3))):
            calls = [
                {
                    "name": draw(st.sampled_from(["read", "bash"])),
                    "args": draw(inputs),
                    "id": f"call_{next(ids)}",
                    "type": "tool_call",
                }
                for _ in range(draw(st.integers(1, 3)))
            ]
            style = draw(st.sampled_from(["openai", "anthropic", "text"]))
            if style == "openai":
                ai = AIMessage(content="", tool_calls=calls, response_metadata={"model_name": "gpt"})
            elif style == "anthropic":
                blocks = [{"type": "text", "text": draw(_text)}] + [
                    {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in calls
                ]
                ai = AIMessage(
                    content=blocks,
                    tool_calls=calls,
                    usage_metadata={"input_tokens": 3, "output_tokens": 2, "total_tokens": 5},
                )
            else:
                ai = AIMessage(content=draw(_text), tool_calls=calls)
            items.append(ai)
            for call in calls:
                result: Any = draw(_text | st.lists(_text_part, min_size=1, max_size=2))
                items.append(
                    ToolMessage(
                        content=result,
                        tool_call_id=call["id"],
                        status=draw(st.sampled_from(["success", "error"])),
                        artifact=draw(st.none() | st.just({"rows": 3})),
                    )
                )
        if draw(st.booleans()):
            items.append(AIMessage(content=draw(_text | st.lists(_text_part, max_size=2))))
    return items


def problems(history: Sequence[BaseMessage], instructions: Sequence[BaseMessage]) -> list[str]:
    """What makes ``history`` invalid for a chat model (empty when valid)."""
    found: list[str] = []
    if list(history[: len(instructions)]) != list(instructions):
        found.append("the system messages are not first")
    rest = list(history[len(instructions) :])
    if not rest or not isinstance(rest[0], HumanMessage):
        found.append("no human message after the system messages")
    open_calls: set[str] = set()
    for index, item in enumerate(rest):
        if isinstance(item, ToolMessage):
            if item.tool_call_id not in open_calls:
                found.append(f"tool message {index} answers no call just made")
            open_calls.discard(item.tool_call_id)
            continue
        if open_calls:
            found.append(f"calls {sorted(open_calls)} have no result before message {index}")
        open_calls = {c["id"] or "" for c in item.tool_calls} if isinstance(item, AIMessage) else set()
    return found


@given(data=st.data())
@ROUND_TRIPS
def test_any_history_reads_and_writes_back_unchanged_and_its_messages_write_anew_the_same(
    data: st.DataObject, strategies: SimpleNamespace
) -> None:
    history = data.draw(langchain_history(strategies.inputs))
    assert_reads_and_writes_back(LangChainAdapter, history, problems)


@given(data=st.data())
@ROUND_TRIPS
def test_an_anthropic_history_goes_to_langchain_and_comes_back_the_same(
    data: st.DataObject, strategies: SimpleNamespace
) -> None:
    assert_anthropic_history_comes_back(LangChainAdapter, data.draw(strategies.anthropic_history()), problems)


@given(data=st.data())
@COMPACTIONS
def test_a_compacted_history_is_valid_for_a_chat_model(
    data: st.DataObject,
    strategies: SimpleNamespace,
    compactor_run: Callable[[Sequence[Message]], tuple[list[Message], bool]],
) -> None:
    history = data.draw(langchain_history(strategies.inputs))
    adapter = LangChainAdapter()
    compacted, ok = compactor_run(adapter.to_messages(history))
    out = adapter.from_messages(compacted)
    assert not problems(out, adapter.instructions), out
    if ok:
        assert "compacted" in str(out[len(adapter.instructions)].content)


def test_a_tool_error_is_an_error_result_and_comes_back_as_status_error() -> None:
    adapter = LangChainAdapter()
    messages = adapter.to_messages(
        [
            HumanMessage(content="run it"),
            AIMessage(content="", tool_calls=[{"name": "bash", "args": {"command": "make"}, "id": "t1"}]),
            ToolMessage(content="make: *** [all] Error 2", tool_call_id="t1", status="error"),
        ]
    )
    (result,) = messages[2].tool_results()
    assert result.is_error and result.content == "make: *** [all] Error 2"
    changed = Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="short", is_error=True)])
    (written,) = LangChainAdapter().from_messages([changed])
    assert isinstance(written, ToolMessage) and written.status == "error" and written.tool_call_id == "t1"


def test_unknown_message_kinds_pass_through_untouched() -> None:
    odd = ChatMessage(role="critic", content="too long", id="m7")
    adapter = LangChainAdapter()
    messages = adapter.to_messages([HumanMessage(content="hi"), odd])
    assert LangChainAdapter().from_messages(messages)[1] == odd


def _reply(n: int) -> list[BaseMessage]:
    return [
        AIMessage(content="", tool_calls=[{"name": "bash", "args": {"n": n}, "id": f"c{n}", "type": "tool_call"}]),
        ToolMessage(content=f"line {n} " * 400, tool_call_id=f"c{n}"),
    ]


def test_an_anthropic_compaction_block_and_context_editing_results_survive_compaction_unchanged() -> None:
    block = {"content": "Summary: the parser was rewritten", "type": "compaction", "signature": "EuYB"}
    edits = {
        "applied_edits": [
            {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 8, "cleared_input_tokens": 50_000},
            {"type": "clear_thinking_20251015", "cleared_thinking_turns": 2, "cleared_input_tokens": 4_000},
        ]
    }
    history: list[BaseMessage] = [
        SystemMessage(content="Be brief."),
        HumanMessage(content="Rewrite the parser"),
        AIMessage(content=[block, {"type": "text", "text": "Resuming."}]),
    ]
    for n in range(8):
        history += _reply(n)
    last = AIMessage(
        content=[{"type": "thinking", "thinking": "check", "signature": "sig"}, {"type": "text", "text": "Done."}],
        response_metadata={"context_management": edits},
    )
    history += [HumanMessage(content="Now the docs"), last]
    adapter = LangChainAdapter()
    compacted, ok = compact_once(adapter.to_messages(history))
    assert ok
    out = adapter.from_messages(compacted)
    assert out[0] is history[0]
    summary = out[1]
    assert isinstance(summary, HumanMessage) and isinstance(summary.content, list)
    assert summary.content[0] == block and list(summary.content[0]) == list(block)
    assert "Anthropic had compacted part" in str(summary.content[1])
    assert sum(1 for m in out if "compaction" in str(m.content)) == 1
    assert any(m is last for m in out)  # the tail's message as it was, with the context editing report
