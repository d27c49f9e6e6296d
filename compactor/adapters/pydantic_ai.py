"""pydantic-ai ``ModelMessage``s <-> the Anthropic ``Message`` shape.

- a ``ModelRequest`` is a user message: ``UserPromptPart`` content becomes
  text (and image) blocks, a ``ToolReturnPart`` a ``tool_result`` (with
  ``is_error`` unless its outcome is ``success``; a ``RetryPromptPart`` for
  a tool, from older histories, too);
- a ``ModelResponse`` is an assistant message: ``TextPart``, ``ThinkingPart``
  (a redacted one too) and ``ToolCallPart`` map to their blocks;
- ``SystemPromptPart``s are the instructions: kept apart and written back at
  the front of the first request, never compacted;
- every other part rides, serialized, in a pass-through block and comes
  back as it was; a provider's ``CompactionPart`` that leads a compaction's
  summary (``compactor.summarizers.provider_compaction``) goes out in a ``ModelResponse``
  of its own before the summary's request, where pydantic-ai keeps it.

``PydanticAICompaction`` is the integration: a history processor
(``Agent(..., capabilities=[compaction.capability])``) and the recovery tool as
a pydantic-ai ``Tool`` (``tools=[compaction.recovery_tool]``).

Requests written from blocks take the ``instructions`` of the last request
read, so that a compacted history still carries the agent's instructions.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import TypeAdapter
from pydantic_ai import Tool
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)

from ccr.recovery import RECOVERY_TOOL, RECOVERY_TOOL_NAME
from compactor.adapters._convert import PASSTHROUGH, Originals, block_to_part, part_to_block, passthrough
from compactor.adapters.history import CompactingHistory, RetrievesFromHistory
from compactor.core.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnknownBlock,
)
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.report import CompactionReport

__all__ = ["PydanticAIAdapter", "PydanticAICompaction"]

_REQUEST_PART: TypeAdapter[ModelRequestPart] = TypeAdapter(ModelRequestPart)
_RESPONSE_PART: TypeAdapter[ModelResponsePart] = TypeAdapter(ModelResponsePart)
_USER_CONTENT: TypeAdapter[UserContent] = TypeAdapter(UserContent)
_REDACTED = "redacted_thinking"
_EXTRA = "anthropic_block_extra"
"""Key in a part's ``provider_details`` for fields of an Anthropic block the part has no place for."""


class PydanticAIAdapter:
    """Reads and writes one conversation's pydantic-ai messages.

    Keep one adapter per conversation: what it read comes back exactly.
    """

    def __init__(self) -> None:
        self.system_parts: list[SystemPromptPart] = []
        """The system prompt parts read, written back at the front of the first request."""
        self.instructions: str | None = None
        """The ``instructions`` of the last request read."""
        self._system_only: ModelRequest | None = None
        self._originals: Originals[ModelMessage] = Originals()
        self._tool_names: dict[str, str] = {}

    def to_messages(self, items: Sequence[ModelMessage]) -> list[Message]:
        """pydantic-ai messages -> ``Message``s (system prompt parts kept apart)."""
        out: list[Message] = []
        for item in items:
            if isinstance(item, ModelRequest):
                system = [p for p in item.parts if isinstance(p, SystemPromptPart)]
                self.system_parts.extend(system)
                if item.instructions is not None:
                    self.instructions = item.instructions
                if system and len(system) == len(item.parts):
                    self._system_only = self._system_only or item
                    continue
                message = _request(item)
            else:
                message = _response(item)
                for part in item.parts:
                    if isinstance(part, ToolCallPart):
                        self._tool_names[part.tool_call_id] = part.tool_name
            self._originals.remember(message, [item])
            out.append(message)
        return out

    def retain(self, messages: Sequence[Message]) -> None:
        """Forget what was read for messages no longer in ``messages`` (after a compaction)."""
        self._originals.retain(messages)

    def from_messages(self, messages: Sequence[Message]) -> list[ModelMessage]:
        """``Message``s -> pydantic-ai messages, the system prompt in the first request."""
        names = dict(self._tool_names)
        for message in messages:
            names.update({use.id: use.name for use in message.tool_uses()})

        def encode(message: Message) -> list[ModelMessage]:
            if message.role == "assistant":
                return [_encode_response(message)]
            lead, rest = _leading_response_parts(message)
            request = ModelRequest(parts=_encode_request(rest, names), instructions=self.instructions)
            return [ModelResponse(parts=lead), request] if lead else [request]

        return self._with_system(self._originals.restore(messages, encode))

    def _with_system(self, out: list[ModelMessage]) -> list[ModelMessage]:
        if not self.system_parts or any(
            isinstance(m, ModelRequest) and any(isinstance(p, SystemPromptPart) for p in m.parts) for m in out
        ):
            return out
        if self._system_only is not None:
            return [self._system_only, *out]
        if out and isinstance(out[0], ModelRequest):
            return [dataclasses.replace(out[0], parts=[*self.system_parts, *out[0].parts]), *out[1:]]
        return [ModelRequest(parts=list(self.system_parts), instructions=self.instructions), *out]


