"""LangChain 1.x agents: an ``AgentMiddleware`` whose ``before_model`` keeps the history compacted.

::

    from langchain.agents import create_agent
    compaction = CompactionMiddleware()
    agent = create_agent(model, tools=[...], middleware=[compaction])

``create_agent`` takes ``middleware=[...]`` (it has no ``pre_model_hook``,
and LangGraph's ``create_react_agent`` is deprecated in its favour). Before
each model call, ``before_model`` hands the state's messages to the session
(``CompactingHistory`` with the LangChain adapter) and replaces them with
what comes back, as LangChain's own summarization middleware does: unchanged
messages as they were, and after a compaction the compacted history, so that
the state stays as small as the context. The middleware registers
``ccr_retrieve`` as one of its tools, so the agent offers it without being
told; ``retrieve`` answers the same calls from Python.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import BaseMessage, RemoveMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from ccr.recovery import RECOVERY_TOOL, RECOVERY_TOOL_NAME
from compactor.adapters.history import CompactingHistory, RetrievesFromHistory
from compactor.adapters.langchain import LangChainAdapter
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.report import CompactionReport

__all__ = ["CompactionMiddleware"]


class CompactionMiddleware(RetrievesFromHistory, AgentMiddleware):
    """Compaction as LangChain agent middleware (see the module docstring).

    ``orchestrator`` is the session (default: settings from the environment,
    the store at ``$COMPACTOR_HOME/ccr.db``); ``on_compaction`` sees each
    compaction's report, and ``reports`` keeps them all.
    """

    def __init__(
        self,
        orchestrator: Orchestrator | None = None,
        *,
        on_compaction: Callable[[CompactionReport], None] | None = None,
    ) -> None:
        super().__init__()
        self.history: CompactingHistory[BaseMessage] = CompactingHistory(
            LangChainAdapter, orchestrator, on_compaction=on_compaction, prepare=_with_ids
        )
        self.tools: Sequence[BaseTool] = [self.recovery_tool]

    def before_model(self, state: Mapping[str, Any] | Any, runtime: Any = None) -> dict[str, Any] | None:
        """The state update before a model call: its messages replaced by the history to send."""
        messages = list(state["messages"] if isinstance(state, Mapping) else state.messages)
        out = self.history.process(messages)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *out]}

    async def abefore_model(self, state: Mapping[str, Any] | Any, runtime: Any = None) -> dict[str, Any] | None:
        """``before_model`` for an agent run with ``ainvoke``/``astream`` (in the event loop's thread)."""
        return self.before_model(state, runtime)

    @property
    def reports(self) -> list[CompactionReport]:
        """The report of every compaction so far."""
        return self.history.reports

    @property
    def recovery_tool(self) -> BaseTool:
        """``ccr_retrieve`` as a LangChain tool, answering from this session's store (already in ``tools``)."""
        return StructuredTool.from_function(
            self.retrieve, name=RECOVERY_TOOL_NAME, description=str(RECOVERY_TOOL["description"])
        )


def _with_ids(messages: list[BaseMessage]) -> list[BaseMessage]:
    return [m if m.id else m.model_copy(update={"id": str(uuid.uuid4())}) for m in messages]
