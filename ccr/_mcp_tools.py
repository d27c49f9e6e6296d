"""The CCR MCP server's tools: ``ccr_retrieve`` and ``ccr_stats`` answered from a store.

Kept apart from ``ccr.mcp_server`` because making them loads pydantic
(their argument models) and the store, which ``ccr mcp`` does in the
background while it answers ``initialize`` (``ccr.mcp_stdio.Preloading``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ccr.mcp_stdio import Tool, ToolError
from ccr.recovery import RECOVERY_TOOL, RECOVERY_TOOL_NAME, recover
from ccr.store import Store

__all__ = ["STATS_TOOL_NAME", "retrieve_text", "stats_text", "tools_for"]

STATS_TOOL_NAME = "ccr_stats"

_STATS_DESCRIPTION = (
    "How much the recovery store holds: entries, payload bytes, byte budget and whether it is full, as JSON."
)

_PROPERTIES: dict[str, Any] = RECOVERY_TOOL["input_schema"]["properties"]


def retrieve_text(
    store: Store,
    handle: str,
    query: str | None = None,
    lines: list[int] | None = None,
    byte_range: list[int] | None = None,
    max_tokens: int | None = None,
    exact: bool | None = None,
) -> tuple[str, bool]:
    """One ``ccr_retrieve`` call answered from ``store``: ``(text, is_error)``.

    Arguments left out are not passed on, so the answer is exactly what the
    agent-loop recovery tool gives for the same call (at most 5,000 tokens
    unless ``max_tokens`` says otherwise).
    """
    call: dict[str, Any] = {"handle": handle}
    for key, value in (
        ("query", query),
        ("lines", lines),
        ("bytes", byte_range),
        ("max_tokens", max_tokens),
        ("exact", exact),
    ):
        if value is not None:
            call[key] = value
    answer = recover(store, call)
    return answer.content, answer.is_error


def stats_text(store: Store) -> str:
    """The store's statistics as one JSON object."""
    return store.stats().model_dump_json()


def tools_for(store: Store) -> list[Tool]:
    """The server's tools, answering from ``store`` (which must stay open while they are used)."""

    def ccr_retrieve(
        handle: Annotated[str, Field(description=_PROPERTIES["handle"]["description"])],
        query: Annotated[str | None, Field(description=_PROPERTIES["query"]["description"])] = None,
        lines: Annotated[list[int] | None, Field(description=_PROPERTIES["lines"]["description"])] = None,
        bytes: Annotated[list[int] | None, Field(description=_PROPERTIES["bytes"]["description"])] = None,
        max_tokens: Annotated[int | None, Field(description=_PROPERTIES["max_tokens"]["description"], ge=0)] = None,
        exact: Annotated[bool | None, Field(description=_PROPERTIES["exact"]["description"])] = None,
    ) -> str:
        text, is_error = retrieve_text(store, handle, query, lines, bytes, max_tokens, exact)
        if is_error:
            raise ToolError(text)
        return text

    def ccr_stats() -> str:
        return stats_text(store)

    return [
        Tool.from_function(ccr_retrieve, RECOVERY_TOOL["description"], name=RECOVERY_TOOL_NAME),
        Tool.from_function(ccr_stats, _STATS_DESCRIPTION, name=STATS_TOOL_NAME),
    ]
