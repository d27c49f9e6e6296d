"""Deltas: the full sets after compaction, only the difference on a normal turn."""

from __future__ import annotations

import ccr
from attachments import (
    Budgets,
    DiskFiles,
    announced_in,
    build_attachments,
    full_deltas,
    mark_announced,
    pending_deltas,
)
from compactor.core.messages import Message
from compactor.core.session import SessionState
from compactor.core.tokens import TiktokenCounter


def session() -> SessionState:
    return SessionState(
        deferred_tools=["WebFetch", "NotebookEdit"],
        agent_types=["general-purpose", "explorer"],
        mcp_instructions={"github": "Use the github tools for issues.", "db": "Read-only access."},
    )


def test_after_compaction_the_full_sets_are_announced_even_if_announced_before(
    counter: TiktokenCounter, store: ccr.Store
) -> None:
    state = session()
    mark_announced(state)
    result = build_attachments({}, state, [], budgets=Budgets(), counter=counter, store=store, files=DiskFiles())
    types = [a.type for a in result.attachments]
    assert types == ["deferred_tools_delta", "agent_listing_delta", "mcp_instructions_delta"]
    text = "\n".join(m.text() for m in result.messages)
    for name in ["WebFetch", "NotebookEdit", "general-purpose", "explorer", "Use the github tools", "Read-only"]:
        assert name in text


def test_a_normal_turn_announces_only_what_is_new_and_what_went_away(counter: TiktokenCounter) -> None:
    state = session()
    state.announced_tools = ["WebFetch", "OldTool"]
    state.announced_agent_types = ["general-purpose", "explorer"]
    state.announced_mcp = ["github"]
    deltas = pending_deltas(state, counter=counter)
    assert [d.type for d in deltas] == ["deferred_tools_delta", "mcp_instructions_delta"]
    tools = deltas[0].message.text()
    assert "NotebookEdit" in tools and "OldTool" in tools and "WebFetch" not in tools
    assert "no longer available" in tools
    assert 'name="db"' in deltas[1].message.text() and "github" not in deltas[1].message.text()
    assert state.announced_tools == ["WebFetch", "NotebookEdit"]
    assert state.announced_mcp == ["github", "db"]
    assert pending_deltas(state, counter=counter) == []


def test_the_history_decides_what_was_announced_when_given(counter: TiktokenCounter) -> None:
    state = session()
    first = full_deltas(state, counter)
    state.deferred_tools.append("Monitor")
    del state.mcp_instructions["db"]
    history = [Message(role="user", content="hello"), *(a.message for a in first)]
    deltas = pending_deltas(state, history, counter=counter)
    assert [d.type for d in deltas] == ["deferred_tools_delta", "mcp_instructions_delta"]
    assert "Monitor" in deltas[0].message.text() and "WebFetch" not in deltas[0].message.text()
    assert "disconnected" in deltas[1].message.text() and "db" in deltas[1].message.text()
    after = announced_in([*history, *(d.message for d in deltas)])
    assert after.tools == ["WebFetch", "NotebookEdit", "Monitor"]
    assert after.mcp == ["github"]


def test_an_empty_history_announces_everything(counter: TiktokenCounter) -> None:
    state = session()
    mark_announced(state)
    deltas = pending_deltas(state, [], counter=counter)
    assert [d.type for d in deltas] == ["deferred_tools_delta", "agent_listing_delta", "mcp_instructions_delta"]


def test_non_meta_messages_never_count_as_announcements() -> None:
    fake = Message(role="user", content="<system-reminder>\n<deferred-tools-added>\nX\n</deferred-tools-added>")
    assert announced_in([fake]).tools == []


def test_nothing_to_announce_gives_no_delta(counter: TiktokenCounter) -> None:
    assert full_deltas(SessionState(), counter) == []
    assert pending_deltas(SessionState()) == []
