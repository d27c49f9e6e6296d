"""CompactionReport: what one compaction did, as data (printed as JSON).

Field names are a contract (DESIGN.md, "Report"): tools read them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from compactor.survival import Survival

__all__ = [
    "AttachmentEntry",
    "AttachmentType",
    "CompactionReport",
    "ContextEntry",
    "DedupReport",
    "DroppedSpan",
    "SkippedEntry",
    "Trigger",
]

Trigger = Literal["manual", "auto"]

AttachmentType = Literal[
    "file",
    "skill",
    "plan_file",
    "plan_mode",
    "task_status",
    "deferred_tools_delta",
    "agent_listing_delta",
    "mcp_instructions_delta",
    "memory",
]


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


class AttachmentEntry(_Model):
    """One re-attached item (a file, a skill, the plan, ...)."""

    type: AttachmentType
    path: str | None = None
    name: str | None = None
    tokens: int
    truncated: bool = False
    handle: str | None = None


class SkippedEntry(_Model):
    """A candidate attachment that was left out, and why."""

    type: AttachmentType
    path: str | None = None
    name: str | None = None
    reason: str


class ContextEntry(_Model):
    """One message of the compacted context, as a person reads it (``compactor show``)."""

    part: Literal["summary", "tail", "attachment"]
    role: Literal["user", "assistant"]
    tokens: int
    text: str


class DedupReport(_Model):
    hits: int = 0
    saved_bytes: int = 0


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
    (verbatim or by handle; ``compactor.survival``). None when the compaction failed."""
    at_line: int | None = None
    reread_coverage: float | None = None
    """Replay only: of the files read before and again after, the share file attachments restored."""
    reread_coverage_with_tail: float | None = None
    """The same, also counting files whose reads the preserved tail still shows."""
    summary: str | None = None
    """The summary the summarizer wrote (the summary message wraps it)."""
    context: list[ContextEntry] = Field(default_factory=list)
    """The compacted context in order: summary message, preserved tail, attachments."""
    basis: Literal["inferred"] = "inferred"
