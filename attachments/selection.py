"""File selection: which read files a compaction restores first.

A strategy orders the candidate files (plan files, memory files and files
the preserved tail already read are excluded before, so their slots go to
the next candidates); the file builder then takes ``max_files`` of them in
that order and fits them to the token budgets.

- ``recent`` is Claude Code's rule: the most recently read first (by the
  read's time, then by its position in the conversation: see
  ``newest_first``).
- ``activity`` scores what the session shows about each file: whether the
  preserved tail talks about it (names it without reading it: in a grep
  result, an error, the assistant's plan), how often it was read and edited
  since the last compaction, how recently, and whether the summary's current
  work names it. A file the kept conversation is still talking about is the
  one the model reaches for next.

The weights are settings (``[attachments.selection]``) so that ``compactor
tune`` can vary them. Both strategies restore within ``[attachments]
max_files``, ``file_tokens`` and ``files_total``: by default 12 files of at
most 1,500 tokens, 18,000 at most, inside the card's 50,000 for all files
(Claude Code's 5 files of 5,000 are the preset
``examples/claude-code-card.toml``). ``[attachments.selection] max_files``
and ``file_tokens`` give ``activity`` its own count and cut, for ``tune`` to
vary; the cut never exceeds ``[attachments] file_tokens``.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator

from attachments.bounds import within_bound

if TYPE_CHECKING:  # the settings import this module; keep that import light
    from attachments.messages import Message
    from attachments.state import ReadFileEntry

__all__ = [
    "DEFAULT_ACTIVITY_FILES",
    "DEFAULT_ACTIVITY_FILE_TOKENS",
    "DEFAULT_STRATEGY",
    "FileActivity",
    "FileSelection",
    "STRATEGIES",
    "StrategyName",
    "file_activity",
    "newest_first",
    "rank_files",
]

StrategyName = Literal["recent", "activity"]
STRATEGIES: tuple[StrategyName, ...] = ("recent", "activity")
DEFAULT_STRATEGY: StrategyName = "activity"
"""Chosen with ``compactor tune`` on the project's fixtures and real sessions (see docs/replay-and-tune.md)."""
DEFAULT_ACTIVITY_FILES = 12
"""How many files a compaction restores by default (``[attachments] max_files``): what ``tune`` chose on
real sessions, where 5 (Claude Code's cap) left a tenth of the files read again after a compaction out."""
DEFAULT_ACTIVITY_FILE_TOKENS = 1_500
"""... each cut to at most this (``[attachments] file_tokens``; the rest of a longer file is in CCR)."""

_READ_TOOLS = frozenset({"Read"})
_EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})


class FileSelection(BaseModel):
    """How file candidates are ordered (``strategy``) and, for ``activity``, the weight of each signal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: StrategyName = DEFAULT_STRATEGY
    max_files: PositiveInt | None = None
    """``activity`` only: how many files it restores; None takes ``[attachments] max_files``."""
    file_tokens: PositiveInt | None = None
    """``activity`` only: the cut of each file; None, or a number above ``[attachments] file_tokens``, takes that."""
    read_weight: float = Field(default=1.0, ge=0, allow_inf_nan=False)
    """Weight of log(1 + reads since the last compaction)."""
    edit_weight: float = Field(default=2.0, ge=0, allow_inf_nan=False)
    """Weight of log(1 + edits and writes since the last compaction)."""
    recency_weight: float = Field(default=1.0, ge=0, allow_inf_nan=False)
    """Weight of recency: 1 for the file touched last (read, edited, or named by a command or search),
    falling as 1 / (1 + rank)."""
    summary_weight: float = Field(default=1.0, ge=0, allow_inf_nan=False)
    """Bonus when the summary's current work names the file (its path or its file name)."""
    tail_weight: float = Field(default=2.0, ge=0, allow_inf_nan=False)
    """Bonus when the preserved tail names the file (its path or its file name) without reading it."""

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"expected a number, not the boolean {str(value).lower()}")
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _bounded(cls, value: Any) -> Any:
        """Refuse a number over ``attachments.bounds.MAX_SETTING_NUMBER``."""
        return within_bound(value)


class FileActivity(BaseModel):
    """What the history shows about one file."""

    model_config = ConfigDict(extra="forbid")

    reads: int = 0
    edits: int = 0
    last_touch: int = -1
    """The position in the history of the last tool call that read, edited or named the file (a
    command, a search, an agent's prompt); -1 when unknown."""


