"""A real OpenAI Agents SDK run (scripted model, tracing off, offline) with a compacting session."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner, function_tool
from agents.items import ModelResponse, TResponseInputItem, TResponseStreamEvent
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from ccr import MemoryStore
from compactor.adapters.openai_agents import CompactingSession
from compactor.core.config import load_settings
from compactor.engine.orchestrator import Orchestrator
from tests.compactor.adapters.conftest import NoFiles


class ScriptedModel(Model):
    """Builds 12 times; after the first compaction asks for build 2's log back by a word only it holds."""

    def __init__(self) -> None:
        self.builds = 0
        self.recovered: str | None = None
        self.inputs: list[list[Any]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: Any,
        tools: list[Any],
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        assert "ccr_retrieve" in {t.name for t in tools}
        items: list[Any] = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.inputs.append(items)
        last = items[-1]
        if last.get("type") == "function_call_output" and last.get("call_id") == "recover":
            self.recovered = str(last.get("output"))
        handle = re.search(r"<<ccr:(ccr_[0-9a-f]{32})>>", json.dumps(items))
        if handle is not None and self.recovered is None:
            return self._call("ccr_retrieve", {"handle": handle.group(1), "query": "b0002x"}, "recover")
        if self.builds < 12:
            self.builds += 1
            return self._call("run_build", {"turn": self.builds}, f"build{self.builds}")
        message = ResponseOutputMessage(
            id="msg",
            role="assistant",
            status="completed",
            type="message",
            content=[ResponseOutputText(text="done", type="output_text", annotations=[])],
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def _call(self, name: str, arguments: dict[str, Any], call_id: str) -> ModelResponse:
        call = ResponseFunctionToolCall(
            type="function_call",
            name=name,
            arguments=json.dumps(arguments),
            call_id=call_id,
            id=f"fc_{call_id}",
            status="completed",
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError


@function_tool
def run_build(turn: int) -> str:
    """Run the build."""
    return f"make test TURN={turn} build-id b{turn:04d}x\n" + "ok line\n" * 1500


def test_a_session_compacts_within_and_between_runs_and_the_model_recovers_a_dropped_output() -> None:
    settings = load_settings(overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 8_000})
    session = CompactingSession(
        "s1", Orchestrator(settings=settings, store=MemoryStore(max_bytes=1 << 26), files=NoFiles())
    )
    model = ScriptedModel()
    agent = Agent(name="fixer", model=model, tools=[run_build, session.recovery_tool])
    config = RunConfig(call_model_input_filter=session.input_filter, tracing_disabled=True)

    async def run() -> list[Any]:
        await Runner.run(agent, "Make the build pass.", session=session, run_config=config, max_turns=50)
        await Runner.run(agent, "Anything left?", session=session, run_config=config, max_turns=50)
        return await session.get_items()

    stored = asyncio.run(run())

    assert session.history.reports and not session.run_history.reports
    assert all(r.ok and r.post_tokens < r.pre_tokens for r in session.reports)
    # One compaction per threshold crossing: no report repeats another's numbers.
    assert len({(r.pre_tokens, r.post_tokens) for r in session.reports}) == len(session.reports)
    assert model.recovered is not None and "make test TURN=2 build-id b0002x" in model.recovered
    assert "compacted" in str(stored[0]["content"]) and len(stored) < 2 * 12
    second_run = next(i for i in model.inputs if any(x.get("content") == "Anything left?" for x in i))
    assert "compacted" in str(second_run[0]["content"])
    for items in model.inputs:
        assert items[0].get("role") == "user"
        calls = {i["call_id"] for i in items if i.get("type") == "function_call"}
        assert {i["call_id"] for i in items if i.get("type") == "function_call_output"} <= calls


def _settings_session(window: int = 60_000) -> CompactingSession:
    settings = load_settings(overrides={"policy.context_window": window, "pipeline.tail_tokens": 8_000})
    return CompactingSession(
        "s", Orchestrator(settings=settings, store=MemoryStore(max_bytes=1 << 26), files=NoFiles())
    )


def _build(turn: int) -> list[Any]:
    call = {
        "type": "function_call",
        "name": "run_build",
        "arguments": json.dumps({"turn": turn}),
        "call_id": f"build{turn}",
        "id": f"fc_build{turn}",
        "status": "completed",
    }
    output = {"type": "function_call_output", "call_id": f"build{turn}", "output": run_build_log(turn)}
    return [call, output]


def run_build_log(turn: int) -> str:
    return f"make test TURN={turn} build-id b{turn:04d}x\n" + "ok line\n" * 1500


def _filter(session: CompactingSession, items: list[Any]) -> list[Any]:
    from agents.run_config import CallModelData, ModelInputData

    data = CallModelData(model_data=ModelInputData(input=items, instructions=None), agent=Agent(name="a"), context=None)
    return list(session.input_filter(data).input)


def test_a_run_that_saves_each_turn_compacts_once_per_threshold_crossing_and_the_filter_sends_the_session() -> None:
    session = _settings_session()
    run_input: list[Any] = []

    async def run() -> list[list[Any]]:
        sent = []
        run_input.extend(await session.get_items())
        user = {"role": "user", "content": "Make the build pass."}
        await session.add_items([user])
        run_input.append(user)
        for turn in range(1, 13):
            sent.append(_filter(session, list(run_input)))
            items = _build(turn)
            await session.add_items(items)
            run_input.extend(items)
        sent.append(_filter(session, list(run_input)))
        return sent

    sent = asyncio.run(run())
    assert len(session.reports) == len(session.history.reports) >= 1 and not session.run_history.reports
    assert sent[-1] == asyncio.run(session.get_items())
    assert "compacted" in str(sent[-1][0]["content"])


def test_items_the_filter_sees_before_the_sdk_saves_them_are_added_once() -> None:
    session = _settings_session()

    async def run() -> list[Any]:
        given = await session.get_items()
        user = {"role": "user", "content": "Make the build pass."}
        run_input = [*given, user]
        sent: list[Any] = []
        for turn in range(1, 13):  # the SDK saves nothing until the run ends
            sent = _filter(session, list(run_input))
            run_input.extend(_build(turn))
        sent = _filter(session, list(run_input))
        await session.add_items(run_input[len(given) :])
        return sent

    sent = asyncio.run(run())
    stored = asyncio.run(session.get_items())
    assert stored == sent
    assert len(session.history.reports) >= 1 and not session.run_history.reports
    outputs = [i["call_id"] for i in stored if i.get("type") == "function_call_output"]
    assert len(outputs) == len(set(outputs))  # nothing stored twice


def test_an_input_that_is_not_this_sessions_is_compacted_on_its_own() -> None:
    session = _settings_session()
    other = [{"role": "user", "content": "Another conversation."}]
    for turn in range(1, 13):
        other.extend(_build(turn))
    out = _filter(session, other)
    assert session.run_history.reports and not session.history.reports
    assert "compacted" in str(out[0]["content"]) and asyncio.run(session.get_items()) == []


def test_the_session_answers_retrieve_itself_bounded() -> None:
    session = _settings_session()
    handle = session.history.orchestrator.store.put(b"".join(b"row %d\n" % i for i in range(30_000)))
    assert session.retrieve(handle, lines=[2, 3]) == "row 1\nrow 2\n"
    assert "answer cut to 5,000 tokens" in session.retrieve(handle)
