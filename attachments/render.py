"""Rendering: jinja2 templates of the package, wrapped as ``<system-reminder>`` meta messages."""

from __future__ import annotations

from typing import Any

from attachments.messages import Message
from ccr.templating import environment

__all__ = ["reminder_message", "render_body", "render_reminder", "wrap"]


def render_body(template: str, **context: Any) -> str:
    """Render ``attachments/templates/<template>`` (no wrapper, surrounding blank lines trimmed)."""
    return environment("attachments").get_template(template).render(**context).strip("\n")


def render_reminder(template: str, **context: Any) -> str:
    """Render a template and wrap it in ``<system-reminder>`` tags: an attachment's full text."""
    return wrap(render_body(template, **context))


def wrap(body: str) -> str:
    """``body`` inside ``<system-reminder>`` tags."""
    return environment("attachments").get_template("reminder.j2").render(body=body)


def reminder_message(text: str) -> Message:
    """A user-role meta message carrying ``text`` (already wrapped)."""
    return Message(role="user", content=text, is_meta=True)
