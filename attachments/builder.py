"""build_attachments: everything restored after a compaction, in Claude Code's order.

Order: files, task status, plan file, plan mode, skills, then the deferred
tools, agent listing and MCP instructions deltas (announcing the full sets,
since the compacted history has announced nothing). The function does not
change ``state``; the pipeline calls ``mark_announced`` on the state it
returns after compaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attachments.attachment import Attachment, AttachmentSet
from attachments.budgets import DEFAULT_BUDGETS, Budgets
from attachments.deltas import full_deltas
from attachments.files import build_file_attachments
from attachments.invoked_skills import build_skill_attachment
from attachments.messages import Message
from attachments.plan import plan_file_attachment, plan_mode_attachment
from attachments.sources import FileSource
from attachments.state import AttachmentState, ReadFileEntry
from attachments.tasks import task_status_attachments
from ccr.batch import BatchStore, StoreBatch
from ccr.tokens import TextCounter

__all__ = ["build_attachments"]


def build_attachments(
    snapshot: Mapping[str, ReadFileEntry],
    state: AttachmentState,
    tail: Sequence[Message],
    *,
    budgets: Budgets = DEFAULT_BUDGETS,
    counter: TextCounter,
    store: BatchStore,
    files: FileSource,
    cwd: str | None = None,
    history: Sequence[Message] = (),
    current_work: str | None = None,
) -> AttachmentSet:
    """The attachments that follow the preserved ``tail`` after a compaction.

    ``snapshot`` is the read-file state taken before compaction cleared it;
    ``files`` gives the files' current content (``DiskFiles`` live,
    ``RecordedFiles`` in a replay); cut tails go to ``store``, all in one
    ``put_many`` once every cut is chosen. A ``StoreBatch`` given as
    ``store`` only collects them: its owner stores them with the rest of
    its transaction (the pipeline does, for a whole compaction). Files and
    skills are held to ``budgets`` as rendered, counted with ``counter``.
    ``history`` (the conversation being compacted) and ``current_work`` (the
    summary's account of it) let the file selection strategy rank files.

    Raises:
        TailNotStored: a store named a tail with a handle the budget cannot fit.
        Whatever ``store.put_many`` raises when it refuses the tails (for
            example ``ccr.BudgetExceeded``): the pipeline then fails closed.
    """
    tails = store if isinstance(store, StoreBatch) else StoreBatch()
    file_attachments, skipped = build_file_attachments(
        snapshot,
        state,
        tail,
        budgets=budgets,
        counter=counter,
        store=tails,
        files=files,
        cwd=cwd,
        history=history,
        current_work=current_work,
    )
    skill_attachments, skipped_skills = build_skill_attachment(state, budgets=budgets, counter=counter, store=tails)
    if tails is not store:
        tails.store_in(store)
    attachments: list[Attachment] = [*file_attachments, *task_status_attachments(state, counter)]
    plan = plan_file_attachment(state, counter, history=history)
    attachments.extend(a for a in (plan, plan_mode_attachment(state, counter)) if a)
    attachments.extend(skill_attachments)
    attachments.extend(full_deltas(state, counter))
    return AttachmentSet(attachments=attachments, skipped=[*skipped, *skipped_skills])
