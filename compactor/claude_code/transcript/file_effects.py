"""File effects: what a Read, Write or Edit tool call did to a file, read once.

Claude Code records a file tool's effect twice: in the call's input
(``file_path``, ``offset``/``limit``, ``content``, ``old_string``/``new_string``)
and in the result's structured output (``toolUseResult``: the Read's
``file`` {filePath, content, startLine, numLines, totalLines}, the Edit's
``originalFile``). ``file_effect`` turns one call and its result into a
plain value; the session state (``StateBuilder``) and a replay's file view
(``attachments.RecordedFiles``) both apply the same value, each its own way.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from compactor.core.messages import ToolResultBlock, ToolUseBlock

__all__ = ["FileEdit", "FileEffect", "FileRead", "FileWrite", "Replacement", "file_effect", "strip_line_numbers"]

_NUMBERED_LINE = re.compile(r"^ *\d+(?:\u2192|\t)")
_TRAILING_REMINDER = re.compile(r"\n*<system-reminder>(?:(?!<system-reminder>).)*?</system-reminder>\s*\Z", re.S)


class _Effect(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str


class FileRead(_Effect):
    """A Read. ``content`` is None for Claude Code's "file unchanged" stub.

    ``offset``/``limit`` are set for a partial read (1-based first line and
    line count); both are None when the whole file was shown.
    """

    content: str | None
    offset: int | None = None
    limit: int | None = None
    total_lines: int | None = None


class FileWrite(_Effect):
    content: str


class Replacement(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    old: str
    new: str
    replace_all: bool = False


class FileEdit(_Effect):
    """An Edit or MultiEdit: its replacements in order, and the whole file before them when recorded.

    ``replacements`` is None when one of the call's edits is malformed.
    """

    replacements: list[Replacement] | None
    original: str | None = None


FileEffect = FileRead | FileWrite | FileEdit


def strip_line_numbers(text: str) -> str:
    """File content from a Read result's model-visible text.

    Removes the trailing ``<system-reminder>`` blocks Claude Code appends and
    the line-number prefixes (``     1→text`` or ``     1\\ttext``).
    """
    while True:
        stripped = _TRAILING_REMINDER.sub("", text)
        if stripped == text:
            break
        text = stripped
    if text.startswith("<system-reminder>"):
        return ""
    return "\n".join(_NUMBERED_LINE.sub("", line, count=1) for line in text.split("\n"))


def file_effect(call: ToolUseBlock, result: ToolResultBlock, structured: Any = None) -> FileEffect | None:
    """What ``call`` (answered by ``result``, with Claude Code's ``structured`` output) did to a file.

    None for other tools, for reads without text (images, notebooks, PDFs)
    and for calls that name no file.

    Read once per tool result: a replay asks for the effect of a result to
    update its file view, then the session state's builder asks again for
    the very same objects. The last answers are kept and given again when
    the call, the result and the structured output are the same objects
    (identity, not equality), so a read of a large file is parsed once.
    """
    if call.name not in _FILE_TOOLS:
        return None
    kept = _recent.get(result.tool_use_id)
    if kept is not None and kept[0] is call and kept[1] is result and kept[2] is structured:
        return kept[3]
    effect = _effect(call, result, structured)
    if len(_recent) >= _RECENT:
        del _recent[next(iter(_recent))]
    _recent[result.tool_use_id] = (call, result, structured, effect)
    return effect


_FILE_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit"})
_RECENT = 64
_recent: dict[str, tuple[ToolUseBlock, ToolResultBlock, Any, FileEffect | None]] = {}


def _effect(call: ToolUseBlock, result: ToolResultBlock, structured: Any) -> FileEffect | None:
    if call.name == "Read":
        return _read(call, result, structured)
    path = _str(call.input.get("file_path"))
    if path is None:
        return None
    if call.name == "Write":
        content = _str(call.input.get("content"))
        return None if content is None else FileWrite(path=path, content=content)
    if call.name in ("Edit", "MultiEdit"):
        return _edit(call, path, structured)
    return None


def _read(call: ToolUseBlock, result: ToolResultBlock, structured: Any) -> FileRead | None:
    path = _str(call.input.get("file_path"))
    offset = _int(call.input.get("offset"))
    limit = _int(call.input.get("limit"))
    total: int | None = None
    file = structured.get("file") if isinstance(structured, dict) else None
    kind = structured.get("type") if isinstance(structured, dict) else None
    content: str | None
    if isinstance(file, dict) and isinstance(file.get("content"), str):
        path = _str(file.get("filePath")) or path
        content = file["content"]
        start = _int(file.get("startLine")) or 1
        count = _int(file.get("numLines"))
        total = _int(file.get("totalLines"))
        if start <= 1 and count is not None and total is not None and count >= total:
            offset = limit = None
        elif offset is None and limit is None:
            offset, limit = start, count
    elif kind == "file_unchanged":
        content = None
    elif kind not in (None, "text"):
        return None
    else:
        content = strip_line_numbers(result.text())
    if path is None:
        return None
    return FileRead(path=path, content=content, offset=offset, limit=limit, total_lines=total)


def _edit(call: ToolUseBlock, path: str, structured: Any) -> FileEdit | None:
    edits = call.input.get("edits") if call.name == "MultiEdit" else [call.input]
    if not isinstance(edits, list):
        return None
    original = None
    if isinstance(structured, dict):
        original = _str(structured.get("originalFile")) or _str(structured.get("originalFileContents"))
    if not all(isinstance(e, dict) for e in edits):
        return FileEdit(path=path, replacements=None, original=original)
    replacements = [
        Replacement(
            old=_str(e.get("old_string")) or "",
            new=_str(e.get("new_string")) or "",
            replace_all=bool(e.get("replace_all")),
        )
        for e in edits
    ]
    return FileEdit(path=path, replacements=replacements, original=original)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
