"""Plan attachments: the plan file's content, and the plan-mode reminder.

A plan written before the latest request is marked with its age (``plan_age``):
it may belong to an earlier task, and is not presented as the live plan.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from attachments.attachment import Attachment
from attachments.entries import AttachmentEntry
from attachments.exclusions import normalize_path
from attachments.messages import Message, ToolResultBlock
from attachments.render import reminder_message, render_reminder
from attachments.state import AttachmentState
from ccr.tokens import TextCounter

__all__ = ["PlanAge", "plan_age", "plan_file_attachment", "plan_mode_attachment"]

_PLAN_WRITERS = frozenset({"Write", "Edit", "MultiEdit"})


class PlanAge(BaseModel):
    """How long ago a plan was written, when a typed request came after it.

    ``messages`` and ``requests`` count the messages and the typed requests since
    the plan was last written; both are None when it was written before the
    messages being compacted (an earlier compaction dropped that write).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: int | None
    requests: int | None


def plan_age(history: Sequence[Message], plan_path: str, cwd: str | None = None) -> PlanAge | None:
    """``PlanAge`` when the latest typed request in ``history`` came after the plan was last written
    (or ``ExitPlanMode`` last presented it); None when the plan is as new as the request."""
    target = normalize_path(plan_path, cwd)
    written: int | None = None
    last_request: int | None = None
    for position, message in enumerate(history):
        if _is_typed_request(message):
            last_request = position
        for use in message.tool_uses():
            path = use.input.get("file_path")
            if use.name == "ExitPlanMode" or (
                use.name in _PLAN_WRITERS and isinstance(path, str) and normalize_path(path, cwd) == target
            ):
                written = position
    if last_request is None or (written is not None and written > last_request):
        return None
    if written is None:
        return PlanAge(messages=None, requests=None)
    requests = sum(1 for m in history[written + 1 :] if _is_typed_request(m))
    return PlanAge(messages=len(history) - 1 - written, requests=requests)


def plan_file_attachment(
    state: AttachmentState, counter: TextCounter, *, history: Sequence[Message] = ()
) -> Attachment | None:
    """The plan's path and content, when the session has a plan; else ``None``. ``history`` (the
    conversation being compacted) says whether the plan came before the latest request."""
    if state.plan is None:
        return None
    age = plan_age(history, state.plan.path, state.cwd)
    text = render_reminder("plan_file.j2", path=state.plan.path, content=state.plan.content.rstrip("\n"), age=age)
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


def _is_typed_request(message: Message) -> bool:
    """Whether ``message`` is something the user typed (not a tool result, reminder, command or summary)."""
    if message.role != "user" or message.is_meta or message.is_compact_summary:
        return False
    if any(isinstance(block, ToolResultBlock) for block in message.blocks()):
        return False
    text = message.text().strip()
    return bool(text) and not text.startswith(("<", "[Request interrupted"))
