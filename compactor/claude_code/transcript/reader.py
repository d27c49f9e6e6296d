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

Python's cycle collector is paused while a file's records are read and put
together (``_collector_paused``): reading makes hundreds of thousands of
dicts and lists, none of them in a cycle, and each collection they set off
would walk them all again (a sixth of reading a 4 MB file went to it).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compactor.claude_code.transcript._chain import _first_of_each_uuid, _main_chain, _one_session, _session_of_each
from compactor.claude_code.transcript._entries import (
    _build_entries,
    _compactions,
    _deliver_queued,
    _event,
    _inline_sidechains,
)
from compactor.claude_code.transcript._lines import MAX_LINE_BYTES, Record, Reporter, _iter_records, make_reporter
from compactor.claude_code.transcript._models import SHAPE_KINDS, Fragment, ReadWarning, Transcript, TranscriptEntry
from compactor.claude_code.transcript.state import StateBuilder
from compactor.core.errors import NotATranscript, TranscriptError
from compactor.core.session import MAIN_AGENT

__all__ = ["KNOWN_ENTRY_TYPES", "check_transcript", "read_sessions", "read_transcript"]

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
    belongs to another session are not reported. Without it no subagent's
    conversation is read: ``Transcript.sidechains`` stays empty, and the
    records of inline sidechains are kept as they are in ``off_chain``
    (most of an older file can be such records, which a replay never reads).

    Raises:
        TranscriptNotFound: the file does not exist.
        NotATranscript: no line of the file is a transcript record (an empty file, a report, random bytes).
        TranscriptError: the file cannot be read, or (strict) it holds bad data.
    """
    transcript = _read_one(
        Path(path),
        strict=strict,
        warn=warn,
        max_line_bytes=max_line_bytes,
        state=state,
        sidechains=subagents,
        on_read=on_read,
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
        NotATranscript: no line of the file is a transcript record.
        TranscriptError: the file cannot be read, or (strict) it holds bad data.
    """
    file = Path(path)
    lines: list[ReadWarning] = []
    with _collector_paused():
        records = list(
            _iter_records(file, make_reporter(str(file), strict=strict, warn=warn, sink=lines), max_line_bytes)
        )
    _require_transcript(file, records, lines)
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
    sidechains: bool = True,
    on_read: Callable[[int], None] | None = None,
) -> Transcript:
    warnings: list[ReadWarning] = []
    report = make_reporter(str(path), strict=strict, warn=warn, sink=warnings)
    with _collector_paused():
        records = list(_iter_records(path, report, max_line_bytes, on_read))
        _require_transcript(path, records, warnings)
        transcript = _assemble(str(path), records, report, agent_id, state=state, sidechains=sidechains)
    transcript.warnings = warnings
    return transcript


def check_transcript(path: str | Path) -> None:
    """Fail now if ``path`` is missing, unreadable or not a transcript, before anything is made for it.

    Reads only up to the first transcript record (the first line, in a
    transcript), so a command can check its input before it opens a store.

    Raises:
        TranscriptNotFound: the file does not exist.
        NotATranscript: no line of the file is a transcript record.
        TranscriptError: the file cannot be read.
    """
    file = Path(path)
    warnings: list[ReadWarning] = []
    records: list[Record] = []
    for record in _iter_records(file, make_reporter(str(file), strict=False, warn=None, sink=warnings), MAX_LINE_BYTES):
        if record.data.get("type") in KNOWN_ENTRY_TYPES:
            return
        records.append(record)
    _require_transcript(file, records, warnings)


def _require_transcript(path: Path, records: list[Record], warnings: list[ReadWarning]) -> None:
    """A file with no record of a known entry type is not a transcript: a report, random bytes, nothing.

    Raises:
        NotATranscript: no line of ``path`` is a transcript record.
    """
    if any(record.data.get("type") in KNOWN_ENTRY_TYPES for record in records):
        return
    if not records and not warnings:
        raise NotATranscript(f"{path}: not a Claude Code transcript: the file holds no JSON line (it is empty)")
    found = []
    if records:
        found.append(f"{len(records):,} JSON object(s) of no entry type Claude Code writes")
    if warnings:
        found.append(f"{len(warnings):,} bad line(s), the first: line {warnings[0].line}: {warnings[0].message}")
    raise NotATranscript(f"{path}: not a Claude Code transcript: no line is a transcript record ({'; '.join(found)})")


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No automatic cycle collection inside (restored after, also on error; left off if it was off)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _assemble(
    path: str, records: list[Record], report: Reporter, agent_id: str, *, state: bool = True, sidechains: bool = True
) -> Transcript:
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
    entries = _deliver_queued(entries, records)
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
        sidechains=_inline_sidechains(records, chain, report) if sidechains else {},
        unknown=unknown,
        fragment=fragment,
    )


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
                        report(
                            entry.line, "orphan_tool_result", f"tool_result for unknown tool_use {result.tool_use_id!r}"
                        )
        if builder is not None:
            builder.apply(entry)
