"""The recovery tool: how a model asks for what a compaction dropped.

``RECOVERY_TOOL`` is a tool definition in the Anthropic Messages shape that
an agent loop offers the model; ``recover`` answers one call of it from a
CCR store. A bad or unknown handle is an answer the model can read (with
``is_error``), never an exception in the loop. Its output is recovery output:
dedup leaves it alone (``ccr_retrieve`` is one of the recovery tool names).
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, model_validator

from ccr import CCRError, Store
from ccr.retrieval import notice_text

__all__ = [
    "RECOVERY_TOOL",
    "RECOVERY_TOOL_NAME",
    "RecoveryAnswer",
    "RecoveryRequest",
    "TINYJUICE_RECOVERY_TOOL",
    "recover",
]

RECOVERY_TOOL_NAME = "ccr_retrieve"

RECOVERY_TOOL: dict[str, Any] = {
    "name": RECOVERY_TOOL_NAME,
    "description": (
        "Bring back text that was dropped from this conversation when it was compacted. "
        "Pass a handle exactly as it appears in the conversation (for example <<ccr:ccr_...>>). "
        "Without other arguments it returns the whole original. With 'query' it returns only the "
        "messages, rows or paragraphs that match, in their original order. With 'lines' or 'bytes' "
        "it returns that range. Prefer a query or a range for large originals."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "handle": {"type": "string", "description": "the handle or marker, e.g. <<ccr:ccr_0123...>>"},
            "query": {"type": "string", "description": "words to look for (file names, errors, identifiers)"},
            "lines": {
                "type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
                "description": "first and last line, 1-based and inclusive",
            },
            "bytes": {
                "type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
                "description": "start and end byte offsets, end excluded",
            },
        },
        "required": ["handle"],
        "additionalProperties": False,
    },
}
"""The tool definition to put in a Messages request's ``tools``."""

TINYJUICE_RECOVERY_TOOL: dict[str, Any] = {
    "name": "tokenjuice_retrieve",
    "description": (
        "Return the exact original of a compacted tool output shown as a PARTIAL view. Pass the token "
        "exactly as the partial view's footer gives it. Call it only when the omitted data matters; "
        "keep the token for later exact retrieval."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "token": {"type": "string", "description": 'the token from the footer, e.g. "tj:0123..."'},
            "query": RECOVERY_TOOL["input_schema"]["properties"]["query"],
            "lines": RECOVERY_TOOL["input_schema"]["properties"]["lines"],
            "bytes": RECOVERY_TOOL["input_schema"]["properties"]["bytes"],
        },
        "required": ["token"],
        "additionalProperties": False,
    },
}
"""The same tool as TinyJuice names it, for agents shown its partial-view footer (``[masking] footer``).

``recover`` answers it too: ``token`` is read as the handle."""


class RecoveryRequest(BaseModel):
    """One call of the recovery tool, validated."""

    model_config = ConfigDict(extra="forbid")

    handle: str = Field(validation_alias=AliasChoices("handle", "token"))
    """The handle or marker; TinyJuice's tool calls it ``token``."""
    query: str | None = None
    lines: tuple[int, int] | None = None
    bytes_: tuple[int, int] | None = Field(default=None, alias="bytes")


class RecoveryAnswer(BaseModel):
    """What goes back to the model as the tool result."""

    model_config = ConfigDict(extra="forbid")

    content: str
    is_error: bool = False


def recover(store: Store, tool_input: dict[str, Any]) -> RecoveryAnswer:
    """Answer one recovery-tool call from ``store``; errors become readable answers."""
    try:
        request = RecoveryRequest.model_validate(tool_input)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors())
        return RecoveryAnswer(content=f"invalid {RECOVERY_TOOL_NAME} call: {problems}", is_error=True)
    chosen = sum(x is not None for x in (request.query, request.lines, request.bytes_))
    if chosen > 1:
        return RecoveryAnswer(content="give at most one of 'query', 'lines' and 'bytes'", is_error=True)
    try:
        found = store.retrieve(request.handle, query=request.query, lines=request.lines, byte_range=request.bytes_)
    except CCRError as exc:
        return RecoveryAnswer(content=f"{exc.error_id}: {exc}", is_error=True)
    notice = notice_text(found, query=request.query)  # no match, no units, or past the end
    return RecoveryAnswer(content=found.text if notice is None else f"{notice}\n{found.text}")
