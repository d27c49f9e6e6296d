"""Writing Claude Code JSONL: a transcript back as it was read, or a new chain of messages.

Every write follows the project's output rule (``ccr.files``): never over a
database, an input or a device, through a temporary file created 0600 and a
rename, so a reader never sees half a file.
"""

from __future__ import annotations

import json
import os
import uuid as uuidlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from compactor.claude_code.transcript._models import Transcript, TranscriptEntry
from compactor.core.errors import TranscriptWriteError
from compactor.core.messages import ContentBlock, Message, ToolResultBlock, ToolUseBlock
from compactor.summarizers.prompts import is_queued_text

__all__ = ["boundary_entry", "compaction_entries", "refuse_overwriting", "write_atomically", "write_transcript"]

_SESSION_FIELDS = ("userType", "cwd", "sessionId", "version", "gitBranch", "timestamp")
"""The fields Claude Code puts on every record of a session."""

_CHAIN_TYPES = frozenset({"user", "assistant", "system", "progress", "attachment"})
_UUID_NAMESPACE = uuidlib.UUID("6f1c2e0a-53d4-4c59-9a34-0c0b8f1f7a11")


def boundary_entry(
    trigger: str,
    pre_tokens: int,
    post_tokens: int | None = None,
    *,
    content: str = "Conversation compacted",
    timestamp: str | None = None,
) -> TranscriptEntry:
    """A ``compact_boundary`` entry to write between messages (see ``write_transcript``)."""
    metadata: dict[str, Any] = {"trigger": trigger, "preTokens": pre_tokens}
    if post_tokens is not None:
        metadata["postTokens"] = post_tokens
    record: dict[str, Any] = {
        "type": "system",
        "subtype": "compact_boundary",
        "content": content,
        "isMeta": False,
        "level": "info",
        "compactMetadata": metadata,
    }
    if timestamp is not None:
        record["timestamp"] = timestamp
    return TranscriptEntry(line=0, kind="compact_boundary", records=[record], lines=[0])


