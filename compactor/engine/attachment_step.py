"""Step 5 of a compaction: the attachments under their own budgets (12 files of 1,500 tokens by default).

The summary and the preserved tail have their own caps and never take from
the files. Only with ``CompactOptions.context_tokens`` set (an opt-in shared
ceiling, ``pipeline.context_tokens``) do the summary, the preserved tail and
the attachments share one budget: the attachments get what the summary
and the tail left of it (at least ``_MIN_ATTACHMENT_TOKENS``), split between
files and skills by ``shared_budgets``. Memories are recalled under their
own budget when a memory store is configured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attachments import AttachmentSet, Budgets, FileSource, build_attachments
from ccr.batch import StoreBatch
from compactor.core.messages import Message
from compactor.core.session import ReadFileEntry, SessionState
from compactor.core.tokens import TokenCounter
from compactor.engine.options import CompactOptions
from compactor.memory.attachment import build_memory_attachment
from compactor.summarizers.base import SECTION_TITLES, Summary

__all__ = ["restore_attachments", "shared_budgets"]

_MIN_ATTACHMENT_TOKENS = 1_000
"""Attachments get at least this much of a shared budget, even when the summary and tail took it all."""
_FILES_SHOWN = 4
"""Under a shared budget each file is cut to at most this fraction of the files' part (the rest of it
in CCR), so that several of the files the session is likely to read again fit."""
_FILES_SHARE = 0.6
"""Of what a shared budget leaves for attachments, the files' part when skills are restored too."""


def shared_budgets(budgets: Budgets, left: int, *, with_skills: bool) -> Budgets:
    """``budgets`` cut to what a shared context budget leaves for attachments (at least
    ``_MIN_ATTACHMENT_TOKENS``): files take it all, or ``_FILES_SHARE`` of it when skills are
    to be restored too; each file at most ``1 / _FILES_SHOWN`` of its part and each skill half of
    its part, so that more than one fits; never more than ``budgets`` allow."""
    left = max(left, _MIN_ATTACHMENT_TOKENS)
    files = int(left * _FILES_SHARE) if with_skills else left
    skills = max(1, left - files)
    return budgets.model_copy(
        update={
            "files_total": min(budgets.files_total, files),
            "file_tokens": min(budgets.file_tokens, max(1, files // _FILES_SHOWN)),
            "skills_total": min(budgets.skills_total, skills),
            "skill_tokens": min(budgets.skill_tokens, max(1, skills // 2) if with_skills else skills),
            "memory_tokens": min(budgets.memory_tokens, left),
        }
    )


def restore_attachments(
    snapshot: Mapping[str, ReadFileEntry],
    new_state: SessionState,
    tail: list[Message],
    summary: Summary,
    *,
    history: Sequence[Message],
    room: int,
    opts: CompactOptions,
    counter: TokenCounter,
    files: FileSource,
    batch: StoreBatch,
) -> AttachmentSet:
    """The attachments, and the memories recalled when a memory store is configured.

    Under a shared budget they get what the summary and the tail (``room`` tokens) left of it.

    Raises:
        Whatever the store raises when it refuses a cut tail (fail closed).
    """
    budgets = opts.budgets
    if opts.context_tokens is not None:
        budgets = shared_budgets(
            budgets, opts.context_tokens - room, with_skills=bool(new_state.skills.get(new_state.agent_id))
        )
    current_work = "\n".join(summary.sections.get(t, "") for t in SECTION_TITLES[-2:]).strip() or summary.text
    attached: AttachmentSet = build_attachments(
        snapshot,
        new_state,
        tail,
        budgets=budgets,
        counter=counter,
        store=batch,
        files=files,
        cwd=new_state.cwd,
        history=history,
        current_work=current_work,
    )
    if opts.memory_db is not None:
        recalled = build_memory_attachment(
            opts.memory_db,
            history=history,
            current_work=current_work,
            budget=budgets.memory_tokens,
            counter=counter,
            store=batch,
        )
        attached.attachments.extend(recalled.attachments)
        attached.skipped.extend(recalled.skipped)
    return attached
