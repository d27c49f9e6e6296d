"""What the user typed, read from a transcript's raw records (the status line reads JSON, not models).

The same judgement as ``compactor.summarizers.prompts.typed`` and the session ledger, on plain
dicts, so that the status line can stay light: ``typed_text`` for a user record, and
``refusal_reasons`` for what the user typed when turning a tool call down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compactor.core.client_text import (
    BASH_INPUT,
    COMMAND_ARGS,
    COMMAND_NAME,
    NOT_TYPED,
    REFUSAL_REASON,
    REFUSED,
    REMINDER,
)

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
    name = COMMAND_NAME.search(text)
    if name is not None and text.lstrip().startswith(("<command-name>", "<command-message>")):
        command = name.group(1).strip()
        command = command if command.startswith("/") else "/" + command
        args = COMMAND_ARGS.search(text)
        return f"{command} {args.group(1).strip() if args else ''}".strip()
    shell = BASH_INPUT.fullmatch(text)
    if shell is not None:
        return "!" + shell.group(1).strip()
    return text


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
