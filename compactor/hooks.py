"""Claude Code hooks that make its own compaction reversible.

Claude Code runs a hook command with the event as JSON on stdin. Two events
matter here:

- **PreCompact** (``compactor hook pre-compact``): before Claude Code
  summarizes, the messages since the last recorded compaction are read from
  the transcript and stored in CCR exactly as the pipeline stores a head
  (``compactor.spans.head_spans``: the whole conversation as JSONL, plus each
  large tool result and long user message on its own). What the hook prints
  becomes extra instructions for Claude Code's summarizer: keep the marker of
  the stored conversation, and keep each listed tool result's marker next to
  what it refers to. A small record of the stored head is written to
  ``$COMPACTOR_HOME/sessions/<session_id>.json``.
- **SessionStart** with source ``compact`` (``compactor hook session-start``):
  after the compaction, a short reminder (``hookSpecificOutput.additionalContext``)
  tells the model where the conversation before it is stored and that the
  ``ccr_retrieve`` tool brings any part of it back.

The functions here are values in, text out, with the store, the transcript
file and the session record at the edges; ``compactor.commands.hook`` is the
thin command line around them. The command line never blocks a compaction:
on any failure it prints nothing on stdout, says why on stderr and exits 0
(exit code 2 would stop Claude Code from compacting at all, which leaves the
user stuck at a full context).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ccr import Store, default_store_path, marker
from compactor._templates import render
from compactor.config import DEFAULT_RECOVERY_TOOLS
from compactor.errors import HookError, InputInvalid, NothingToCompact
from compactor.messages import Message, ToolUseBlock
from compactor.pipeline import store_spans, without_recovered_content
from compactor.recovery import RECOVERY_TOOL_NAME
from compactor.spans import head_spans
from compactor.tokens import TokenCounter
from compactor.transcript import Transcript, read_transcript

__all__ = [
    "DEFAULT_LISTED_RESULTS",
    "HOOK_INPUT_MAX_BYTES",
    "HookInput",
    "SessionRecord",
    "StoredResult",
    "conversation_since_last_compaction",
    "describe_call",
    "forget_latest_head",
    "load_session_record",
    "parse_hook_input",
    "pre_compact",
    "pre_compact_instructions",
    "save_session_record",
    "session_record_path",
    "session_start",
    "session_start_output",
    "sessions_dir",
    "store_conversation",
]

HOOK_INPUT_MAX_BYTES = 1024 * 1024
"""Hook input larger than this is refused: Claude Code sends a few hundred bytes."""

DEFAULT_LISTED_RESULTS = 15
"""How many stored tool results the summary instructions name, largest first."""

_WHAT_MAX_CHARS = 120
_SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


class HookInput(BaseModel):
    """The JSON Claude Code sends a hook on stdin; fields of other events are kept, not checked.

    ``session_id`` names a file under ``$COMPACTOR_HOME/sessions``, so it is
    limited to letters, digits, ``.``, ``_`` and ``-`` (Claude Code uses UUIDs).
    """

    model_config = ConfigDict(extra="allow")

    session_id: str = Field(pattern=_SESSION_ID_PATTERN)
    transcript_path: str | None = None
    cwd: str | None = None
    hook_event_name: str | None = None
    trigger: str | None = None
    """PreCompact: ``manual`` or ``auto``."""
    custom_instructions: str | None = None
    """PreCompact: the text after ``/compact``."""
    source: str | None = None
    """SessionStart: ``startup``, ``resume``, ``clear`` or ``compact``."""


class StoredResult(BaseModel):
    """One tool result stored on its own: what it was and where it is."""

    model_config = ConfigDict(extra="forbid")

    handle: str
    tool: str
    what: str
    """The tool with its file path, command or pattern, on one line."""
    bytes: int


class SessionRecord(BaseModel):
    """What the pre-compact hook stored for a session, for the session-start hook to mention.

    ``head_handle`` is None when the latest pre-compact hook failed: the
    reminder then says nothing rather than point at an older conversation as
    if it were the one just compacted.
    """

    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(pattern=_SESSION_ID_PATTERN)
    head_handle: str | None
    earlier_heads: list[str] = Field(default_factory=list)
    """Conversations stored by this session's earlier compactions, oldest first."""
    transcript_path: str | None = None
    trigger: str | None = None
    messages: int = 0
    bytes: int = 0
    results: list[StoredResult] = Field(default_factory=list)
    """Every tool result stored on its own, largest first."""
    stored_at: float = 0.0


# -- input ----------------------------------------------------------------------


