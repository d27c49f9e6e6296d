"""Plan attachments: the plan file's content, and the plan-mode reminder."""

from __future__ import annotations

from attachments.attachment import Attachment
from attachments.entries import AttachmentEntry
from attachments.render import reminder_message, render_reminder
from attachments.state import AttachmentState
from ccr.tokens import TextCounter

__all__ = ["plan_file_attachment", "plan_mode_attachment"]


def plan_file_attachment(state: AttachmentState, counter: TextCounter) -> Attachment | None:
    """The plan's path and content, when the session has a plan; else ``None``."""
    if state.plan is None:
        return None
    text = render_reminder("plan_file.j2", path=state.plan.path, content=state.plan.content.rstrip("\n"))
    tokens = counter.count_text(text)
    return Attachment(
        type="plan_file",
        message=reminder_message(text),
        tokens=tokens,
        entries=[AttachmentEntry(type="plan_file", path=state.plan.path, tokens=tokens)],
    )


def plan_mode_attachment(state: AttachmentState, counter: TextCounter) -> Attachment | None:
    """The full plan-mode reminder, when the session is in plan mode; else ``None``."""
    if not state.in_plan_mode:
        return None
    plan_path = state.plan.path if state.plan is not None else None
    text = render_reminder("plan_mode.j2", plan_path=plan_path, plan_exists=state.plan is not None)
    tokens = counter.count_text(text)
    return Attachment(
        type="plan_mode",
        message=reminder_message(text),
        tokens=tokens,
        entries=[AttachmentEntry(type="plan_mode", path=plan_path, tokens=tokens)],
    )
