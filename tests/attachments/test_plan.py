"""Plan attachments: the plan file when a plan exists, the full reminder in plan mode."""

from __future__ import annotations

from attachments import PlanAge, plan_age, plan_file_attachment, plan_mode_attachment
from compactor.core.messages import Message, ToolUseBlock
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


def _write_plan(path: str) -> Message:
    return Message(role="assistant", content=[ToolUseBlock(id="w", name="Write", input={"file_path": path})])


def test_a_plan_written_before_the_latest_request_is_marked_with_its_age(counter: TiktokenCounter) -> None:
    state = SessionState(plan=Plan(path="/r/plan.md", content="1. Old task\n"))
    history = [
        Message(role="user", content="Plan the cache"),
        _write_plan("/r/plan.md"),
        Message(role="assistant", content="Planned."),
        Message(role="user", content="Now fix the login bug"),
        Message(role="assistant", content="Looking."),
    ]
    assert plan_age(history, "/r/plan.md") == PlanAge(messages=3, requests=1)
    attachment = plan_file_attachment(state, counter, history=history)
    assert attachment is not None
    text = attachment.message.text()
    assert "written before your latest request (3 messages ago; 1 typed request since)" in text
    assert "keep it up to date" not in text


def test_a_plan_written_after_the_latest_request_is_the_live_plan(counter: TiktokenCounter) -> None:
    history = [Message(role="user", content="Plan the cache"), _write_plan("/r/plan.md")]
    assert plan_age(history, "/r/plan.md") is None
    state = SessionState(plan=Plan(path="/r/plan.md", content="1. Cache\n"))
    attachment = plan_file_attachment(state, counter, history=history)
    assert attachment is not None and "keep it up to date" in attachment.message.text()


def test_a_plan_whose_writing_an_earlier_compaction_dropped_is_older_than_a_request_since() -> None:
    history = [Message(role="user", content="Summary", is_compact_summary=True), Message(role="user", content="Go on")]
    assert plan_age(history, "/r/plan.md") == PlanAge(messages=None, requests=None)
    assert plan_age(history[:1], "/r/plan.md") is None, "a summary is not a request"