def parse_hook_input(data: bytes) -> HookInput:
    """Parse the hook's stdin.

    Raises:
        InputInvalid: too large, not UTF-8 JSON, not an object, or without a usable ``session_id``.
    """
    if len(data) > HOOK_INPUT_MAX_BYTES:
        raise InputInvalid(f"hook input is {len(data):,} bytes, more than {HOOK_INPUT_MAX_BYTES:,}")
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputInvalid(f"hook input is not UTF-8 (byte {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise InputInvalid(f"hook input is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    if not isinstance(value, dict):
        raise InputInvalid(f"hook input must be a JSON object, got {type(value).__name__}")
    try:
        return HookInput.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors())
        raise InputInvalid(f"hook input: {problems}") from exc


# -- pre-compact -----------------------------------------------------------------


def conversation_since_last_compaction(transcript: Transcript) -> list[Message]:
    """The main-chain messages after the last recorded compaction (all of them when there is none)."""
    since = transcript.compactions[-1].message_index if transcript.compactions else 0
    return transcript.messages[since:]


def _one_line(text: str, limit: int = _WHAT_MAX_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def describe_call(call: ToolUseBlock | None) -> str:
    """A short, one-line account of a tool call: the tool and its file path, command or pattern."""
    if call is None:
        return "a tool result"
    args = call.input
    for key in ("file_path", "notebook_path", "command", "url", "query", "description", "prompt", "skill"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            if key == "command":
                return _one_line(f"{call.name}: {value}")
            return _one_line(f"{call.name} {value}")
    pattern = args.get("pattern")
    if isinstance(pattern, str):
        where = args.get("path")
        return _one_line(f"{call.name} {pattern!r}" + (f" in {where}" if isinstance(where, str) else ""))
    return call.name


def store_conversation(
    messages: Sequence[Message],
    store: Store,
    *,
    counter: TokenCounter,
    session_id: str,
    trigger: str | None = None,
    transcript_path: str | None = None,
    recovery_tools: Sequence[str] = DEFAULT_RECOVERY_TOOLS,
    now: float | None = None,
) -> SessionRecord:
    """Store ``messages`` in CCR as the pipeline stores a head, and say what was stored.

    Recovered content (results of the recovery tools) is replaced by a
    pointer to the call first, as the pipeline does, so stored conversations
    do not nest each other.

    Raises:
        NothingToCompact: there are no messages.
        BudgetExceeded: the store is full; nothing was stored.
        StoreError: the store could not be written.
    """
    if not messages:
        raise NothingToCompact("no messages since the last compaction: nothing to store")
    head = without_recovered_content(messages, tuple(recovery_tools))
    spans = head_spans(head)
    handles, _ = store_spans(
        spans, store, head_sizes=[counter.count_message(m) for m in head], counter=counter,
        producer="compactor.hooks", metadata={"trigger": trigger, "session_id": session_id},
    )
    calls = {call.id: call for m in head for call in m.tool_uses()}
    results = [
        StoredResult(
            handle=handle,
            tool=calls[span.ref].name if span.ref in calls else "unknown",
            what=describe_call(calls.get(span.ref or "")),
            bytes=len(span.data),
        )
        for span, handle in zip(spans, handles, strict=True)
        if span.kind == "tool_result"
    ]
    results.sort(key=lambda r: -r.bytes)
    return SessionRecord(
        session_id=session_id,
        head_handle=handles[0],
        transcript_path=transcript_path,
        trigger=trigger,
        messages=len(head),
        bytes=len(spans[0].data),
        results=results,
        stored_at=time.time() if now is None else now,
    )


def pre_compact_instructions(record: SessionRecord, *, limit: int = DEFAULT_LISTED_RESULTS) -> str:
    """The extra summary instructions for Claude Code's summarizer (what the hook prints).

    Raises:
        ValueError: the record has no stored head.
    """
    if record.head_handle is None:
        raise ValueError("the session record has no stored conversation")
    listed = record.results[:limit]
    return render(
        "hook_pre_compact.j2",
        head=marker(record.head_handle),
        messages=record.messages,
        size=record.bytes,
        results=[{"marker": marker(r.handle), "what": r.what, "size": r.bytes} for r in listed],
        unlisted=len(record.results) - len(listed),
        tool=RECOVERY_TOOL_NAME,
    )


def pre_compact(
    hook: HookInput,
    store: Store,
    *,
    counter: TokenCounter,
    home: Path | None = None,
    recovery_tools: Sequence[str] = DEFAULT_RECOVERY_TOOLS,
    limit: int = DEFAULT_LISTED_RESULTS,
) -> str:
    """Handle a PreCompact event: store the conversation, record it, return the instructions.

    Raises:
        InputInvalid: the input names no transcript.
        TranscriptNotFound: the transcript does not exist.
        TranscriptError: the transcript cannot be read.
        NothingToCompact: no messages since the last compaction.
        BudgetExceeded: the store refused; nothing was stored.
        StoreError: the store could not be written.
        HookError: the session record could not be written.
    """
    if not hook.transcript_path:
        raise InputInvalid("hook input has no transcript_path")
    path = Path(hook.transcript_path).expanduser()
    messages = conversation_since_last_compaction(read_transcript(path))
    record = store_conversation(
        messages,
        store,
        counter=counter,
        session_id=hook.session_id,
        trigger=hook.trigger,
        transcript_path=str(path),
        recovery_tools=recovery_tools,
    )
    save_session_record(record, home)
    return pre_compact_instructions(record, limit=limit)


# -- session start -----------------------------------------------------------------


def session_start_output(hook: HookInput, record: SessionRecord | None) -> str | None:
    """The SessionStart hook's JSON output, or None when there is nothing to add.

    Only a start after a compaction (``source`` ``compact``) of a session
    whose conversation was stored gets a reminder.
    """
    if hook.source != "compact" or record is None or record.head_handle is None:
        return None
    context = render(
        "hook_session_start.j2",
        head=marker(record.head_handle),
        earlier=[marker(h) for h in record.earlier_heads],
        results=len(record.results),
        tool=RECOVERY_TOOL_NAME,
    ).strip()
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}},
        ensure_ascii=False,
    )


