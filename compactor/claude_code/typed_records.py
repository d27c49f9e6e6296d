"""What the user typed, read from a transcript's raw records (the status line reads JSON, not models).

The same judgement as ``compactor.summarizers.prompts.typed`` and the session ledger, on plain
dicts, so that the status line can stay light: ``typed_text`` for a user record, and
``refusal_reasons`` for what the user typed when turning a tool call down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compactor.core.client_text import NOT_TYPED, REFUSAL_REASON, REFUSED, REMINDER, shell_input, slash_command

__all__ = ["refusal_reasons", "typed_text"]


def typed_text(record: Mapping[str, Any], message: Mapping[str, Any]) -> str | None:
    """What the user typed (``compactor.summarizers.prompts.typed``), or None."""
    content = message.get("content", "")
    if record.get("isMeta") is True or record.get("isCompactSummary") is True:
        return None
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        text = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    elif isinstance(content, str):
        text = content
    else:
        return None
    text = REMINDER.sub("", text).strip()
    if not text or text.startswith(NOT_TYPED):
        return None
    return slash_command(text) or shell_input(text) or text


def refusal_reasons(content: list[Any]) -> list[str]:
    """What the user typed when turning a call down (the ledger counts it as one of their messages)."""
    found = []
    for block in content:
        if not (isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error")):
            continue
        text = block.get("content")
        if isinstance(text, list):
            text = "\n".join(str(b.get("text", "")) for b in text if isinstance(b, dict) and b.get("type") == "text")
        reason = REFUSAL_REASON.search(text) if isinstance(text, str) and text.lstrip().startswith(REFUSED) else None
        if reason is not None and reason.group(1).strip():
            found.append(reason.group(1).strip())
    return found
