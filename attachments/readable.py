"""A message as a person reads it: plain text, tool calls and results labelled.

Used where a compacted context is shown to a person (``compactor show``, the
HTML report), and to match file activity against the preserved tail's text;
never for what the model sees: the model gets the messages themselves.
"""

from __future__ import annotations

import json

from attachments.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = ["readable_text"]


def readable_text(message: Message) -> str:
    """Every block of ``message`` as text, one block after another.

    Text is verbatim; a tool call reads ``[tool call NAME] {input}``; a
    result ``[tool result]`` (or ``[tool error]``) then its text; images,
    documents and redacted thinking are named, not shown.
    """
    if isinstance(message.content, str):
        return message.content
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            parts.append(f"[tool call {block.name}] {json.dumps(block.input, ensure_ascii=False, sort_keys=True)}")
        elif isinstance(block, ToolResultBlock):
            label = "[tool error]" if block.is_error else "[tool result]"
            parts.append(f"{label}\n{block.text()}")
        elif isinstance(block, ThinkingBlock):
            parts.append(f"[thinking]\n{block.thinking}")
        elif isinstance(block, RedactedThinkingBlock):
            parts.append("[redacted thinking]")
        elif isinstance(block, ImageBlock):
            parts.append("[image]")
        elif isinstance(block, DocumentBlock):
            parts.append("[document]")
        else:
            parts.append(f"[{block.type} block]")
    return "\n\n".join(parts)
