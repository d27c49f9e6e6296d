"""OpenAI Agents SDK: a ``Session`` that compacts as items are added, and an in-run input filter.

::

    session = CompactingSession("build-fixer")
    agent = Agent(name="fixer", tools=[*tools, session.recovery_tool])
    await Runner.run(agent, "Fix the build", session=session,
                     run_config=RunConfig(call_model_input_filter=session.input_filter))

The session keeps the conversation (Responses input items) for the next
run, compacted whenever the policy says so as items are added. Inside a run
the SDK grows its own input from what the session gave at the start, so the
input filter compacts that too before each model call (a long tool loop
grows within one run). The two are separate histories of one session:
same settings and the same store, so a handle from either is recovered by
the one ``ccr_retrieve`` tool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from agents import FunctionTool, function_tool
from agents.items import TResponseInputItem
from agents.memory import SessionABC
from agents.run_config import CallModelData, ModelInputData

from compactor.adapters.history import CompactingHistory
from compactor.adapters.openai_responses import OpenAIResponsesAdapter
from compactor.orchestrator import Orchestrator
from compactor.recovery import RECOVERY_TOOL, RECOVERY_TOOL_NAME
from compactor.report import CompactionReport

__all__ = ["CompactingSession"]


class CompactingSession(SessionABC):
    """An Agents SDK session kept under compaction (see the module docstring). It lives in memory."""

    def __init__(
        self,
        session_id: str = "compactor",
        orchestrator: Orchestrator | None = None,
        *,
        on_compaction: Callable[[CompactionReport], None] | None = None,
    ) -> None:
        self.session_id = session_id
        self.history: CompactingHistory[dict[str, Any]] = CompactingHistory(
            OpenAIResponsesAdapter, orchestrator, on_compaction=on_compaction
        )
        stored = self.history.orchestrator
        self.run_history: CompactingHistory[dict[str, Any]] = CompactingHistory(
            OpenAIResponsesAdapter,
            Orchestrator(settings=stored.settings, store=stored.store, counter=stored.counter,
                         summarizer=stored.summarizer, files=stored.files, calibration=stored.calibration),
            on_compaction=on_compaction,
        )
        self._items: list[TResponseInputItem] = []

    @property
    def reports(self) -> list[CompactionReport]:
        """The report of every compaction so far: of the stored items, then of the inputs inside runs."""
        return [*self.history.reports, *self.run_history.reports]

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The stored items, the latest ``limit`` of them when given."""
        return list(self._items[-limit:] if limit else self._items)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Store ``items`` after the others, compacting when the policy says so (awaiting a
        background LLM summary, ``Orchestrator.acompact``)."""
        processed = await self.history.aprocess([dict(i) for i in [*self._items, *items]])
        self._items = cast(list[TResponseInputItem], processed)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the latest item (the next items added start the session's count over)."""
        return self._items.pop() if self._items else None

    async def clear_session(self) -> None:
        """Forget every item."""
        self._items = []

    def input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """``RunConfig.call_model_input_filter``: the input of this model call, compacted when due."""
        items = [dict(i) for i in data.model_data.input]
        return ModelInputData(input=cast(list[TResponseInputItem], self.run_history.process(items)),
                              instructions=data.model_data.instructions)

    @property
    def recovery_tool(self) -> FunctionTool:
        """``ccr_retrieve`` as an Agents SDK function tool, answering from this session's store."""
        return function_tool(
            self.history.retrieve, name_override=RECOVERY_TOOL_NAME,
            description_override=str(RECOVERY_TOOL["description"]), strict_mode=False,
        )