def file_activity(history: Iterable[Message], cwd: str | None = None) -> dict[str, FileActivity]:
    """Reads and edits (Edit, MultiEdit, Write, NotebookEdit) per normalized path in ``history``, and the
    last call that touched each: read, edited, or named in any other tool's input."""
    import json

    from attachments.exclusions import normalize_path

    found: dict[str, FileActivity] = {}
    others: list[tuple[int, str]] = []
    for position, message in enumerate(history):
        for use in message.tool_uses():
            if use.name not in _READ_TOOLS and use.name not in _EDIT_TOOLS:
                others.append((position, json.dumps(use.input, ensure_ascii=False)))
                continue
            value = use.input.get("file_path", use.input.get("notebook_path", use.input.get("path")))
            if not isinstance(value, str) or not value:
                continue
            activity = found.setdefault(normalize_path(value, cwd), FileActivity())
            activity.last_touch = position
            if use.name in _READ_TOOLS:
                activity.reads += 1
            else:
                activity.edits += 1
    for path, activity in found.items():
        for position, text in reversed(others):
            if position <= activity.last_touch:
                break
            if _mentions(text, path, path):
                activity.last_touch = position
                break
    return found


def newest_first(entries: Iterable[ReadFileEntry]) -> list[ReadFileEntry]:
    """``entries`` (given in the order they were read, as ``AttachmentState.read_files`` holds them), newest first.

    The read's time orders them; where time does not separate two reads (the
    Python API and the framework adapters give messages no timestamps, so
    every read has the same time) the later position in the conversation
    comes first.
    """
    indexed = sorted(enumerate(entries), key=lambda item: (item[1].timestamp, item[0]), reverse=True)
    return [entry for _, entry in indexed]


def rank_files(
    candidates: Sequence[ReadFileEntry],
    selection: FileSelection,
    *,
    activity: Mapping[str, FileActivity] | None = None,
    current_work: str | None = None,
    tail_text: str | None = None,
    cwd: str | None = None,
) -> list[ReadFileEntry]:
    """``candidates`` (in the order they were read) in the order the strategy restores them (best first).

    ``activity`` is ``file_activity`` of the conversation being compacted;
    ``current_work`` the summary's account of the work in progress;
    ``tail_text`` the preserved tail as text. All are ignored by ``recent``.
    Ties keep the newest read first (see ``newest_first``).
    """
    from attachments.exclusions import normalize_path

    newest = newest_first(candidates)
    if selection.strategy == "recent":
        return newest
    seen = activity or {}
    # Recency is that of the last touch (a read, an edit, a command or search naming the file) when the
    # history gives it, the read's otherwise; ties keep the newest read first.
    touched = sorted(
        range(len(newest)),
        key=lambda i: seen.get(normalize_path(newest[i].path, cwd), FileActivity()).last_touch,
        reverse=True,
    )
    recency_rank = {i: rank for rank, i in enumerate(touched)}
    work = current_work or ""
    tail = tail_text or ""

    def score(index: int, entry: ReadFileEntry) -> float:
        normal = normalize_path(entry.path, cwd)
        counts = seen.get(normal, FileActivity())
        named = _mentions(work, entry.path, normal)
        talked_about = _mentions(tail, entry.path, normal)
        return (
            selection.read_weight * math.log1p(counts.reads)
            + selection.edit_weight * math.log1p(counts.edits)
            + selection.recency_weight / (1 + recency_rank[index])
            + (selection.summary_weight if named else 0.0)
            + (selection.tail_weight if talked_about else 0.0)
        )

    scored = [(score(i, entry), -recency_rank[i], entry) for i, entry in enumerate(newest)]
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [entry for _, _, entry in scored]


def _mentions(text: str, path: str, normal: str) -> bool:
    return bool(text) and (normal in text or path in text or _names_file(text, normal))


def _names_file(text: str, path: str) -> bool:
    """Whether ``text`` names the file by a name specific enough to mean it (``pipeline.py``, not ``a``)."""
    name = posixpath.basename(path)
    if "." not in name or len(name) < 5:
        return False
    start = text.find(name)
    while start != -1:
        before = text[start - 1] if start else " "
        end = start + len(name)
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before in "_-.") and not (after.isalnum() or after in "_-"):
            return True
        start = text.find(name, start + 1)
    return False
