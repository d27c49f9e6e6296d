"""File attachments: the read files most worth restoring, re-read now and cut to budget.

Pure apart from two seams: the ``FileSource`` that gives the current content
and the store that keeps cut tails. The order of work follows Claude Code:
exclude plan files, memory files and paths the preserved tail already read;
order the rest by the selection strategy (``attachments.selection``: Claude
Code's ``recent``, newest read first, or ``activity``); take ``max_files``;
re-read each (skip the deleted, note the changed); cut each to
``file_tokens`` with the tail in CCR; accept each in order if the running
total stays within ``files_total`` (one that does not fit is skipped, and
later, smaller files are still checked).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from attachments._cut import Cut, CutInfo, Render, TailStore, commit_cut, plan_cut
from attachments._focus import Focus, FocusInfo, commit_focus, plan_focus
from attachments.attachment import Attachment
from attachments.budgets import Budgets
from attachments.entries import AttachmentEntry, SkippedEntry
from attachments.exclusions import is_memory_file, is_plan_file, normalize_path, read_paths
from attachments.messages import Message
from attachments.readable import readable_text
from attachments.reasons import reason
from attachments.render import reminder_message, render_body, wrap
from attachments.selection import FileActivity, file_activity, newest_first, rank_files
from attachments.sources import FileSource, slice_lines
from attachments.state import AttachmentState, ReadFileEntry
from attachments.worksites import LineRange, WorkSite, locate, work_sites
from ccr.tokens import TextCounter

__all__ = ["build_file_attachments", "content_changed", "current_content"]

PRODUCER = "attachments.file"
_SURELY_OVER_CHARS_PER_TOKEN = 8
"""Content longer than this many characters per token of its budget cannot fit whole (text runs at
about 4): it goes to the focused cut without counting whether it would fit."""


def build_file_attachments(
    snapshot: Mapping[str, ReadFileEntry],
    state: AttachmentState,
    tail: Sequence[Message],
    *,
    budgets: Budgets,
    counter: TextCounter,
    store: TailStore,
    files: FileSource,
    cwd: str | None = None,
    history: Sequence[Message] = (),
    current_work: str | None = None,
    activity: Mapping[str, FileActivity] | None = None,
) -> tuple[list[Attachment], list[SkippedEntry]]:
    """The file attachments for ``snapshot`` (the read-file state taken before compaction).

    ``history`` (the conversation being compacted, tail included) and
    ``current_work`` (the summary's account of the work in progress) feed
    the ``activity`` strategy; ``activity`` may give the counts directly
    instead of ``history``. Every candidate that is not attached is in the
    skipped list with its reason.

    Raises:
        Whatever the store raises when it refuses a cut tail (fail closed).
    """
    cwd = cwd if cwd is not None else state.cwd
    candidates, skipped = _candidates(snapshot, state, tail, cwd)
    selection = budgets.selection
    if selection.strategy != "recent" and activity is None:
        activity = file_activity(history, cwd)
    tail_text = "\n".join(readable_text(m) for m in tail) if selection.strategy != "recent" else None
    candidates = rank_files(
        candidates[::-1], selection, activity=activity, current_work=current_work, tail_text=tail_text, cwd=cwd
    )
    if selection.strategy == "recent":
        max_files, file_tokens, ranked_by = budgets.max_files, budgets.file_tokens, "the most recently read"
    else:
        # activity takes the card's caps unless its own count and cut are set (a cut never above the budget's).
        max_files = selection.max_files if selection.max_files is not None else budgets.max_files
        file_tokens = min(selection.file_tokens or budgets.file_tokens, budgets.file_tokens)
        ranked_by = "the most active"
    attachments, unattached = _attach_in_order(
        candidates[:max_files],
        state.session_id,
        sites=work_sites(history, cwd),
        cwd=cwd,
        file_tokens=file_tokens,
        files_total=budgets.files_total,
        counter=counter,
        store=store,
        files=files,
    )
    for rank, entry in enumerate(candidates[max_files:], start=max_files + 1):
        why = (
            f"ranked {rank} of the {len(candidates)} candidates, {ranked_by} first; only the first {max_files} "
            f"are tried, and {len(attachments)} of them were restored"
        )
        skipped.append(_skip(entry.path, reason("beyond_max_files", why)))
    return attachments, skipped + unattached


def _candidates(
    snapshot: Mapping[str, ReadFileEntry],
    state: AttachmentState,
    tail: Sequence[Message],
    cwd: str | None,
) -> tuple[list[ReadFileEntry], list[SkippedEntry]]:
    """The reads worth restoring, newest first, and the others (plan files, memory files, reads the
    tail shows), each with its reason."""
    plan_path = state.plan.path if state.plan is not None else None
    in_tail = read_paths(tail, cwd, whole=True)  # a partial read in the tail shows only its lines
    memory = {normalize_path(p, cwd) for p in state.memory_paths}
    skipped: list[SkippedEntry] = []
    candidates: list[ReadFileEntry] = []
    for entry in newest_first(snapshot.values()):
        path = entry.path
        normal = normalize_path(path, cwd)
        if is_plan_file(path, plan_path, cwd):
            skipped.append(_skip(path, reason("plan_file", "the plan is restored as its own attachment")))
        elif is_memory_file(path) or normal in memory:
            skipped.append(_skip(path, reason("memory_file", "memory files return with the project instructions")))
        elif normal in in_tail:
            skipped.append(_skip(path, reason("read_in_tail", "the preserved messages already show this file whole")))
        else:
            candidates.append(entry)
    return candidates, skipped


def _attach_in_order(
    entries: Sequence[ReadFileEntry],
    session_id: str | None,
    *,
    sites: Mapping[str, Sequence[WorkSite]],
    cwd: str | None,
    file_tokens: int,
    files_total: int,
    counter: TextCounter,
    store: TailStore,
    files: FileSource,
) -> tuple[list[Attachment], list[SkippedEntry]]:
    """Re-read each of ``entries`` and cut it to ``file_tokens``, around where the agent worked last in it
    (``sites``) when it can, else keeping its head, what is cut in ``store``; accept each in order while
    the total stays within ``files_total``. The attachments, and the entries skipped with
    their reasons.

    Raises:
        Whatever the store raises when it refuses a cut tail (fail closed).
    """
    attachments: list[Attachment] = []
    skipped: list[SkippedEntry] = []
    total = 0
    origin = getattr(files, "origin", "disk")
    for entry in entries:
        content = current_content(files, entry)
        if content is None:
            where = "in the recorded session" if origin == "recorded" else "on disk"
            skipped.append(_skip(entry.path, reason("unavailable", f"deleted or not readable {where}")))
            continue
        newlines = content.count("\n")
        lines = newlines + (0 if not content or content.endswith("\n") else 1)
        # A replay says once, in the first file it restores, that the files are rebuilt from the recording.
        replay_note = origin == "recorded" and not attachments
        render = _renderer(entry, replay_note, changed=entry.stale or content_changed(entry, content), lines=lines)
        located = locate(
            sites.get(normalize_path(entry.path, cwd), ()),
            content,
            first_line=max(entry.offset or 1, 1),
            newlines=newlines,
        )
        plan, focus = _plan(entry, content, located, render, replay_note, file_tokens, counter, newlines)
        if plan is None and focus is None:
            skipped.append(
                _skip(
                    entry.path,
                    reason(
                        "over_item_budget",
                        f"with none of its lines shown, its notes alone take more than the {file_tokens:,} tokens "
                        "a file may",
                    ),
                )
            )
            continue
        tokens = focus.tokens if focus is not None else plan.tokens if plan is not None else 0
        if total + tokens > files_total:
            skipped.append(_skip(entry.path, _over_total(total, files_total, tokens, len(attachments))))
            continue  # as Claude Code does: a later, smaller file may still fit
        metadata = {"path": entry.path, "kind": "file_tail", "session_id": session_id}
        chosen: Cut | Focus
        handle: str | None
        if focus is not None:
            chosen = commit_focus(focus, store=store, producer=PRODUCER, counter=counter, metadata=metadata)
            text, truncated, handle = chosen.text, True, chosen.handle
        else:
            assert plan is not None
            chosen = commit_cut(
                plan,
                render,
                limit=min(file_tokens, files_total - total),
                counter=counter,
                store=store,
                producer=PRODUCER,
                metadata=metadata,
            )
            text, truncated, handle = chosen.text, chosen.truncated, chosen.handle
        total += chosen.tokens
        attachments.append(
            Attachment(
                type="file",
                message=reminder_message(text),
                tokens=chosen.tokens,
                entries=[
                    AttachmentEntry(
                        type="file", path=entry.path, tokens=chosen.tokens, truncated=truncated, handle=handle
                    )
                ],
            )
        )
    return attachments, skipped


def _plan(
    entry: ReadFileEntry,
    content: str,
    located: Sequence[LineRange],
    render: Render,
    replay_note: bool,
    limit: int,
    counter: TextCounter,
    newlines: int,
) -> tuple[Cut | None, Focus | None]:
    """The whole file, a cut around ``located`` when the file does not fit, or else its head (``plan_cut``).

    Content surely too long to fit goes to the focused cut without first counting whether it fits;
    the head is looked for only when no focused cut fits.
    """
    first_line = max(entry.offset or 1, 1)
    if located and len(content) <= limit * _SURELY_OVER_CHARS_PER_TOKEN:
        whole = plan_cut(
            content, render, limit=limit, counter=counter, first_line=first_line, newlines=newlines, whole_only=True
        )
        if whole is not None:
            return whole, None
    if located:
        focus_render = _focus_renderer(entry, replay_note, changed=entry.stale or content_changed(entry, content))
        focus = plan_focus(content, located, focus_render, limit=limit, counter=counter, first_line=first_line)
        if focus is not None:
            return None, focus
    return plan_cut(content, render, limit=limit, counter=counter, first_line=first_line, newlines=newlines), None


def _file_text(
    entry: ReadFileEntry,
    replay_note: bool,
    *,
    changed: bool,
    body: str,
    lines: int,
    cut: CutInfo | None = None,
    focus: FocusInfo | None = None,
) -> str:
    """A restored file's attachment text: ``body`` (``lines`` long from the read's first line), cut or
    focused."""
    first_line = max(entry.offset or 1, 1)
    return wrap(
        render_body(
            "file.j2",
            path=entry.path,
            partial=entry.is_partial,
            first_line=first_line,
            last_line=first_line + max(lines, 1) - 1,
            replay_note=replay_note,
            changed=changed,
            head=body,
            cut=cut,
            focus=focus,
        )
    )


def _renderer(entry: ReadFileEntry, replay_note: bool, *, changed: bool, lines: int) -> Render:
    def render(head: str, cut: CutInfo | None) -> str:
        return _file_text(entry, replay_note, changed=changed, body=head, lines=lines, cut=cut)

    return render


def _focus_renderer(entry: ReadFileEntry, replay_note: bool, *, changed: bool) -> Callable[[str, FocusInfo], str]:
    def render(body: str, focus: FocusInfo) -> str:
        return _file_text(entry, replay_note, changed=changed, body=body, lines=focus.total_lines, focus=focus)

    return render


def current_content(files: FileSource, entry: ReadFileEntry) -> str | None:
    """What ``entry``'s read would show now: the whole file, or the same lines for a partial read."""
    if not entry.is_partial:
        return files.read(entry.path)
    read_slice = getattr(files, "read_slice", None)
    if read_slice is not None:
        result: str | None = read_slice(entry.path, entry.offset, entry.limit)
        return result
    text = files.read(entry.path)
    return None if text is None else slice_lines(text, entry.offset, entry.limit)


def content_changed(entry: ReadFileEntry, current: str) -> bool:
    """Whether ``current`` differs from what the agent saw (trailing newlines aside)."""
    return current != entry.content and current.rstrip("\r\n") != entry.content.rstrip("\r\n")


def _skip(path: str, why: str) -> SkippedEntry:
    return SkippedEntry(type="file", path=path, reason=why)


def _over_total(total: int, budget: int, tokens: int, restored: int) -> str:
    """Why a file that would take ``tokens`` did not fit: the ``restored`` files before it took ``total``."""
    return reason(
        "over_total_budget",
        f"it takes {tokens:,} tokens, and the {restored} files restored before it took {total:,} "
        f"of the {budget:,} file tokens",
    )
