"""Claude Code hooks that make its own compaction reversible.

Claude Code runs a hook command with the event as JSON on stdin. Three events
matter here:

- **PreCompact** (``compactor hook pre-compact``): before Claude Code
  summarizes, the messages since the last recorded compaction are read from
  the transcript and stored in CCR exactly as the pipeline stores a head
  (``compactor.engine.spans.head_spans``: the whole conversation as JSONL, plus each
  large tool result and long user message on its own). What the hook prints
  becomes extra instructions for Claude Code's summarizer: keep the marker of
  the stored conversation, and keep each listed tool result's marker next to
  what it refers to. A small record of the stored head is written to
  ``$COMPACTOR_HOME/sessions/<session_id>.json``.
- **SessionStart** with source ``compact`` (``compactor hook session-start``):
  after the compaction, a short reminder (``hookSpecificOutput.additionalContext``)
  tells the model where the conversation before it is stored and that the
  tool ``mcp__plugin_compactor_ccr__ccr_retrieve`` (deferred: loaded with
  ToolSearch) brings any part of it back.
- **PostCompact** (``compactor hook post-compact``): Claude Code's own summary
  (``compact_summary``) is noted in the session record. Claude Code 2.1.332
  runs it after SessionStart, so the SessionStart text only has it with
  clients that run PostCompact first (``session_ledger`` gets the record
  either way).

Claude Code keeps the last few messages verbatim across a compaction (the
boundary's ``compactMetadata.preservedMessages``), and which ones is only
known once the boundary is in the transcript, after both hooks have run.
So the pre-compact hook stores everything the compaction summarizes (the
messages the previous compaction kept, then the messages after it), and the
next pre-compact hook, which finds that boundary written, first settles the
record: it stores exactly what was dropped (that conversation without the
kept messages) as the head and counts the kept messages. Once settled, each
message of the session is in exactly one head.

The functions here are values in, text out, with the store, the transcript
file and the session record at the edges; ``compactor.cli.commands.hook`` is the
thin command line around them. The command line never blocks a compaction:
on any failure it prints nothing on stdout, says why on stderr and exits 0
(exit code 2 would stop Claude Code from compacting at all, which leaves the
user stuck at a full context).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ccr import default_store_path, marker
from compactor.core.config import DEFAULT_RECOVERY_TOOLS
from compactor.claude_code.quick_hooks import DEFAULT_LISTED_RESULTS, HOOK_INPUT_MAX_BYTES, SESSION_ID, SESSION_ID_PATTERN
from compactor.core.errors import CompactorError, HookError, InputInvalid, NothingToCompact
from compactor.core.ledger import SessionLedger
from compactor.engine.segment import TranscriptSegment

if TYPE_CHECKING:
    from ccr import Store
    from ccr.batch import BatchStore
    from compactor.core.messages import Message, ToolUseBlock
    from compactor.core.tokens import CounterName, TokenCounter
    from compactor.claude_code.transcript import Transcript

# Claude Code runs the session-start hook at every start, and almost always
# it has nothing to say: what only storing, reading a transcript or
# rendering needs (the pipeline, the transcript reader, the templates, the
# tokenizer, memories) is imported in the functions that do it.

__all__ = [
    "CLIENT_RETRIEVE_TOOL",
    "DEFAULT_LISTED_RESULTS",
    "HOOK_INPUT_MAX_BYTES",
    "SESSION_START_MAX_CHARS",
    "HookInput",
    "SessionRecord",
    "StoredResult",
    "conversation_since_last_compaction",
    "describe_call",
    "forget_latest_head",
    "kept_uuids",
    "load_session_record",
    "parse_hook_input",
    "pre_compact",
    "pre_compact_instructions",
    "record_compact_summary",
    "save_session_record",
    "session_ledger",
    "session_record_path",
    "session_start",
    "session_start_output",
    "sessions_dir",
    "settle_kept_messages",
    "still_stored",
    "store_conversation",
]


CLIENT_RETRIEVE_TOOL = "mcp__plugin_compactor_ccr__ccr_retrieve"
"""The retrieve tool as Claude Code names it: plugin ``compactor``, MCP server ``ccr``.

