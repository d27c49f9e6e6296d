"""LangGraph: a ``pre_model_hook`` that keeps a prebuilt agent's history compacted.

::

    compaction = LangGraphCompaction()
    agent = create_react_agent(model, [*tools, compaction.recovery_tool], pre_model_hook=compaction.pre_model_hook)

For a graph run with ``ainvoke``/``astream``, pass ``pre_model_hook=compaction.hook``
instead: the same hook, whose async side awaits a background LLM summary
(``Orchestrator.acompact``) rather than blocking the event loop.

Before each model call the hook hands the state's messages to the session
(``CompactingHistory`` with the LangChain adapter) and replaces them with
what comes back: unchanged messages as they were, and after a compaction
the compacted history, so that the state stays as small as the context.
(It does not use ``llm_input_messages``: once set, LangGraph keeps feeding
that key to the model.) New messages get ids, as LangGraph would give them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from ccr.recovery import RECOVERY_TOOL, RECOVERY_TOOL_NAME
from compactor.adapters.history import CompactingHistory, RetrievesFromHistory
from compactor.adapters.langchain import LangChainAdapter
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.report import CompactionReport

__all__ = ["LangGraphCompaction"]


class LangGraphCompaction(RetrievesFromHistory):
    """A compacting ``pre_model_hook`` and the recovery tool as a LangChain tool (see the module docstring)."""

    def __init__(
        self,
        orchestrator: Orchestrator | None = None,
        *,
        on_compaction: Callable[[CompactionReport], None] | None = None,
    ) -> None:
        self.history: CompactingHistory[BaseMessage] = CompactingHistory(
            LangChainAdapter, orchestrator, on_compaction=on_compaction, prepare=_with_ids
        )

    def pre_model_hook(self, state: Mapping[str, Any] | Any) -> dict[str, Any]:
        """The hook: ``{"messages": ...}`` replacing the state's history with the one to send."""
        messages = list(state["messages"] if isinstance(state, Mapping) else state.messages)
        out = self.history.process(messages)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *out]}

    async def apre_model_hook(self, state: Mapping[str, Any] | Any) -> dict[str, Any]:
        """The hook for an async graph (``RunnableLambda(c.pre_model_hook, afunc=c.apre_model_hook)``):
        a compaction waiting on a background LLM summary awaits it (``Orchestrator.acompact``)."""
        messages = list(state["messages"] if isinstance(state, Mapping) else state.messages)
        out = await self.history.aprocess(messages)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *out]}

    @property
    def hook(self) -> RunnableLambda[Any, dict[str, Any]]:
        """``pre_model_hook`` and ``apre_model_hook`` as one runnable, for graphs run sync or async."""
        return RunnableLambda(self.pre_model_hook, afunc=self.apre_model_hook, name="compactor_pre_model_hook")

    @property
    def reports(self) -> list[CompactionReport]:
        """The report of every compaction so far."""
        return self.history.reports

    @property
    def recovery_tool(self) -> BaseTool:
        """``ccr_retrieve`` as a LangChain tool, answering from this session's store."""
        return StructuredTool.from_function(
            self.retrieve, name=RECOVERY_TOOL_NAME, description=str(RECOVERY_TOOL["description"])
        )


def _with_ids(messages: list[BaseMessage]) -> list[BaseMessage]:
    return [m if m.id else m.model_copy(update={"id": str(uuid.uuid4())}) for m in messages]
