"""A real pydantic-ai agent (scripted FunctionModel, offline) keeps working under compaction."""

from __future__ import annotations

import asyncio
import re

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ccr import MemoryStore
from compactor.adapters.pydantic_ai import PydanticAICompaction
from compactor.core.config import load_settings
from compactor.engine.orchestrator import Orchestrator
from tests.compactor.adapters.conftest import NoFiles


def log(turn: int) -> str:
    return f"make test TURN={turn} build-id b{turn:04d}x\n" + "ok line\n" * 1500


class Script:
    """Builds 12 times; after the first compaction asks for build 2's log back by a word only it holds."""

    def __init__(self) -> None:
        self.seen: list[list[ModelMessage]] = []
        self.recovered: str | None = None
        self.builds = 0

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        assert "ccr_retrieve" in {t.name for t in info.function_tools}
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart) and last.tool_name == "ccr_retrieve":
            self.recovered = str(last.content)
        text = " ".join(str(getattr(p, "content", "")) for m in messages for p in m.parts)
        handle = re.search(r"<<ccr:(ccr_[0-9a-f]{32})>>", text)
        if handle is not None and self.recovered is None:
            return ModelResponse(parts=[ToolCallPart("ccr_retrieve", {"handle": handle.group(1), "query": "b0002x"})])
        if self.builds < 12:
            self.builds += 1
            return ModelResponse(parts=[ToolCallPart("run_build", {"turn": self.builds})])
        return ModelResponse(parts=[TextPart("done")])


def test_an_agent_compacts_keeps_its_system_prompt_and_recovers_a_dropped_tool_result() -> None:
    settings = load_settings(overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 8_000})
    compaction = PydanticAICompaction(
        Orchestrator(settings=settings, store=MemoryStore(max_bytes=1 << 26), files=NoFiles())
    )
    script = Script()
    agent = Agent(
        FunctionModel(script),
        system_prompt="You fix builds.",
        capabilities=[compaction.capability],
        tools=[compaction.recovery_tool],
    )

    @agent.tool_plain
    def run_build(turn: int) -> str:
        """Run the build."""
        return log(turn)

    result = asyncio.run(agent.run("Make the build pass."))  # run_sync leaves its event loop open

    assert result.output == "done"
    assert compaction.reports and all(r.ok and r.post_tokens < r.pre_tokens for r in compaction.reports)
    assert script.recovered is not None and "make test TURN=2 build-id b0002x" in script.recovered
    biggest = max(sum(len(str(getattr(p, "content", ""))) for m in seen for p in m.parts) for seen in script.seen)
    assert biggest < 4 * 27_000 * 2  # never much past the threshold (27,000 tokens) in characters
    for seen in script.seen:
        first = seen[0]
        assert isinstance(first, ModelRequest) and isinstance(first.parts[0], SystemPromptPart)
        calls = {
            p.tool_call_id for m in seen if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, ToolCallPart)
        }
        returns = {p.tool_call_id for m in seen for p in m.parts if isinstance(p, ToolReturnPart)}
        assert returns <= calls, "a tool return whose call was dropped"
