"""A real LangChain 1.x agent (``create_agent`` with middleware, a scripted chat model, offline) under compaction."""

from __future__ import annotations

import asyncio
import re
from typing import Any, ClassVar

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from ccr import MemoryStore
from compactor.adapters.langchain_agent import CompactionMiddleware
from compactor.core.config import load_settings
from compactor.engine.orchestrator import Orchestrator


class NoFiles:
    def read(self, path: str) -> str | None:
        return None


class ScriptedChatModel(BaseChatModel):
    """Builds 12 times; after the first compaction asks for build 2's log back by a word only it holds."""

    builds: int = 0
    recovered: str | None = None
    seen: ClassVar[list[list[BaseMessage]]] = []
    offered: ClassVar[list[set[str]]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        self.offered.append({t.name if hasattr(t, "name") else t["name"] for t in tools})
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.seen.append(list(messages))
        last = messages[-1]
        if isinstance(last, ToolMessage) and last.name == "ccr_retrieve":
            self.recovered = str(last.content)
        handle = re.search(r"<<ccr:(ccr_[0-9a-f]{32})>>", " ".join(str(m.content) for m in messages))
        if handle is not None and self.recovered is None:
            call = {"name": "ccr_retrieve", "args": {"handle": handle.group(1), "query": "b0002x"}, "id": "rec"}
            answer = AIMessage(content="", tool_calls=[call])
        elif self.builds < 12:
            self.builds += 1
            answer = AIMessage(
                content="",
                tool_calls=[
                    {"name": "run_build", "args": {"turn": self.builds}, "id": f"b{self.builds}"},
                ],
            )
        else:
            answer = AIMessage(content="done")
        return ChatResult(generations=[ChatGeneration(message=answer)])


@tool
def run_build(turn: int) -> str:
    """Run the build."""
    return f"make test TURN={turn} build-id b{turn:04d}x\n" + "ok line\n" * 1500


def _middleware() -> CompactionMiddleware:
    settings = load_settings(overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 8_000})
    return CompactionMiddleware(Orchestrator(settings=settings, store=MemoryStore(max_bytes=1 << 26), files=NoFiles()))


def _check(state: dict[str, Any], compaction: CompactionMiddleware, model: ScriptedChatModel) -> None:
    assert state["messages"][-1].content == "done"
    assert compaction.reports and all(r.ok and r.post_tokens < r.pre_tokens for r in compaction.reports)
    assert model.recovered is not None and "make test TURN=2 build-id b0002x" in model.recovered
    assert "\\n" not in model.recovered  # the dropped log came back raw
    assert len(state["messages"]) < 2 * 12, "the state was not replaced by the compacted history"
    assert all("ccr_retrieve" in names for names in model.offered)  # registered by the middleware itself
    for seen in model.seen:
        assert isinstance(seen[0], HumanMessage)
        calls = {c["id"] for m in seen if isinstance(m, AIMessage) for c in m.tool_calls}
        assert {m.tool_call_id for m in seen if isinstance(m, ToolMessage)} <= calls


def test_create_agent_with_the_middleware_compacts_its_state_and_recovers_a_dropped_tool_result() -> None:
    compaction = _middleware()
    assert isinstance(compaction, AgentMiddleware)
    model = ScriptedChatModel(seen=[], offered=[])
    agent = create_agent(model, tools=[run_build], middleware=[compaction])
    state = agent.invoke({"messages": [HumanMessage(content="Make the build pass.")]}, {"recursion_limit": 100})
    _check(state, compaction, model)


def test_the_middleware_works_when_the_agent_runs_asynchronously() -> None:
    compaction = _middleware()
    model = ScriptedChatModel(seen=[], offered=[])
    agent = create_agent(model, tools=[run_build], middleware=[compaction])
    state = asyncio.run(
        agent.ainvoke({"messages": [HumanMessage(content="Make the build pass.")]}, {"recursion_limit": 100})
    )
    _check(state, compaction, model)
