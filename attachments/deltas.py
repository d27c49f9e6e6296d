"""Delta attachments: deferred tools, agent types and MCP server instructions.

On a normal turn a delta announces only what the history has not announced
yet (and what has gone away since). After a compaction the history is empty,
so the full current sets are announced again. What was announced is read
back from the history's own delta messages when the history is given, else
taken from ``AttachmentState.announced_*``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from attachments.attachment import Attachment
from attachments.entries import AttachmentEntry, AttachmentType
from attachments.messages import Message
from attachments.render import reminder_message, render_reminder
from attachments.state import AttachmentState
from ccr.tokens import TextCounter, TiktokenTextCounter

__all__ = ["Announced", "announced_in", "full_deltas", "mark_announced", "pending_deltas"]

_BLOCK = r"<{tag}>\n(.*?)\n</{tag}>"
_TOOLS_ADDED = re.compile(_BLOCK.format(tag="deferred-tools-added"), re.S)
_TOOLS_REMOVED = re.compile(_BLOCK.format(tag="deferred-tools-removed"), re.S)
_AGENTS_ADDED = re.compile(_BLOCK.format(tag="agent-types-added"), re.S)
_AGENTS_REMOVED = re.compile(_BLOCK.format(tag="agent-types-removed"), re.S)
_MCP_ADDED = re.compile(r'<mcp-server name="([^"\n]*)">\n')
_MCP_REMOVED = re.compile(_BLOCK.format(tag="mcp-servers-removed"), re.S)


class Announced(BaseModel):
    """What a history has told the model: deferred tool names, agent types, MCP server names."""

    model_config = ConfigDict(extra="forbid")

    tools: list[str] = Field(default_factory=list)
    agent_types: list[str] = Field(default_factory=list)
    mcp: list[str] = Field(default_factory=list)


def announced_in(history: Sequence[Message]) -> Announced:
    """Replay the delta messages found in ``history``, in order, into what is announced now."""
    tools: dict[str, None] = {}
    agents: dict[str, None] = {}
    mcp: dict[str, None] = {}
    for message in history:
        if message.role != "user" or not message.is_meta:
            continue
        text = message.text()
        if "<system-reminder>" not in text:
            continue
        _apply(tools, _names(_TOOLS_ADDED, text), _names(_TOOLS_REMOVED, text))
        _apply(agents, _names(_AGENTS_ADDED, text), _names(_AGENTS_REMOVED, text))
        _apply(mcp, _MCP_ADDED.findall(text), _names(_MCP_REMOVED, text))
    return Announced(tools=list(tools), agent_types=list(agents), mcp=list(mcp))


def full_deltas(state: AttachmentState, counter: TextCounter) -> list[Attachment]:
    """The deltas after a compaction: every current tool, agent type and MCP server, none removed."""
    return _deltas(state, Announced(), counter)


def pending_deltas(
    state: AttachmentState,
    history: Sequence[Message] | None = None,
    *,
    counter: TextCounter | None = None,
) -> list[Attachment]:
    """The deltas a normal turn needs: only what was not announced yet, and what went away.

    What was announced comes from ``history``'s delta messages when it is
    given, else from ``state.announced_*``. Afterwards ``state.announced_*``
    hold the current sets (the returned messages announce the difference).
    """
    before = (
        announced_in(history)
        if history is not None
        else Announced(tools=state.announced_tools, agent_types=state.announced_agent_types, mcp=state.announced_mcp)
    )
    deltas = _deltas(state, before, counter if counter is not None else TiktokenTextCounter())
    mark_announced(state)
    return deltas


def mark_announced(state: AttachmentState) -> None:
    """Record that the current tools, agent types and MCP servers are all announced.

    Call it on the state that follows a compaction, whose full deltas did
    just that. Announced skill names are left alone: compaction never resets them.
    """
    state.announced_tools = list(dict.fromkeys(state.deferred_tools))
    state.announced_agent_types = list(dict.fromkeys(state.agent_types))
    state.announced_mcp = list(state.mcp_instructions)


def _deltas(state: AttachmentState, before: Announced, counter: TextCounter) -> list[Attachment]:
    out: list[Attachment] = []
    tools = list(dict.fromkeys(state.deferred_tools))
    agents = list(dict.fromkeys(state.agent_types))
    lists: list[tuple[AttachmentType, str, list[str], list[str]]] = [
        ("deferred_tools_delta", "deferred_tools_delta.j2", _new(tools, before.tools), _gone(before.tools, tools)),
        (
            "agent_listing_delta",
            "agent_listing_delta.j2",
            _new(agents, before.agent_types),
            _gone(before.agent_types, agents),
        ),
    ]
    for kind, template, added, removed in lists:
        if added or removed:
            out.append(_attachment(kind, counter, template, added=added, removed=removed))
    servers = list(state.mcp_instructions)
    new_servers = _new(servers, before.mcp)
    gone_servers = _gone(before.mcp, servers)
    if new_servers or gone_servers:
        pairs = [(name, state.mcp_instructions[name].strip("\n")) for name in new_servers]
        out.append(
            _attachment(
                "mcp_instructions_delta", counter, "mcp_instructions_delta.j2", added=pairs, removed=gone_servers
            )
        )
    return out


def _attachment(kind: AttachmentType, counter: TextCounter, template: str, **context: object) -> Attachment:
    text = render_reminder(template, **context)
    tokens = counter.count_text(text)
    return Attachment(
        type=kind, message=reminder_message(text), tokens=tokens, entries=[AttachmentEntry(type=kind, tokens=tokens)]
    )


def _new(current: list[str], announced: list[str]) -> list[str]:
    seen = set(announced)
    return [name for name in current if name not in seen]


def _gone(announced: list[str], current: list[str]) -> list[str]:
    now = set(current)
    return [name for name in dict.fromkeys(announced) if name not in now]


def _names(pattern: re.Pattern[str], text: str) -> list[str]:
    return [line for block in pattern.findall(text) for line in block.split("\n") if line]


def _apply(announced: dict[str, None], added: list[str], removed: list[str]) -> None:
    for name in removed:
        announced.pop(name, None)
    for name in added:
        announced[name] = None
