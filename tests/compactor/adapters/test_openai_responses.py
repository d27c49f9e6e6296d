"""OpenAI Responses input items in and out of the Message shape."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ccr import MemoryStore
from compactor.adapters.openai_responses import OpenAIResponsesAdapter
from compactor.core.config import load_settings
from compactor.core.messages import Message
from compactor.engine.orchestrator import Orchestrator
from tests.compactor.adapters.conftest import (
    COMPACTIONS,
    ROUND_TRIPS,
    NoFiles,
    assert_anthropic_history_comes_back,
    assert_reads_and_writes_back,
)

_text = st.text(max_size=20)
_input_part = st.builds(lambda t: {"type": "input_text", "text": t}, _text) | st.just(
    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}
)
_output_part = st.builds(
    lambda t, extra: {"type": "output_text", "text": t, "annotations": [], **extra},
    _text,
    st.sampled_from([{}, {"logprobs": []}]),
)


@st.composite
def responses_history(draw: st.DrawFn, inputs: st.SearchStrategy[dict[str, Any]]) -> list[dict[str, Any]]:
    """A valid Responses input: instructions, user messages, the model's items, function call outputs."""
    items: list[dict[str, Any]] = [
        {"role": role, "content": draw(_text)}
        for role in draw(st.lists(st.sampled_from(["system", "developer"]), max_size=2))
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
                items.append(
                    {
                        "id": f"msg_{next(ids)}",
                        "type": "message",
                        "role": "assistant",
                        "status": "completed",
                        "content": draw(st.lists(_output_part, min_size=1, max_size=2)),
                    }
                )
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                call: dict[str, Any] = {
                    "type": "function_call",
                    "call_id": f"call_{next(ids)}",
                    "name": draw(st.sampled_from(["read", "bash"])),
                    "arguments": json.dumps(draw(inputs)),
                }
                if draw(st.booleans()):
                    call.update(id=f"fc_{next(ids)}", status="completed")
                calls.append(call)
            items.extend(calls)
            for call in calls:
                items.append({"type": "function_call_output", "call_id": call["call_id"], "output": draw(_text)})
        if draw(st.booleans()):
            items.append(
                {
                    "id": f"msg_{next(ids)}",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": draw(_text), "annotations": []}],
                }
            )
    return items


def problems(history: Sequence[dict[str, Any]], instructions: Sequence[dict[str, Any]]) -> list[str]:
    """What makes ``history`` invalid input for the Responses API (empty when valid)."""
    found: list[str] = []
    if list(history[: len(instructions)]) != list(instructions):
        found.append("the instructions are not first")
    rest = list(history[len(instructions) :])
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
    data: st.DataObject,
    strategies: SimpleNamespace,
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
    item = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "All tests pass.", "annotations": [], "logprobs": []}],
    }
    (message,) = OpenAIResponsesAdapter().to_messages([item])
    assert message.text() == "All tests pass."
    assert OpenAIResponsesAdapter().from_messages([message]) == [item]


def test_an_input_image_is_an_image_block_and_an_anthropic_image_goes_out_as_one() -> None:
    item = {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "what is this?"},
            {"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/4AAQ"},
        ],
    }
    (message,) = OpenAIResponsesAdapter().to_messages([item])
    assert [type(b).__name__ for b in message.blocks()] == ["TextBlock", "ImageBlock"]
    assert OpenAIResponsesAdapter().from_messages([message]) == [item]


_compaction_item = st.builds(
    lambda n, content, by, order: {
        k: v
        for k, v in sorted(
            {"type": "compaction", "id": f"cmp_{n}", "encrypted_content": content, **by}.items(),
            key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order),
        )
    },
    st.integers(0, 10**6),
    st.text(max_size=60),
    st.sampled_from([{}, {"created_by": "resp_1"}]),
    st.permutations(["type", "id", "encrypted_content", "created_by"]),
)
"""An OpenAI compaction item as ``/v1/responses/compact`` or ``compact_threshold`` returns it, keys in any order."""


