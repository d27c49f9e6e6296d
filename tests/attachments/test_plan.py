"""Plan attachments: the plan file when a plan exists, the full reminder in plan mode."""

from __future__ import annotations

from attachments import plan_file_attachment, plan_mode_attachment
from compactor.core.session import Plan, SessionState
from compactor.core.tokens import TiktokenCounter


def test_a_plan_is_attached_with_its_path_and_content(counter: TiktokenCounter) -> None:
    state = SessionState(plan=Plan(path="/r/.claude/plans/p.md", content="1. Read\n2. Fix\n"))
    attachment = plan_file_attachment(state, counter)
    assert attachment is not None and attachment.type == "plan_file"
    text = attachment.message.text()
    assert "/r/.claude/plans/p.md" in text and "1. Read\n2. Fix" in text
    assert attachment.entries[0].path == "/r/.claude/plans/p.md"
    assert plan_mode_attachment(state, counter) is None


def test_no_plan_no_plan_file_attachment(counter: TiktokenCounter) -> None:
    assert plan_file_attachment(SessionState(), counter) is None


def test_plan_mode_gives_the_full_reminder_naming_the_plan_file(counter: TiktokenCounter) -> None:
    state = SessionState(permission_mode="plan", plan=Plan(path="/r/plan.md", content="x"))
    attachment = plan_mode_attachment(state, counter)
    assert attachment is not None and attachment.type == "plan_mode"
    text = attachment.message.text()
    assert "Plan mode is on" in text and "Write the plan to /r/plan.md" in text and "approve" in text
    without_plan = plan_mode_attachment(SessionState(permission_mode="plan"), counter)
    assert without_plan is not None and "Write the plan as your answer" in without_plan.message.text()