Claude Code defers MCP tools: the model loads one with ToolSearch
(``select:<name>``) before it can call it, so the texts say so."""


_WHAT_MAX_CHARS = 120


class HookInput(BaseModel):
    """The JSON Claude Code sends a hook on stdin; fields of other events are kept, not checked.

    ``session_id`` names a file under ``$COMPACTOR_HOME/sessions``, so it is
    limited to letters, digits, ``.``, ``_`` and ``-`` (Claude Code uses UUIDs).
    """

    model_config = ConfigDict(extra="allow")

    session_id: str = Field(pattern=SESSION_ID_PATTERN)
    transcript_path: str | None = None
    cwd: str | None = None
    hook_event_name: str | None = None
    trigger: str | None = None
    """PreCompact: ``manual`` or ``auto``."""
    custom_instructions: str | None = None
    """PreCompact: the text after ``/compact``."""
    source: str | None = None
    """SessionStart: ``startup``, ``resume``, ``clear`` or ``compact``."""
    compact_summary: str | None = None
    """PostCompact: the summary Claude Code wrote."""


class StoredResult(BaseModel):
    """One tool result stored on its own: what it was and where it is."""

    model_config = ConfigDict(extra="forbid")

    handle: str
    tool: str
    what: str
    """The tool with its file path, command or pattern, on one line."""
    bytes: int
    path: str | None = None
    """The file the call read, wrote or edited, when it named one."""


class SessionRecord(BaseModel):
    """What the pre-compact hook stored for a session, for the session-start hook to mention.

    ``head_handle`` is None when the latest pre-compact hook failed: the
    reminder then says nothing rather than point at an older conversation as
    if it were the one just compacted.
    """

    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(pattern=SESSION_ID_PATTERN)
    head_handle: str | None
    """What the pre-compact hook stored: everything the summarizer saw, under the handle the
    summarizer was told, the summary names and the session-start text announces. It never changes."""
    summarized_handle: str | None = None
    """The same as ``head_handle`` (records of older versions could differ: there it is what the summarizer saw)."""
    dropped_handle: str | None = None
    """Exactly what the compaction dropped (``head_handle`` without the messages Claude Code kept
    verbatim), once a later hook has read the boundary; None until then, or when it kept nothing."""
    kept_messages: int = 0
    """How many of the summarized messages Claude Code kept verbatim (in no head yet)."""
    earlier_heads: list[str] = Field(default_factory=list)
    """The ``head_handle`` of each earlier compaction of this session, oldest first: the handles
    that were announced, and that the earlier summaries name."""
    earlier_dropped: list[str] = Field(default_factory=list)
    """What each earlier compaction dropped exactly, oldest first (its ``dropped_handle``, else its
    head): with ``head_handle`` they hold each message of the session once."""
    compact_summary: str | None = None
    """Claude Code's own summary of this compaction, from the PostCompact hook; None while unknown
    (before that hook has run, or with a client that has no PostCompact: the transcript shows the
    summary once the client has written the boundary, after its hooks)."""
    transcript_path: str | None = None
    trigger: str | None = None
    messages: int = 0
    bytes: int = 0
    results: list[StoredResult] = Field(default_factory=list)
    """Every tool result stored on its own, largest first."""
    stored_at: float = 0.0
    segments: list[TranscriptSegment] = Field(default_factory=list)
    """The transcript's own lines stored before each compaction, oldest first (``compactor restore``)."""
    store: str | None = None
    """The store file the pre-compact hook wrote to (None: the default one, as records of older versions)."""
    ledger: SessionLedger | None = None
    """The session's ledger as of the latest pre-compact hook: every fact of the whole transcript
    (``compactor.core.ledger``), for the session-start text; None for records of older versions."""
    ledger_handle: str | None = None
    """The ledger's full listing, stored with the conversation."""


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
    except RecursionError as exc:
        raise InputInvalid("hook input is JSON nested too deeply") from exc
    if not isinstance(value, dict):
        raise InputInvalid(f"hook input must be a JSON object, got {type(value).__name__}")
    try:
        return HookInput.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors())
        raise InputInvalid(f"hook input: {problems}") from exc


# -- pre-compact -----------------------------------------------------------------


