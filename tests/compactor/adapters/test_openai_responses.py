"""OpenAI Responses input items in and out of the Message shape."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from compactor.adapters.openai_responses import OpenAIResponsesAdapter
from compactor.messages import Message
from tests.compactor.adapters.conftest import (
    COMPACTIONS,
    ROUND_TRIPS,
    assert_anthropic_history_comes_back,
    assert_reads_and_writes_back,
)


_text = st.text(max_size=20)
_input_part = st.builds(lambda t: {"type": "input_text", "text": t}, _text) | st.just(
    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}
)
_output_part = st.builds(
    lambda t, extra: {"type": "output_text", "text": t, "annotations": [], **extra},
    _text, st.sampled_from([{}, {"logprobs": []}]),
)


@st.composite
def responses_history(draw: st.DrawFn, inputs: st.SearchStrategy[dict[str, Any]]) -> list[dict[str, Any]]:
    """A valid Responses input: instructions, user messages, the model's items, function call outputs."""
    items: list[dict[str, Any]] = [
        {"role": role, "content": draw(_text)} for role in draw(st.lists(st.sampled_from(["system", "developer"]),
                                                                          max_size=2))
    ]
    ids = iter(range(10**6))
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            items.append({"role": "user", "content": draw(_text)})
        else:
            user: dict[str, Any] = {"role": "user", "content": draw(st.lists(_input_part, min_size=1, max_size=3))}
            if draw(st.booleans()):
                user["type"] = "message"
            items.append(user)
        for _ in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                items.append({"type": "reasoning", "id": f"rs_{next(ids)}", "summary": []})
            if draw(st.booleans()):
                items.append({"id": f"msg_{next(ids)}", "type": "message", "role": "assistant", "status": "completed",
                              "content": draw(st.lists(_output_part, min_size=1, max_size=2))})
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                call: dict[str, Any] = {"type": "function_call", "call_id": f"call_{next(ids)}",
                                        "name": draw(st.sampled_from(["read", "bash"])),
                                        "arguments": json.dumps(draw(inputs))}
                if draw(st.booleans()):
                    call.update(id=f"fc_{next(ids)}", status="completed")
                calls.append(call)
            items.extend(calls)
            for call in calls:
                items.append({"type": "function_call_output", "call_id": call["call_id"], "output": draw(_text)})
        if draw(st.booleans()):
            items.append({"id": f"msg_{next(ids)}", "type": "message", "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": draw(_text), "annotations": []}]})
    return items


def problems(history: Sequence[dict[str, Any]], instructions: Sequence[dict[str, Any]]) -> list[str]:
    """What makes ``history`` invalid input for the Responses API (empty when valid)."""
    found: list[str] = []
    if list(history[: len(instructions)]) != list(instructions):
        found.append("the instructions are not first")
    rest = list(history[len(instructions):])
    if not rest or rest[0].get("role") != "user":
        found.append("no user message after the instructions")
    called: set[str] = set()
    answered: set[str] = set()
    for index, item in enumerate(rest):
        if item.get("type") == "function_call":
            called.add(item["call_id"])
        elif item.get("type") == "function_call_output":
            if item["call_id"] not in called:
                found.append(f"output {index} answers no call")
            answered.add(item["call_id"])
    if called - answered:
        found.append(f"calls without output: {sorted(called - answered)}")
    return found


@given(data=st.data())
@ROUND_TRIPS
def test_any_history_reads_and_writes_back_unchanged_and_its_messages_write_anew_the_same(
    data: st.DataObject, strategies: SimpleNamespace
) -> None:
    history = data.draw(responses_history(strategies.inputs))
    assert_reads_and_writes_back(OpenAIResponsesAdapter, history, problems)


@given(data=st.data())
@ROUND_TRIPS
def test_an_anthropic_history_goes_to_responses_and_comes_back_the_same(
    data: st.DataObject, strategies: SimpleNamespace
) -> None:
    assert_anthropic_history_comes_back(OpenAIResponsesAdapter, data.draw(strategies.anthropic_history()), problems)


@given(data=st.data())
@COMPACTIONS
def test_a_compacted_history_is_valid_responses_input(
    data: st.DataObject, strategies: SimpleNamespace,
    compactor_run: Callable[[Sequence[Message]], tuple[list[Message], bool]],
) -> None:
    history = data.draw(responses_history(strategies.inputs))
    adapter = OpenAIResponsesAdapter()
    compacted, ok = compactor_run(adapter.to_messages(history))
    out = adapter.from_messages(compacted)
    assert not problems(out, adapter.instructions), out
    if ok:
        assert "compacted" in str(out[len(adapter.instructions)]["content"])


def test_the_models_text_is_text_to_the_summarizer_and_its_item_fields_come_back() -> None:
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "All tests pass.", "annotations": [], "logprobs": []}]}
    (message,) = OpenAIResponsesAdapter().to_messages([item])
    assert message.text() == "All tests pass."
    assert OpenAIResponsesAdapter().from_messages([message]) == [item]


def test_an_input_image_is_an_image_block_and_an_anthropic_image_goes_out_as_one() -> None:
    item = {"role": "user", "content": [{"type": "input_text", "text": "what is this?"},
                                        {"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/4AAQ"}]}
    (message,) = OpenAIResponsesAdapter().to_messages([item])
    assert [type(b).__name__ for b in message.blocks()] == ["TextBlock", "ImageBlock"]
    assert OpenAIResponsesAdapter().from_messages([message]) == [item]
