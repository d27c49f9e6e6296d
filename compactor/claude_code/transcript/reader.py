"""Reading Claude Code transcripts (JSONL session files) into a ``Transcript``.

Reading streams the file line by line (binary, decoded per line) and keeps
every record, so nothing is lost on the way back out:

- the **main chain** is followed by ``parentUuid`` from the last message
  record back to the root, across compaction boundaries (a
  ``compact_boundary`` has ``parentUuid: null`` and names the record before
  it in ``logicalParentUuid``). Claude Code stores parallel tool calls as
  sibling branches, so the assistant records that share a ``message.id``
  with a chain record, and the tool results answering them, are taken in
  too; the chain is then put back in file order;
- an assistant answer streamed as one record per content block becomes one
  ``Message`` (one entry with several records);
- sidechains (``isSidechain: true`` records, and the ``subagents/agent-*.jsonl``
  files next to the session) are kept apart, keyed by agent id;
- records of entry types this version does not know are kept as they are;
- what Claude Code meant is followed where its links fall short: a record
  (a ``compact_boundary`` above all) whose parent was never written, and a
  1.0.x compact summary written as a new root, link to the last main-chain
  record before them in file order; a file that starts mid-session is a
  ``Fragment``; a record appended twice is read once; a file holding two
  sessions is read as its last one (``read_sessions`` reads each).

Bad input (a malformed, truncated, non-UTF-8 or oversized line, an unknown
entry type, a tool result without its call, a subagent file that cannot be
opened, a repeated uuid, a second session) becomes a ``ReadWarning`` naming
``file:line`` and the reader carries on; ``strict=True`` raises
``TranscriptError`` on the first one instead, except for the shapes Claude
Code writes itself (``SHAPE_KINDS``), which are repaired and reported.

The ``SessionState`` is rebuilt with ``StateBuilder``, which a replay can
drive itself, entry by entry, to get the state as of any point.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from compactor.core.errors import TranscriptError
from compactor.core.messages import Message, Usage
from compactor.core.session import MAIN_AGENT
from compactor.claude_code.transcript._lines import MAX_LINE_BYTES, Record, Reporter, _iter_records, make_reporter
from compactor.claude_code.transcript._models import (
    SHAPE_KINDS,
    Fragment,
    ReadWarning,
    RecordedCompaction,
    Transcript,
    TranscriptEntry,
)
from compactor.claude_code.transcript.state import StateBuilder

__all__ = ["KNOWN_ENTRY_TYPES", "read_sessions", "read_transcript"]

KNOWN_ENTRY_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "progress",
        "attachment",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "custom-title",
        "tag",
        "agent-name",
        "last-prompt",
        "pr-link",
        # metadata records of 2.1.3xx clients (request shapes, cost, mode); no conversation in them
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "atis-latch",
        "cost-state",
        "mode",
        "tools-used",
    }
)
"""Entry types Claude Code writes that the reader knows; others get a warning."""

_MESSAGE_TYPES = frozenset({"user", "assistant"})


def read_transcript(
    path: str | Path,
    *,
    strict: bool = False,
    warn: Callable[[ReadWarning], None] | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    subagents: bool = True,
    state: bool = True,
    on_read: Callable[[int], None] | None = None,
) -> Transcript:
    """Read a Claude Code session file into a ``Transcript``.

    ``on_read(n)`` hears of every ``n`` bytes of the session file read.

    With ``state=False`` the session state is not rebuilt (``Transcript.state``
    stays empty): a replay rebuilds it itself, message by message, and would
    only throw this one away.

    ``warn`` is called with each problem as it is found (they are also
    collected in ``Transcript.warnings``). With ``subagents`` the
    ``agent-*.jsonl`` files in ``<session>/subagents/`` (or a ``subagents``
    folder beside the file) that belong to the same session are read too;
    one that cannot be opened is a warning, and the bad lines of a file that
    belongs to another session are not reported.

    Raises:
        TranscriptNotFound: the file does not exist.
        TranscriptError: the file cannot be read, or (strict) it holds bad data.
    """
    transcript = _read_one(
        Path(path), strict=strict, warn=warn, max_line_bytes=max_line_bytes, state=state, on_read=on_read
    )
    if not subagents:
        return transcript

    def pass_on(warning: ReadWarning) -> None:
        if strict and warning.kind not in SHAPE_KINDS:
            raise TranscriptError(str(warning))
        transcript.warnings.append(warning)
        if warn is not None:
            warn(warning)

    for agent_id, file in _subagent_files(Path(path)):
        # Read leniently first: only a file of this session may warn or fail the read.
        try:
            sub = _read_one(file, strict=False, warn=None, max_line_bytes=max_line_bytes, agent_id=agent_id)
        except TranscriptError as exc:
            cause = exc.__cause__
            reason = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(exc)
            message = f"subagent file cannot be read ({reason}); skipped"
            pass_on(ReadWarning(file=str(file), line=None, kind="unreadable_file", message=message))
            continue
        if transcript.session_id and sub.session_id and sub.session_id != transcript.session_id:
            continue
        for warning in sub.warnings:
            pass_on(warning)
        transcript.subagents[agent_id] = sub
        transcript.sidechains[agent_id] = sub.messages
        for owner, skills in sub.state.skills.items():
            transcript.state.skills.setdefault(owner, []).extend(skills)
    return transcript


def _subagent_files(path: Path) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    for folder in (path.parent / path.stem / "subagents", path.parent / "subagents"):
        if not folder.is_dir():
            continue
        for file in sorted(folder.glob("agent-*.jsonl")):
            resolved = file.resolve()
            if resolved in seen or resolved == path.resolve():
                continue
            seen.add(resolved)
            found.append((file.stem[len("agent-") :], file))
    return found


def read_sessions(
    path: str | Path,
    *,
    strict: bool = False,
    warn: Callable[[ReadWarning], None] | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> list[Transcript]:
    """Every session a file holds, each read on its own, in the order they first appear.

    A file copied together by some tool can hold two ``sessionId``s;
    ``read_transcript`` reads its last session only. Bad lines are reported
    with the first session; subagent files are not read.

    Raises:
        TranscriptNotFound: the file does not exist.
        TranscriptError: the file cannot be read, or (strict) it holds bad data.
    """
    file = Path(path)
    lines: list[ReadWarning] = []
    records = list(_iter_records(file, make_reporter(str(file), strict=strict, warn=warn, sink=lines), max_line_bytes))
    ids = _session_of_each(records)
    sessions: list[Transcript] = []
    for session in dict.fromkeys(ids):
        warnings = [] if sessions else lines
        report = make_reporter(str(file), strict=strict, warn=warn, sink=warnings)
        mine = [r for r, i in zip(records, ids, strict=True) if i == session]
        transcript = _assemble(str(file), mine, report, MAIN_AGENT)
        transcript.warnings = warnings
        sessions.append(transcript)
    return sessions


def _read_one(
    path: Path,
    *,
    strict: bool,
    warn: Callable[[ReadWarning], None] | None,
    max_line_bytes: int,
    agent_id: str = MAIN_AGENT,
    state: bool = True,
    on_read: Callable[[int], None] | None = None,
) -> Transcript:
    warnings: list[ReadWarning] = []
    report = make_reporter(str(path), strict=strict, warn=warn, sink=warnings)
    records = list(_iter_records(path, report, max_line_bytes, on_read))
    transcript = _assemble(str(path), records, report, agent_id, state=state)
    transcript.warnings = warnings
    return transcript


def _assemble(path: str, records: list[Record], report: Reporter, agent_id: str, *, state: bool = True) -> Transcript:
    unknown: list[dict[str, Any]] = []
    for record in records:
        kind = record.data.get("type")
        if not isinstance(kind, str) or kind not in KNOWN_ENTRY_TYPES:
            report(record.line, "unknown_type", f"unknown entry type {kind!r}; kept as-is")
            unknown.append(record.data)
    records, set_aside = _first_of_each_uuid(records, report)
    session_id, records, other_sessions = _one_session(records, report)
    set_aside.extend(other_sessions)
    by_uuid: dict[str, int] = {}
    for index, record in enumerate(records):
        key = record.data.get("uuid")
        if isinstance(key, str):
            by_uuid[key] = index
    chain, root = _main_chain(records, by_uuid, report)
    entries = _build_entries([records[i] for i in sorted(chain)], report)
    off_chain = [
        _event(r)
        for r in sorted((*(r for i, r in enumerate(records) if i not in chain), *set_aside), key=lambda r: r.line)
    ]
    builder = StateBuilder(agent_id=agent_id)
    _replay_state(entries, builder if state else None, report)
    messages = [e.message for e in entries if e.message is not None]
    fragment = _fragment(records, root, entries, by_uuid, report) if agent_id == MAIN_AGENT else None
    return Transcript(
        path=path,
        session_id=session_id,
        entries=entries,
        off_chain=off_chain,
        messages=messages,
        state=builder.state,
        compactions=_compactions(entries),
        sidechains=_inline_sidechains(records, chain, report),
        unknown=unknown,
        fragment=fragment,
    )


def _first_of_each_uuid(records: list[Record], report: Reporter) -> tuple[list[Record], list[Record]]:
    """Records appended twice (same ``uuid``): keep the first, set the others aside."""
    first: dict[str, int] = {}
    kept: list[Record] = []
    repeats: list[Record] = []
    for record in records:
        key = record.data.get("uuid")
        if not isinstance(key, str):
            kept.append(record)
        elif key in first:
            report(record.line, "duplicate_uuid", f"uuid {key} already read at line {first[key]}; the repeat is ignored")
            repeats.append(record)
        else:
            first[key] = record.line
            kept.append(record)
    return kept, repeats


def _one_session(records: list[Record], report: Reporter) -> tuple[str | None, list[Record], list[Record]]:
    """The records of the file's last session, and those of any other (see ``read_sessions``).

    A record without a ``sessionId`` (a ``file-history-snapshot``, say)
    belongs to the session of the records around it: the last one seen.
    """
    ids = _session_of_each(records)
    sessions = list(dict.fromkeys(i for i in ids if i is not None))
    if len(sessions) < 2:
        return (sessions[0] if sessions else None), records, []
    chosen = sessions[-1]
    report(
        None,
        "mixed_sessions",
        f"the file holds {len(sessions)} sessions ({', '.join(sessions)}); reading {chosen}, "
        "the others are set aside (`compactor replay --session ID` replays another; read_sessions reads each)",
    )
    mine = [r for r, i in zip(records, ids, strict=True) if i in (chosen, None)]
    others = [r for r, i in zip(records, ids, strict=True) if i not in (chosen, None)]
    return chosen, mine, others


def _session_of_each(records: list[Record]) -> list[str | None]:
    ids: list[str | None] = []
    current: str | None = None
    for record in records:
        value = record.data.get("sessionId")
        if isinstance(value, str):
            current = value
        ids.append(current)
    # Records before the first sessionId belong to the first session.
    first = next((i for i in ids if i is not None), None)
    return [first if i is None else i for i in ids]


def _fragment(
    records: list[Record], root: int | None, entries: list[TranscriptEntry], by_uuid: dict[str, int], report: Reporter
) -> Fragment | None:
    """The chain starts at a record whose parent is not in the file: the session began elsewhere."""
    if root is None:
        return None
    data = records[root].data
    parent = data.get("parentUuid")
    if not isinstance(parent, str) or parent in by_uuid:
        return None
    first = next((e for e in entries if e.message is not None and e.message.usage is not None), None)
    usage = first.message.usage.total if first is not None and first.message and first.message.usage else None
    found = Fragment(
        line=records[root].line,
        parent_uuid=parent,
        first_usage_tokens=usage,
        first_usage_line=first.lines[-1] if first is not None else None,
    )
    seen = f"; the first recorded request carried {usage:,} tokens" if usage is not None else ""
    report(found.line, "fragment", f"the session starts mid-way: parent {parent} is not in this file{seen}")
    return found


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


def _is_message_record(data: dict[str, Any]) -> bool:
    return data.get("type") in _MESSAGE_TYPES and isinstance(data.get("message"), dict)


def _content_list(data: dict[str, Any]) -> list[Any]:
    message = data.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def _block_ids(data: dict[str, Any], block_type: str, key: str) -> list[str]:
    return [
        b[key]
        for b in _content_list(data)
        if isinstance(b, dict) and b.get("type") == block_type and isinstance(b.get(key), str)
    ]


def _message_id(data: dict[str, Any]) -> str | None:
    message = data.get("message")
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, str) else None


def _main_chain(records: list[Record], by_uuid: dict[str, int], report: Reporter) -> tuple[set[int], int | None]:
    """Indexes of the main chain's records (walked back from the last message), and its root.

    A compaction boundary whose logical parent was never written, and a
    1.0.x compact summary (a root with no boundary before it), link to the
    last main-chain record before them in file order: that is what Claude
    Code meant, and following the links alone would lose everything before.
    """
    leaf = _leaf(records)
    if leaf is None:
        return set(), None
    sidechain = records[leaf].data.get("isSidechain") is True
    chain: set[int] = set()
    index: int | None = leaf
    root: int | None = None
    while index is not None and index not in chain:
        chain.add(index)
        root = index
        data = records[index].data
        parent = data.get("parentUuid") or data.get("logicalParentUuid")
        index = by_uuid.get(parent) if isinstance(parent, str) else None
        if index is None and not sidechain:
            index = _implied_parent(records, root, report)
    _recover_parallel_calls(records, chain, sidechain)
    return chain, root


def _implied_parent(records: list[Record], index: int, report: Reporter) -> int | None:
    """The record that a record whose link is missing follows: the last main-chain record before it.

    That is a boundary whose logical parent was never written, a 1.0.x
    compact summary (a root), or a record whose parent was never written
    (seen on progress records around a compaction). A record with no
    main-chain record before it starts the file: the chain's true root, or
    a fragment's first record.
    """
    data = records[index].data
    parent = data.get("parentUuid")
    boundary = data.get("type") == "system" and data.get("subtype") == "compact_boundary"
    legacy = data.get("type") == "user" and data.get("isCompactSummary") is True and parent is None
    if not boundary and not legacy and not isinstance(parent, str):
        return None
    before = next(
        (
            i
            for i in range(index - 1, -1, -1)
            if records[i].data.get("isSidechain") is not True
            and isinstance(records[i].data.get("uuid"), str)
            and (_is_message_record(records[i].data) or records[i].data.get("type") in ("system", "attachment"))
        ),
        None,
    )
    if before is None:
        return None
    line = records[index].line
    if boundary:
        named = data.get("logicalParentUuid")
        report(
            line,
            "dangling_logical_parent",
            f"compact_boundary's logicalParentUuid {named} is not in the file; linked to line {records[before].line}",
        )
    elif legacy:
        report(line, "legacy_compaction", f"compact summary with no compact_boundary (1.0.x); linked to line {records[before].line}")
    else:
        report(line, "dangling_parent", f"parentUuid {parent} is not in the file; linked to line {records[before].line}")
    return before


def _leaf(records: list[Record]) -> int | None:
    last_any: int | None = None
    for index in range(len(records) - 1, -1, -1):
        data = records[index].data
        if not _is_message_record(data) or not isinstance(data.get("uuid"), str):
            continue
        if data.get("isSidechain") is not True:
            return index
        if last_any is None:
            last_any = index
    return last_any


def _recover_parallel_calls(records: list[Record], chain: set[int], sidechain: bool) -> None:
    """Take in sibling records of chain answers and the results answering them."""
    same_side = [
        i for i, r in enumerate(records) if (r.data.get("isSidechain") is True) == sidechain
    ]
    answer_ids = {
        mid for i in chain if records[i].data.get("type") == "assistant" and (mid := _message_id(records[i].data))
    }
    for i in same_side:
        data = records[i].data
        if i not in chain and data.get("type") == "assistant" and _message_id(data) in answer_ids:
            chain.add(i)
    calls = {cid for i in chain for cid in _block_ids(records[i].data, "tool_use", "id")}
    answered = {rid for i in chain for rid in _block_ids(records[i].data, "tool_result", "tool_use_id")}
    for i in same_side:
        data = records[i].data
        if i in chain or data.get("type") != "user":
            continue
        ids = _block_ids(data, "tool_result", "tool_use_id")
        if ids and all(rid in calls and rid not in answered for rid in ids):
            chain.add(i)
            answered.update(ids)


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
        entries.append(TranscriptEntry(line=record.line, kind="message", records=[data], lines=[record.line]))
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
        report(entry.line, "bad_message", f"message does not fit the Messages shape ({where}: {error.get('msg')}); kept raw")
        return None


def _replay_state(entries: list[TranscriptEntry], builder: StateBuilder | None, report: Reporter) -> None:
    calls: set[str] = set()
    for entry in entries:
        message = entry.message
        if message is not None:
            if message.role == "assistant":
                calls.update(c.id for c in message.tool_uses())
            else:
                for result in message.tool_results():
                    if result.tool_use_id not in calls:
                        report(entry.line, "orphan_tool_result", f"tool_result for unknown tool_use {result.tool_use_id!r}")
        if builder is not None:
            builder.apply(entry)


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
                if e.message is not None and e.message.is_compact_summary
                or e.kind == "compact_boundary"
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
    side = {
        i for i, r in enumerate(records) if i not in chain and r.data.get("isSidechain") is True
    }
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


