"""The providers' own compaction: recognised, kept byte for byte, never summarized again.

The formats, from the providers' documentation:

- Anthropic Messages API, threshold compaction: the ``compact_20260112``
  edit in ``context_management.edits`` (beta header ``compact-2026-01-12``;
  ``trigger`` ``{"type": "input_tokens", "value": N}``, default 150,000,
  at least 50,000; ``pause_after_compaction``; ``instructions``) puts a
  ``{"type": "compaction", "content": <summary, or null when it failed>}``
  block at the start of the assistant answer (``cache_control`` may be
  added). The API ignores every block before it.
  https://platform.claude.com/docs/en/build-with-claude/compaction
- Anthropic on-demand compaction: ``"compaction": {"type": "summarize"}`` on
  a Messages request (beta header ``compact-2026-09-04``) answers with one
  ``compaction`` block (``content`` and ``signature``) and ``stop_reason``
  ``"compaction"``. The block goes first in ``messages``, as an assistant
  message of its own or as the first content block of the first message,
  in place of the messages it summarizes (any left in front of it is a 400,
  ``compaction_block_misplaced``), exactly one per request, exactly as it came.
  https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand
- Anthropic context editing: ``clear_tool_uses_20250919`` and
  ``clear_thinking_20251015`` (beta header ``context-management-2025-06-27``)
  are applied on the server before the prompt reaches the model; the client
  keeps its full history, and an answer reports
  ``context_management.applied_edits`` (``type``, ``cleared_tool_uses`` or
  ``cleared_thinking_turns``, ``cleared_input_tokens``). None of it is a
  block of its own: it rides on the framework's message (its metadata), and
  thinking blocks keep their ``signature``; the adapters give both back as
  they were read.
  https://platform.claude.com/docs/en/build-with-claude/context-editing
- OpenAI Responses API: ``POST /v1/responses/compact`` (``model``, ``input``,
  ``instructions``, ``previous_response_id``) answers
  ``{"object": "response.compaction", "output": [...], "usage": ...}`` whose
  ``output`` is the user messages followed by one
  ``{"type": "compaction", "id": ..., "encrypted_content": ...}`` item; the
  server mode (``context_management: [{"type": "compaction",
  "compact_threshold": N}]`` on ``POST /v1/responses``) puts the same item
  in a response's ``output``. The item is opaque and goes back as input
  unchanged, in place of the context it replaced.
  https://platform.openai.com/docs/api-reference/responses/compact

What compaction does with them (``compactor.engine.pipeline``): the cut between the
head and the preserved tail never falls before the last provider block, so
the head always holds it; that block is kept verbatim as the first block of
the summary message (where both providers want it), the summarizer reads
only what follows it, and everything before it (earlier blocks included,
which it supersedes) is stored with the head and named in the summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from compactor.core.messages import ContentBlock, Message, UnknownBlock
from compactor.engine.rounds import group_rounds

__all__ = [
    "COMPACTION_TYPE",
    "PASSTHROUGH_KEYS",
    "ProviderKind",
    "ProviderView",
    "last_block_index",
    "lead_blocks",
    "provider_kind",
    "provider_note",
    "provider_text",
    "provider_view",
    "through_last_block",
]

COMPACTION_TYPE = "compaction"
"""The ``type`` of an Anthropic compaction block and of an OpenAI compaction item alike."""

PASSTHROUGH_KEYS = ("part", "item")
"""Keys of an adapter's pass-through block (``compactor.adapters._convert``) that carry a provider's dict."""

_PASSTHROUGH = "compactor_passthrough"
"""``compactor.adapters._convert.PASSTHROUGH``, named here so that this module imports no adapter."""

ProviderKind = Literal["anthropic", "openai"]


def _kind_of(raw: Any) -> ProviderKind | None:
    if not isinstance(raw, dict):
        return None
    if raw.get("type") == COMPACTION_TYPE:
        return "openai" if "encrypted_content" in raw else "anthropic"
    if raw.get("part_kind") == COMPACTION_TYPE and raw.get("provider_name"):
        # pydantic-ai's ``CompactionPart`` from a provider (one with no provider is an app's own summary):
        # Anthropic's readable ``content``, OpenAI's encrypted item in ``provider_details``.
        name = str(raw["provider_name"]).lower()
        return "openai" if "openai" in name or raw.get("content") is None else "anthropic"
    return None


def provider_kind(block: ContentBlock) -> ProviderKind | None:
    """Whose compaction ``block`` is (None: it is not a provider's compaction).

    A compaction block read as it is, or carried in an adapter's pass-through
    block (an OpenAI Responses item, a framework's content part).
    """
    if not isinstance(block, UnknownBlock):
        return None
    extra = block.model_extra or {}
    if block.type == COMPACTION_TYPE:
        return "openai" if "encrypted_content" in extra else "anthropic"
    if block.type == _PASSTHROUGH:
        for key in PASSTHROUGH_KEYS:
            kind = _kind_of(extra.get(key))
            if kind is not None:
                return kind
    return None


def provider_text(block: ContentBlock) -> str:
    """What a model can read of a provider block: an Anthropic summary's text; '' for an opaque item."""
    if not isinstance(block, UnknownBlock):
        return ""
    extra = block.model_extra or {}
    raw: Any = (
        {"type": block.type, **extra}
        if block.type == COMPACTION_TYPE
        else next((extra[k] for k in PASSTHROUGH_KEYS if _kind_of(extra.get(k)) is not None), None)
    )
    if _kind_of(raw) != "anthropic" or not isinstance(raw.get("content"), str):
        return ""
    return str(raw["content"])


def last_block_index(messages: Sequence[Message]) -> int | None:
    """Index of the last message that holds a provider compaction block, or None."""
    for index in range(len(messages) - 1, -1, -1):
        if any(provider_kind(b) is not None for b in messages[index].blocks()):
            return index
    return None


def through_last_block(head: Sequence[Message], tail: Sequence[Message]) -> tuple[list[Message], list[Message]]:
    """(head, tail) with the cut moved after the tail's round that holds its last provider block, if any.

    Whole API rounds move, so a tool call and its result stay together.
    """
    index = last_block_index(tail)
    if index is None:
        return list(head), list(tail)
    moved: list[Message] = []
    rounds = group_rounds(tail)
    taken = 0
    for round_ in rounds:
        moved.extend(round_)
        taken += len(round_)
        if taken > index:
            break
    return [*head, *moved], list(tail[taken:])


@dataclass(frozen=True)
class ProviderView:
    """A head as the pipeline's summarizer reads it when it holds a provider block.

    ``block`` is the last provider block, verbatim; ``lead`` what leads the
    summary message in its place: the block, after the user messages an
    OpenAI compaction returned with it when they came in the same message
    (``/v1/responses/compact`` answers with both); ``messages`` what follows
    it (the rest of its own message first, when there is any); ``from_block``
    the same with the block leading, for a summarizer that is the provider
    itself; ``superseded`` the earlier provider blocks, ``index`` where the
    block's message is in the head.
    """

    block: ContentBlock
    lead: list[ContentBlock]
    kind: ProviderKind
    index: int
    messages: list[Message]
    from_block: list[Message]
    superseded: int


def _is_user_item(block: ContentBlock) -> bool:
    """A pass-through block carrying a Responses user message item."""
    if not isinstance(block, UnknownBlock) or block.type != _PASSTHROUGH:
        return False
    item = (block.model_extra or {}).get("item")
    return isinstance(item, dict) and item.get("role") == "user" and item.get("type", "message") == "message"


def provider_view(head: Sequence[Message]) -> ProviderView | None:
    """The view of ``head`` from its last provider block on, or None when it holds none."""
    index = last_block_index(head)
    if index is None:
        return None
    message = head[index]
    blocks = message.blocks()
    at = max(i for i, b in enumerate(blocks) if provider_kind(b) is not None)
    block = blocks[at]
    kind = provider_kind(block)
    assert kind is not None
    first = at
    while kind == "openai" and first > 0 and _is_user_item(blocks[first - 1]):
        first -= 1
    superseded = sum(1 for m in head[:index] for b in m.blocks() if provider_kind(b) is not None) + sum(
        1 for b in blocks[:first] if provider_kind(b) is not None
    )
    rest = blocks[at + 1 :]
    after = list(head[index + 1 :])
    own = [message.model_copy(update={"content": rest})] if rest else []
    leading = message if first == 0 else message.model_copy(update={"content": blocks[first:]})
    return ProviderView(
        block=block,
        lead=blocks[first : at + 1],
        kind=kind,
        index=index,
        messages=[*own, *after],
        from_block=[leading, *after],
        superseded=superseded,
    )


def lead_blocks(fresh: Sequence[ContentBlock], view: ProviderView | None) -> list[ContentBlock]:
    """The provider blocks that lead a summary message: the ``fresh`` ones its summarizer made,
    else the head's last (``view.lead``)."""
    return list(fresh) or (view.lead if view is not None else [])


def provider_note(fresh: Sequence[ContentBlock], view: ProviderView | None) -> dict[str, Any] | None:
    """What a summary message says of the provider's compaction it carries (None: it carries none):
    whose it is, whether its summarizer just made it (``fresh``), and how many earlier ones it supersedes."""
    kind = next((k for k in map(provider_kind, lead_blocks(fresh, view)) if k is not None), None)
    if kind is None:
        return None
    made = bool(fresh)
    superseded = (view.superseded + (1 if made else 0)) if view is not None else 0
    return {"kind": kind, "fresh": made, "superseded": superseded}
