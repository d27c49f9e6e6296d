"""OpenAI Agents SDK: a ``Session`` that compacts as items are added, and an in-run input filter.

::

    session = CompactingSession("build-fixer")
    agent = Agent(name="fixer", tools=[*tools, session.recovery_tool])
    await Runner.run(agent, "Fix the build", session=session,
                     run_config=RunConfig(call_model_input_filter=session.input_filter))

The session keeps the conversation (Responses input items) for the next
run, compacted whenever the policy says so as items are added. Inside a run
the SDK grows its own input from what the session gave at the start (it
never sees the session compact), so the input filter sends the model the
session's compacted history instead: the run's input is what the session
gave plus the items of this run, and items the session has not been given
yet are added to it first (and not again when the SDK saves them). So one
history is compacted once per threshold crossing, however the SDK
interleaves saving and calling the model. Only an input that does not
continue this session (the filter used with another session, or none) is
compacted on its own, in ``run_history``: same settings and the same store,
so a handle from either is recovered by the one ``ccr_retrieve`` tool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from agents import FunctionTool, function_tool
from agents.items import TResponseInputItem
from agents.memory import SessionABC
from agents.run_config import CallModelData, ModelInputData

from ccr.recovery import RECOVERY_TOOL, RECOVERY_TOOL_NAME
from compactor.adapters.history import CompactingHistory, RetrievesFromHistory
from compactor.adapters.openai_responses import OpenAIResponsesAdapter
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.report import CompactionReport

__all__ = ["CompactingSession"]


class CompactingSession(RetrievesFromHistory, SessionABC):
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
            Orchestrator(
                settings=stored.settings,
                store=stored.store,
                counter=stored.counter,
                summarizer=stored.summarizer,
                files=stored.files,
                calibration=stored.calibration,
            ),
            on_compaction=on_compaction,
        )
        self._items: list[TResponseInputItem] = []
        self._given: list[dict[str, Any]] | None = None
        """What ``get_items`` last gave (whole): a run's input starts with it. None before any run."""
        self._added: list[dict[str, Any]] = []
        """Every item added since then, as added: a run's input goes on with them."""
        self._early: list[dict[str, Any]] = []
        """Items the input filter added before the SDK saved them: not to be added again."""

    @property
    def reports(self) -> list[CompactionReport]:
        """The report of every compaction so far: of the session, then of inputs that were not its own."""
        return [*self.history.reports, *self.run_history.reports]

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The stored items, the latest ``limit`` of them when given."""
        if not limit:
            self._given, self._added, self._early = [dict(i) for i in self._items], [], []
        return list(self._items[-limit:] if limit else self._items)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Store ``items`` after the others, compacting when the policy says so (awaiting a
        background LLM summary, ``Orchestrator.acompact``).

        Items the input filter already added (the same items, in the same
        order) are not added twice.
        """
        new = [dict(i) for i in items]
        if self._early:
            if new[: len(self._early)] == self._early:
                new, self._early = new[len(self._early) :], []
            elif self._early[: len(new)] == new:
                new, self._early = [], self._early[len(new) :]
            else:
                self._early = []
        if new:
            self._added.extend(new)
            processed = await self.history.aprocess([*map(dict, self._items), *new])
            self._items = cast(list[TResponseInputItem], processed)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the latest item (the next items added start the session's count over)."""
        self._given, self._added, self._early = None, [], []
        return self._items.pop() if self._items else None

    async def clear_session(self) -> None:
        """Forget every item."""
        self._items = []
        self._given, self._added, self._early = None, [], []

    def input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """``RunConfig.call_model_input_filter``: the input of this model call, compacted when due.

        An input that continues this session (what ``get_items`` last gave
        at the start of a run, then the items added since, then perhaps items
        not saved yet) is answered
        with the session's own history, the unsaved items added to it first;
        any other input is compacted on its own (``run_history``).
        """
        items = [dict(i) for i in data.model_data.input]
        given = self._given
        known = len(given or ()) + len(self._added)
        if given is not None and items[: len(given)] == given and items[len(given) : known] == self._added:
            pending = items[known:]
            if pending:
                self._early.extend(pending)
                self._add(pending)
            out = list(self._items)
        else:
            out = cast(list[TResponseInputItem], self.run_history.process(items))
        return ModelInputData(input=out, instructions=data.model_data.instructions)

    @property
    def recovery_tool(self) -> FunctionTool:
        """``ccr_retrieve`` as an Agents SDK function tool, answering from this session's store."""
        return function_tool(
            self.retrieve,
            name_override=RECOVERY_TOOL_NAME,
            description_override=str(RECOVERY_TOOL["description"]),
            strict_mode=False,
        )

    def _add(self, new: list[dict[str, Any]]) -> None:
        """Add items from the input filter, which the SDK calls synchronously."""
        self._added.extend(new)
        self._items = cast(list[TResponseInputItem], self.history.process([*map(dict, self._items), *new]))