def compaction_entries(
    trigger: str,
    pre_tokens: int,
    post_tokens: int,
    messages: Sequence[Message],
    *,
    like: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> list[TranscriptEntry]:
    """The entries Claude Code writes for one compaction, to write in a chain (see ``write_transcript``).

    ``messages`` is the compacted context: the summary, the preserved tail,
    then the attachments (meta user messages). They become a
    ``compact_boundary``, the compact-summary user record, the tail
    re-written after it, and one meta user record per attachment, in that
    order. Each record takes the session fields (``sessionId``, ``cwd``,
    ``version``, ``gitBranch``, ``userType``, ``timestamp``) of ``like``, the
    record the compaction happened at. The tail's copies get new uuids (its
    originals stay before the boundary) and lose the usage that described
    the context before it. ``metadata`` joins the boundary's ``compactMetadata``.
    """
    fields = {k: like[k] for k in _SESSION_FIELDS if like is not None and k in like}
    boundary = boundary_entry(trigger, pre_tokens, post_tokens, timestamp=fields.get("timestamp"))
    boundary.records[0]["compactMetadata"].update(metadata or {})
    entries = [boundary]
    for message in messages:
        copy = message.model_copy(update={"uuid": None, "usage": None, "timestamp": fields.get("timestamp")})
        entries.append(TranscriptEntry(line=0, kind="message", message=copy))
    for entry in entries:
        entry.records = [{**fields, **r} for _, r in _render(entry)]
        entry.lines = [0] * len(entry.records)
        if entry.message is not None and entry.message.is_compact_summary:
            entry.records[0]["isVisibleInTranscriptOnly"] = True  # as Claude Code marks its summary
    return entries


def write_transcript(
    source: Transcript | Sequence[Message | TranscriptEntry],
    path: str | Path,
    *,
    session_id: str | None = None,
    cwd: str | None = None,
    inputs: Iterable[str | Path] = (),
) -> None:
    """Write Claude Code-compatible JSONL (never over one of ``inputs``).

    A ``Transcript`` is written back record for record in its original line
    order (message records carry their ``Message``'s current content, so an
    edited transcript writes its edits), with its subagents under
    ``<path without .jsonl>/subagents/``; reading the result gives the same
    model again. A sequence of messages and entries is written as a new
    chain: each record's ``parentUuid`` names the one before (a compaction
    boundary gets ``parentUuid: null`` and ``logicalParentUuid``), and
    records without a uuid get a deterministic one.

    Raises:
        OutputRefused: the path is a database, an input or not a regular file (a ``UsageError``).
        TranscriptWriteError: the file could not be written.
    """
    target = Path(path)
    inputs = list(inputs)
    if isinstance(source, Transcript):
        lines = _transcript_records(source)
        subagents = source.subagents
    else:
        lines = _chain_records(source, session_id=session_id, cwd=cwd)
        subagents = {}
    _write_jsonl(target, lines, inputs)
    for agent_id, sub in subagents.items():
        write_transcript(sub, target.parent / target.stem / "subagents" / f"agent-{agent_id}.jsonl", inputs=inputs)


def _transcript_records(transcript: Transcript) -> list[dict[str, Any]]:
    numbered: list[tuple[int, dict[str, Any]]] = []
    for entry in transcript.entries:
        if not entry.records and entry.message is not None and is_queued_text(entry.message.text()):
            continue  # a queued message the reader delivered: Claude Code's own line is in off_chain
        numbered.extend(_render(entry))
    for entry in transcript.off_chain:
        numbered.extend(zip(entry.lines, entry.records, strict=False))
    numbered.sort(key=lambda pair: pair[0])
    return [record for _, record in numbered]


def _render(entry: TranscriptEntry) -> list[tuple[int, dict[str, Any]]]:
    """The entry's records, with message content and usage taken from its ``Message``."""
    message = entry.message
    if message is None:
        return list(zip(entry.lines or [entry.line] * len(entry.records), entry.records, strict=False))
    if not entry.records:
        return [(entry.line, _new_record(message))]
    records = [{**r, "message": dict(r.get("message") or {})} for r in entry.records]
    lines = list(entry.lines) if len(entry.lines) == len(records) else [entry.line] * len(records)
    content = _dump_content(message.content)
    counts = [len(c) if isinstance(c := r["message"].get("content"), list) else None for r in records]
    if isinstance(content, list) and len(records) > 1 and None not in counts and sum(counts) == len(content):  # type: ignore[arg-type]
        position = 0
        for record, count in zip(records, counts, strict=True):
            assert count is not None
            record["message"]["content"] = content[position : position + count]
            position += count
    else:
        records, lines = records[:1], lines[:1]
        records[0]["message"]["content"] = content
    if message.usage is not None:
        records[-1]["message"]["usage"] = message.usage.model_dump(mode="json", exclude_unset=True)
    first = records[0]
    if (first.get("isMeta") is True) != message.is_meta:
        first["isMeta"] = message.is_meta
    if (first.get("isCompactSummary") is True) != message.is_compact_summary:
        first["isCompactSummary"] = message.is_compact_summary
    return list(zip(lines, records, strict=True))


def _dump_content(content: str | list[ContentBlock]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    return [_dump_block(block) for block in content]


def _dump_block(block: ContentBlock) -> dict[str, Any]:
    """A block as JSON with exactly the fields it was given (plus ``type``)."""
    data = block.model_dump(mode="json", exclude_unset=True)
    data = {"type": block.type, **{k: v for k, v in data.items() if k != "type"}}
    if isinstance(block, ToolUseBlock):
        data.setdefault("id", block.id)
        data.setdefault("name", block.name)
        data.setdefault("input", block.input)
    if isinstance(block, ToolResultBlock) and isinstance(block.content, list):
        data["content"] = [_dump_block(b) for b in block.content]
    return data


def _new_record(message: Message) -> dict[str, Any]:
    body: dict[str, Any]
    if message.role == "assistant":
        body = {"type": "message", "role": "assistant"}
        if message.message_id is not None:
            body["id"] = message.message_id
        if message.model is not None:
            body["model"] = message.model
        body["content"] = _dump_content(message.content)
        if message.usage is not None:
            body["usage"] = message.usage.model_dump(mode="json")
    else:
        body = {"role": "user", "content": _dump_content(message.content)}
    record: dict[str, Any] = {"parentUuid": None, "isSidechain": message.agent_id is not None}
    if message.agent_id is not None:
        record["agentId"] = message.agent_id
    record["type"] = message.role
    record["message"] = body
    if message.uuid is not None:
        record["uuid"] = message.uuid
    if message.timestamp is not None:
        record["timestamp"] = message.timestamp
    if message.is_meta:
        record["isMeta"] = True
    if message.is_compact_summary:
        record["isCompactSummary"] = True
    return record


def _chain_records(
    items: Sequence[Message | TranscriptEntry], *, session_id: str | None, cwd: str | None
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    previous: str | None = None
    for item in items:
        rendered = [_new_record(item)] if isinstance(item, Message) else [r for _, r in _render(item)]
        for raw in rendered:
            record = dict(raw)
            if session_id is not None:
                record["sessionId"] = session_id
            if cwd is not None:
                record.setdefault("cwd", cwd)
            if record.get("type") in _CHAIN_TYPES:
                key = record.get("uuid")
                if not isinstance(key, str):
                    key = str(uuidlib.uuid5(_UUID_NAMESPACE, f"{session_id or ''}/{len(out)}"))
                if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
                    record["parentUuid"] = None
                    record["logicalParentUuid"] = previous
                else:
                    record["parentUuid"] = previous
                record["uuid"] = key
                previous = key
            out.append(record)
    return out


def _encode(record: dict[str, Any]) -> bytes:
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # lone surrogates: keep them as JSON escapes
        return json.dumps(record, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def _write_jsonl(path: Path, records: list[dict[str, Any]], inputs: Iterable[str | Path] = ()) -> None:
    """Write ``records`` as JSONL through ``write_atomically``."""
    write_atomically(path, (_encode(record) for record in records), inputs=inputs)


def write_atomically(path: Path, chunks: Iterable[bytes], *, inputs: Iterable[str | Path] = ()) -> None:
    """Write ``chunks`` by the project's output rule (``ccr.files.write_output``): whole or not at all, 0600.

    Raises:
        OutputRefused: the path is a database, one of ``inputs`` or not a regular file (a ``UsageError``).
        TranscriptWriteError: the file system refused; no temporary file is left behind.
    """
    from ccr.files import describe_os_error, write_output

    try:
        write_output(path, chunks, inputs=inputs, what="transcript", make_folders=True)
    except OSError as exc:
        raise TranscriptWriteError(f"{path}: cannot write transcript: {describe_os_error(exc)}") from exc


def refuse_overwriting(
    source: str | Path | None,
    output: str | Path,
    *,
    what: str = "transcript",
    protected: Iterable[str | Path | None] = (),
) -> None:
    """Refuse, before any work, an output that would replace what it is made from, a database or a device.

    ``source`` (``what`` names it in the message) and ``protected`` are never
    written over; the rest of the rule is ``ccr.files.check_output``'s.

    Raises:
        OutputRefused: ``output`` names ``source`` (also through a link), a database or a file that is not
            regular (a ``UsageError``, exit 2).
    """
    from ccr.errors import OutputRefused
    from ccr.files import check_output

    if source is not None:
        same = Path(source).resolve() == Path(output).resolve()
        if not same:
            try:
                same = os.path.samefile(source, output)
            except OSError:
                same = False
        if same:
            raise OutputRefused(f"{output}: the output would overwrite the {what} it is made from; choose another path")
    check_output(output, inputs=[source], protected=protected, what="output")
