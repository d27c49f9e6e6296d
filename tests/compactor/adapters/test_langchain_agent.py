"""A real LangChain 1.x agent (``create_agent`` with middleware, a scripted chat model, offline) under compaction."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import HumanMessage

from ccr import MemoryStore
from compactor.adapters.langchain_agent import CompactionMiddleware
from compactor.core.config import load_settings
from compactor.engine.orchestrator import Orchestrator
from tests.compactor.adapters.conftest import BUILDS, NoFiles


def _middleware() -> CompactionMiddleware:
    settings = load_settings(overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 8_000})
    return CompactionMiddleware(Orchestrator(settings=settings, store=MemoryStore(max_bytes=1 << 26), files=NoFiles()))


def _check(state: dict[str, Any], compaction: CompactionMiddleware, model: Any) -> None:
    assert state["messages"][-1].content == "done"
    assert compaction.reports and all(r.ok and r.post_tokens < r.pre_tokens for r in compaction.reports)
    assert model.recovered is not None and "make test TURN=2 build-id b0002x" in model.recovered
    assert "\\n" not in model.recovered  # the dropped log came back raw
    assert len(state["messages"]) < 2 * BUILDS, "the state was not replaced by the compacted history"
    assert model.offered and all("ccr_retrieve" in names for names in model.offered)  # the middleware's own
    model.check_conversation()


def test_create_agent_with_the_middleware_compacts_its_state_and_recovers_a_dropped_tool_result(
    scripted_agent: SimpleNamespace,
) -> None:
    compaction = _middleware()
    assert isinstance(compaction, AgentMiddleware)
    agent = create_agent(scripted_agent.model, tools=[scripted_agent.run_build], middleware=[compaction])
    state = agent.invoke({"messages": [HumanMessage(content="Make the build pass.")]}, {"recursion_limit": 100})
    _check(state, compaction, scripted_agent.model)


def test_the_middleware_works_when_the_agent_runs_asynchronously(scripted_agent: SimpleNamespace) -> None:
    compaction = _middleware()
    agent = create_agent(scripted_agent.model, tools=[scripted_agent.run_build], middleware=[compaction])
    state = asyncio.run(
        agent.ainvoke({"messages": [HumanMessage(content="Make the build pass.")]}, {"recursion_limit": 100})
    )
    _check(state, compaction, scripted_agent.model)
