"""OpenAI Chat Completions histories in and out of the Message shape."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from compactor.adapters.openai_chat import OpenAIChatAdapter
from compactor.core.messages import ImageBlock, Message, ToolResultBlock, ToolUseBlock
from compactor.core.tokens import RoughCounter
from tests.compactor.adapters.conftest import (
    COMPACTIONS,
    ROUND_TRIPS,
    assert_anthropic_history_comes_back,
    assert_reads_and_writes_back,
)

_text = st.text(max_size=20)
_text_part = st.builds(lambda t: {"type": "text", "text": t}, _text)
_image_part = st.builds(
    lambda url, detail: {"type": "image_url", "image_url": {"url": url, **({"detail": detail} if detail else {})}},
    st.sampled_from(["https://example.com/a.png", "data:image/png;base64,iVBORw0KGgo="]),
    st.sampled_from([None, "low", "high"]),
)
_audio_part = st.just({"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}})


@st.composite
def _arguments(draw: st.DrawFn, inputs: st.SearchStrategy[dict[str, Any]]) -> str:
    kind = draw(st.sampled_from(["compact", "spaced", "broken"]))
    value = draw(inputs)
    if kind == "compact":
        return json.dumps(value, separators=(",", ":"))
    if kind == "spaced":
        return json.dumps(value, indent=draw(st.sampled_from([None, 2])))
    return draw(st.sampled_from(['{"path": "a.py"', "not json", "[1, 2]", ""]))


@st.composite
def chat_history(draw: st.DrawFn, inputs: st.SearchStrategy[dict[str, Any]]) -> list[dict[str, Any]]:
    """A valid Chat Completions history: instructions, then rounds with (parallel) tool calls."""
    items: list[dict[str, Any]] = []
    for role in draw(st.lists(st.sampled_from(["system", "developer"]), max_size=2)):
        items.append({"role": role, "content": draw(_text)})
    ids = iter(range(10**6))
    for _ in range(draw(st.integers(1, 4))):
        user: dict[str, Any] = {"role": "user"}
        user["content"] = draw(_text | st.lists(_text_part | _image_part | _audio_part, min_size=1, max_size=3))
        if draw(st.integers(0, 5)) == 0:
            user["name"] = "alice"
        items.append(user)
        if draw(st.integers(0, 6)) == 0:
            items.append({"role": "system", "content": draw(_text)})
        for _ in range(draw(st.integers(0, 3))):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                call_id = f"call_{next(ids)}"
                if draw(st.integers(0, 8)) == 0:
                    calls.append({"id": call_id, "type": "custom", "custom": {"name": "apply_patch", "input": "*** x"}})
                else:
                    calls.append(
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {
                                "name": draw(st.sampled_from(["read", "bash"])),
                                "arguments": draw(_arguments(inputs)),
                            },
                        }
                    )
            content = draw(st.none() | _text | st.lists(_text_part, max_size=2))
            items.append({"role": "assistant", "content": content, "tool_calls": calls})
            for call in calls:
                result = draw(_text | st.lists(_text_part, min_size=1, max_size=2))
                items.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        if draw(st.booleans()):
            answer: dict[str, Any] = {"role": "assistant", "content": draw(_text)}
            if draw(st.integers(0, 5)) == 0:
                answer = {"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]}
            items.append(answer)
    return items


def problems(history: Sequence[dict[str, Any]], instructions: Sequence[dict[str, Any]]) -> list[str]:
    """What makes ``history`` invalid for the Chat Completions API (empty when valid)."""
    found: list[str] = []
    if list(history[: len(instructions)]) != list(instructions):
        found.append("the instructions are not first")
    rest = list(history[len(instructions) :])
    if not rest or rest[0]["role"] != "user":
        found.append("no user message after the instructions")
    open_calls: set[str] = set()
    for index, item in enumerate(rest):
        if item["role"] == "tool":
            if item["tool_call_id"] not in open_calls:
                found.append(f"tool message {index} answers no call just made")
            open_calls.discard(item["tool_call_id"])
            continue
        if open_calls:
            found.append(f"calls {sorted(open_calls)} have no result before message {index}")
        open_calls = {c["id"] for c in item.get("tool_calls") or []} if item["role"] == "assistant" else set()
    return found


@given(data=st.data())
@ROUND_TRIPS
def test_any_history_reads_and_writes_back_unchanged_and_its_messages_write_anew_the_same(
    data: st.DataObject, strategies: SimpleNamespace
) -> None:
    history = data.draw(chat_history(strategies.inputs))
    assert_reads_and_writes_back(OpenAIChatAdapter, history, problems)


@given(data=st.data())
@ROUND_TRIPS
def test_an_anthropic_history_goes_to_chat_and_comes_back_the_same(
    data: st.DataObject, strategies: SimpleNamespace
) -> None:
    assert_anthropic_history_comes_back(OpenAIChatAdapter, data.draw(strategies.anthropic_history()), problems)


@given(data=st.data())
@COMPACTIONS
def test_a_compacted_history_is_valid_for_the_chat_api(
    data: st.DataObject,
    strategies: SimpleNamespace,
    compactor_run: Callable[[Sequence[Message]], tuple[list[Message], bool]],
) -> None:
    history = data.draw(chat_history(strategies.inputs))
    adapter = OpenAIChatAdapter()
    compacted, ok = compactor_run(adapter.to_messages(history))
    out = adapter.from_messages(compacted)
    assert not problems(out, adapter.instructions), out
    if ok:
        assert "compacted" in str(out[len(adapter.instructions)]["content"])


def test_instructions_stay_first_and_are_not_part_of_the_conversation() -> None:
    adapter = OpenAIChatAdapter()
    messages = adapter.to_messages(
        [
            {"role": "developer", "content": "Answer in French."},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "a reminder later on"},
        ]
    )
    assert [m.role for m in messages] == ["user", "user"]
    assert adapter.instructions == [{"role": "developer", "content": "Answer in French."}]
    out = adapter.from_messages([Message(role="user", content="summary"), messages[1]])
    assert out == [
        {"role": "developer", "content": "Answer in French."},
        {"role": "user", "content": "summary"},
        {"role": "system", "content": "a reminder later on"},
    ]


def test_parallel_tool_results_are_one_message_inside_and_separate_tool_messages_outside() -> None:
    history = [
        {"role": "user", "content": "look"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "read", "arguments": '{"path": "x"}'}},
                {"id": "b", "type": "function", "function": {"name": "read", "arguments": "{broken"}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "one"},
        {"role": "tool", "tool_call_id": "b", "content": "two"},
    ]
    messages = OpenAIChatAdapter().to_messages(history)
    assert [type(b).__name__ for b in messages[2].blocks()] == ["ToolResultBlock", "ToolResultBlock"]
    uses = messages[1].tool_uses()
    assert uses[0].input == {"path": "x"} and uses[1].input == {} and uses[1].model_extra == {"arguments": "{broken"}
    changed = [
        messages[0],
        messages[1],
        Message(
            role="user",
            content=[
                ToolResultBlock(tool_use_id="a", content="ONE"),
                ToolResultBlock(tool_use_id="b", content="two"),
            ],
        ),
    ]
    out = OpenAIChatAdapter().from_messages(changed)
    assert out[2:] == [
        {"role": "tool", "tool_call_id": "a", "content": "ONE"},
        {"role": "tool", "tool_call_id": "b", "content": "two"},
    ]
    assert out[1]["tool_calls"][1]["function"]["arguments"] == "{broken"


def test_a_new_tool_call_is_written_with_json_arguments() -> None:
    message = Message(role="assistant", content=[ToolUseBlock(id="c", name="bash", input={"command": "ls -la"})])
    (written,) = OpenAIChatAdapter().from_messages([message])
    assert written == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls -la"}'}},
        ],
    }


def test_an_image_is_counted_as_an_image_and_comes_back_as_the_same_part() -> None:
    part = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 40_000, "detail": "high"}}
    (message,) = OpenAIChatAdapter().to_messages([{"role": "user", "content": [part]}])
    (block,) = message.blocks()
    assert isinstance(block, ImageBlock) and block.source["media_type"] == "image/png"
    assert RoughCounter().count_message(message) == 2_000  # an image, not 40,000 characters of text
    assert OpenAIChatAdapter().from_messages([message]) == [{"role": "user", "content": [part]}]
