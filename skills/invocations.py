"""Skill invocations: which agent invoked which skill, and when.

The record lives in ``SessionState.skills`` (per agent, oldest first); these
functions add to it and read it back in the order compaction restores skills.
"""

from __future__ import annotations

import time

from compactor.core.session import InvokedSkill, SessionState
from skills.info import SkillInfo

__all__ = ["invoked_skills", "record_invocation"]


def record_invocation(
    state: SessionState,
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


def invoked_skills(state: SessionState, agent_id: str | None = None) -> list[InvokedSkill]:
    """The skills ``agent_id`` (default: the current agent) invoked, newest first.

    Only that agent's skills: a subagent's skills are not restored into the
    main conversation, nor the other way round.
    """
    agent = state.agent_id if agent_id is None else agent_id
    # The list is in invocation order: where times are equal (no timestamps), the later invocation comes first.
    indexed = sorted(enumerate(state.skills.get(agent, [])), key=lambda item: (item[1].invoked_at, item[0]), reverse=True)
    return [skill for _, skill in indexed]
