"""Skill attachments: the current agent's skills, newest first, each cut, within the total."""

from __future__ import annotations

import ccr
from attachments import Budgets, build_skill_attachment, mark_announced
from compactor.core.session import InvokedSkill, SessionState
from compactor.core.tokens import TiktokenCounter


def skill(name: str, at: float, *, agent: str = "main", size: int = 5) -> InvokedSkill:
    body = "".join(f"{name} step {i}: do the next thing carefully.\n" for i in range(size))
    return InvokedSkill(name=name, path=f"/skills/{name}/SKILL.md", content=body, invoked_at=at, agent_id=agent)


def state_with(*skills: InvokedSkill, agent: str = "main") -> SessionState:
    state = SessionState(agent_id=agent)
    for s in skills:
        state.invoke_skill(s)
    return state


def test_skills_come_newest_first_in_one_message_with_one_entry_each(
    counter: TiktokenCounter, store: ccr.Store
) -> None:
    state = state_with(skill("old", 1.0), skill("new", 3.0), skill("mid", 2.0))
    [attachment], skipped = build_skill_attachment(state, budgets=Budgets(), counter=counter, store=store)
    assert skipped == []
    assert [e.name for e in attachment.entries] == ["new", "mid", "old"]
    text = attachment.message.text()
    assert text.index('name="new"') < text.index('name="mid"') < text.index('name="old"')
    assert attachment.message.is_meta and text.startswith("<system-reminder>")
    assert attachment.tokens == counter.count_text(text)


def test_other_agents_skills_are_left_out(counter: TiktokenCounter, store: ccr.Store) -> None:
    state = state_with(skill("mine", 1.0, agent="sub"), skill("main-only", 2.0, agent="main"), agent="sub")
    [attachment], skipped = build_skill_attachment(state, budgets=Budgets(), counter=counter, store=store)
    assert [e.name for e in attachment.entries] == ["mine"]
    assert "main-only" not in attachment.message.text() and skipped == []


def test_a_long_skill_is_cut_with_its_tail_in_ccr_and_a_note_pointing_at_its_path(
    counter: TiktokenCounter, store: ccr.Store
) -> None:
    big = skill("big", 1.0, size=2_000)
    [attachment], _ = build_skill_attachment(state_with(big), budgets=Budgets(), counter=counter, store=store)
    [entry] = attachment.entries
    assert entry.truncated and entry.handle is not None and entry.tokens <= 5_000
    text = attachment.message.text()
    assert ccr.marker(entry.handle) in text and big.path in text
    head = text.split('path="/skills/big/SKILL.md">\n', 1)[1].split("</skill>", 1)[0]
    assert head.encode() + store.get(entry.handle) == big.content.encode()


def test_the_skills_total_is_respected_and_the_rest_named(counter: TiktokenCounter, store: ccr.Store) -> None:
    skills = [skill(f"s{i}", float(i), size=300) for i in range(8)]
    budgets = Budgets(skill_tokens=5_000, skills_total=25_000)
    [attachment], skipped = build_skill_attachment(state_with(*skills), budgets=budgets, counter=counter, store=store)
    assert counter.count_text(attachment.message.text()) <= 25_000
    kept = [e.name for e in attachment.entries]
    assert kept == [f"s{i}" for i in range(7, 7 - len(kept), -1)]
    assert 0 < len(kept) < 8
    assert [s.name for s in skipped] == [f"s{i}" for i in range(7 - len(kept), -1, -1)]
    assert all(s.reason.startswith("over_total_budget:") and s.type == "skill" for s in skipped)
    taken = sum(e.tokens for e in attachment.entries)
    for entry in skipped:  # every skipped skill is older than all the kept ones: its reason counts them all
        assert f"the {len(kept)} newer skills restored before it took {taken:,} of the 25,000" in entry.reason


def test_a_skill_over_the_total_is_skipped_and_older_smaller_skills_are_still_checked(
    counter: TiktokenCounter, store: ccr.Store
) -> None:
    """As in Claude Code, the total is checked skill by skill: one miss does not end the list."""
    big = [skill(f"big{i}", 10.0 - i, size=400) for i in range(6)]
    small = skill("small", 1.0, size=40)
    [attachment], skipped = build_skill_attachment(
        state_with(small, *big), budgets=Budgets(), counter=counter, store=store
    )
    kept = [e.name for e in attachment.entries]
    assert counter.count_text(attachment.message.text()) <= 25_000
    assert "small" in kept and "big5" not in kept
    assert [s.name for s in skipped] == [
        name for name in ("big0", "big1", "big2", "big3", "big4", "big5") if name not in kept
    ]
    assert all(s.reason.startswith("over_total_budget:") for s in skipped)


def test_a_tight_total_skips_skills_rather_than_exceeding(counter: TiktokenCounter, store: ccr.Store) -> None:
    budgets = Budgets(skill_tokens=5_000, skills_total=30)
    attachments, skipped = build_skill_attachment(
        state_with(skill("a", 1.0)), budgets=budgets, counter=counter, store=store
    )
    assert attachments == [] and [s.name for s in skipped] == ["a"]


def test_no_skills_no_attachment(counter: TiktokenCounter, store: ccr.Store) -> None:
    assert build_skill_attachment(SessionState(), budgets=Budgets(), counter=counter, store=store) == ([], [])


def test_announced_skill_names_survive_compaction(counter: TiktokenCounter, store: ccr.Store) -> None:
    state = state_with(skill("a", 1.0), skill("b", 2.0, agent="sub"))
    before = list(state.announced_skills)
    build_skill_attachment(state, budgets=Budgets(), counter=counter, store=store)
    mark_announced(state)
    assert state.announced_skills == before == ["a", "b"]


def test_a_cut_skill_tail_is_stored_under_its_session(counter: TiktokenCounter, store: ccr.Store) -> None:
    state = state_with(skill("big", 1.0, size=2_000))
    state.session_id = "s-2"
    [attachment], _ = build_skill_attachment(state, budgets=Budgets(), counter=counter, store=store)
    handle = attachment.entries[0].handle
    assert handle is not None
    metadata = store.record(handle).metadata or {}
    assert metadata["kind"] == "skill_tail" and metadata["session_id"] == "s-2"
