"""Task status: one attachment per background agent still running or not yet collected."""

from __future__ import annotations

from attachments import task_status_attachments
from compactor.core.session import BackgroundTask, SessionState
from compactor.core.tokens import TiktokenCounter


def test_only_running_and_uncollected_tasks_get_an_attachment(counter: TiktokenCounter) -> None:
    state = SessionState(
        tasks={
            "run": BackgroundTask(id="run", description="run the tests", agent_type="tester"),
            "done": BackgroundTask(id="done", description="lint", status="completed"),
            "failed": BackgroundTask(id="failed", description="build", status="failed"),
            "read": BackgroundTask(id="read", description="old", status="completed", collected=True),
        }
    )
    attachments = task_status_attachments(state, counter)
    assert [a.entries[0].name for a in attachments] == ["run", "done", "failed"]
    assert all(a.type == "task_status" and a.message.is_meta for a in attachments)
    running, done, failed = (a.message.text() for a in attachments)
    assert "still running" in running and "(tester)" in running and "run the tests" in running
    assert "finished (completed)" in done and "not been read" in done
    assert "finished (failed)" in failed


def test_no_tasks_no_attachments(counter: TiktokenCounter) -> None:
    assert task_status_attachments(SessionState(), counter) == []
