"""CompactionReport: what one compaction did, as data (printed as JSON).

Field names are a contract (docs/ARCHITECTURE.md, "Reports"): tools read them. The
attachment entries (``AttachmentEntry``, ``SkippedEntry``, ``AttachmentType``)
are ``attachments.entries``'s, re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from attachments.entries import AttachmentEntry, AttachmentType, SkippedEntry
from attachments.messages import Message
from attachments.readable import readable_text
from compactor.engine.segment import TranscriptSegment
from compactor.engine.survival import Continuation, Retention, Survival
from compactor.summarizers.base import SummarySource

__all__ = [
    "AttachmentEntry",
    "AttachmentType",
    "BriefingReport",
    "CacheReport",
    "CompactionReport",
    "ContextEntry",
    "DedupReport",
    "DroppedSpan",
    "SkippedEntry",
    "TranscriptSegment",
    "Trigger",
    "context_entries",
]

Trigger = Literal["manual", "auto"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DroppedSpan(_Model):
    """A span the compaction removed from the context, stored in CCR first.

    ``recoverable`` is false for context the compaction dropped without
    holding it (a replay of a transcript that starts mid-session: kind
    ``unseen``, the earlier part is not in the file); its ``handle`` is empty.
    """

    handle: str
    kind: str
    tokens: int
    bytes: int
    recoverable: bool = True
    piece_of: str | None = None
    """The handle of the stored head this span is also part of; its bytes are not counted twice."""


class ContextEntry(_Model):
    """One message of the compacted context, as a person reads it (``compactor show``)."""

    part: Literal["summary", "tail", "attachment", "index"]
    role: Literal["user", "assistant"]
    tokens: int
    text: str


class BriefingReport(_Model):
    """Whether the summary is a briefing (``compactor.summarizers.briefing``): the share of its
    characters on bookkeeping lines, whether it proposes a next step, the files and the check it
    names, why the work counts as done, and the size of the index that follows it."""

    listing_share: float = 0.0
    next_step: bool | None = None
    """None: the summarizer does not say (a model's own text)."""
    next_files: list[str] = Field(default_factory=list)
    check: str | None = None
    finished: str | None = None
    index_chars: int = 0


class DedupReport(_Model):
    hits: int = 0
    saved_bytes: int = 0


MaskingPolicyName = Literal["eager", "batch", "cold"]
"""Which rule let a masking step run (``compactor.engine.masking``): past the soft threshold at any
check, in a batch near the auto-compact threshold, or while the prompt cache had gone cold."""


class CacheReport(_Model):
    """What one change of the context does to the prompt cache (``compactor.engine.cache``).

    From the message order: the prefix up to the first changed message stays
    cached (``kept_tokens``), the rest of what the last request cached is
    invalidated. When the cache had already gone cold (``cold``) nothing was
    cached, so both are 0. Tokens are the session's counter tokens of messages.
    """

    invalidated_tokens: int = 0
    kept_tokens: int = 0
    cold: bool = False


class MaskingReport(_Model):
    """One masking step: old tool results replaced by stubs whose originals are in CCR."""

    ok: bool = True
    error: str | None = None
    error_id: str | None = None
    """When the store refused the originals: nothing was masked (fail closed)."""
    at_line: int | None = None
    """Replay only: the transcript line after which the step ran."""
    results: int
    """Tool results masked (superseded reads included)."""
    superseded: int = 0
    """Of those, Read results a later read or write of the same file made stale (masked as pointers)."""
    tokens_saved: int
    """The counter's tokens of the masked results minus those of their stubs."""
    tokens_before: int
    """The context estimate that triggered the step (as the policy sees it, like ``pre_tokens``)."""
    handles: list[str] = Field(default_factory=list)
    policy: MaskingPolicyName
    cache: CacheReport = Field(default_factory=CacheReport)
    basis: Literal["inferred"] = "inferred"


class CompactionReport(_Model):
    """What one compaction did. ``ok`` is false when it failed closed (see ``error``)."""

    trigger: Trigger
    ok: bool = True
    error: str | None = None
    error_id: str | None = None
    pre_tokens: int
    post_tokens: int
    threshold: int
    summary_tokens: int = 0
    head_tokens: int = 0
    summarizer: str = "extractive"
    counter: str = "tiktoken"
    dropped: list[DroppedSpan] = Field(default_factory=list)
    attachments: list[AttachmentEntry] = Field(default_factory=list)
    skipped: list[SkippedEntry] = Field(default_factory=list)
    dedup: DedupReport = Field(default_factory=DedupReport)
    survival: Survival | None = None
    """Share of the head's paths, command first lines and typed user messages the summary kept
    (verbatim or by handle; ``compactor.engine.survival``). None when the compaction failed."""
    retention: Retention | None = None
    """Of the whole session's facts so far (paths, command first lines, typed user messages), how many
    the compacted context holds verbatim (``compactor.engine.survival.context_retention``)."""
    continuation: Continuation | None = None
    """Whether the summary names the latest typed request and the open items."""
    briefing: BriefingReport | None = None
    """The summary's briefing figures (None when the compaction failed)."""
    ledger_facts: int = 0
    """Facts the session ledger holds (paths, commands, errors, user messages); all are in the stored listing."""
    at_line: int | None = None
    reread_coverage: float | None = None
    """Replay only: of the files read before and again after, the share file attachments restored."""
    reread_coverage_with_tail: float | None = None
    """The same, also counting files whose reads the preserved tail still shows."""
    transcript: TranscriptSegment | None = None
    """The transcript's records since the previous compaction, stored byte-exact: by the PreCompact hook,
    and by a replay that writes the compacted session (``replay --output``, whose boundaries name it)."""
    summary: str | None = None
    """The summary the summarizer wrote (the summary message wraps it)."""
    summary_sources: list[SummarySource] = Field(default_factory=list)
    """With a background LLM summary: which messages of the head the model's summary covers and which
    were rendered extractively, each with the reason (``compactor.summarizers.background``)."""
    context: list[ContextEntry] = Field(default_factory=list)
    """The compacted context in order: summary message, preserved tail, attachments."""
    cache: CacheReport | None = None
    """The prompt-cache effect: the summary comes first, so every cached message is invalidated."""
    basis: Literal["inferred"] = "inferred"


def context_entries(
    out: Sequence[Message], sizes: Sequence[int], *, tail_length: int, index: bool = False
) -> list[ContextEntry]:
    """The compacted context ``[summary, *tail, *attachments, index?]`` as the report shows it to a person."""
    attachments = len(out) - 1 - tail_length - (1 if index else 0)
    parts = ["summary"] + ["tail"] * tail_length + ["attachment"] * attachments + ["index"] * index
    return [
        ContextEntry(part=part, role=m.role, tokens=n, text=readable_text(m))  # type: ignore[arg-type]
        for part, m, n in zip(parts, out, sizes, strict=True)
    ]
