"""pydantic-ai message histories in and out of the Message shape."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("pydantic_ai")

from pydantic_ai.messages import (
    BinaryContent,
    CompactionPart,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from compactor.adapters.pydantic_ai import PydanticAIAdapter
from compactor.core.messages import Message
from tests.compactor.adapters.conftest import (
    COMPACTIONS,
    ROUND_TRIPS,
    assert_anthropic_history_comes_back,
    assert_reads_and_writes_back,
    compact_once,
)

_text = st.text(max_size=20)
_user_content = _text | st.sampled_from(
    [
        ImageUrl(url="https://example.com/a.png"),
        BinaryContent(data=b"\x89PNG", media_type="image/png"),
        BinaryContent(data=b"%PDF-1.4", media_type="application/pdf"),
    ]
)


@st.composite
def pydantic_ai_history(draw: st.DrawFn, inputs: st.SearchStrategy[dict[str, Any]]) -> list[ModelMessage]:
    """A valid pydantic-ai history: a system prompt, then requests and responses with (parallel) tool calls."""
    items: list[ModelMessage] = []
    ids = iter(range(10**6))
    instructions = draw(st.none() | st.just("Be brief."))
    for round_index in range(draw(st.integers(1, 4))):
        parts: list[Any] = []
        if round_index == 0 and draw(st.booleans()):
            parts.append(SystemPromptPart(content=draw(_text)))
        prompt = draw(_text | st.lists(_user_content, min_size=1, max_size=3))
        parts.append(UserPromptPart(content=prompt))
        items.append(ModelRequest(parts=parts, instructions=instructions))
        for _ in range(draw(st.integers(0, 3))):
            answer: list[Any] = []
            if draw(st.booleans()):
                answer.append(ThinkingPart(content=draw(_text), signature=draw(st.none() | st.just("sig=="))))
            answer.extend(TextPart(content=t) for t in draw(st.lists(_text, max_size=2)))
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                args = draw(inputs)
                calls.append(
                    ToolCallPart(
                        tool_name=draw(st.sampled_from(["read", "bash"])),
                        args=json.dumps(args) if draw(st.booleans()) else args,
                        tool_call_id=f"call_{next(ids)}",
                    )
                )
            items.append(
                ModelResponse(
                    parts=[*answer, *calls], usage=RequestUsage(input_tokens=10, output_tokens=3), model_name="test"
                )
            )
            returns = [
                ToolReturnPart(
                    tool_name=c.tool_name,
                    tool_call_id=c.tool_call_id,
                    content=draw(_text | st.just({"rows": [1, 2]}) | st.just([{"type": "text", "text": "x"}])),
                    outcome=draw(st.sampled_from(["success", "failed"])),
                )
                for c in calls
            ]
            items.append(ModelRequest(parts=returns, instructions=instructions))
        if draw(st.booleans()):
            items.append(ModelResponse(parts=[TextPart(content=draw(_text))]))
    return items


def problems(history: Sequence[ModelMessage], system: Sequence[SystemPromptPart]) -> list[str]:
    """What makes ``history`` invalid for a model request (empty when valid)."""
    found: list[str] = []
    if not history or not isinstance(history[0], ModelRequest):
        return ["the history does not start with a request"]
    kept = [p for m in history if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, SystemPromptPart)]
    if kept != list(system):
        found.append("the system prompt was not kept")
    open_calls: set[str] = set()
    for index, message in enumerate(history):
        returns = [p.tool_call_id for p in message.parts if isinstance(p, ToolReturnPart)]
        for call_id in returns:
            if call_id not in open_calls:
                found.append(f"message {index} returns {call_id}, which no answer just called")
        if open_calls - set(returns) and index < len(history):
            found.append(f"calls {sorted(open_calls - set(returns))} have no return in message {index}")
        open_calls = {p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)}
    return found


@given(data=st.data())
@ROUND_TRIPS
def test_any_history_reads_and_writes_back_unchanged_and_its_messages_write_anew_the_same(
    data: st.DataObject, strategies: SimpleNamespace
) -> None:
    history = data.draw(pydantic_ai_history(strategies.inputs))
    assert_reads_and_writes_back(PydanticAIAdapter, history, None)


@given(data=st.data())
@ROUND_TRIPS
def test_an_anthropic_history_goes_to_pydantic_ai_and_comes_back_the_same(
    data: st.DataObject, strategies: SimpleNamespace
) -> None:
    assert_anthropic_history_comes_back(PydanticAIAdapter, data.draw(strategies.anthropic_history()), problems)


@given(data=st.data())
@COMPACTIONS
def test_a_compacted_history_is_valid_for_a_model_request(
    data: st.DataObject,
    strategies: SimpleNamespace,
    compactor_run: Callable[[Sequence[Message]], tuple[list[Message], bool]],
) -> None:
    history = data.draw(pydantic_ai_history(strategies.inputs))
    adapter = PydanticAIAdapter()
    compacted, ok = compactor_run(adapter.to_messages(history))
    out = adapter.from_messages(compacted)
    assert not problems(out, adapter.system_parts), out
    if ok:
        first = out[0]
        assert isinstance(first, ModelRequest)
        assert "compacted" in str([p.content for p in first.parts if isinstance(p, UserPromptPart)])
        assert all(m.instructions == adapter.instructions for m in out if isinstance(m, ModelRequest))


def test_the_system_prompt_is_kept_at_the_front_when_its_request_is_compacted_away() -> None:
    adapter = PydanticAIAdapter()
    system = SystemPromptPart(content="You fix builds.")
    messages = adapter.to_messages(
        [ModelRequest(parts=[system, UserPromptPart(content="fix it")], instructions="Be brief.")]
    )
    assert messages == [Message(role="user", content="fix it")]
    (written,) = adapter.from_messages([Message(role="user", content="summary of the work")])
    assert isinstance(written, ModelRequest) and written.instructions == "Be brief."
    assert written.parts[0] == system
    assert isinstance(written.parts[1], UserPromptPart) and written.parts[1].content == "summary of the work"


def test_the_integration_itself_answers_retrieve_bounded_with_tool_outputs_raw() -> None:
    from ccr import MemoryStore
    from compactor.adapters.pydantic_ai import PydanticAICompaction
    from compactor.core.config import load_settings
    from compactor.core.messages import ToolResultBlock, ToolUseBlock
    from compactor.engine.orchestrator import Orchestrator
    from compactor.engine.spans import messages_jsonl

    store = MemoryStore(max_bytes=1 << 24)
    compaction = PydanticAICompaction(Orchestrator(settings=load_settings(env={}), store=store))
    log = 'step 1 ok\n"step 2" ok\n' * 3
    handle = store.put(
        messages_jsonl(
            [
                Message(role="assistant", content=[ToolUseBlock(id="t1", name="Bash", input={"command": "make"})]),
                Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content=log)]),
            ]
        )
    )
    assert log in compaction.retrieve(handle)
    assert json.dumps(log)[1:-1] in compaction.retrieve(handle, exact=True)
    big = store.put(b"".join(b"row %d\n" % i for i in range(30_000)))
    assert "answer cut to 5,000 tokens" in compaction.retrieve(big)
    assert "answer cut to 100 tokens" in compaction.retrieve(big, max_tokens=100)
    assert compaction.retrieve("nonsense").startswith("ccr_invalid_handle")
    schema = compaction.recovery_tool.tool_def.parameters_json_schema
    assert {"handle", "max_tokens", "exact"} <= set(schema["properties"])


_compaction_part = st.builds(
    lambda content, signature: CompactionPart(
        content=content, provider_name="anthropic", provider_details={"signature": signature}
    ),
    st.text(min_size=1, max_size=40),
    st.text(max_size=20),
) | st.builds(
    lambda n, blob: CompactionPart(
        content=None, id=f"cmp_{n}", provider_name="openai", provider_details={"encrypted_content": blob}
    ),
    st.integers(0, 10**6),
    st.text(max_size=40),
)
"""A provider's compaction part as pydantic-ai keeps it: Anthropic's readable summary, OpenAI's encrypted item."""