def session_start(hook: HookInput, *, home: Path | None = None) -> str | None:
    """Handle a SessionStart event: the reminder for a session that was just compacted, or None.

    Raises:
        HookError: the session record exists but cannot be read.
    """
    if hook.source != "compact":
        return None
    return session_start_output(hook, load_session_record(hook.session_id, home))


# -- session records -------------------------------------------------------------------


def sessions_dir(home: Path | None = None) -> Path:
    """``$COMPACTOR_HOME/sessions`` (``home`` replaces ``$COMPACTOR_HOME``)."""
    return (default_store_path().parent if home is None else home) / "sessions"


def session_record_path(session_id: str, home: Path | None = None) -> Path:
    """Where a session's record lives.

    Raises:
        InputInvalid: the session id could escape the sessions folder.
    """
    try:
        record = SessionRecord(session_id=session_id, head_handle=None)
    except ValidationError as exc:
        raise InputInvalid(f"unusable session id {session_id!r}") from exc
    return sessions_dir(home) / f"{record.session_id}.json"


def load_session_record(session_id: str, home: Path | None = None) -> SessionRecord | None:
    """The session's record, or None when the session never stored anything.

    Raises:
        InputInvalid: the session id is unusable.
        HookError: the record exists but cannot be read or is damaged.
    """
    path = session_record_path(session_id, home)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HookError(f"cannot read session record {path}: {exc.strerror or exc}") from exc
    try:
        return SessionRecord.model_validate_json(data)
    except ValidationError as exc:
        raise HookError(f"session record {path} is damaged: {exc.error_count()} problem(s)") from exc


def save_session_record(record: SessionRecord, home: Path | None = None) -> Path:
    """Write ``record``, keeping the heads of the session's earlier compactions; returns the path.

    The folder is created 0700 and the file 0600 (it names files and
    commands of the session), written whole or not at all.

    Raises:
        HookError: the file system refused.
    """
    path = session_record_path(record.session_id, home)
    try:
        previous = load_session_record(record.session_id, home)
    except HookError:
        previous = None  # a damaged record is replaced, not merged
    earlier = list(previous.earlier_heads) if previous else []
    if previous and previous.head_handle and previous.head_handle != record.head_handle:
        earlier.append(previous.head_handle)
    record = record.model_copy(update={"earlier_heads": [h for h in earlier if h != record.head_handle]})
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".session-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(record.model_dump_json(indent=2))
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise HookError(f"cannot write session record {path}: {exc.strerror or exc}") from exc
    return path


def forget_latest_head(session_id: str, home: Path | None = None) -> None:
    """After a failed pre-compact hook: keep the earlier heads, but name no latest one.

    Raises:
        InputInvalid: the session id is unusable.
        HookError: the record cannot be read or written.
    """
    previous = load_session_record(session_id, home)
    if previous is None or previous.head_handle is None:
        return
    save_session_record(
        previous.model_copy(update={"head_handle": None, "results": [], "stored_at": time.time()}), home
    )
