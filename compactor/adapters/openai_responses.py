"""OpenAI Responses input items <-> the Anthropic ``Message`` shape.

- leading ``system``/``developer`` messages are the instructions: kept
  apart, written back first, never compacted;
- a user message is a user message (``input_text`` parts are text blocks);
- an assistant turn is the run of items the model produced: assistant
  ``message`` items (``output_text`` parts are text blocks), ``reasoning``
  and ``function_call`` items (``tool_use`` blocks, arguments parsed from
  their JSON string) become one assistant message, in order;
- a message item's fields beyond role and content (``id``, ``status``)
  ride in a pass-through block before its parts;
- consecutive ``function_call_output`` items become one user message of
  ``tool_result`` blocks, and split again on the way back;
- an ``input_image`` part with an ``image_url`` is an image block (a
  ``data:`` URL as base64 data), so that it is counted as an image;
- parts and items the Anthropic shape has no block for (reasoning, built-in
  tool calls, file inputs, ...) ride in a pass-through block and come
  back untouched; an item's own ``id`` and ``status`` ride along on its block.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from compactor.adapters._convert import (
    PASSTHROUGH,
    Originals,
    block_to_part,
    image_source,
    image_url,
    part_to_block,
    passthrough,
)
from compactor.core.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
)

__all__ = ["OpenAIResponsesAdapter"]

_INSTRUCTION_ROLES = frozenset({"system", "developer"})
_CALL_KEYS = frozenset({"type", "call_id", "name", "arguments", "id"})
_OUTPUT_KEYS = frozenset({"type", "call_id", "output", "id", "is_error"})


class OpenAIResponsesAdapter:
    """Reads and writes one conversation's Responses input items (plain dicts).

    Keep one adapter per conversation: what it read comes back exactly.
    """

    def __init__(self) -> None:
        self.instructions: list[dict[str, Any]] = []
        """The leading system/developer messages, written back first."""
        self._originals: Originals[dict[str, Any]] = Originals()
        self._started = False

    def to_messages(self, items: Sequence[Mapping[str, Any]]) -> list[Message]:
        """Responses input items -> ``Message``s (instructions kept apart)."""
        out: list[Message] = []
        group: list[dict[str, Any]] = []
        group_kind: str | None = None

        def flush() -> None:
            nonlocal group_kind
            if group:
                message = _assistant(group) if group_kind == "assistant" else _outputs(group)
                self._originals.remember(message, group)
                out.append(message)
                group.clear()
            group_kind = None

        for raw in items:
            item = dict(raw)
            kind = _kind(item)
            if not self._started and kind == "message" and item.get("role") in _INSTRUCTION_ROLES:
                self.instructions.append(item)
                continue
            self._started = True
            side = (
                "user"
                if kind == "message" and item.get("role") != "assistant"
                else ("outputs" if kind == "function_call_output" else "assistant")
            )
            if side == "user":
                flush()
                message = _user(item)
                self._originals.remember(message, [item])
                out.append(message)
                continue
            if side != group_kind:
                flush()
                group_kind = side
            group.append(item)
        flush()
        return out

    def retain(self, messages: Sequence[Message]) -> None:
        """Forget what was read for messages no longer in ``messages`` (after a compaction)."""
        self._originals.retain(messages)

    def from_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """``Message``s -> Responses input items, instructions first."""
        return [*(dict(m) for m in self.instructions), *self._originals.restore(messages, _encode)]


def _kind(item: Mapping[str, Any]) -> str:
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"
    return str(kind)


# -- reading -----------------------------------------------------------------


def _text_part(part: Any, kind: str) -> ContentBlock:
    """An ``input_text``/``output_text`` part as a text block (its other fields ride along), else as it is."""
    if isinstance(part, dict) and part.get("type") == kind and isinstance(part.get("text"), str):
        extra = {k: v for k, v in part.items() if k not in ("type", "text")}
        if kind == "output_text" and extra.get("annotations") == []:
            extra.pop("annotations")
            if not extra:
                return TextBlock(text=part["text"])
            extra["annotations"] = []
        if "type" not in extra and "text" not in extra:
            return TextBlock.model_validate({"text": part["text"], **extra})
    if (
        isinstance(part, dict)
        and part.get("type") == "input_image"
        and isinstance(part.get("image_url"), str)
        and set(part) <= {"type", "image_url", "detail"}
    ):
        extra = {"detail": part["detail"]} if "detail" in part else {}
        block = ImageBlock.model_validate({"source": image_source(part["image_url"]), **extra})
        if _encode_part(block, "input_text") == part:
            return block
    return part_to_block(part)


def _message_blocks(item: dict[str, Any], role: str, kind: str) -> list[ContentBlock] | None:
    """A message item as blocks: its fields beyond role and content first (when any), then its parts."""
    content = item.get("content")
    envelope = {k: v for k, v in item.items() if k != "content"}
    plain: dict[str, Any] = {"role": role} if role == "user" else {"type": "message", "role": role}
    if isinstance(content, str):
        if envelope == plain and role == "user":
            return None  # a plain string message: the caller makes it a string message
        return [passthrough(envelope=envelope, text=True), TextBlock(text=content)]
    if not isinstance(content, list):
        return [passthrough(item=item)]
    blocks: list[ContentBlock] = [] if envelope == plain else [passthrough(envelope=envelope)]
    blocks.extend(_text_part(p, kind) for p in content)
    return blocks


def _user(item: dict[str, Any]) -> Message:
    blocks: list[ContentBlock] | None = (
        _message_blocks(item, "user", "input_text") if item.get("role") == "user" else [passthrough(item=item)]
    )
    if blocks is None:
        return Message(role="user", content=item["content"])
    return Message(role="user", content=blocks)


def _assistant(items: list[dict[str, Any]]) -> Message:
    blocks: list[ContentBlock] = []
    for item in items:
        kind = _kind(item)
        if kind == "message" and item.get("role") == "assistant":
            blocks.extend(_message_blocks(item, "assistant", "output_text") or [])
        elif kind == "function_call" and isinstance(item.get("arguments"), str):
            blocks.append(_call(item))
        else:
            blocks.append(passthrough(item=item))
    return Message(role="assistant", content=blocks)


def _call(item: dict[str, Any]) -> ToolUseBlock:
    fields: dict[str, Any] = {k: v for k, v in item.items() if k not in _CALL_KEYS}
    if "id" in item:
        fields["item_id"] = item["id"]
    try:
        parsed = json.loads(item["arguments"])
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        fields["input"] = parsed
    else:
        fields["arguments"] = item["arguments"]
    return ToolUseBlock.model_validate({"id": item.get("call_id", ""), "name": item.get("name", ""), **fields})


def _outputs(items: list[dict[str, Any]]) -> Message:
    blocks: list[ContentBlock] = []
    for item in items:
        output = item.get("output")
        fields: dict[str, Any] = {k: v for k, v in item.items() if k not in _OUTPUT_KEYS}
        if "id" in item:
            fields["item_id"] = item["id"]
        content: Any = output if isinstance(output, str) else [part_to_block(p) for p in output or []]
        blocks.append(
            ToolResultBlock.model_validate(
                {
                    "tool_use_id": item.get("call_id", ""),
                    "content": content,
                    "is_error": item.get("is_error") is True,
                    **fields,
                }
            )
        )
    return Message(role="user", content=blocks)


# -- writing -----------------------------------------------------------------


def _extra_of(block: ContentBlock, key: str) -> Any:
    if isinstance(block, UnknownBlock) and block.type == PASSTHROUGH:
        return (block.model_extra or {}).get(key)
    return None


def _encode(message: Message) -> list[dict[str, Any]]:
    role = message.role
    kind = "output_text" if role == "assistant" else "input_text"
    plain: dict[str, Any] = {"type": "message", "role": role} if role == "assistant" else {"role": role}
    if isinstance(message.content, str):
        if role == "user":
            return [{"role": "user", "content": message.content}]
        return [{**plain, "content": [{"type": kind, "text": message.content, "annotations": []}]}]
    out: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    as_text = False
    for block in message.content:
        envelope = _extra_of(block, "envelope")
        item = _extra_of(block, "item")
        if isinstance(envelope, dict):
            current, as_text = {**envelope, "content": []}, _extra_of(block, "text") is True
            out.append(current)
        elif isinstance(item, dict) or isinstance(block, ToolUseBlock | ToolResultBlock):
            current = None
            if isinstance(item, dict):
                out.append(item)
            else:
                out.append(_encode_call(block) if isinstance(block, ToolUseBlock) else _encode_output(block))  # type: ignore[arg-type]
        else:
            if current is None:
                current, as_text = {**plain, "content": []}, False
                out.append(current)
            if as_text and isinstance(block, TextBlock):
                current["content"] = block.text
            else:
                current["content"].append(_encode_part(block, kind))
    if not out:
        out.append({**plain, "content": []})
    return out


def _encode_part(block: ContentBlock, kind: str) -> Any:
    if kind == "input_text" and isinstance(block, ImageBlock) and set(block.model_extra or {}) <= {"detail"}:
        url = image_url(block.source)
        if url is not None:
            return {"type": "input_image", "image_url": url, **(block.model_extra or {})}
    if isinstance(block, TextBlock):
        extra = dict(block.model_extra or {})
        if kind == "output_text" and not extra:
            extra["annotations"] = []
        return {"type": kind, "text": block.text, **extra}
    return block_to_part(block)


def _encode_call(block: ToolUseBlock) -> dict[str, Any]:
    extra = dict(block.model_extra or {})
    arguments = extra.pop("arguments", None)
    item_id = extra.pop("item_id", None)
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": block.id,
        "name": block.name,
        "arguments": arguments if isinstance(arguments, str) else json.dumps(block.input, ensure_ascii=False),
    }
    if item_id is not None:
        item["id"] = item_id
    return {**item, **extra}


def _encode_output(block: ToolResultBlock) -> dict[str, Any]:
    extra = dict(block.model_extra or {})
    item_id = extra.pop("item_id", None)
    output: Any = block.content if isinstance(block.content, str) else [block_to_part(b) for b in block.content]
    item: dict[str, Any] = {"type": "function_call_output", "call_id": block.tool_use_id, "output": output}
    if item_id is not None:
        item["id"] = item_id
    if block.is_error:
        item["is_error"] = True
    return {**item, **extra}