def _dump(part: Any) -> str:
    return json.dumps(ModelMessagesTypeAdapter.dump_python([ModelResponse(parts=[part])], mode="json")[0]["parts"][0])


@given(data=st.data())
@COMPACTIONS
def test_the_last_provider_compaction_part_survives_compaction_byte_for_byte_in_a_response_of_its_own(
    data: st.DataObject,
    strategies: SimpleNamespace,
    compactor_run: Callable[[Sequence[Message]], tuple[list[Message], bool]],
) -> None:
    history = data.draw(pydantic_ai_history(strategies.inputs))
    responses = [i for i, m in enumerate(history) if isinstance(m, ModelResponse)]
    for index in data.draw(st.lists(st.sampled_from(responses), max_size=2, unique=True)) if responses else []:
        message = history[index]
        assert isinstance(message, ModelResponse)
        history[index] = ModelResponse(
            parts=[data.draw(_compaction_part), *message.parts], usage=message.usage, model_name=message.model_name
        )
    parts = [_dump(p) for m in history for p in m.parts if isinstance(p, CompactionPart)]
    adapter = PydanticAIAdapter()
    messages = adapter.to_messages(history)
    assert adapter.from_messages(messages) == history
    compacted, ok = compactor_run(messages)
    out = adapter.from_messages(compacted)
    found = [(i, _dump(p)) for i, m in enumerate(out) for p in m.parts if isinstance(p, CompactionPart)]
    if not ok or not parts:
        assert [f for _, f in found] == (parts if not ok else [])
        return
    assert [f for _, f in found] == [parts[-1]]
    at = found[0][0]
    assert isinstance(out[at], ModelResponse) and len(out[at].parts) == 1
    following = out[at + 1]
    assert isinstance(following, ModelRequest)
    assert "compacted" in str([p.content for p in following.parts if isinstance(p, UserPromptPart)])


def test_an_anthropic_compaction_part_leads_the_compacted_history_in_its_own_response() -> None:
    part = CompactionPart(
        content="Summary: the parser was rewritten", provider_name="anthropic", provider_details={"signature": "EuYB"}
    )
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(content="Rewrite the parser")]),
        ModelResponse(parts=[part, TextPart(content="Resuming.")]),
    ]
    for n in range(8):
        history += [
            ModelResponse(parts=[ToolCallPart(tool_name="bash", args={"n": n}, tool_call_id=f"c{n}")]),
            ModelRequest(parts=[ToolReturnPart(tool_name="bash", tool_call_id=f"c{n}", content=f"line {n} " * 400)]),
        ]
    adapter = PydanticAIAdapter()
    compacted, ok = compact_once(adapter.to_messages(history))
    assert ok
    out = adapter.from_messages(compacted)
    assert isinstance(out[0], ModelResponse) and out[0].parts == [part]
    assert _dump(out[0].parts[0]) == _dump(part)
    assert isinstance(out[1], ModelRequest) and "Anthropic had compacted part" in str(out[1].parts[0].content)
