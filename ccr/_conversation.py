"""A stored conversation shown to a model: each message's blocks as text, tool outputs raw.

The recovery tool answers with this when every row it returns is a stored
message (a compaction's head is stored as one message per JSON line), so a
model reads what was said and what each tool returned, not JSON.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["message_of", "render_rows"]


def message_of(row: bytes) -> dict[str, Any] | None:
    """The message a stored row holds (``{"role", "content"}``, or a transcript entry's), else None."""
    stripped = row.strip()
    if not stripped.startswith(b"{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("message"), dict):
        value = value["message"]  # a transcript entry
    if isinstance(value, dict) and isinstance(value.get("role"), str) and "content" in value:
        return value
    return None


def render_rows(data: bytes, first_line: int | None) -> str:
    """Stored rows as text: each stored message as its blocks (tool outputs raw), other rows as they are.

    ``first_line`` numbers the first row (None: not known, shown as ``?``).
    """
    from ccr.templating import render_text

    out: list[str] = []
    number = first_line
    for row in data.splitlines(keepends=True):
        message = message_of(row)
        if message is None:
            out.append(row.decode("utf-8", errors="replace"))
            continue
        out.append(
            render_text(
                "ccr",
                "recovered_message.j2",
                line=number or "?",
                role=message["role"],
                blocks=_blocks(message["content"]),
            )
        )
        if number is not None:
            number += 1
    return "".join(out)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"kind": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            blocks.append({"kind": "text", "text": str(block.get("text", ""))})
        elif kind == "tool_use":
            blocks.append(
                {
                    "kind": "tool_use",
                    "name": block.get("name", ""),
                    "id": block.get("id", ""),
                    "input": json.dumps(block.get("input", {}), ensure_ascii=False),
                }
            )
        elif kind == "tool_result":
            blocks.append(
                {
                    "kind": "tool_result",
                    "id": block.get("tool_use_id", ""),
                    "error": bool(block.get("is_error")),
                    "text": _result_text(block.get("content")),
                }
            )
        elif kind == "thinking":
            blocks.append({"kind": "thinking", "text": str(block.get("thinking", ""))})
        else:
            blocks.append({"kind": str(kind), "text": ""})
    return blocks


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            if isinstance(part, dict) and part.get("type") == "text"
            else f"[{part.get('type')}]"
            if isinstance(part, dict)
            else str(part)
            for part in content
        )
    return "" if content is None else json.dumps(content, ensure_ascii=False)
