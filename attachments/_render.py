"""Rendering: jinja2 templates of the package, wrapped as ``<system-reminder>`` meta messages."""

from __future__ import annotations

import functools
from typing import Any

import jinja2

from compactor.messages import Message

__all__ = ["reminder_message", "render_body", "render_reminder", "wrap"]


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("attachments", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_body(template: str, **context: Any) -> str:
    """Render ``attachments/templates/<template>`` (no wrapper, surrounding blank lines trimmed)."""
    return _environment().get_template(template).render(**context).strip("\n")


def render_reminder(template: str, **context: Any) -> str:
    """Render a template and wrap it in ``<system-reminder>`` tags: an attachment's full text."""
    return wrap(render_body(template, **context))


def wrap(body: str) -> str:
    """``body`` inside ``<system-reminder>`` tags."""
    return _environment().get_template("reminder.j2").render(body=body)


def reminder_message(text: str) -> Message:
    """A user-role meta message carrying ``text`` (already wrapped)."""
    return Message(role="user", content=text, is_meta=True)
