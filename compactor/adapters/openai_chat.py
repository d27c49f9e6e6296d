"""OpenAI Chat Completions messages <-> the Anthropic ``Message`` shape.

- leading ``system``/``developer`` messages are the instructions: they are
  kept apart and always written back first, never compacted;
- ``user`` content (a string or parts) maps part by part; an assistant's
  ``tool_calls`` become ``tool_use`` blocks (arguments parsed from their JSON
  string; arguments that are not a JSON object are kept as the string);
- consecutive ``tool`` messages become one user message of ``tool_result``
  blocks, as the Anthropic shape has them, and split again on the way back;
- an ``image_url`` part is an image block (a ``data:`` URL as base64 data),
  so that it is counted as an image, not as text;
- parts the Anthropic shape has no block for (``input_audio``, ``file``,
  ``refusal``) and messages of other roles ride in a pass-through block and
  come back untouched.

Anthropic-only content (thinking blocks, an error flag on a tool result)
written to this shape stays as extra keys, so that it reads back the same.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from compactor.adapters._convert import (
    Originals,
    block_to_chat_part,
    block_to_part,
    chat_part_to_block,
    part_to_block,
    passthrough,
    passthrough_message,
)
from compactor.core.messages import ContentBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = ["OpenAIChatAdapter"]

_INSTRUCTION_ROLES = frozenset({"system", "developer"})
_TOOL_CALL_KEYS = frozenset({"id", "type", "function"})


class OpenAIChatAdapter:
    """Reads and writes one conversation's Chat Completions messages (plain dicts).

    Keep one adapter per conversation: what it read comes back exactly.
    """

    def __init__(self) -> None:
        self.instructions: list[dict[str, Any]] = []
        """The leading system/developer messages, written back first."""
        self._originals: Originals[dict[str, Any]] = Originals()
        self._started = False

    def to_messages(self, items: Sequence[Mapping[str, Any]]) -> list[Message]:
        """Chat Completions messages -> ``Message``s (instructions kept apart)."""
        out: list[Message] = []
        tools: list[dict[str, Any]] = []

        def flush_tools() -> None:
            if tools:
                message = Message(role="user", content=[_tool_result(t) for t in tools])
                self._originals.remember(message, tools)
                out.append(message)
                tools.clear()

        for raw in items:
            item = dict(raw)
            role = item.get("role")
            if not self._started and role in _INSTRUCTION_ROLES:
                self.instructions.append(item)
                continue
            self._started = True
            if role == "tool":
                tools.append(item)
                continue
            flush_tools()
            message = _message(item)
            self._originals.remember(message, [item])
            out.append(message)
        flush_tools()
        return out

    def retain(self, messages: Sequence[Message]) -> None:
        """Forget what was read for messages no longer in ``messages`` (after a compaction)."""
        self._originals.retain(messages)

    def from_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """``Message``s -> Chat Completions messages, instructions first."""
        return [*(dict(m) for m in self.instructions), *self._originals.restore(messages, _encode)]


# -- reading -----------------------------------------------------------------


def _message(item: dict[str, Any]) -> Message:
    role = item.get("role")
    content = item.get("content")
    if role == "user" and isinstance(content, str | list):
        prompt = content if isinstance(content, str) else [chat_part_to_block(p) for p in content]
        return Message(role="user", content=prompt)
    if role == "assistant":
        calls = item.get("tool_calls") or []
        if isinstance(content, str) and not calls:
            return Message(role="assistant", content=content)
        blocks: list[ContentBlock] = []
        if isinstance(content, str):
            blocks.append(TextBlock(text=content))
        elif isinstance(content, list):
            blocks.extend(part_to_block(p) for p in content)
        blocks.extend(_tool_use(call) for call in calls)
        return Message(role="assistant", content=blocks)
    return Message(role="user", content=[passthrough(message=item)])


def _tool_use(call: dict[str, Any]) -> ToolUseBlock:
    function = call.get("function")
    if call.get("type") != "function" or not isinstance(function, dict):
        kind = call.get("type")
        name = call.get(kind, {}).get("name", "") if isinstance(kind, str) and isinstance(call.get(kind), dict) else ""
        return ToolUseBlock.model_validate({"id": str(call.get("id", "")), "name": name, "openai_tool_call": call})
    extra = {k: v for k, v in call.items() if k not in _TOOL_CALL_KEYS}
    arguments = function.get("arguments", "")
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return ToolUseBlock(id=call["id"], name=function.get("name", ""), input=parsed, **extra)
    return ToolUseBlock.model_validate(
        {"id": call["id"], "name": function.get("name", ""), "arguments": arguments, **extra}
    )


def _tool_result(item: dict[str, Any]) -> ToolResultBlock:
    content = item.get("content")
    if isinstance(content, list):
        return ToolResultBlock(
            tool_use_id=item.get("tool_call_id", ""),
            content=[chat_part_to_block(p) for p in content],
            is_error=item.get("is_error") is True,
        )
    return ToolResultBlock(
        tool_use_id=item.get("tool_call_id", ""),
        content=content if isinstance(content, str) else "",
        is_error=item.get("is_error") is True,
    )


# -- writing -----------------------------------------------------------------


def _encode(message: Message) -> list[dict[str, Any]]:
    if message.role == "assistant":
        return [_assistant(message)]
    if isinstance(message.content, str):
        return [{"role": "user", "content": message.content}]
    out: list[dict[str, Any]] = []
    parts: list[Any] = []
    wrote_user = False
    for block in message.content:
        whole = passthrough_message(block)
        if isinstance(block, ToolResultBlock) or whole is not None:
            if parts:
                out.append({"role": "user", "content": parts})
                parts, wrote_user = [], True
            out.append(whole if whole is not None else _tool_message(block))  # type: ignore[arg-type]
        else:
            parts.append(block_to_chat_part(block))
    if parts or (not out and not wrote_user):
        out.append({"role": "user", "content": parts})
    return out


def _tool_message(block: ToolResultBlock) -> dict[str, Any]:
    content: Any = block.content if isinstance(block.content, str) else [block_to_chat_part(b) for b in block.content]
    message: dict[str, Any] = {"role": "tool", "tool_call_id": block.tool_use_id, "content": content}
    if block.is_error:
        message["is_error"] = True
    return message


def _assistant(message: Message) -> dict[str, Any]:
    if isinstance(message.content, str):
        return {"role": "assistant", "content": message.content}
    parts = [block_to_part(b) for b in message.content if not isinstance(b, ToolUseBlock)]
    calls = [_tool_call(b) for b in message.content if isinstance(b, ToolUseBlock)]
    out: dict[str, Any] = {"role": "assistant", "content": parts or None}
    if calls:
        out["tool_calls"] = calls
    return out


def _tool_call(block: ToolUseBlock) -> dict[str, Any]:
    extra = dict(block.model_extra or {})
    if "openai_tool_call" in extra:
        return dict(extra["openai_tool_call"])
    arguments = extra.pop("arguments", None)
    if not isinstance(arguments, str):
        arguments = json.dumps(block.input, ensure_ascii=False)
    return {"id": block.id, "type": "function", "function": {"name": block.name, "arguments": arguments}, **extra}