def kept_uuids(transcript: Transcript, compaction: int) -> set[str]:
    """The uuids of the messages Claude Code kept verbatim across compaction number ``compaction``.

    Read from the boundary's ``compactMetadata.preservedMessages`` (``uuids``
    and ``allUuids``); empty for clients that keep nothing or do not say.
    """
    entry = transcript.entries[transcript.compactions[compaction].entry_index]
    meta = entry.records[0].get("compactMetadata") if entry.records else None
    preserved = meta.get("preservedMessages") if isinstance(meta, dict) else None
    if not isinstance(preserved, dict):
        return set()
    found: set[str] = set()
    for key in ("uuids", "allUuids"):
        values = preserved.get(key)
        if isinstance(values, list):
            found.update(v for v in values if isinstance(v, str))
    return found


def _conversation_before(transcript: Transcript, count: int) -> list[Message]:
    """What a compaction after the first ``count`` recorded ones summarizes, up to the next one.

    The messages the previous compaction kept verbatim come first (after its
    summary, where Claude Code puts them), then everything after it.
    """
    compactions = transcript.compactions
    end = compactions[count].message_index if count < len(compactions) else len(transcript.messages)
    if count == 0:
        return transcript.messages[:end]
    previous = compactions[count - 1]
    kept = kept_uuids(transcript, count - 1)
    carried = [m for m in transcript.messages[: previous.message_index] if m.uuid in kept]
    after = transcript.messages[previous.message_index : end]
    if after and after[0].is_compact_summary:
        return [after[0], *carried, *after[1:]]
    return [*carried, *after]


def conversation_since_last_compaction(transcript: Transcript) -> list[Message]:
    """What the next compaction summarizes: the messages the last one kept, then everything after it.

    All main-chain messages when there was no compaction.
    """
    return _conversation_before(transcript, len(transcript.compactions))


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
    store: BatchStore,
    *,
    counter: TokenCounter,
    session_id: str,
    trigger: str | None = None,
    transcript_path: str | None = None,
    recovery_tools: Sequence[str] = DEFAULT_RECOVERY_TOOLS,
    now: float | None = None,
) -> SessionRecord:
    """Store ``messages`` in CCR as the pipeline stores a head, and say what was stored.

    A ``ccr.StoreBatch`` given as ``store`` only keeps the spans, for its owner to store.
    Recovered content (results of the recovery tools) is replaced by a
    pointer to the call first, as the pipeline does, so stored conversations
    do not nest each other.

    Raises:
        NothingToCompact: there are no messages.
        BudgetExceeded: the store is full; nothing was stored.
        StoreError: the store could not be written.
    """
    from compactor.engine.storing import store_spans, without_recovered_content
    from compactor.engine.spans import head_spans
    from compactor.summarizers._facts import touched_path

    if not messages:
        raise NothingToCompact("no messages since the last compaction: nothing to store")
    head = without_recovered_content(messages, tuple(recovery_tools))
    spans = head_spans(head)
    handles, _ = store_spans(
        spans, store, head_sizes=[counter.count_message(m) for m in head], counter=counter,
        producer="compactor.claude_code.hooks", metadata={"trigger": trigger, "session_id": session_id},
    )
    calls = {call.id: call for m in head for call in m.tool_uses()}
    results = [
        StoredResult(
            handle=handle,
            tool=calls[span.ref].name if span.ref in calls else "unknown",
            what=describe_call(calls.get(span.ref or "")),
            bytes=len(span.data),
            path=touched_path(calls[span.ref]) if span.ref in calls else None,
        )
        for span, handle in zip(spans, handles, strict=True)
        if span.kind == "tool_result"
    ]
    results.sort(key=lambda r: -r.bytes)
    return SessionRecord(
        session_id=session_id,
        head_handle=handles[0],
        summarized_handle=handles[0],
        transcript_path=transcript_path,
        trigger=trigger,
        messages=len(head),
        bytes=len(spans[0].data),
        results=results,
        stored_at=time.time() if now is None else now,
    )


def pre_compact_instructions(
    record: SessionRecord, *, limit: int = DEFAULT_LISTED_RESULTS, tool: str = CLIENT_RETRIEVE_TOOL
) -> str:
    """The extra summary instructions for Claude Code's summarizer (what the hook prints).

    ``tool`` is the retrieve tool as the client names it (another name when
    the ``ccr`` server is not the plugin's, as in the Claude Agent SDK).

    Raises:
        ValueError: the record has no stored head.
    """
    from compactor.claude_code._hook_text import pre_compact_note

    if record.head_handle is None:
        raise ValueError("the session record has no stored conversation")
    listed = record.results[:limit]
    return pre_compact_note(
        head=marker(record.head_handle),
        messages=record.messages,
        size=record.bytes,
        results=[(marker(r.handle), r.what, r.bytes) for r in listed],
        unlisted=len(record.results) - len(listed),
        tool=tool,
    )


