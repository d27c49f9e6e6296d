"""A real LangGraph prebuilt agent (scripted chat model, offline) keeps working under compaction."""

from __future__ import annotations

import asyncio
import re
import warnings
from typing import Any, ClassVar

import pytest

pytest.importorskip("langgraph")

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent

from ccr import MemoryStore
from compactor.adapters.langgraph import LangGraphCompaction
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

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        assert "ccr_retrieve" in {t.name for t in tools}
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


def test_a_prebuilt_agent_compacts_its_state_and_recovers_a_dropped_tool_result() -> None:
    settings = load_settings(overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 8_000})
    compaction = LangGraphCompaction(
        Orchestrator(settings=settings, store=MemoryStore(max_bytes=1 << 26), files=NoFiles())
    )
    model = ScriptedChatModel(seen=[])
    with warnings.catch_warnings():  # create_react_agent announces its move to langchain.agents
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = create_react_agent(
            model, [run_build, compaction.recovery_tool], pre_model_hook=compaction.pre_model_hook
        )

    state = agent.invoke({"messages": [HumanMessage(content="Make the build pass.")]}, {"recursion_limit": 100})

    assert state["messages"][-1].content == "done"
    assert compaction.reports and all(r.ok and r.post_tokens < r.pre_tokens for r in compaction.reports)
    assert model.recovered is not None and "make test TURN=2 build-id b0002x" in model.recovered
    assert len(state["messages"]) < 2 * 12, "the state was not replaced by the compacted history"
    for seen in model.seen:
        assert isinstance(seen[0], HumanMessage)
        calls = {c["id"] for m in seen if isinstance(m, AIMessage) for c in m.tool_calls}
        assert {m.tool_call_id for m in seen if isinstance(m, ToolMessage)} <= calls


def test_the_hook_answers_retrieve_itself_as_its_recovery_tool_does() -> None:
    store = MemoryStore(max_bytes=1 << 24)
    compaction = LangGraphCompaction(Orchestrator(settings=load_settings(env={}), store=store, files=NoFiles()))
    handle = store.put(b"".join(b"row %d\n" % i for i in range(30_000)))
    assert compaction.retrieve(handle, lines=[2, 3]) == "row 1\nrow 2\n"
    assert "answer cut to 100 tokens" in compaction.retrieve(handle, max_tokens=100)
    assert compaction.recovery_tool.invoke({"handle": handle, "lines": [2, 3]}) == "row 1\nrow 2\n"


def test_an_async_graph_runs_the_hook_through_the_async_api() -> None:
    settings = load_settings(overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 8_000})
    compaction = LangGraphCompaction(
        Orchestrator(settings=settings, store=MemoryStore(max_bytes=1 << 26), files=NoFiles())
    )
    awaited: list[bool] = []
    orchestrator = compaction.history.orchestrator
    acompact = orchestrator.acompact

    async def counted_acompact(*args: Any, **kwargs: Any) -> Any:
        awaited.append(True)
        return await acompact(*args, **kwargs)

    orchestrator.acompact = counted_acompact  # type: ignore[method-assign]
    model = ScriptedChatModel(seen=[])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = create_react_agent(model, [run_build, compaction.recovery_tool], pre_model_hook=compaction.hook)

    state = asyncio.run(
        agent.ainvoke({"messages": [HumanMessage(content="Make the build pass.")]}, {"recursion_limit": 100})
    )

    assert state["messages"][-1].content == "done"
    assert compaction.reports and all(r.ok for r in compaction.reports)
    assert len(awaited) == len(compaction.reports)  # every compaction went through acompact