@st.composite
def compacted_by_openai(draw: st.DrawFn, inputs: st.SearchStrategy[dict[str, Any]]) -> list[dict[str, Any]]:
    """A Responses input with compaction items where OpenAI puts them: after the user messages a
    ``/v1/responses/compact`` answer returned, or first in a response's output items."""
    history = draw(responses_history(inputs))
    instructions = next((i for i, item in enumerate(history) if item.get("role") not in ("system", "developer")), 0)
    out = list(history)
    for _ in range(draw(st.integers(1, 3))):
        points = [
            i
            for i in range(instructions + 1, len(out) + 1)
            if i == len(out) or out[i].get("type") != "function_call_output"
        ]
        out.insert(draw(st.sampled_from(points)), draw(_compaction_item))
    return out


@given(data=st.data())
@ROUND_TRIPS
def test_openai_compaction_items_read_and_write_back_byte_for_byte(
    data: st.DataObject, strategies: SimpleNamespace
) -> None:
    history = data.draw(compacted_by_openai(strategies.inputs))
    adapter = OpenAIResponsesAdapter()
    messages = adapter.to_messages(history)
    assert json.dumps(adapter.from_messages(messages)) == json.dumps(history)
    anew = OpenAIResponsesAdapter().from_messages(messages)  # as a compaction's new messages are written
    assert [json.dumps(i) for i in anew if i.get("type") == "compaction"] == [
        json.dumps(i) for i in history if i.get("type") == "compaction"
    ]


@given(data=st.data())
@COMPACTIONS
def test_the_last_openai_compaction_item_survives_compaction_byte_for_byte_and_leads_the_summary(
    data: st.DataObject,
    strategies: SimpleNamespace,
    compactor_run: Callable[[Sequence[Message]], tuple[list[Message], bool]],
) -> None:
    history = data.draw(compacted_by_openai(strategies.inputs))
    adapter = OpenAIResponsesAdapter()
    compacted, ok = compactor_run(adapter.to_messages(history))
    out = adapter.from_messages(compacted)
    items = [json.dumps(i) for i in history if i.get("type") == "compaction"]
    if not ok:
        assert json.dumps(out) == json.dumps(history)
        return
    rest = out[len(adapter.instructions) :]
    assert [json.dumps(i) for i in out if i.get("type") == "compaction"] == [items[-1]]
    assert json.dumps(rest[0]) == items[-1]
    assert rest[1]["role"] == "user" and "compacted" in str(rest[1]["content"])
    assert not problems([*adapter.instructions, *rest[1:]], adapter.instructions), out
    kept = [i for i in rest[2:] if "compacted" not in str(i.get("content")) and "system-reminder" not in str(i)]
    assert json.dumps(kept) == json.dumps(history[len(history) - len(kept) :])  # the tail as it was


def test_a_compact_endpoint_answer_in_the_input_comes_out_first_and_unchanged_after_compaction() -> None:
    item = {"id": "cmp_001", "type": "compaction", "encrypted_content": "gAAAAB" + "q" * 400}
    history: list[dict[str, Any]] = [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": "Summarize our launch checklist."},
        item,
    ]
    for n in range(6):
        history += [
            {"role": "user", "content": f"step {n}: " + "details " * 40},
            {"type": "function_call", "call_id": f"call_{n}", "name": "bash", "arguments": json.dumps({"n": n})},
            {"type": "function_call_output", "call_id": f"call_{n}", "output": f"row {n} " * 3000},
        ]
    adapter = OpenAIResponsesAdapter()
    config = load_settings(overrides={"pipeline.tail_tokens": 10_000, "counter": "rough"})
    orch = Orchestrator(settings=config, store=MemoryStore(max_bytes=1 << 26), files=NoFiles())
    for message in adapter.to_messages(history):
        orch.add_message(message)
    assert orch.compact("manual").ok
    out = adapter.from_messages(orch.messages)
    assert out[0] == history[0]
    assert json.dumps(out[1]) == json.dumps(item)
    assert out[2]["role"] == "user" and "OpenAI had compacted part" in json.dumps(out[2])
    kept = [i for i in out if "system-reminder" not in json.dumps(i)][3:]
    assert kept
    for now, was in zip(kept, history[len(history) - len(kept) :], strict=True):
        if now.get("type") == "function_call_output":  # dedup numbers a long result: "\n[result-id: rN]"
            now = {**now, "output": now["output"].rsplit("\n[result-id: ", 1)[0]}
        assert json.dumps(now) == json.dumps(was)
