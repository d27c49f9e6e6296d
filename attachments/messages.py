"""Anthropic Messages content blocks and messages, as pure pydantic values.

These are the shapes an agent loop sends to the model. A transcript record
carries more (uuids, timestamps, usage); the fields that matter to compaction
are kept here as optional metadata, everything else stays in the transcript
layer. Unknown block types are kept verbatim (``UnknownBlock``) so that
reading and writing a transcript never loses data.

They live here, in the lowest package that builds messages (an attachment is
a message), and ``compactor.core.messages`` re-exports them: the one set of
classes every package shares.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    Tag,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticSerializationError

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


class _Block(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=False)


class TextBlock(_Block):
    type: Literal["text"] = "text"
    text: str


class ThinkingBlock(_Block):
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str | None = None


class RedactedThinkingBlock(_Block):
    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str = ""


class ImageBlock(_Block):
    type: Literal["image"] = "image"
    source: dict[str, Any] = Field(default_factory=dict)


class DocumentBlock(_Block):
    type: Literal["document"] = "document"
    source: dict[str, Any] = Field(default_factory=dict)
    title: str | None = None


class ToolUseBlock(_Block):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


def _block_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in _KNOWN_TYPES else "unknown"


class UnknownBlock(_Block):
    """A block type this version does not model; kept as-is.

    As-is means byte for byte: it dumps with its keys in the order they were
    read and keeps its ``null`` values, even under ``exclude_none``. A
    provider's own blocks (an Anthropic ``compaction`` block with
    ``"content": null`` for a failed compaction, a signed one) must go back
    exactly as they came.
    """

    type: str
    _order: tuple[str, ...] | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler: Any) -> Any:
        block = handler(data)
        if isinstance(data, dict) and isinstance(block, UnknownBlock):
            block._order = tuple(data)
        return block

    @model_serializer(mode="wrap")
    def _as_read(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        extra = self.model_extra or {}
        order = self._order or ("type", *extra)
        out: dict[str, Any] = {}
        for key in order:
            if key in data:
                out[key] = data.pop(key)
            elif key in extra and extra[key] is None and key not in (info.exclude or ()):
                out[key] = None
        out.update(data)
        return out


ToolResultContent = Annotated[
    Annotated[TextBlock, Tag("text")]
    | Annotated[ImageBlock, Tag("image")]
    | Annotated[DocumentBlock, Tag("document")]
    | Annotated[ThinkingBlock, Tag("thinking")]
    | Annotated[RedactedThinkingBlock, Tag("redacted_thinking")]
    | Annotated[ToolUseBlock, Tag("tool_use")]
    | Annotated[UnknownBlock, Tag("unknown")]
    | Annotated["ToolResultBlock", Tag("tool_result")],
    Discriminator(_block_tag),
]


class ToolResultBlock(_Block):
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str | list[ToolResultContent] = ""
    is_error: bool = False

    def text(self) -> str:
        """The result's text: the string itself, or its text blocks joined by newlines."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))


ContentBlock = ToolResultContent

_API_FIELDS = {"role", "content"}
"""The fields of a message that the Messages API takes."""

_KNOWN_TYPES = frozenset({"text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result"})


class Usage(BaseModel):
    """The token usage an assistant answer recorded."""

    model_config = ConfigDict(extra="allow")

    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        """Context size this answer saw: input + cache creation + cache read + output."""
        return (
            (self.input_tokens or 0)
            + (self.cache_creation_input_tokens or 0)
            + (self.cache_read_input_tokens or 0)
            + (self.output_tokens or 0)
        )


class Message(BaseModel):
    """One message in the Anthropic Messages shape, plus compaction metadata.

    ``uuid``, ``timestamp``, ``message_id``, ``usage`` and the flags come from
    a transcript when there is one; an agent loop may leave them empty.
    """

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str | list[ContentBlock]
    uuid: str | None = None
    timestamp: str | None = None
    message_id: str | None = None
    model: str | None = None
    usage: Usage | None = None
    is_meta: bool = False
    is_compact_summary: bool = False
    agent_id: str | None = None

    def blocks(self) -> list[ContentBlock]:
        """The content as a list of blocks (a plain string becomes one text block)."""
        if isinstance(self.content, str):
            return [TextBlock(text=self.content)]
        return list(self.content)

    def text(self) -> str:
        """All text blocks joined by newlines (no tool calls or results)."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))

    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.blocks() if isinstance(b, ToolUseBlock)]

    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.blocks() if isinstance(b, ToolResultBlock)]

    def to_api(self) -> dict[str, Any]:
        """The ``{"role", "content"}`` dict an Anthropic Messages request takes."""
        content: Any = (
            self.content
            if isinstance(self.content, str)
            else [b.model_dump(mode="json", exclude_none=True) for b in self.content]
        )
        return {"role": self.role, "content": content}

    def canonical_json(self) -> str:
        """A JSON form of the API shape that does not depend on key order (keys sorted): an identity."""
        return json.dumps(self.to_api(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    def api_json(self) -> str:
        """The API shape (``to_api``) as compact JSON, keys in the models' field order: a stored head's line.

        Written by pydantic's serializer, about twice as fast as ``json.dumps``
        over ``to_api()`` and the same text; content with lone surrogates,
        which that serializer refuses, goes through ``json.dumps``.
        """
        try:
            return self.model_dump_json(include=_API_FIELDS, exclude_none=True)
        except PydanticSerializationError:
            return json.dumps(self.to_api(), ensure_ascii=False, separators=(",", ":"))
