"""What ``compact`` takes and gives back: its options, the boundary marker and the result.

``compactor.engine.pipeline`` re-exports all three; field names are part of
the public API (``from compactor import CompactOptions, CompactionResult``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from attachments import Budgets
from compactor.core.calibration import Calibration
from compactor.core.config import DEFAULT_RECOVERY_TOOLS, DEFAULT_TAIL_TOKENS
from compactor.core.messages import Message
from compactor.core.session import SessionState
from compactor.engine.report import CompactionReport, Trigger

__all__ = ["CompactBoundary", "CompactOptions", "CompactionResult"]


class CompactOptions(BaseModel):
    """How one compaction is shaped. Budgets are in the configured counter's tokens."""

    model_config = ConfigDict(extra="forbid")

    tail_tokens: int = Field(default=DEFAULT_TAIL_TOKENS, ge=0)
    threshold: int = Field(default=167_000, gt=0)
    calibration: Calibration = Field(default_factory=Calibration)
    """Counter tokens -> context tokens (system prompt, tools, tokenizer); for pre/post."""
    budgets: Budgets = Field(default_factory=Budgets)
    transcript_path: str | None = None
    recovery_tools: tuple[str, ...] = DEFAULT_RECOVERY_TOOLS
    """Tools whose results are recovered content: dropped, never stored or summarized again."""
    memory_db: str | None = None
    """A memory store to recall from for the work in progress (``compactor.memory.attachment``); None: none."""
    context_tokens: int | None = Field(default=None, ge=1)
    """An opt-in shared ceiling on the summary, the tail and the attachments (None, the default: each its own):
    the tail takes at most ``TAIL_SHARE`` of it, the attachments what the summary and tail leave."""
    cached_messages: int | None = Field(default=None, ge=0)
    """How many messages (from the start) the prompt cache holds; None: all of them (``compactor.engine.cache``)."""


class CompactBoundary(BaseModel):
    """The boundary marker: a transcript event, never sent to the model."""

    model_config = ConfigDict(extra="forbid")

    trigger: Trigger
    pre_tokens: int
    post_tokens: int
    head_handle: str
    timestamp: float


class CompactionResult(BaseModel):
    """What ``compact`` returns. On failure ``messages`` are the caller's, unchanged."""

    model_config = ConfigDict(extra="forbid")

    ok: bool
    boundary: CompactBoundary | None
    messages: list[Message]
    state: SessionState
    report: CompactionReport

    @property
    def summary_message(self) -> Message | None:
        return self.messages[0] if self.ok and self.messages else None
