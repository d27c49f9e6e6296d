"""Invocations are tracked per agent with their time; restoration order is newest first."""

from __future__ import annotations

from compactor.core.session import SessionState
from skills import SkillInfo, invoked_skills, record_invocation


def info(name: str) -> SkillInfo:
    return SkillInfo(name=name, path=f"/skills/{name}/SKILL.md", directory=f"/skills/{name}")


def test_invocations_are_kept_per_agent_and_returned_newest_first() -> None:
    state = SessionState()
    record_invocation(state, info("a"), "A", at=1.0)
    record_invocation(state, info("b"), "B", at=3.0)
    record_invocation(state, info("c"), "C", at=2.0, agent_id="sub-1")
    assert [s.name for s in invoked_skills(state)] == ["b", "a"]
    assert [s.name for s in invoked_skills(state, "sub-1")] == ["c"]


def test_the_current_agent_is_the_default() -> None:
    state = SessionState(agent_id="sub-2")
    invoked = record_invocation(state, info("a"), "A", at=1.0)
    assert invoked.agent_id == "sub-2"
    assert [s.name for s in invoked_skills(state)] == ["a"]


def test_reinvoking_moves_a_skill_to_newest_and_names_stay_announced() -> None:
    state = SessionState()
    record_invocation(state, info("a"), "A", at=1.0)
    record_invocation(state, info("b"), "B", at=2.0)
    record_invocation(state, info("a"), "A2", at=5.0)
    assert [(s.name, s.content) for s in invoked_skills(state)] == [("a", "A2"), ("b", "B")]
    assert state.announced_skills == ["a", "b"]


def test_the_time_defaults_to_now() -> None:
    state = SessionState()
    assert record_invocation(state, info("a"), "A").invoked_at > 0


def test_invocations_at_the_same_time_come_back_latest_invoked_first() -> None:
    """Messages without timestamps give every invocation the same time: their order decides."""
    state = SessionState()
    for name in ("a", "b", "c"):
        record_invocation(state, info(name), name.upper(), at=0.0)
    record_invocation(state, info("a"), "A2", at=0.0)
    assert [s.name for s in invoked_skills(state)] == ["a", "c", "b"]
