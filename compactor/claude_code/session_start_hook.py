"""The SessionStart hook (``compactor hook session-start``): after a compaction, say where the conversation is.

With source ``compact``, a short reminder (``hookSpecificOutput.additionalContext``)
tells the model where the conversation before the compaction is stored and
that the tool ``mcp__plugin_compactor_ccr__ccr_retrieve`` (deferred: loaded
with ToolSearch) brings any part of it back, followed by the session's
ledger and, when configured, recalled memories.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ccr import default_store_path, marker
from compactor.claude_code.hook_input import CLIENT_RETRIEVE_TOOL
from compactor.claude_code.session_record import announced_handle, is_pending, load_session_record

if TYPE_CHECKING:
    from compactor.claude_code.hook_input import HookInput
    from compactor.claude_code.session_record import SessionRecord
    from compactor.core.tokens import CounterName, TokenCounter
    from compactor.summarizers.session_start import SessionStartText

# Claude Code runs the session-start hook at every start, and almost always
# it has nothing to say: what only rendering or recalling needs (the
# templates, the tokenizer, memories, the store) is imported in the
# functions that do it.

__all__ = [
    "SESSION_START_MAX_CHARS",
    "session_ledger",
    "session_start",
    "session_start_output",
    "still_stored",
]


SESSION_START_MAX_CHARS = 10_000
"""The most ``additionalContext`` a SessionStart hook may return after a compaction (Claude Code's limit)."""


def session_ledger(hook: HookInput, record: SessionRecord | None, *, budget: int) -> SessionStartText | None:
    """The session's ledger for the text after a compaction, in at most ``budget`` characters; None for none.

    ``record`` is the session's record as the session-start hook reads it
    (None when the session stored nothing): its ``ledger`` holds every fact of
    the transcript the pre-compact hook read. The text goes in order of what
    Claude Code's summary keeps least (``compactor.summarizers.session_start.session_start_text``);
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
    from compactor.summarizers.session_start import session_start_text

    reads = {r.path: r.handle for r in record.results if r.tool == "Read" and r.path}
    return session_start_text(
        record.ledger,
        budget=budget,
        cwd=hook.cwd,
        listing=marker(record.ledger_handle) if record.ledger_handle else None,
        summary=record.compact_summary,
        read_handles=reads,
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
    ledger: Callable[..., SessionStartText | str | None] = session_ledger,
    limit: int = SESSION_START_MAX_CHARS,
) -> str | None:
    """The SessionStart hook's JSON output, or None when there is nothing to add.

    Only a start after a compaction (``source`` ``compact``) gets anything:
    what ``ledger(hook, record, budget=...)`` returns within the characters the
    reminder and ``memories`` (the recalled ``memory`` reminder) leave, its
    lead first (where the work stands, the files and check it needs), then the
    reminder that the session's conversation was stored (naming the handle the
    summarizer saw), then the rest of the ledger's text and the memories;
    never more than ``limit`` characters in all.
    """
    if hook.source != "compact":
        return None
    parts: list[str] = []
    if record is not None and record.head_handle is not None:
        from compactor.core.templating import render

        head = announced_handle(record) or record.head_handle
        parts.append(
            render(
                "hook_session_start.j2",
                head=marker(head),
                kept=record.kept_messages,
                earlier=[marker(h) for h in record.earlier_heads],
                results=len(record.results),
                tool=tool,
            ).strip()
        )
    separators = 2 * (len(parts) + (1 if memories else 0))
    room = limit - sum(map(len, parts)) - len(memories or "") - separators
    told = ledger(hook, record, budget=room) if room > 0 else None
    lead, rest = (told.lead, told.rest) if told is not None and not isinstance(told, str) else ("", told or "")
    if lead.strip():
        parts.insert(0, lead.strip())
    if rest.strip():
        parts.append(rest.strip())
    if memories:
        parts.append(memories)
    if not parts:
        return None
    context = _within("\n\n".join(parts), limit)
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}},
        ensure_ascii=False,
    )


def session_start(
    hook: HookInput,
    *,
    home: Path | None = None,
    memory_db: str | None = None,
    memory_tokens: int = 2_000,
    counter: TokenCounter | None = None,
    counter_name: CounterName = "tiktoken",
    tool: str = CLIENT_RETRIEVE_TOOL,
    ledger: Callable[..., SessionStartText | str | None] = session_ledger,
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
    if record is not None and is_pending(hook.session_id, home):
        record = None  # this compaction's pre-compact hook did not finish: the record is of an older one
    if record is not None and record.head_handle is not None:
        record = still_stored(record, home)
    memories = None
    if memory_db is not None and hook.transcript_path:
        from ccr import open_store
        from compactor.core.tokens import make_counter
        from compactor.memory.attachment import session_memories

        with open_store(None if home is None else home / "ccr.db") as store:
            memories = session_memories(
                Path(hook.transcript_path).expanduser(),
                memory_db,
                budget=memory_tokens,
                counter=counter or make_counter(counter_name),
                store=store,
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
        ccr.StoreError: the store cannot be read.
    """
    from ccr import open_store

    if record.store is not None:
        path = Path(record.store)
    else:
        path = default_store_path() if home is None else home / "ccr.db"
    named = {
        record.head_handle,
        record.summarized_handle,
        record.dropped_handle,
        *record.earlier_heads,
        *record.earlier_dropped,
        *(r.handle for r in record.results),
        record.ledger_handle,
    }
    held: set[str | None] = set()
    if path.exists():  # a store that is gone holds nothing (and is not made anew here)
        with open_store(path, readonly=True) as store:
            held = {h for h in named if h is not None and store.contains(h)}
    head = record.head_handle if record.head_handle in held else None
    return record.model_copy(
        update={
            "head_handle": head,
            "summarized_handle": record.summarized_handle if head and record.summarized_handle in held else head,
            "dropped_handle": record.dropped_handle if head and record.dropped_handle in held else None,
            "earlier_heads": [h for h in record.earlier_heads if h in held],
            "earlier_dropped": [h for h in record.earlier_dropped if h in held],
            "results": [r for r in record.results if r.handle in held],
            "ledger_handle": record.ledger_handle if record.ledger_handle in held else None,
        }
    )
