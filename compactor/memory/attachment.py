"""The memory attachment: what earlier sessions remembered about the work in progress.

After a compaction, the memories that best match the work in progress (the
last request the user typed and the summary's account of the current work)
are recalled from the memory store and attached as one ``memory`` reminder,
held to its own budget (``Budgets.memory_tokens``, 2,000 by default) as
rendered, wrapper included. A memory cut to fit names the handle of its
whole text, stored in the compaction's recovery store first. One report
entry per memory. A memory store that cannot be opened or read skips the
attachment with the reason, and the compaction goes on without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from attachments.attachment import Attachment, AttachmentSet
from attachments.reasons import reason
from attachments.render import reminder_message, render_reminder
from ccr.handles import marker
from ccr.store import Store
from compactor.claude_code.transcript import read_transcript
from compactor.core.errors import CompactorError
from compactor.core.messages import Message
from compactor.core.tokens import TokenCounter
from compactor.engine.report import AttachmentEntry, SkippedEntry
from compactor.memory.models import Hit
from compactor.memory.store import DEFAULT_LIMIT, MemoryDB, open_memory
from compactor.summarizers.prompts import typed

if TYPE_CHECKING:
    from ccr.batch import StoreBatch

__all__ = ["build_memory_attachment", "memory_query", "recall_attachment", "session_memories"]

_FITTING_ROUNDS = 8
"""Times the recall budget is narrowed by the rendered overshoot before hits are dropped instead."""


def memory_query(history: Sequence[Message], current_work: str | None) -> str:
    """What to recall for: the last request the user typed, and the summary's current work."""
    last_request = next(
        (said.text for said in map(typed, reversed(history)) if said is not None and said.is_request), ""
    )
    return "\n".join(part for part in (last_request, current_work or "") if part.strip())


def recall_attachment(
    db: MemoryDB, query: str, *, budget: int, counter: TokenCounter, limit: int = DEFAULT_LIMIT
) -> Attachment | None:
    """The ``memory`` attachment for ``query`` within ``budget`` tokens as rendered, or None if nothing matches.

    Raises:
        compactor.memory.errors.StoreError: the memory store failed.
        ccr.BudgetExceeded, ccr.StoreError: the whole text of a cut memory could not be stored.
    """
    if not query.strip():
        return None
    room = budget - counter.count_text(_render([]))
    for _ in range(_FITTING_ROUNDS):
        if room <= 0:
            return None
        hits = db.recall(query, limit=limit, token_budget=room, counter=counter)
        if not hits:
            return None
        text = _render(hits)
        tokens = counter.count_text(text)
        if tokens <= budget:
            return _attachment(hits, text, tokens)
        room -= tokens - budget
    while hits:
        hits = hits[:-1]
        text = _render(hits)
        tokens = counter.count_text(text)
        if hits and tokens <= budget:
            return _attachment(hits, text, tokens)
    return None


def build_memory_attachment(
    db_path: str | Path,
    *,
    history: Sequence[Message],
    current_work: str | None,
    budget: int,
    counter: TokenCounter,
    store: Store | StoreBatch,
) -> AttachmentSet:
    """Open the memory store at ``db_path``, recall for the work in progress, and attach what fits.

    Cut memories' whole texts go to ``store``: the compaction's recovery
    store, or the ``StoreBatch`` the pipeline writes to it in the
    compaction's one transaction (recalling only ever *puts* into its
    recovery store, so a batch stands in for it; the cast says so).
    A missing file, or a store that cannot be opened or read, is a skipped
    ``memory`` entry, not a failure. The store is opened read-only: no file
    is created or changed, and a store on read-only media can be recalled from.
    """
    if not Path(db_path).expanduser().exists():
        why = reason("unavailable", f"no memory store at {db_path}")
        return AttachmentSet(skipped=[SkippedEntry(type="memory", path=str(db_path), reason=why)])
    try:
        with open_memory(db_path, recovery=cast(Store, store), readonly=True) as db:
            attachment = recall_attachment(db, memory_query(history, current_work), budget=budget, counter=counter)
    except CompactorError as exc:
        skipped = SkippedEntry(type="memory", path=str(db_path), reason=reason("unavailable", f"{exc.error_id}: {exc}"))
        return AttachmentSet(skipped=[skipped])
    return AttachmentSet(attachments=[attachment] if attachment else [])


def _render(hits: Sequence[Hit]) -> str:
    shown = [
        {"id": h.id, "text": h.text, "marker": marker(h.recovery_handle) if h.recovery_handle else None} for h in hits
    ]
    return render_reminder("memory.j2", hits=shown)


def _attachment(hits: Sequence[Hit], text: str, tokens: int) -> Attachment:
    entries = [
        AttachmentEntry(
            type="memory",
            name=h.id,
            tokens=h.tokens_added,
            truncated=h.recovery_handle is not None,
            handle=h.recovery_handle,
        )
        for h in hits
    ]
    return Attachment(type="memory", message=reminder_message(text), tokens=tokens, entries=entries)


def session_memories(
    transcript_path: str | Path,
    db_path: str | Path,
    *,
    budget: int,
    counter: TokenCounter,
    store: Store,
) -> str | None:
    """The ``memory`` reminder for a Claude Code session that was just compacted, or None.

    The SessionStart hook runs before the client writes the compaction's
    summary, so the work in progress is the last request typed in the
    transcript. A missing or unreadable memory store gives None.

    Raises:
        TranscriptNotFound, TranscriptError: the transcript cannot be read.
    """
    transcript = read_transcript(transcript_path, subagents=False, state=False)
    recalled = build_memory_attachment(
        db_path, history=transcript.messages, current_work=None, budget=budget, counter=counter, store=store
    )
    return recalled.attachments[0].message.text() if recalled.attachments else None
