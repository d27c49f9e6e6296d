"""The PreCompact hook (``compactor hook pre-compact``): store what Claude Code is about to summarize.

Before Claude Code summarizes, the messages since the last recorded
compaction are read from the transcript and stored in CCR exactly as the
pipeline stores a head (``compactor.engine.spans.head_spans``: the whole
conversation as JSONL, plus each large tool result and long user message on
its own). What the hook prints becomes extra instructions for Claude Code's
summarizer: keep the marker of the stored conversation, and keep each listed
tool result's marker next to what it refers to. A small record of the stored
head is written to ``$COMPACTOR_HOME/sessions/<session_id>.json``
(``compactor.claude_code.session_record``).

Claude Code keeps the last few messages verbatim across a compaction (the
boundary's ``compactMetadata.preservedMessages``), and which ones is only
known once the boundary is in the transcript, after the hooks have run.
So this hook stores everything the compaction summarizes (the messages the
previous compaction kept, then the messages after it), and the next
pre-compact hook, which finds that boundary written, first settles the
record: it stores exactly what was dropped (that conversation without the
kept messages) as the head and counts the kept messages. Once settled, each
message of the session is in exactly one head.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ccr import marker
from compactor.claude_code.hook_input import CLIENT_RETRIEVE_TOOL
from compactor.claude_code.quick_hooks import DEFAULT_LISTED_RESULTS
from compactor.claude_code.session_record import (
    RECORD_SALVAGE_MAX_BYTES,
    SessionRecord,
    StoredResult,
    clear_pending,
    load_session_record,
    save_session_record,
)
from compactor.core.config import DEFAULT_RECOVERY_TOOLS
from compactor.core.errors import CompactorError, InputInvalid, NothingToCompact
from compactor.core.ledger import SessionLedger

if TYPE_CHECKING:
    from ccr import Store
    from ccr.batch import BatchStore
    from compactor.claude_code.hook_input import HookInput
    from compactor.claude_code.transcript import Transcript
    from compactor.core.messages import Message, ToolUseBlock
    from compactor.core.tokens import TokenCounter

# What only storing or reading a transcript needs (storing a head, the transcript reader, the
# templates) is imported in the functions that do it.

__all__ = [
    "HOOK_TRANSCRIPT_MAX_BYTES",
    "PRODUCER",
    "check_hook_transcript",
    "conversation_since_last_compaction",
    "describe_call",
    "kept_uuids",
    "pre_compact",
    "pre_compact_instructions",
    "settle_kept_messages",
    "store_conversation",
]

PRODUCER = "compactor.claude_code.hooks"
"""The producer of what the hooks store (``ccr ls --producer``): the name of the module they all lived
in, kept so that the records of every version match one filter."""

HOOK_TRANSCRIPT_MAX_BYTES = 1 << 30
"""Largest transcript the pre-compact hook reads (1 GiB): its lines are held while they are stored."""

_WHAT_MAX_CHARS = 120


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
    from compactor.engine.head_storage import store_spans, without_recovered_content
    from compactor.engine.spans import head_spans
    from compactor.summarizers.facts import touched_path

    if not messages:
        raise NothingToCompact("no messages since the last compaction: nothing to store")
    head = without_recovered_content(messages, tuple(recovery_tools))
    spans = head_spans(head)
    handles, _ = store_spans(
        spans,
        store,
        head_sizes=[counter.count_message(m) for m in head],
        counter=counter,
        producer=PRODUCER,
        metadata={"trigger": trigger, "session_id": session_id},
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
    warn: Callable[[str], None] | None = None,
) -> str:
    """Handle a PreCompact event: store the conversation, record it, return the instructions.

    ``warn`` hears, in one line, of the lone surrogates the transcript held
    (read as U+FFFD; the stored copy of the file's lines keeps them).

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
    from compactor.summarizers.ledger import merge_messages
    from compactor.summarizers.ledger_text import listing_span

    path, transcript = _hook_transcript(hook)
    surrogates = [w for w in transcript.warnings if w.kind == "lone_surrogate"]
    if surrogates and warn is not None:
        warn(
            f"{path}: {len(surrogates):,} line(s) hold lone surrogate escapes, read as U+FFFD (the first: line "
            f"{surrogates[0].line}); the stored copy of the transcript's lines keeps them"
        )
    previous = _settle_previous(
        hook.session_id, transcript, store, counter=counter, home=home, recovery_tools=recovery_tools
    )
    messages = conversation_since_last_compaction(transcript)
    segments = list(previous.segments) if previous else []
    # The transcript's own lines and the conversation's spans are stored in one transaction.
    batch = StoreBatch()
    named = segment_request(
        path,
        first_line=segments[-1].last_line + 1 if segments else 1,
        producer=f"{PRODUCER}:transcript",
        metadata={"session_id": hook.session_id, "trigger": hook.trigger},
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
    batch.put_named(
        PutRequest(
            data=listing.data,
            producer=f"{PRODUCER}:facts",
            metadata={"kind": "facts", "session_id": hook.session_id, "trigger": hook.trigger},
        ),
        listing.handle,
    )
    batch.store_in(store)
    path_of_store = getattr(store, "path", None)
    record = record.model_copy(
        update={
            "segments": segments,
            "store": str(path_of_store) if isinstance(path_of_store, Path) else None,
            "ledger": ledger,
            "ledger_handle": listing.handle,
        }
    )
    save_session_record(record, home)
    clear_pending(hook.session_id, home)
    return pre_compact_instructions(record, limit=limit, tool=tool)


def check_hook_transcript(hook: HookInput) -> None:
    """Fail now, before a store is opened, if the transcript the input names is too large, missing or none.

    Raises:
        InputInvalid: the input names no transcript, or one over ``HOOK_TRANSCRIPT_MAX_BYTES``.
        TranscriptNotFound: the transcript does not exist.
        NotATranscript: no line of it is a transcript record.
        TranscriptError: the transcript cannot be read.
    """
    from compactor.claude_code.transcript import check_transcript

    check_transcript(_bounded_path(hook))


def _bounded_path(hook: HookInput) -> Path:
    """The transcript the hook input names, refused when over ``HOOK_TRANSCRIPT_MAX_BYTES``.

    Raises:
        InputInvalid: the input names no transcript, or one over the bound.
    """
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
    return path


def _hook_transcript(hook: HookInput) -> tuple[Path, Transcript]:
    """The transcript the hook input names, and its main chain as read (the main chain is what is stored).

    Raises:
        InputInvalid: the input names no transcript, or one over ``HOOK_TRANSCRIPT_MAX_BYTES``.
        TranscriptNotFound: the transcript does not exist.
        TranscriptError: the transcript cannot be read.
    """
    from compactor.claude_code.transcript import read_transcript

    path = _bounded_path(hook)
    return path, read_transcript(path, subagents=False, state=False)


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
    from compactor.engine.head_storage import without_recovered_content
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
        dropped,
        store,
        counter=counter,
        session_id=record.session_id,
        trigger=record.trigger,
        transcript_path=record.transcript_path,
        recovery_tools=recovery_tools,
        now=record.stored_at,
    )
    return record.model_copy(update={"dropped_handle": exact.head_handle, "kept_messages": tail})


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
        record = load_session_record(session_id, home, max_bytes=RECORD_SALVAGE_MAX_BYTES)
        if record is None:
            return None
        settled = settle_kept_messages(record, transcript, store, counter=counter, recovery_tools=recovery_tools)
        if settled is not record:
            save_session_record(settled, home)
        return settled
    except CompactorError:
        return None
