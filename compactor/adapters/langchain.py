"""LangChain ``BaseMessage``s <-> the Anthropic ``Message`` shape.

- leading ``SystemMessage``s are the instructions: kept apart, written back
  first, never compacted;
- ``HumanMessage`` content maps part by part; an ``AIMessage``'s content
  parts and ``tool_calls`` become blocks (``tool_use`` blocks already in the
  content, as ``ChatAnthropic`` writes them, are not doubled);
- consecutive ``ToolMessage``s become one user message of ``tool_result``
  blocks (``status="error"`` is ``is_error``) and split again on the way back;
- ``image_url`` parts are image blocks (written back as ``image_url``
  parts, which every chat model integration takes); parts with no
  Anthropic block (plain strings in a content list, ...) and messages of
  other kinds ride in a pass-through block and come back untouched.

An ``AIMessage`` written from blocks carries its ``tool_use`` blocks in the
content and in ``tool_calls``, the way ``ChatAnthropic`` does; chat models
of other providers read ``tool_calls`` and skip those blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)

from compactor.adapters._convert import (
    Originals,
    block_to_chat_part,
    chat_part_to_block,
    passthrough,
    passthrough_message,
)
from compactor.core.messages import ContentBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = ["LangChainAdapter"]


class LangChainAdapter:
    """Reads and writes one conversation's LangChain messages.

    Keep one adapter per conversation: what it read comes back exactly.
    """

    def __init__(self) -> None:
        self.instructions: list[BaseMessage] = []
        """The leading system messages, written back first."""
        self._originals: Originals[BaseMessage] = Originals()
        self._started = False

    def to_messages(self, items: Sequence[BaseMessage]) -> list[Message]:
        """LangChain messages -> ``Message``s (instructions kept apart)."""
        out: list[Message] = []
        tools: list[ToolMessage] = []

        def flush_tools() -> None:
            if tools:
                message = Message(role="user", content=[_tool_result(t) for t in tools])
                self._originals.remember(message, tools)
                out.append(message)
                tools.clear()

        for item in items:
            if not self._started and isinstance(item, SystemMessage):
                self.instructions.append(item)
                continue
            self._started = True
            if isinstance(item, ToolMessage):
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

    def from_messages(self, messages: Sequence[Message]) -> list[BaseMessage]:
        """``Message``s -> LangChain messages, instructions first."""
        names = {use.id: use.name for message in messages for use in message.tool_uses()}
        return [*self.instructions, *self._originals.restore(messages, lambda message: _encode(message, names))]


# -- reading -----------------------------------------------------------------


def _blocks(content: str | list[Any]) -> list[ContentBlock]:
    if isinstance(content, str):
        return [TextBlock(text=content)] if content else []
    return [chat_part_to_block(p) for p in content]


def _message(item: BaseMessage) -> Message:
    if isinstance(item, HumanMessage) and type(item) is HumanMessage:
        if isinstance(item.content, str):
            return Message(role="user", content=item.content)
        return Message(role="user", content=_blocks(item.content))
    if isinstance(item, AIMessage) and type(item) is AIMessage:
        if isinstance(item.content, str) and not item.tool_calls:
            return Message(role="assistant", content=item.content)
        blocks = _blocks(item.content)
        have = {b.id for b in blocks if isinstance(b, ToolUseBlock)}
        blocks.extend(
            ToolUseBlock(id=call["id"] or "", name=call["name"], input=dict(call["args"]))
            for call in item.tool_calls
            if call["id"] not in have
        )
        return Message(role="assistant", content=blocks)
    return Message(role="user", content=[passthrough(message=message_to_dict(item))])


def _tool_result(item: ToolMessage) -> ToolResultBlock:
    content: str | list[ContentBlock] = (
        item.content if isinstance(item.content, str) else [chat_part_to_block(p) for p in item.content]
    )
    return ToolResultBlock(tool_use_id=item.tool_call_id, content=content, is_error=item.status == "error")


# -- writing -----------------------------------------------------------------


def _encode(message: Message, names: dict[str, str]) -> list[BaseMessage]:
    if message.role == "assistant":
        if isinstance(message.content, str):
            return [AIMessage(content=message.content)]
        calls = [
            {"name": b.name, "args": dict(b.input), "id": b.id, "type": "tool_call"}
            for b in message.content
            if isinstance(b, ToolUseBlock)
        ]
        return [AIMessage(content=[block_to_chat_part(b) for b in message.content], tool_calls=calls)]
    if isinstance(message.content, str):
        return [HumanMessage(content=message.content)]
    out: list[BaseMessage] = []
    parts: list[Any] = []
    wrote_user = False
    for block in message.content:
        whole = passthrough_message(block)
        if isinstance(block, ToolResultBlock) or whole is not None:
            if parts:
                out.append(HumanMessage(content=parts))
                parts, wrote_user = [], True
            if whole is not None:
                out.append(messages_from_dict([whole])[0])
            else:
                out.append(_tool_message(block, names))  # type: ignore[arg-type]
        else:
            parts.append(block_to_chat_part(block))
    if parts or (not out and not wrote_user):
        out.append(HumanMessage(content=parts))
    return out


def _tool_message(block: ToolResultBlock, names: dict[str, str]) -> ToolMessage:
    content: Any = block.content if isinstance(block.content, str) else [block_to_chat_part(b) for b in block.content]
    return ToolMessage(
        content=content,
        tool_call_id=block.tool_use_id,
        status="error" if block.is_error else "success",
        name=names.get(block.tool_use_id),
    )
