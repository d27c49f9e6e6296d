"""Task status attachments: background agents the conversation still has to hear from."""

from __future__ import annotations

from attachments.attachment import Attachment
from attachments.entries import AttachmentEntry
from attachments.render import reminder_message, render_reminder
from attachments.state import AttachmentState, BackgroundTask
from ccr.tokens import TextCounter

__all__ = ["needs_status", "task_status_attachments"]


def needs_status(task: BackgroundTask) -> bool:
    """Whether the model must be reminded of ``task``: still running, or finished but not collected."""
    return task.status == "running" or not task.collected


def task_status_attachments(state: AttachmentState, counter: TextCounter) -> list[Attachment]:
    """One attachment per background task still running or finished but not collected."""
    attachments: list[Attachment] = []
    for task in state.tasks.values():
        if not needs_status(task):
            continue
        text = render_reminder("task_status.j2", task=task)
        tokens = counter.count_text(text)
        attachments.append(
            Attachment(
                type="task_status",
                message=reminder_message(text),
                tokens=tokens,
                entries=[AttachmentEntry(type="task_status", name=task.id, tokens=tokens)],
            )
        )
    return attachments
