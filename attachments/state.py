"""What attachments restore of a session, and the part of a session they read: ``AttachmentState``.

``ReadFileEntry`` (a file as the agent last saw it), ``Plan`` and
``BackgroundTask`` are the values the attachments restore, so they live
here; ``compactor.core.session.SessionState`` composes them (and
re-exports them). The builders take any ``AttachmentState``, the members of
a session they read and update, so that attachments need nothing from
compactor; ``SessionState`` is one.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from skills.invocations import SkillState

__all__ = ["AttachmentState", "BackgroundTask", "Plan", "ReadFileEntry", "TaskStatus"]

TaskStatus = Literal["running", "completed", "failed", "killed"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReadFileEntry(_Model):
    """What the agent last saw of a file: its content and when it read it.

    ``offset``/``limit`` are set for a partial read (lines, 1-based offset as
    the Read tool takes them); ``content`` is then only that slice.
    """

    path: str
    content: str
    timestamp: float
    offset: int | None = None
    limit: int | None = None
    stale: bool = False

    @property
    def is_partial(self) -> bool:
        return self.offset is not None or self.limit is not None


class Plan(_Model):
    path: str
    content: str


class BackgroundTask(_Model):
    """A background agent (Task/Agent tool run in the background)."""

    id: str
    description: str
    status: TaskStatus = "running"
    collected: bool = False
    agent_type: str | None = None
    result: str | None = None


class AttachmentState(SkillState, Protocol):
    """The members of a session's state the attachments read, and the ``announced_*`` lists they update.

    ``deferred_tools``/``agent_types``/``mcp_instructions`` are what is
    available now; the ``announced_*`` fields are what the history has
    already told the model.
    """

    session_id: str | None
    cwd: str | None
    read_files: dict[str, ReadFileEntry]
    memory_paths: list[str]
    plan: Plan | None
    tasks: dict[str, BackgroundTask]
    deferred_tools: list[str]
    agent_types: list[str]
    mcp_instructions: dict[str, str]
    announced_tools: list[str]
    announced_agent_types: list[str]
    announced_mcp: list[str]

    @property
    def in_plan_mode(self) -> bool:
        """True when the session is in plan mode."""
        ...
