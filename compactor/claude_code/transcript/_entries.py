"""Turning a chain's records into entries, messages and recorded compactions.

The records of one streamed answer become one entry and one ``Message``
(``_build_entries``, ``_to_message``); a record that is not a message is an
entry built without validation (``_event``); the compactions Claude Code
recorded are found among the entries (``_compactions``), and inline
sidechains are grouped by agent (``_inline_sidechains``).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from compactor.claude_code.transcript._chain import _MESSAGE_TYPES, _block_ids, _is_message_record, _message_id
from compactor.claude_code.transcript._lines import Record, Reporter
from compactor.claude_code.transcript._models import RecordedCompaction, TranscriptEntry
from compactor.core.client_text import take_queued
from compactor.core.messages import Message, Usage
from compactor.summarizers.prompts import QUEUED_MESSAGE

__all__ = ["_build_entries", "_compactions", "_deliver_queued", "_event", "_inline_sidechains"]


def _event(record: Record) -> TranscriptEntry:
    """A record that is not a message, as an entry; most lines of newer files are such records.

    Built without validation: its fields are a line number, a kind string and
    the parsed record itself, right by construction, and validating each of
    them (progress and snapshot records are up to 75% of a file) was a
    measurable share of reading.
    """
    return TranscriptEntry.model_construct(
        line=record.line, kind=_kind(record.data), message=None, records=[record.data], lines=[record.line]
    )


def _kind(data: dict[str, Any]) -> str:
    kind = data.get("type")
    if kind == "system" and data.get("subtype") == "compact_boundary":
        return "compact_boundary"
    if kind in _MESSAGE_TYPES:
        return "message"
    return kind if isinstance(kind, str) else "unknown"


def _build_entries(chain: list[Record], report: Reporter) -> list[TranscriptEntry]:
    """Group chain records into entries, merging the records of one streamed answer."""
    entries: list[TranscriptEntry] = []
    open_answer: tuple[str, int] | None = None
    for record in chain:
        data = record.data
        if not _is_message_record(data):
            entries.append(_event(record))
            continue
        if data["type"] == "assistant":
            mid = _message_id(data)
            if open_answer is not None and mid is not None and open_answer[0] == mid:
                entry = entries[open_answer[1]]
                entry.records.append(data)
                entry.lines.append(record.line)
                continue
            open_answer = (mid, len(entries)) if mid is not None else None
        elif not _block_ids(data, "tool_result", "tool_use_id"):
            open_answer = None
        # Built without validation, as ``_event``: a line number, a kind and the parsed record, right by
        # construction (validating copied every record); the message is validated below.
        entries.append(
            TranscriptEntry.model_construct(
                line=record.line, kind="message", message=None, records=[data], lines=[record.line]
            )
        )
    for entry in entries:
        if entry.kind == "message":
            entry.message = _to_message(entry, report)
    return entries


def _to_message(entry: TranscriptEntry, report: Reporter) -> Message | None:
    first = entry.records[0]
    body: dict[str, Any] = first["message"]
    content: Any
    if len(entry.records) == 1:
        content = body.get("content", "")
    else:
        content = []
        for record in entry.records:
            part = record["message"].get("content")
            if isinstance(part, list):
                content.extend(part)
            elif isinstance(part, str) and part:
                content.append({"type": "text", "text": part})
    usage_data = entry.records[-1]["message"].get("usage")
    usage: Usage | None = None
    if isinstance(usage_data, dict):
        try:
            usage = Usage.model_validate(usage_data)
        except ValidationError:
            usage = None
    agent = first.get("agentId")
    try:
        return Message.model_validate(
            {
                "role": first["type"],
                "content": content,
                "uuid": first.get("uuid") if isinstance(first.get("uuid"), str) else None,
                "timestamp": first.get("timestamp") if isinstance(first.get("timestamp"), str) else None,
                "message_id": _message_id(first),
                "model": body.get("model") if isinstance(body.get("model"), str) else None,
                "usage": usage,
                "is_meta": first.get("isMeta") is True,
                "is_compact_summary": first.get("isCompactSummary") is True,
                "agent_id": agent if isinstance(agent, str) else None,
            }
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error.get("loc", ()))
        report(
            entry.line,
            "bad_message",
            f"message does not fit the Messages shape ({where}: {error.get('msg')}); kept raw",
        )
        return None


def _compactions(entries: list[TranscriptEntry]) -> list[RecordedCompaction]:
    found: list[RecordedCompaction] = []
    messages_before = 0
    after_boundary = False
    for index, entry in enumerate(entries):
        if entry.message is not None:
            if entry.message.is_compact_summary and not after_boundary:
                found.append(_legacy_compaction(entry, index, messages_before))
            after_boundary = False
            messages_before += 1
            continue
        if entry.kind != "compact_boundary":
            continue
        after_boundary = True
        meta = entry.record.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        summary = next(
            (
                e
                for e in entries[index + 1 :]
                if (e.message is not None and e.message.is_compact_summary) or e.kind == "compact_boundary"
            ),
            None,
        )
        if summary is not None and summary.message is None:
            summary = None
        trigger = meta.get("trigger")
        found.append(
            RecordedCompaction(
                trigger=trigger if isinstance(trigger, str) else "auto",
                pre_tokens=_int(meta.get("preTokens")),
                post_tokens=_int(meta.get("postTokens")),
                line=entry.line,
                uuid=entry.uuid,
                entry_index=index,
                message_index=messages_before,
                summary=summary.message.text() if summary is not None and summary.message else None,
                summary_line=summary.line if summary is not None else None,
            )
        )
    return found


def _legacy_compaction(entry: TranscriptEntry, index: int, messages_before: int) -> RecordedCompaction:
    """A 1.0.x compaction: the compact summary is all it wrote (no boundary, no metadata)."""
    assert entry.message is not None
    return RecordedCompaction(
        trigger="auto",
        line=entry.line,
        uuid=entry.uuid,
        entry_index=index,
        message_index=messages_before,
        summary=entry.message.text(),
        summary_line=entry.line,
        legacy=True,
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _inline_sidechains(records: list[Record], chain: set[int], report: Reporter) -> dict[str, list[Message]]:
    side = {i for i, r in enumerate(records) if i not in chain and r.data.get("isSidechain") is True}
    if not side:
        return {}
    index_of = {r.data["uuid"]: i for i, r in enumerate(records) if i in side and isinstance(r.data.get("uuid"), str)}
    root: dict[int, int] = {}
    for i in sorted(side):
        parent = records[i].data.get("parentUuid")
        j = index_of.get(parent) if isinstance(parent, str) else None
        root[i] = root.get(j, j) if j is not None and j < i else i
    groups: dict[int, list[Record]] = {}
    for i in sorted(side):
        groups.setdefault(root[i], []).append(records[i])
    sidechains: dict[str, list[Message]] = {}
    for start, group in groups.items():
        agent = next((r.data["agentId"] for r in group if isinstance(r.data.get("agentId"), str)), None)
        key = agent or records[start].data.get("uuid") or f"line-{records[start].line}"
        messages = [e.message for e in _build_entries(group, report) if e.message is not None]
        sidechains.setdefault(str(key), []).extend(messages)
    return sidechains


def _deliver_queued(entries: list[TranscriptEntry], records: list[Record]) -> list[TranscriptEntry]:
    """``entries`` with the messages the user queued while the agent worked, as the model got them.

    Claude Code records such a message only as ``queue-operation`` lines; which of them reach the
    model with a request is ``client_text.take_queued``'s to say. Each becomes a user message of its
    own, in ``QUEUED_MESSAGE``'s words, after the chain's messages up to the line that took it, and
    after the results of a call that was in flight there, so that a call and its result stay
    together. These entries have no records of their own: a transcript written back keeps Claude
    Code's own lines.
    """
    waiting: list[str] = []
    taken: list[tuple[int, str]] = []
    for record in records:
        data = record.data
        if data.get("type") != "queue-operation":
            continue
        delivered = take_queued(waiting, data.get("operation"), data.get("content"))
        taken.extend((record.line, text) for text in delivered)
    if not taken:
        return entries
    out = list(entries)
    for line, text in taken:
        at = next((i for i, e in enumerate(out) if e.line > line and e.records), len(out))
        before = next((e.message for e in reversed(out[:at]) if e.message is not None), None)
        if before is not None and before.role == "assistant" and before.tool_uses():
            # A call was in flight: the message went with its results.
            at = next((i + 1 for i in range(at, len(out)) if out[i].message is not None), len(out))
        message = Message(role="user", content=QUEUED_MESSAGE.format(text=text))
        out.insert(
            at, TranscriptEntry.model_construct(line=line, kind="message", message=message, records=[], lines=[])
        )
    return out
