"""Spans: the exact pieces of a dropped head that go into CCR.

The head is stored whole, as JSONL whose units are whole messages (so a
query retrieval returns complete messages), and every large tool result and
every long or meta user message is stored on its own as well, so that a
summary can cite it precisely. Pure: computing spans touches no store;
handles are content addresses, so the summarizer and the pipeline agree on
them without talking to each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ccr import handle_for
from compactor.core.errors import InputInvalid
from compactor.core.messages import Message, ToolResultBlock
from compactor.engine.rounds import is_prompt

__all__ = [
    "DEFAULT_TOOL_RESULT_MIN_BYTES",
    "DEFAULT_USER_MESSAGE_MAX_BYTES",
    "MESSAGE_KINDS",
    "Span",
    "SpanKind",
    "head_span",
    "head_spans",
    "messages_jsonl",
    "not_text",
    "tool_result_bytes",
    "user_message_bytes",
]

DEFAULT_TOOL_RESULT_MIN_BYTES = 2_000
"""A dropped tool result of at least this many UTF-8 bytes is also stored on its own."""

DEFAULT_USER_MESSAGE_MAX_BYTES = 600
"""A user message of more UTF-8 bytes than this is cut in the summary and stored on its own."""

SpanKind = Literal["head", "tool_result", "user_message", "summary", "reminder", "facts"]
"""What a span was in the context: ``user_message`` is what the user typed, ``summary`` an
earlier compaction's summary, ``reminder`` a meta message (an attachment, a hook's note);
``facts`` is a summarizer's full listing of what it could not show whole (paths, commands)."""

MESSAGE_KINDS: tuple[SpanKind, ...] = ("user_message", "summary", "reminder")
"""The kinds of span that are a whole user-side message of the head."""


class Span(BaseModel):
    """One stored piece: its bytes, its handle, and where it came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: SpanKind
    data: bytes
    handle: str
    content_type: str
    ref: str | None = None
    """tool_use id for a tool result, message index for a user message."""
    message_index: int | None = None
    """Index in the head of the message this span was cut from (None for the whole head)."""
    whole_message: bool = False
    """True when the span is all the text its message holds, so both count the same."""


def messages_jsonl(messages: Sequence[Message]) -> bytes:
    """Messages as JSONL, one API-shaped message per line (CCR query units)."""
    return "".join(m.api_json() + "\n" for m in messages).encode("utf-8")


def tool_result_bytes(block: ToolResultBlock) -> bytes:
    """The exact text a tool result put in the context."""
    if isinstance(block.content, str):
        return block.content.encode("utf-8")
    return block.text().encode("utf-8")


def user_message_bytes(message: Message) -> bytes:
    return message.text().encode("utf-8")


def _span(
    kind: SpanKind,
    data: bytes,
    content_type: str,
    ref: str | None = None,
    index: int | None = None,
    whole: bool = False,
) -> Span:
    return Span(
        kind=kind,
        data=data,
        handle=handle_for(data),
        content_type=content_type,
        ref=ref,
        message_index=index,
        whole_message=whole,
    )


def head_span(head: Sequence[Message]) -> Span:
    """The span of the whole head: its messages as JSONL."""
    return _span("head", messages_jsonl(head), "application/x-ndjson")


def head_spans(
    head: Sequence[Message],
    *,
    tool_result_min_bytes: int = DEFAULT_TOOL_RESULT_MIN_BYTES,
    user_message_max_bytes: int = DEFAULT_USER_MESSAGE_MAX_BYTES,
) -> list[Span]:
    """Every span to store before ``head`` may be dropped; the whole head first.

    Identical pieces (same bytes) appear once.
    """
    spans = [head_span(head)]
    seen = {spans[0].handle}
    for index, message in enumerate(head):
        candidates: list[Span] = []
        blocks = message.blocks()
        if is_prompt(message):
            text = user_message_bytes(message)
            if message.is_meta or message.is_compact_summary or len(text) > user_message_max_bytes:
                whole = isinstance(message.content, str) or len(blocks) == 1
                kind: SpanKind = (
                    "summary" if message.is_compact_summary else "reminder" if message.is_meta else "user_message"
                )
                candidates.append(_span(kind, text, "text/plain", str(index), index, whole))
        for block in message.tool_results():
            data = tool_result_bytes(block)
            if len(data) >= tool_result_min_bytes:
                whole = len(blocks) == 1 and isinstance(block.content, str)
                candidates.append(_span("tool_result", data, "text/plain", block.tool_use_id, index, whole))
        for span in candidates:
            if span.handle not in seen:
                seen.add(span.handle)
                spans.append(span)
    return spans


def not_text(messages: Sequence[Message], exc: UnicodeEncodeError) -> InputInvalid:
    """Why a conversation holding text that no UTF-8 can hold cannot be stored, naming the first such message.

    ``exc`` is what encoding it raised (``messages_jsonl`` does).
    """
    character = f"U+{ord(exc.object[exc.start]):04X}" if isinstance(exc.object, str) else "a character"
    where = next((index for index, m in enumerate(messages) if not _encodes(m.api_json())), None)
    which = f"message {where} (0-based)" if where is not None else "a message"
    return InputInvalid(
        f"{which} holds {character}, a lone surrogate that no UTF-8 text can hold, so it cannot be stored; "
        "nothing was compacted (replace it, for example with U+FFFD, before adding the message)"
    )


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