class PydanticAICompaction(RetrievesFromHistory):
    """A pydantic-ai history processor that compacts, with the recovery tool to offer beside it.

    ::

        compaction = PydanticAICompaction()
        agent = Agent(model, capabilities=[compaction.capability], tools=[compaction.recovery_tool])
    """

    def __init__(
        self,
        orchestrator: Orchestrator | None = None,
        *,
        on_compaction: Callable[[CompactionReport], None] | None = None,
    ) -> None:
        self.history: CompactingHistory[ModelMessage] = CompactingHistory(
            PydanticAIAdapter, orchestrator, on_compaction=on_compaction
        )

    async def process(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The history processor: the history to send, compacted when the policy says so.

        It runs in the agent's event loop (not in a worker thread), so the
        session's store is used from one thread; a compaction waiting on a
        background LLM summary awaits it (``Orchestrator.acompact``).
        """
        return await self.history.aprocess(messages)

    @property
    def capability(self) -> ProcessHistory[Any]:
        """The processor as an agent capability: ``Agent(..., capabilities=[compaction.capability])``."""
        return ProcessHistory(self.process)

    @property
    def reports(self) -> list[CompactionReport]:
        """The report of every compaction so far."""
        return self.history.reports

    @property
    def recovery_tool(self) -> Tool[Any]:
        """``ccr_retrieve`` as a pydantic-ai tool, answering from this session's store."""
        return Tool(
            self.retrieve,
            takes_ctx=False,
            name=RECOVERY_TOOL_NAME,
            description=str(RECOVERY_TOOL["description"]),
        )


# -- reading -----------------------------------------------------------------


def _passthrough(part: Any, adapter: TypeAdapter[Any], kind: str) -> UnknownBlock:
    return passthrough(part=adapter.dump_python(part, mode="json"), kind=kind)


def _request(item: ModelRequest) -> Message:
    parts = [p for p in item.parts if not isinstance(p, SystemPromptPart)]
    if len(parts) == 1 and isinstance(parts[0], UserPromptPart) and isinstance(parts[0].content, str):
        return Message(role="user", content=parts[0].content)
    blocks: list[ContentBlock] = []
    for part in parts:
        if isinstance(part, UserPromptPart):
            contents = [part.content] if isinstance(part.content, str) else list(part.content)
            blocks.extend(_user_content(c) for c in contents)
        elif isinstance(part, ToolReturnPart):
            blocks.append(_tool_return(part))
        elif isinstance(part, RetryPromptPart) and part.tool_name is not None and isinstance(part.content, str):
            blocks.append(ToolResultBlock(tool_use_id=part.tool_call_id, content=part.content, is_error=True))
        else:
            blocks.append(_passthrough(part, _REQUEST_PART, "request"))
    return Message(role="user", content=blocks)


def _user_content(content: Any) -> ContentBlock:
    if isinstance(content, str):
        return TextBlock(text=content)
    if isinstance(content, BinaryContent) and content.is_image and content.vendor_metadata is None:
        data = base64.b64encode(content.data).decode("ascii")
        return ImageBlock(source={"type": "base64", "media_type": content.media_type, "data": data})
    if isinstance(content, ImageUrl) and _USER_CONTENT.dump_python(content, mode="json") == _USER_CONTENT.dump_python(
        ImageUrl(url=content.url), mode="json"
    ):
        return ImageBlock(source={"type": "url", "url": content.url})
    return _passthrough(content, _USER_CONTENT, "user_content")


def _tool_return(part: ToolReturnPart) -> ToolResultBlock:
    error = part.outcome != "success"
    if isinstance(part.content, str):
        return ToolResultBlock(tool_use_id=part.tool_call_id, content=part.content, is_error=error)
    if isinstance(part.content, list) and part.content and all(isinstance(c, dict) for c in part.content):
        blocks = [part_to_block(c) for c in part.content]
        if not any(isinstance(b, UnknownBlock) and b.type == PASSTHROUGH for b in blocks):
            return ToolResultBlock(tool_use_id=part.tool_call_id, content=blocks, is_error=error)
    return ToolResultBlock(tool_use_id=part.tool_call_id, content=part.model_response_str(), is_error=error)


def _response(item: ModelResponse) -> Message:
    blocks: list[ContentBlock] = []
    for part in item.parts:
        extra = _extra(part)
        if isinstance(part, TextPart) and extra is not None:
            blocks.append(TextBlock(text=part.content, **extra))
        elif isinstance(part, ThinkingPart) and part.id == _REDACTED and extra is not None:
            blocks.append(RedactedThinkingBlock(data=part.signature or "", **extra))
        elif isinstance(part, ThinkingPart) and extra is not None:
            blocks.append(ThinkingBlock(thinking=part.content, signature=part.signature, **extra))
        elif isinstance(part, ToolCallPart) and extra is not None:
            blocks.append(ToolUseBlock(id=part.tool_call_id, name=part.tool_name, input=part.args_as_dict(), **extra))
        else:
            blocks.append(_passthrough(part, _RESPONSE_PART, "response"))
    return Message(role="assistant", content=blocks)


def _extra(part: Any) -> dict[str, Any] | None:
    """The extra block fields a part carries, or None when it holds more than a block can say."""
    details = getattr(part, "provider_details", None)
    if details is None:
        return {}
    if set(details) == {_EXTRA} and isinstance(details[_EXTRA], dict):
        return dict(details[_EXTRA])
    return None


# -- writing -----------------------------------------------------------------


def _details(block: ContentBlock) -> dict[str, Any] | None:
    return {_EXTRA: dict(block.model_extra)} if block.model_extra else None


def _encode_response(message: Message) -> ModelResponse:
    parts: list[ModelResponsePart] = []
    for block in message.blocks():
        if isinstance(block, TextBlock):
            parts.append(TextPart(content=block.text, provider_details=_details(block)))
        elif isinstance(block, ThinkingBlock):
            parts.append(
                ThinkingPart(content=block.thinking, signature=block.signature, provider_details=_details(block))
            )
        elif isinstance(block, RedactedThinkingBlock):
            parts.append(ThinkingPart(content="", id=_REDACTED, signature=block.data, provider_details=_details(block)))
        elif isinstance(block, ToolUseBlock):
            parts.append(
                ToolCallPart(
                    tool_name=block.name,
                    args=dict(block.input),
                    tool_call_id=block.id,
                    provider_details=_details(block),
                )
            )
        elif isinstance(block, UnknownBlock) and block.type == PASSTHROUGH:
            parts.append(_RESPONSE_PART.validate_python((block.model_extra or {})["part"]))
        else:
            parts.append(TextPart(content=str(block_to_part(block))))
    return ModelResponse(parts=parts)


def _leading_response_parts(message: Message) -> tuple[list[ModelResponsePart], Message]:
    """The response parts a user message opens with (a provider's ``CompactionPart`` leading a
    summary, which pydantic-ai keeps in a ``ModelResponse``), and the message without them."""
    if isinstance(message.content, str):
        return [], message
    lead: list[ModelResponsePart] = []
    for block in message.content:
        extra = block.model_extra or {}
        if not (isinstance(block, UnknownBlock) and block.type == PASSTHROUGH and extra.get("kind") == "response"):
            break
        lead.append(_RESPONSE_PART.validate_python(extra["part"]))
    return lead, message.model_copy(update={"content": message.content[len(lead) :]}) if lead else message


def _encode_request(message: Message, names: dict[str, str]) -> list[ModelRequestPart]:
    if isinstance(message.content, str):
        return [UserPromptPart(content=message.content)]
    parts: list[ModelRequestPart] = []
    user: list[UserContent] = []

    def flush() -> None:
        if user:
            parts.append(UserPromptPart(content=list(user)))
            user.clear()

    for block in message.content:
        extra = block.model_extra or {}
        if isinstance(block, ToolResultBlock):
            flush()
            parts.append(_encode_result(block, names.get(block.tool_use_id, "")))
        elif isinstance(block, UnknownBlock) and block.type == PASSTHROUGH and extra.get("kind") == "request":
            flush()
            parts.append(_REQUEST_PART.validate_python(extra["part"]))
        elif isinstance(block, UnknownBlock) and block.type == PASSTHROUGH and extra.get("kind") == "user_content":
            user.append(_USER_CONTENT.validate_python(extra["part"]))
        elif isinstance(block, TextBlock) and not extra:
            user.append(block.text)
        elif isinstance(block, ImageBlock) and not extra and block.source.get("type") == "base64":
            data = base64.b64decode(block.source["data"])
            user.append(BinaryContent(data=data, media_type=block.source["media_type"]))
        elif isinstance(block, ImageBlock) and not extra and block.source.get("type") == "url":
            user.append(ImageUrl(url=block.source["url"]))
        else:
            user.append(str(block_to_part(block)))
    flush()
    return parts


def _encode_result(block: ToolResultBlock, tool_name: str) -> ModelRequestPart:
    content: Any = block.content if isinstance(block.content, str) else [block_to_part(b) for b in block.content]
    return ToolReturnPart(
        tool_name=tool_name,
        content=content,
        tool_call_id=block.tool_use_id,
        outcome="failed" if block.is_error else "success",
    )
