"""The report entries of attachments: what was re-attached, and what was left out.

``AttachmentEntry`` is one re-attached item, ``SkippedEntry`` one left out.
They are what the attachments package produces, so they live here;
``compactor.engine.report`` re-exports them, and a ``CompactionReport``
lists them under ``attachments`` and ``skipped``. Field names are a
contract (DESIGN.md, "Report"): tools read them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["AttachmentEntry", "AttachmentType", "SkippedEntry"]

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
