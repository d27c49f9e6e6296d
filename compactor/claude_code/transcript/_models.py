"""Values the transcript package deals in: a transcript, its entries, recorded compactions, warnings.

Kept apart from the reader and the writer so that each (and the state
builder) can take them without importing the others. The public names are
re-exported by ``compactor.claude_code.transcript``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from compactor.core.messages import Message, ToolUseBlock
from compactor.core.session import SessionState

__all__ = [
    "Fragment",
    "ReadWarning",
    "RecordedCompaction",
    "SHAPE_KINDS",
    "Transcript",
    "TranscriptEntry",
    "WarningKind",
]

WarningKind = Literal[
    "malformed_json",
    "truncated_line",
    "invalid_utf8",
    "line_too_long",
    "not_an_object",
    "unknown_type",
    "bad_message",
    "orphan_tool_result",
    "unreadable_file",
    "duplicate_uuid",
    "mixed_sessions",
    "dangling_logical_parent",
    "dangling_parent",
    "fragment",
    "legacy_compaction",
    "lone_surrogate",
    "number_too_long",
    "cr_line_endings",
    "parent_cycle",
]
"""The kinds of bad input the reader reports and carries on after."""

SHAPE_KINDS: frozenset[WarningKind] = frozenset(
    {"dangling_logical_parent", "dangling_parent", "fragment", "legacy_compaction", "lone_surrogate"}
)
"""Shapes Claude Code itself writes, which the reader repairs: reported, but never an error under ``strict``.

A boundary (or another record) whose parent was never written, a file that
starts mid-session, a 1.0.x compaction without a boundary record, a lone
surrogate escape (JavaScript strings may hold half a pair, a cut emoji, and
``JSON.stringify`` writes it as ``\\ud83d``; the reader reads it as U+FFFD).
"""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReadWarning(_Model):
    """One problem found while reading a transcript; the reader carried on.

    ``line`` is the 1-based line number in ``file`` (None when the problem
    concerns the whole file).
    """

    file: str
    line: int | None
    kind: WarningKind
    message: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.message}"


class TranscriptEntry(_Model):
    """One step of a transcript: a message (possibly several records) or an event.

    ``kind`` is ``"message"`` for user and assistant messages,
    ``"compact_boundary"`` for a recorded compaction, and the record's
    ``type`` for anything else (``"system"``, ``"progress"``, ...).
    ``records`` are the raw JSON objects this entry was read from, in file
    order, and ``lines`` their 1-based line numbers: an assistant answer
    streamed as one record per content block is one entry with several
    records. ``message`` is None for events and for message records whose
    content does not fit the Messages shape (kept raw, with a warning).
    """

    line: int
    kind: str
    message: Message | None = None
    records: list[dict[str, Any]] = Field(default_factory=list)
    lines: list[int] = Field(default_factory=list)

    @property
    def uuid(self) -> str | None:
        """The uuid of the entry's first record, if it has one."""
        if not self.records:
            return None
        value = self.records[0].get("uuid")
        return value if isinstance(value, str) else None

    def structured_results(self) -> dict[str, Any]:
        """tool_use id -> Claude Code's structured output (``toolUseResult``) of the results this entry carries.

        A record holding several tool results cannot say which one its
        ``toolUseResult`` belongs to, so it gives none.
        """
        if self.message is None:
            return {}
        results: dict[str, Any] = {}
        for record in self.records:
            if "toolUseResult" not in record:
                continue
            message = record.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            ids = [
                b["tool_use_id"]
                for b in (content if isinstance(content, list) else [])
                if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str)
            ]
            if len(ids) == 1:
                results[ids[0]] = record["toolUseResult"]
        return results

    @property
    def record(self) -> dict[str, Any]:
        """The entry's first raw record (an empty dict when it has none)."""
        return self.records[0] if self.records else {}


class Fragment(_Model):
    """A transcript that starts mid-session: its first record's parent is in another file.

    ``first_usage_tokens`` is the context the first recorded request carried
    (``first_usage_line``): it holds the earlier, unseen part of the session
    as well as the system prompt and tools, so it bounds the unseen context
    from above. None when no answer recorded usage.
    """

    line: int
    parent_uuid: str
    first_usage_tokens: int | None = None
    first_usage_line: int | None = None


class RecordedCompaction(_Model):
    """A compaction Claude Code recorded in the transcript (a ``compact_boundary``).

    ``entry_index`` is the boundary's index in ``Transcript.entries``;
    ``message_index`` is the number of main-chain messages before it, so
    ``transcript.messages[:message_index]`` is the conversation it compacted.
    ``summary`` is the text of the compact-summary user message that
    follows the boundary, when there is one. A 1.0.x session wrote no
    boundary: its compaction is the summary message itself (``legacy``;
    ``line`` and ``entry_index`` are the summary's).
    """

    trigger: str
    pre_tokens: int | None = None
    post_tokens: int | None = None
    line: int
    uuid: str | None = None
    entry_index: int
    message_index: int
    summary: str | None = None
    summary_line: int | None = None
    legacy: bool = False


class Transcript(BaseModel):
    """One Claude Code session as read from its JSONL file.

    ``entries`` is the main chain in order; ``off_chain`` holds every other
    record of the file (metadata such as ``file-history-snapshot``,
    abandoned branches, inline sidechain records, progress records off the
    chain), so that writing the transcript gives the file back.
    ``messages`` are the main chain's messages (without boundaries);
    ``state`` is the rebuilt session state as of the end.
    ``sidechains`` maps an agent id to its messages (inline sidechains are
    keyed by their ``agentId``, else by the uuid of their first record);
    ``subagents`` holds the ``subagents/agent-<id>.jsonl`` files read in full.
    ``unknown`` keeps the records whose entry type is not known, as they are.
    """

    model_config = ConfigDict(extra="forbid")

    path: str
    session_id: str | None = None
    entries: list[TranscriptEntry] = Field(default_factory=list)
    off_chain: list[TranscriptEntry] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    state: SessionState = Field(default_factory=SessionState)
    compactions: list[RecordedCompaction] = Field(default_factory=list)
    sidechains: dict[str, list[Message]] = Field(default_factory=dict)
    subagents: dict[str, Transcript] = Field(default_factory=dict)
    warnings: list[ReadWarning] = Field(default_factory=list)
    unknown: list[dict[str, Any]] = Field(default_factory=list)
    fragment: Fragment | None = None
    """Set when the file starts mid-session (its first record's parent is elsewhere)."""

    def tool_uses(self) -> list[ToolUseBlock]:
        """Every tool call in the main chain, in order, once per tool_use id."""
        seen: set[str] = set()
        calls: list[ToolUseBlock] = []
        for message in self.messages:
            for call in message.tool_uses():
                if call.id not in seen:
                    seen.add(call.id)
                    calls.append(call)
        return calls
