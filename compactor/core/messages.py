"""Anthropic Messages content blocks and messages, as pure pydantic values: ``attachments.messages``'s.

They are defined in ``attachments.messages``, the lowest package that
builds messages, and re-exported here under the names compactor has always
had for them (``from compactor.core.messages import Message``); each class
exists once.
"""

from __future__ import annotations

from attachments.messages import (
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolResultContent,
    ToolUseBlock,
    UnknownBlock,
    Usage,
)

__all__ = [
    "ContentBlock",
    "DocumentBlock",
    "ImageBlock",
    "Message",
    "RedactedThinkingBlock",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolResultContent",
    "ToolUseBlock",
    "UnknownBlock",
    "Usage",
]
