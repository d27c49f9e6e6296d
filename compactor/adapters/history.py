"""A framework's message history kept under compaction, whatever its message type.

``CompactingHistory`` is what each integration wraps: the framework hands it
its whole history before a model call; the messages it has not seen yet go
through the adapter into the ``Orchestrator`` (tool results deduplicated as
they arrive), the policy decides, and the history comes back in the
framework's own type: unchanged messages as they were, a compaction's
summary and attachments built from their blocks.

It accepts both ways frameworks keep history: one that stores what the
processor returned (the next history starts with it) and one that keeps
its own full list (the next history starts with what was passed in). Any
other history is a new conversation: the session starts over.
``aprocess`` is the same for the async frameworks (pydantic-ai, the OpenAI
Agents SDK, LangGraph's async hook): a compaction waiting on a background
LLM summary awaits it (``Orchestrator.acompact``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from ccr.recovery import recover
from compactor.core.messages import Message
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.pipeline import CompactionResult
from compactor.engine.report import CompactionReport

__all__ = ["CompactingHistory", "HistoryAdapter", "RetrievesFromHistory"]

T = TypeVar("T")


class HistoryAdapter(Protocol[T]):
    """What an adapter offers: a framework's messages in and out of the ``Message`` shape."""

    def to_messages(self, items: Sequence[T]) -> list[Message]: ...

    def from_messages(self, messages: Sequence[Message]) -> list[T]: ...

    def retain(self, messages: Sequence[Message]) -> None: ...


class CompactingHistory(Generic[T]):
    """One conversation of a framework under compaction (see the module docstring).

    ``make_adapter`` makes a fresh adapter for each conversation;
    ``orchestrator`` is the session (default: settings from the environment,
    the store at ``$COMPACTOR_HOME/ccr.db``). ``on_compaction`` sees each
    successful compaction's report; all of them are in ``reports``.
    ``prepare`` finishes each history written (for example gives new
    messages the ids the framework would give them), so that the framework's
    next history is recognized as this one continued.
    """

    def __init__(
        self,
        make_adapter: Callable[[], HistoryAdapter[T]],
        orchestrator: Orchestrator | None = None,
        *,
        on_compaction: Callable[[CompactionReport], None] | None = None,
        prepare: Callable[[list[T]], list[T]] | None = None,
    ) -> None:
        self._make_adapter = make_adapter
        self._prepare = prepare
        self.adapter = make_adapter()
        self.orchestrator = orchestrator if orchestrator is not None else Orchestrator()
        self.on_compaction = on_compaction
        self.reports: list[CompactionReport] = []
        self.failures: list[CompactionReport] = []
        self._read: list[T] = []
        self._written: list[T] = []

    def process(self, history: Sequence[T]) -> list[T]:
        """The history to send now: the new messages added, compacted when the policy says so."""
        items = self._take(history)
        return self._give(items, self.orchestrator.maybe_compact())

    async def aprocess(self, history: Sequence[T]) -> list[T]:
        """``process`` for an event loop: a compaction's wait on a background summary is awaited
        (``Orchestrator.acompact``), so the loop keeps running meanwhile."""
        items = self._take(history)
        return self._give(items, await self.orchestrator.amaybe_compact())

    def _take(self, history: Sequence[T]) -> list[T]:
        """Add the messages of ``history`` the session has not seen yet; the history as a list."""
        items = list(history)
        if _starts_with(items, self._written):
            new = items[len(self._written) :]
        elif _starts_with(items, self._read):
            new = items[len(self._read) :]
        else:
            self._restart()
            new = items
        for message in self.adapter.to_messages(new):
            self.orchestrator.add_message(message)
        return items

    def _give(self, items: list[T], result: CompactionResult | None) -> list[T]:
        """Record a compaction's outcome and return the history to send."""
        if result is not None and result.ok:
            self.adapter.retain(self.orchestrator.messages)
            self.reports.append(result.report)
            if self.on_compaction is not None:
                self.on_compaction(result.report)
        elif result is not None:
            self.failures.append(result.report)
        out = self.adapter.from_messages(self.orchestrator.messages)
        if self._prepare is not None:
            out = self._prepare(out)
        self._read, self._written = items, out
        return list(out)

    def retrieve(
        self,
        handle: str,
        query: str | None = None,
        lines: list[int] | None = None,
        bytes: list[int] | None = None,
        max_tokens: int | None = None,
        exact: bool | None = None,
    ) -> str:
        """Answer a recovery-tool call (``ccr_retrieve``) as text; errors are readable text too.

        The answer holds at most ``max_tokens`` tokens (default 5,000; 0 for
        no bound) and names the ranges that page through the rest; a stored
        conversation is shown with tool outputs raw unless ``exact``.
        """
        call: dict[str, Any] = {"handle": handle}
        for key, value in (
            ("query", query),
            ("lines", lines),
            ("bytes", bytes),
            ("max_tokens", max_tokens),
            ("exact", exact),
        ):
            if value is not None:
                call[key] = value
        answer = recover(self.orchestrator.store, call, counter=self.orchestrator.counter)
        return answer.content

    def close(self) -> None:
        """Close the session (``Orchestrator.close``: joins its background summary's worker)."""
        self.orchestrator.close()

    def pin(self, text: str) -> str:
        """Keep ``text`` word for word in every later summary of this conversation (``Orchestrator.pin``)."""
        return self.orchestrator.pin(text)

    def _restart(self) -> None:
        old = self.orchestrator
        if old.background is not None:
            old.background.close()  # joins its worker; the summarizer stays open for the new session
        self.orchestrator = Orchestrator(
            settings=old.settings,
            store=old.store,
            counter=old.counter,
            summarizer=old.summarizer,
            files=old.files,
            calibration=old.calibration,
            transcript_path=old.transcript_path,
        )
        for pinned in old.pins:  # what the user pinned holds for the conversation, not one session
            self.orchestrator.pin(pinned)
        self.adapter = self._make_adapter()
        self._read, self._written = [], []


def _starts_with(items: Sequence[Any], prefix: Sequence[Any]) -> bool:
    return len(prefix) <= len(items) and all(a is b or a == b for a, b in zip(items, prefix, strict=False))


class RetrievesFromHistory:
    """``retrieve`` for an integration that keeps its conversation in a ``CompactingHistory``
    (``self.history``): the method the integration's recovery tool is made from."""

    history: CompactingHistory[Any]

    def retrieve(
        self,
        handle: str,
        query: str | None = None,
        lines: list[int] | None = None,
        bytes: list[int] | None = None,
        max_tokens: int | None = None,
        exact: bool | None = None,
    ) -> str:
        """Answer a ``ccr_retrieve`` call from this session's store, as the recovery tool does.

        For an agent loop of your own, or to read a handle yourself: text in
        any case (errors too), at most ``max_tokens`` tokens (default 5,000;
        0 for no bound), tool outputs raw unless ``exact``.
        """
        return self.history.retrieve(handle, query, lines, bytes, max_tokens, exact)
