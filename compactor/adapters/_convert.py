"""What every adapter shares: exact part <-> block mapping, and the originals it hands back.

A framework part that is an Anthropic block already (a ``{"type": "text",
"text": ...}`` dict, a ``thinking`` block, ...) becomes that block when it
dumps back to exactly the same dict; anything else is kept whole in a
pass-through block (``PASSTHROUGH``) and comes back untouched.

``Originals`` remembers, for each message an adapter read, the framework
objects it came from. Writing messages back, a message that is unchanged
(same role and content) gives those objects back as they were, with every
field the Anthropic shape has no place for (ids, timestamps, usage,
provider details); a new or changed message (a summary, an attachment, a
deduplicated tool result) is built from its blocks.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter, ValidationError

from compactor.core.messages import ContentBlock, ImageBlock, Message, ToolResultBlock, UnknownBlock

__all__ = [
    "PASSTHROUGH",
    "Originals",
    "block_to_chat_part",
    "block_to_part",
    "chat_part_to_block",
    "dump_block",
    "image_source",
    "image_url",
    "message_key",
    "part_to_block",
    "passthrough",
    "passthrough_message",
    "passthrough_part",
]

PASSTHROUGH = "compactor_passthrough"
"""Type of the block that carries a framework part this version does not map, as it was."""

_DATA_URL = re.compile(r"^data:([^;,]+);base64,(.*)$", re.DOTALL)
_BLOCK: TypeAdapter[ContentBlock] = TypeAdapter(ContentBlock)
_BLOCK.rebuild(_types_namespace={"ToolResultBlock": ToolResultBlock})

T = TypeVar("T")


def dump_block(block: ContentBlock) -> dict[str, Any]:
    """A block as the dict an Anthropic request carries."""
    return block.model_dump(mode="json", exclude_none=True)


def part_to_block(part: Any) -> ContentBlock:
    """A framework content part as a block: the Anthropic block it is exactly, else a pass-through."""
    if isinstance(part, dict) and isinstance(part.get("type"), str) and part["type"] != PASSTHROUGH:
        try:
            block = _BLOCK.validate_python(part)
        except ValidationError:
            pass
        else:
            if dump_block(block) == part:
                return block
    return passthrough(part=part)


def passthrough(**fields: Any) -> UnknownBlock:
    """A pass-through block carrying ``fields`` as they are."""
    return UnknownBlock.model_validate({"type": PASSTHROUGH, **fields})


def block_to_part(block: ContentBlock) -> Any:
    """The inverse of ``part_to_block``."""
    if isinstance(block, UnknownBlock) and block.type == PASSTHROUGH:
        return (block.model_extra or {}).get("part")
    return dump_block(block)


def passthrough_part(block: ContentBlock) -> tuple[bool, Any]:
    """(True, part) when ``block`` carries a framework part as it was."""
    if isinstance(block, UnknownBlock) and block.type == PASSTHROUGH:
        return True, (block.model_extra or {}).get("part")
    return False, None


def passthrough_message(block: ContentBlock) -> dict[str, Any] | None:
    """The whole framework message a pass-through block carries (a role the Anthropic shape lacks)."""
    if isinstance(block, UnknownBlock) and block.type == PASSTHROUGH:
        message = (block.model_extra or {}).get("message")
        return message if isinstance(message, dict) else None
    return None


def image_source(url: str) -> dict[str, Any]:
    """The Anthropic image source for an image URL (a ``data:`` URL becomes base64 data)."""
    match = _DATA_URL.match(url)
    if match is not None:
        return {"type": "base64", "media_type": match.group(1), "data": match.group(2)}
    return {"type": "url", "url": url}


def image_url(source: dict[str, Any]) -> str | None:
    """The URL for an Anthropic image source (base64 data as a ``data:`` URL), or None for other kinds."""
    if (
        source.get("type") == "base64"
        and isinstance(source.get("media_type"), str)
        and isinstance(source.get("data"), str)
        and set(source) == {"type", "media_type", "data"}
    ):
        return f"data:{source['media_type']};base64,{source['data']}"
    if source.get("type") == "url" and isinstance(source.get("url"), str) and set(source) == {"type", "url"}:
        return str(source["url"])
    return None


def chat_part_to_block(part: Any) -> ContentBlock:
    """A Chat Completions content part as a block: ``image_url`` parts as image blocks, else ``part_to_block``."""
    if isinstance(part, dict) and part.get("type") == "image_url" and isinstance(part.get("image_url"), dict):
        inner = part["image_url"]
        if isinstance(inner.get("url"), str) and set(inner) <= {"url", "detail"}:
            extra = {"detail": inner["detail"]} if "detail" in inner else {}
            block = ImageBlock.model_validate({"source": image_source(inner["url"]), **extra})
            if block_to_chat_part(block) == part:
                return block
    return part_to_block(part)


def block_to_chat_part(block: ContentBlock) -> Any:
    """The inverse of ``chat_part_to_block``."""
    if isinstance(block, ImageBlock) and set(block.model_extra or {}) <= {"detail"}:
        url = image_url(block.source)
        if url is not None:
            return {"type": "image_url", "image_url": {"url": url, **(block.model_extra or {})}}
    return block_to_part(block)


def message_key(message: Message) -> str:
    """What makes two messages the same for ``Originals``: role and API content."""
    return message.role + ":" + message.canonical_json()


class Originals(Generic[T]):
    """The framework objects each message read came from (see the module docstring)."""

    def __init__(self) -> None:
        self._by_key: dict[str, list[list[T]]] = defaultdict(list)

    def remember(self, message: Message, objects: Sequence[T]) -> None:
        self._by_key[message_key(message)].append(list(objects))

    def retain(self, messages: Sequence[Message]) -> None:
        """Forget the originals of messages no longer in ``messages`` (a compaction dropped them)."""
        wanted: dict[str, int] = defaultdict(int)
        for message in messages:
            wanted[message_key(message)] += 1
        self._by_key = defaultdict(
            list, {key: known[len(known) - wanted[key] :] for key, known in self._by_key.items() if wanted.get(key)}
        )

    def restore(self, messages: Sequence[Message], encode: Callable[[Message], Sequence[T]]) -> list[T]:
        """``messages`` as framework objects: each as the objects it was read from (``match``), else ``encode``d."""
        out: list[T] = []
        for message, original in zip(messages, self.match(messages), strict=True):
            out.extend(original if original is not None else encode(message))
        return out

    def match(self, messages: Sequence[Message]) -> list[list[T] | None]:
        """For each message, the objects it came from, or None when it is new or changed.

        Equal messages take their originals in order; when fewer are written
        than were read (a compaction dropped the older ones), the latest
        originals are the ones matched.
        """
        wanted: dict[str, int] = defaultdict(int)
        keys = [message_key(m) for m in messages]
        for key in keys:
            wanted[key] += 1
        taken: dict[str, int] = defaultdict(int)
        out: list[list[T] | None] = []
        for key in keys:
            known = self._by_key.get(key, [])
            start = max(0, len(known) - wanted[key])
            index = start + taken[key]
            taken[key] += 1
            out.append(list(known[index]) if index < len(known) else None)
        return out
