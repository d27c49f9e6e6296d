"""The ``Summarizer`` protocol and the ``Summary`` it returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from compactor.core.ledger import SessionLedger
from compactor.core.messages import ContentBlock, Message, ToolResultBlock
from compactor.engine.spans import Span

__all__ = ["SECTION_TITLES", "BriefingFacts", "CitingSummarizer", "Summarizer", "Summary", "SummarySource"]

SECTION_TITLES: tuple[str, ...] = (
    "Primary request and intent",
    "Key technical concepts",
    "Files and code sections",
    "Errors and fixes",
    "Problem solving",
    "All user messages",
    "Pending tasks",
    "Current work",
    "Next step",
)
"""The nine sections every summary has, in order."""


class SummarySource(BaseModel):
    """Who wrote the summary of messages ``first`` to ``last`` of the head (0-based, inclusive), and why.

    ``source`` is ``llm`` (a model's summary, written in the background) or
    ``extractive``; ``reason`` says why that part came from there (for
    example the model failed, or had not finished within the wait bound).
    """

    model_config = ConfigDict(extra="forbid")

    source: Literal["llm", "extractive"]
    first: int = Field(ge=0)
    last: int = Field(ge=0)
    summarizer: str
    reason: str


class BriefingFacts(BaseModel):
    """What a briefing proposes, for the report: whether it names a next step, the files it names,
    the check it proposes, and why the work counts as done (None while it is open)."""

    model_config = ConfigDict(extra="forbid")

    next_step: bool = False
    next_files: list[str] = Field(default_factory=list)
    check: str | None = None
    finished: str | None = None


class Summary(BaseModel):
    """A summary of the head of a conversation.

    ``text`` is what the model sees. ``handles`` are the CCR handles the
    summary cites; ``dropped_rounds`` counts the oldest API rounds an LLM
    summarizer had to leave out because the request was too long.
    ``provider_blocks`` are a provider's own compaction
    (``compactor.summarizers.provider_compaction``) when the provider wrote the summary:
    the summary message carries them verbatim, before ``text``.
    """

    model_config = ConfigDict(extra="forbid")

    text: str
    summarizer: str
    sections: dict[str, str] = Field(default_factory=dict)
    handles: list[str] = Field(default_factory=list)
    dropped_rounds: int = 0
    sources: list[SummarySource] = Field(default_factory=list)
    """Which parts of the head which source summarized (a background summary; empty: all by ``summarizer``)."""
    provider_blocks: list[ContentBlock] = Field(default_factory=list)
    index: str = ""
    """The session's index (every path, the commands that matter, the stored listing's handle), which
    the compacted context carries as its own message after the summary: bookkeeping, kept out of ``text``."""
    briefing: BriefingFacts | None = None
    """What the summary proposes (a summary written from the ledger; None for a model's own text)."""


Summary.model_rebuild(_types_namespace={"ToolResultBlock": ToolResultBlock})


@runtime_checkable
class Summarizer(Protocol):
    """Turns the head of a conversation into a ``Summary``.

    Implementations raise ``compactor.core.errors.SummarizerError`` on failure;
    the pipeline then fails closed.
    """

    name: str

    def summarize(self, messages: Sequence[Message], instructions: str | None = None) -> Summary: ...


@runtime_checkable
class CitingSummarizer(Protocol):
    """A summarizer that cites stored spans by handle.

    ``spans(messages)`` names every span its summary may cite; the pipeline
    stores exactly those before summarizing and hands them back, so that
    they are computed once. ``cwd`` is the session's working directory, when
    known (a summary may show paths relative to it). ``ledger`` is the
    session's ledger with ``messages`` merged (``compactor.core.ledger``), and
    ``tail`` what the compacted context keeps after them.

    A summarizer whose spans include a facts listing (a span of kind
    ``facts``) may set ``lists_facts = True`` and take ``spans(messages,
    listing=False)``: the pipeline, which stores the session's listing in
    place of any other, then asks for the spans without it.
    """

    name: str

    def spans(self, messages: Sequence[Message]) -> list[Span]: ...

    def summarize(
        self,
        messages: Sequence[Message],
        instructions: str | None = None,
        *,
        spans: Sequence[Span] | None = None,
        cwd: str | None = None,
        ledger: SessionLedger | None = None,
        tail: Sequence[Message] = (),
    ) -> Summary: ...
