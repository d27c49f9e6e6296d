"""Budgets: how much the post-compaction attachments may take, in the configured counter."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator

from attachments.bounds import within_bound
from attachments.selection import DEFAULT_ACTIVITY_FILE_TOKENS, DEFAULT_ACTIVITY_FILES, FileSelection

__all__ = ["Budgets", "DEFAULT_BUDGETS"]


class Budgets(BaseModel):
    """Token budgets for restored files and skills.

    Files: 12 of at most 1,500 tokens by default (what ``tune`` chose on real
    sessions; Claude Code's 5 of 5,000 are ``examples/claude-code-card.toml``),
    under the card's 50,000 in all. Skills keep the card's budgets. Every
    budget applies to the rendered attachment text, wrapper and notes
    included, counted with the counter the compaction uses.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_files: PositiveInt = DEFAULT_ACTIVITY_FILES
    file_tokens: PositiveInt = DEFAULT_ACTIVITY_FILE_TOKENS
    files_total: PositiveInt = 50_000
    skill_tokens: PositiveInt = 5_000
    skills_total: PositiveInt = 25_000
    memory_tokens: PositiveInt = 2_000
    """Recalled memories (when a memory store is configured), as one rendered attachment."""
    selection: FileSelection = Field(default_factory=FileSelection)
    """Which files come first (``[attachments.selection]``; see ``attachments.selection``)."""

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans(cls, value: Any) -> Any:
        """Refuse ``true``/``false`` (pydantic would read ``true`` as a budget of 1)."""
        if isinstance(value, bool):
            raise ValueError(f"expected a number of tokens or files, not the boolean {str(value).lower()}")
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _bounded(cls, value: Any) -> Any:
        """Refuse a number over ``attachments.bounds.MAX_SETTING_NUMBER``."""
        return within_bound(value)


DEFAULT_BUDGETS = Budgets()
