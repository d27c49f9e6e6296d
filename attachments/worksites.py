"""Where the agent worked in a file: its last edits and its last partial reads, newest first.

A file too long for its budget is cut around these (``attachments._focus``).
An edit's site is where its new text stands in the file's current content
(an edit a later one undid, or a deletion, has none); a read's site is the
line range it asked for. A read of the whole file, or a Write, names no
place in particular.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from attachments.exclusions import normalize_path
from attachments.messages import Message

__all__ = ["LineRange", "WorkSite", "locate", "work_sites"]

SiteKind = Literal["edit", "read"]
_EDIT_TOOLS = frozenset({"Edit", "MultiEdit"})
_MIN_EDIT_CHARS = 3
"""An edit's new text shorter than this (stripped) is too common to say where the edit was."""


class WorkSite(BaseModel):
    """One place the agent worked: an edit's new text, or a partial read's line range (1-based)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: SiteKind
    text: str = ""
    offset: int = 1
    limit: int | None = None


class LineRange(BaseModel):
    """Lines ``start`` to ``end`` of a content (1-based, inclusive), and what put them there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: int
    end: int
    kind: SiteKind


def work_sites(history: Iterable[Message], cwd: str | None = None) -> dict[str, list[WorkSite]]:
    """Every file's edits (Edit, MultiEdit) and partial reads in ``history``, by normalized path, newest first."""
    found: dict[str, list[WorkSite]] = {}
    for message in history:
        for use in message.tool_uses():
            path = use.input.get("file_path")
            if not isinstance(path, str) or not path:
                continue
            sites = found.setdefault(normalize_path(path, cwd), [])
            if use.name in _EDIT_TOOLS:
                edits = use.input.get("edits") if use.name == "MultiEdit" else [use.input]
                for edit in edits if isinstance(edits, list) else []:
                    text = edit.get("new_string") if isinstance(edit, dict) else None
                    if isinstance(text, str) and len(text.strip()) >= _MIN_EDIT_CHARS:
                        sites.append(WorkSite(kind="edit", text=text))
            elif use.name == "Read":
                offset, limit = _number(use.input.get("offset")), _number(use.input.get("limit"))
                if offset is not None or limit is not None:
                    sites.append(WorkSite(kind="read", offset=max(offset or 1, 1), limit=limit))
    return {path: sites[::-1] for path, sites in found.items() if sites}


def locate(
    sites: Sequence[WorkSite], content: str, *, first_line: int = 1, newlines: int | None = None
) -> list[LineRange]:
    """The line ranges of ``content`` (whose line 1 is the file's ``first_line``) that ``sites`` name, in
    content lines: edits found in the content first, newest first, then the reads that overlap it.
    ``newlines`` is ``content.count("\n")`` when the caller has it."""
    if newlines is None:
        newlines = content.count("\n")
    total = newlines + (0 if content.endswith("\n") or not content else 1)
    found = [(content.find(site.text), site) for site in sites if site.kind == "edit"]
    lines_before: dict[int, int] = {}
    counted, position = 0, 0
    for at in sorted({at for at, _ in found if at >= 0}):  # newlines counted once, in order
        counted += content.count("\n", position, at)
        lines_before[at], position = counted, at
    edits = [
        LineRange(
            start=lines_before[at] + 1,
            end=min(lines_before[at] + 1 + site.text.rstrip("\n").count("\n"), total),
            kind="edit",
        )
        for at, site in found
        if at >= 0
    ]
    reads: list[LineRange] = []
    for site in sites:
        if site.kind != "read":
            continue
        start = site.offset - first_line + 1
        end = total if site.limit is None else start + site.limit - 1
        start, end = max(start, 1), min(end, total)
        if start <= end:
            reads.append(LineRange(start=start, end=end, kind="read"))
    return edits + reads


def _number(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)
