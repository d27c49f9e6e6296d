"""A real LangGraph prebuilt agent (scripted chat model, offline) keeps working under compaction."""

from __future__ import annotations

import asyncio
import warnings
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langchain_core.messages import HumanMessage
from langgraph.prebuilt import create_react_agent

from ccr import MemoryStore
from compactor.adapters.langgraph import LangGraphCompaction
from compactor.core.config import load_settings
from compactor.engine.orchestrator import Orchestrator
from tests.compactor.adapters.conftest import BUILDS, NoFiles


def test_a_prebuilt_agent_compacts_its_state_and_recovers_a_dropped_tool_result(
    scripted_agent: SimpleNamespace,
) -> None:
    settings = load_settings(overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 8_000})
    compaction = LangGraphCompaction(
        Orchestrator(settings=settings, store=MemoryStore(max_bytes=1 << 26), files=NoFiles())
    )
    model = scripted_agent.model
    with warnings.catch_warnings():  # create_react_agent announces its move to langchain.agents
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = create_react_agent(
            model, [scripted_agent.run_build, compaction.recovery_tool], pre_model_hook=compaction.pre_model_hook
        )

    state = agent.invoke({"messages": [HumanMessage(content="Make the build pass.")]}, {"recursion_limit": 100})

    assert state["messages"][-1].content == "done"
    assert compaction.reports and all(r.ok and r.post_tokens < r.pre_tokens for r in compaction.reports)
    assert model.recovered is not None and "make test TURN=2 build-id b0002x" in model.recovered
    assert len(state["messages"]) < 2 * BUILDS, "the state was not replaced by the compacted history"
    assert model.offered and all("ccr_retrieve" in names for names in model.offered)
    model.check_conversation()


def test_the_hook_answers_retrieve_itself_as_its_recovery_tool_does() -> None:
    store = MemoryStore(max_bytes=1 << 24)
    compaction = LangGraphCompaction(Orchestrator(settings=load_settings(env={}), store=store, files=NoFiles()))
    handle = store.put(b"".join(b"row %d\n" % i for i in range(30_000)))
    assert compaction.retrieve(handle, lines=[2, 3]) == "row 1\nrow 2\n"
    assert "answer cut to 100 tokens" in compaction.retrieve(handle, max_tokens=100)
    assert compaction.recovery_tool.invoke({"handle": handle, "lines": [2, 3]}) == "row 1\nrow 2\n"


def test_an_async_graph_runs_the_hook_through_the_async_api(scripted_agent: SimpleNamespace) -> None:
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
    model = scripted_agent.model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = create_react_agent(
            model, [scripted_agent.run_build, compaction.recovery_tool], pre_model_hook=compaction.hook
        )

    state = asyncio.run(
        agent.ainvoke({"messages": [HumanMessage(content="Make the build pass.")]}, {"recursion_limit": 100})
    )

    assert state["messages"][-1].content == "done"
    assert compaction.reports and all(r.ok for r in compaction.reports)
    assert len(awaited) == len(compaction.reports)  # every compaction went through acompact