def pre_compact(
    hook: HookInput,
    store: Store,
    *,
    counter: TokenCounter,
    home: Path | None = None,
    recovery_tools: Sequence[str] = DEFAULT_RECOVERY_TOOLS,
    limit: int = DEFAULT_LISTED_RESULTS,
    tool: str = CLIENT_RETRIEVE_TOOL,
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
    from ccr import PutRequest
    from ccr.batch import StoreBatch
    from compactor.claude_code.restore import segment_request
    from compactor.summarizers._ledger import merge_messages
    from compactor.summarizers._ledger_text import listing_span
    from compactor.claude_code.transcript import read_transcript

    if not hook.transcript_path:
        raise InputInvalid("hook input has no transcript_path")
    path = Path(hook.transcript_path).expanduser()
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0  # the reader says what is wrong with it
    if size > HOOK_TRANSCRIPT_MAX_BYTES:
        raise InputInvalid(
            f"{path}: the transcript holds {size:,} bytes, over the hook's {HOOK_TRANSCRIPT_MAX_BYTES:,}-byte limit; "
            "not stored ('compactor replay' reads it)"
        )
    transcript = read_transcript(path, subagents=False, state=False)  # the main chain is what is stored
    previous = _settle_previous(
        hook.session_id, transcript, store, counter=counter, home=home, recovery_tools=recovery_tools
    )
    messages = conversation_since_last_compaction(transcript)
    segments = list(previous.segments) if previous else []
    # The transcript's own lines and the conversation's spans are stored in one transaction.
    batch = StoreBatch()
    named = segment_request(
        path, first_line=segments[-1].last_line + 1 if segments else 1,
        producer="compactor.claude_code.hooks:transcript", metadata={"session_id": hook.session_id, "trigger": hook.trigger},
    )
    if named is not None:
        request, segment = named
        batch.put_named(request, segment.handle)
        segments.append(segment)
    record = store_conversation(
        messages,
        batch,
        counter=counter,
        session_id=hook.session_id,
        trigger=hook.trigger,
        transcript_path=str(path),
        recovery_tools=recovery_tools,
    )
    # The session's ledger, from the whole transcript: every fact so far, whatever Claude Code's
    # summaries kept. Its full listing is stored with the conversation.
    ledger = merge_messages(SessionLedger(), transcript.messages)
    listing = listing_span(ledger, hook.cwd)
    batch.put_named(PutRequest(
        data=listing.data, producer="compactor.claude_code.hooks:facts",
        metadata={"kind": "facts", "session_id": hook.session_id, "trigger": hook.trigger},
    ), listing.handle)
    batch.store_in(store)
    path_of_store = getattr(store, "path", None)
    record = record.model_copy(update={
        "segments": segments, "store": str(path_of_store) if isinstance(path_of_store, Path) else None,
        "ledger": ledger, "ledger_handle": listing.handle,
    })
    save_session_record(record, home)
    return pre_compact_instructions(record, limit=limit, tool=tool)


# -- session start -----------------------------------------------------------------


SESSION_START_MAX_CHARS = 10_000
"""The most ``additionalContext`` a SessionStart hook may return after a compaction (Claude Code's limit)."""

def session_ledger(hook: HookInput, record: SessionRecord | None, *, budget: int) -> str | None:
    """The session's ledger for the text after a compaction, in at most ``budget`` characters; None for none.

    ``record`` is the session's record as the session-start hook reads it
    (None when the session stored nothing): its ``ledger`` holds every fact of
    the transcript the pre-compact hook read. The text goes in order of what
    Claude Code's summary keeps least (``compactor.summarizers._ledger_text.session_start_text``);
    when the PostCompact hook has already run (clients that run it before
    SessionStart), ``compact_summary`` is Claude Code's own summary of this
    compaction, and the facts it holds verbatim are left out. What does not
    fit is counted and left to the stored full listing. Nothing when the
    latest pre-compact hook failed or its conversation is no longer stored
    (``head_handle`` None): an older ledger could say the work stands where
    it no longer does.
    """
    if record is None or record.ledger is None or record.head_handle is None or budget <= 0:
        return None  # no record, an older one's, or the latest pre-compact failed: its facts may be stale
    from compactor.summarizers._ledger_text import session_start_text

    reads = {r.path: r.handle for r in record.results if r.tool == "Read" and r.path}
    return session_start_text(
        record.ledger, budget=budget, cwd=hook.cwd, listing=marker(record.ledger_handle) if record.ledger_handle else None,
        summary=record.compact_summary, read_handles=reads,
    )


def _within(text: str, limit: int) -> str:
    """``text`` cut at a line end to at most ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    note = "\n[{:,} more characters left out: the hook's text is limited to {:,}]"
    room = limit - len(note.format(len(text), limit))
    cut = text.rfind("\n", 0, room)
    cut = room if cut <= 0 else cut
    return text[:cut] + note.format(len(text) - cut, limit)


def session_start_output(
    hook: HookInput,
    record: SessionRecord | None,
    memories: str | None = None,
    *,
    tool: str = CLIENT_RETRIEVE_TOOL,
    ledger: Callable[..., str | None] = session_ledger,
    limit: int = SESSION_START_MAX_CHARS,
) -> str | None:
    """The SessionStart hook's JSON output, or None when there is nothing to add.

    Only a start after a compaction (``source`` ``compact``) gets anything: a
    reminder when the session's conversation was stored (naming the handle
    the summarizer saw), then what ``ledger(hook, record, budget=...)``
    returns within the characters the reminder and ``memories`` (the
    recalled ``memory`` reminder) leave, then the memories; never more than
    ``limit`` characters in all.
    """
    if hook.source != "compact":
        return None
    parts: list[str] = []
    if record is not None and record.head_handle is not None:
        from compactor.core.templating import render

        head = _announced(record) or record.head_handle
        parts.append(render(
            "hook_session_start.j2",
            head=marker(head),
            kept=record.kept_messages,
            earlier=[marker(h) for h in record.earlier_heads],
            results=len(record.results),
            tool=tool,
        ).strip())
    separators = 2 * (len(parts) + (1 if memories else 0))
    room = limit - sum(map(len, parts)) - len(memories or "") - separators
    told = ledger(hook, record, budget=room) if room > 0 else None
    if told:
        parts.append(told.strip())
    if memories:
        parts.append(memories)
    if not parts:
        return None
    context = _within("\n\n".join(parts), limit)
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}},
        ensure_ascii=False,
    )


def settle_kept_messages(
    record: SessionRecord,
    transcript: Transcript,
    store: Store,
    *,
    counter: TokenCounter,
    recovery_tools: Sequence[str] = DEFAULT_RECOVERY_TOOLS,
) -> SessionRecord:
    """After a compaction: store exactly what it dropped and count what it kept.

    ``record`` is what the pre-compact hook stored (everything summarized);
    ``transcript`` now ends with the compaction's boundary. The record's
    ``head_handle`` stays what it was (the handle the summarizer saw and the
    session-start text announced). When the boundary names messages Claude
    Code kept verbatim and they end the summarized conversation, the
    conversation without them is stored as ``dropped_handle``. Otherwise
    (nothing kept, a record from an older hook, a transcript that does not
    match what was stored) the record comes back unchanged.

    Raises:
        BudgetExceeded: the store is full; nothing was stored.
        StoreError: the store could not be written.
    """
    from compactor.engine.storing import without_recovered_content
    from compactor.engine.spans import head_spans

    if not transcript.compactions or record.head_handle is None or record.kept_messages:
        return record
    if record.dropped_handle is not None or record.summarized_handle not in (None, record.head_handle):
        return record  # settled already (by an older version: then its head is what was dropped)
    count = len(transcript.compactions) - 1
    summarized = _conversation_before(transcript, count)
    kept = kept_uuids(transcript, count)
    if not summarized or not kept:
        return record
    dropped = summarized
    while dropped and dropped[-1].uuid in kept:
        dropped = dropped[:-1]
    tail = len(summarized) - len(dropped)
    head = without_recovered_content(summarized, tuple(recovery_tools))
    if not tail or not dropped or head_spans(head)[0].handle != record.head_handle:
        return record
    exact = store_conversation(
        dropped, store, counter=counter, session_id=record.session_id, trigger=record.trigger,
        transcript_path=record.transcript_path, recovery_tools=recovery_tools, now=record.stored_at,
    )
    return record.model_copy(update={"dropped_handle": exact.head_handle, "kept_messages": tail})


def record_compact_summary(hook: HookInput, home: Path | None = None) -> SessionRecord | None:
    """Handle a PostCompact event: note Claude Code's summary (and trigger) in the session's record.

    Only a session whose latest pre-compact hook wrote a record gets it (a
    session that stored nothing keeps no record); the record as saved, or
    None when there is none or the input carries no summary. Claude Code
    2.1.332 runs this after the SessionStart hook (``tests/e2e``), so that
    hook only sees the summary with clients that run PostCompact first;
    the record keeps it for whoever reads it later.

    Raises:
        InputInvalid: the session id is unusable.
        HookError: the record cannot be read or written.
    """
    if hook.compact_summary is None:
        return None
    record = load_session_record(hook.session_id, home)
    if record is None:
        return None
    record = record.model_copy(update={
        "compact_summary": hook.compact_summary, "trigger": record.trigger or hook.trigger,
    })
    save_session_record(record, home)
    return record


def _settle_previous(
    session_id: str,
    transcript: Transcript,
    store: Store,
    *,
    counter: TokenCounter,
    home: Path | None,
    recovery_tools: Sequence[str],
) -> SessionRecord | None:
    """Settle the session's record against ``transcript`` when it can be; the record as it now stands.

    A record that cannot be read or settled is left as it is: settling is
    an improvement, never a reason to fail a hook.
    """
    try:
        record = load_session_record(session_id, home)
        if record is None:
            return None
        settled = settle_kept_messages(record, transcript, store, counter=counter, recovery_tools=recovery_tools)
        if settled is not record:
            save_session_record(settled, home)
        return settled
    except CompactorError:
        return None


def session_start(
    hook: HookInput,
    *,
    home: Path | None = None,
    memory_db: str | None = None,
    memory_tokens: int = 2_000,
    counter: TokenCounter | None = None,
    counter_name: CounterName = "tiktoken",
    tool: str = CLIENT_RETRIEVE_TOOL,
    ledger: Callable[..., str | None] = session_ledger,
) -> str | None:
    """Handle a SessionStart event: the reminder for a session that was just compacted, or None.

    It reads only the session record: the transcript does not show the new
    boundary yet (the client writes it after its hooks), so settling waits
    for the next pre-compact hook. With ``memory_db`` the memories recalled
    for the last typed request are added (``compactor.memory.attachment``), within
    ``memory_tokens``, counted by ``counter`` (built from ``counter_name``
    when not given, and only when memories are recalled: the tokenizer is
    slow to load). ``ledger`` is as for :func:`session_start_output`; the
    record it gets holds ``compact_summary`` only when the PostCompact hook
    ran first (Claude Code 2.1.332 runs it after this one).

    Raises:
        HookError: the session record exists but cannot be read.
        TranscriptError: with ``memory_db``, the transcript cannot be read.
    """
    if hook.source != "compact":
        return None
    record = load_session_record(hook.session_id, home)
    if record is not None and record.head_handle is not None:
        record = still_stored(record, home)
    memories = None
    if memory_db is not None and hook.transcript_path:
        from compactor.memory.attachment import session_memories
        from ccr import open_store
        from compactor.core.tokens import make_counter

        with open_store(None if home is None else home / "ccr.db") as store:
            memories = session_memories(
                Path(hook.transcript_path).expanduser(), memory_db, budget=memory_tokens,
                counter=counter or make_counter(counter_name), store=store,
            )
    return session_start_output(hook, record, memories, tool=tool, ledger=ledger)


def still_stored(record: SessionRecord, home: Path | None = None) -> SessionRecord:
    """``record`` without the handles its store no longer holds, so that a reminder never names one.

    Records leave the store only when someone removes them (``ccr rm``,
    ``ccr gc --session``, deleting the file); a conversation that is gone is
    not mentioned, and with the head gone there is no reminder at all. The
    store is opened read-only: the one the pre-compact hook wrote to, else
    the default.

    Raises:
        ccr.CCRError: the store cannot be read.
    """
    from ccr import open_store

    if record.store is not None:
        path = Path(record.store)
    else:
        path = default_store_path() if home is None else home / "ccr.db"
    named = {
        record.head_handle, record.summarized_handle, record.dropped_handle,
        *record.earlier_heads, *record.earlier_dropped, *(r.handle for r in record.results), record.ledger_handle,
    }
    held: set[str | None] = set()
    if path.exists():  # a store that is gone holds nothing (and is not made anew here)
        with open_store(path, readonly=True) as store:
            held = {h for h in named if h is not None and store.contains(h)}
    head = record.head_handle if record.head_handle in held else None
    return record.model_copy(update={
        "head_handle": head,
        "summarized_handle": record.summarized_handle if head and record.summarized_handle in held else head,
        "dropped_handle": record.dropped_handle if head and record.dropped_handle in held else None,
        "earlier_heads": [h for h in record.earlier_heads if h in held],
        "earlier_dropped": [h for h in record.earlier_dropped if h in held],
        "results": [r for r in record.results if r.handle in held],
        "ledger_handle": record.ledger_handle if record.ledger_handle in held else None,
    })


# -- session records -------------------------------------------------------------------


def sessions_dir(home: Path | None = None) -> Path:
    """``$COMPACTOR_HOME/sessions`` (``home`` replaces ``$COMPACTOR_HOME``)."""
    return (default_store_path().parent if home is None else home) / "sessions"


def session_record_path(session_id: str, home: Path | None = None) -> Path:
    """Where a session's record lives.

    Raises:
        InputInvalid: the session id could escape the sessions folder.
    """
    if not SESSION_ID.fullmatch(session_id):
        raise InputInvalid(f"unusable session id {session_id!r}")
    return sessions_dir(home) / f"{session_id}.json"


def load_session_record(session_id: str, home: Path | None = None) -> SessionRecord | None:
    """The session's record, or None when the session never stored anything.

    Raises:
        InputInvalid: the session id is unusable.
        HookError: the record exists but cannot be read or is damaged.
    """
    from ccr._files import read_regular

    path = session_record_path(session_id, home)
    _refuse_symlinked_folder(path.parent)
    try:
        data = read_regular(path, max_bytes=SESSION_RECORD_MAX_BYTES)
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
    earlier_dropped = list(previous.earlier_dropped or previous.earlier_heads) if previous else []
    announced = _announced(previous) if previous else None
    if previous and previous.head_handle and announced and announced != _announced(record):
        earlier.append(announced)
        earlier_dropped.append(previous.dropped_handle or previous.head_handle)
    ours = {record.head_handle, record.dropped_handle}
    record = record.model_copy(update={
        "earlier_heads": [h for h in earlier if h not in ours],
        "earlier_dropped": [h for h in earlier_dropped if h not in ours],
    })
    from ccr._files import describe_os_error, private_dir, write_output

    try:
        private_dir(path.parent)
        _refuse_symlinked_folder(path.parent)
        write_output(path, [record.model_dump_json(indent=2).encode("utf-8")], what="session record")
    except OSError as exc:
        raise HookError(f"cannot write session record {path}: {describe_os_error(exc)}") from exc
    except CompactorError as exc:  # the output rule refused the name (a folder or a device is there)
        raise HookError(f"cannot write session record {path}: {exc}") from exc
    return path


def _announced(record: SessionRecord) -> str | None:
    """The head the summarizer saw (a record of an older version kept it in ``summarized_handle``)."""
    return record.summarized_handle or record.head_handle


HOOK_TRANSCRIPT_MAX_BYTES = 1 << 30
"""Largest transcript the pre-compact hook reads (1 GiB): its lines are held while they are stored."""

SESSION_RECORD_MAX_BYTES = 16 * 1024 * 1024
"""Largest session record read back (a record names a compaction's handles: a few KiB)."""


def _refuse_symlinked_folder(folder: Path) -> None:
    """The sessions folder must be a real folder: through a link the records would land elsewhere.

    Raises:
        HookError: ``folder`` is a symlink.
    """
    if folder.is_symlink():
        raise HookError(f"refusing the symlinked sessions folder {folder}: session records are kept only in a real folder")


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
        previous.model_copy(
            update={"head_handle": None, "summarized_handle": None, "dropped_handle": None, "kept_messages": 0,
                    "results": [], "compact_summary": None, "stored_at": time.time()}
        ),
        home,
    )
