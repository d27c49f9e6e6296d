"""Skill invocations: which agent invoked which skill, and when.

``InvokedSkill`` is the record of one invocation. The records live in a
session's state (``SessionState.skills`` in compactor: per agent, oldest
first); these functions add to it and read it back in the order compaction
restores skills. They take any ``SkillState``, the part of a session they
use, so that skills need nothing from compactor.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from skills.info import SkillInfo

__all__ = ["MAIN_AGENT", "InvokedSkill", "SkillState", "invoked_skills", "record_invocation"]

MAIN_AGENT = "main"
"""Agent id of the main conversation (subagents use their own ids)."""


class InvokedSkill(BaseModel):
    """One invocation: the skill's name and file, the text it loaded, when, and by which agent."""

    model_config = ConfigDict(extra="forbid")

    name: str
    path: str
    content: str
    invoked_at: float
    agent_id: str = MAIN_AGENT


class SkillState(Protocol):
    """What skill tracking reads and updates of a session (``compactor.core.session.SessionState`` is one)."""

    @property
    def agent_id(self) -> str:
        """The agent whose conversation this is."""
        ...

    @property
    def skills(self) -> Mapping[str, list[InvokedSkill]]:
        """Invocations per agent id, oldest first."""
        ...

    def invoke_skill(self, skill: InvokedSkill) -> None:
        """Record an invocation for its agent; re-invoking moves it to newest."""
        ...


def record_invocation(
    state: SkillState,
    skill: SkillInfo,
    content: str,
    *,
    agent_id: str | None = None,
    at: float | None = None,
) -> InvokedSkill:
    """Record that ``agent_id`` (default: the state's current agent) invoked ``skill``.

    ``content`` is the text the invocation loaded into the context; ``at``
    defaults to now. Re-invoking a skill moves it to newest, and its name is
    added to the announced skills (never removed, even by compaction).
    """
    invoked = InvokedSkill(
        name=skill.name,
        path=skill.path,
        content=content,
        invoked_at=time.time() if at is None else at,
        agent_id=state.agent_id if agent_id is None else agent_id,
    )
    state.invoke_skill(invoked)
    return invoked


def invoked_skills(state: SkillState, agent_id: str | None = None) -> list[InvokedSkill]:
    """The skills ``agent_id`` (default: the current agent) invoked, newest first.

    Only that agent's skills: a subagent's skills are not restored into the
    main conversation, nor the other way round.
    """
    agent = state.agent_id if agent_id is None else agent_id
    # The list is in invocation order: where times are equal (no timestamps), the later invocation comes first.
    indexed = sorted(
        enumerate(state.skills.get(agent, [])), key=lambda item: (item[1].invoked_at, item[0]), reverse=True
    )
    return [skill for _, skill in indexed]
