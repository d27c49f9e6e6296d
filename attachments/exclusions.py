"""Which read files are not restored as file attachments, and how paths are compared.

Memory files (``CLAUDE.md`` and kin) come back with the project's
instructions, plan files come back as the plan attachment, and a file the
preserved tail already read is still in the context: restoring any of them
would spend the budget twice.
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Iterable, Mapping, Sequence

from attachments.messages import Message

__all__ = [
    "MEMORY_FILE_NAMES",
    "is_memory_file",
    "is_partial_read",
    "is_plan_file",
    "normalize_path",
    "read_paths",
]

MEMORY_FILE_NAMES = frozenset({"CLAUDE.md", "CLAUDE.local.md"})
"""File names Claude Code loads as memory wherever they sit (project, ``.claude/``, home, managed)."""

_READ_TOOLS = frozenset({"Read"})


def normalize_path(path: str, cwd: str | None = None) -> str:
    """``path`` with ``/`` separators, made absolute against ``cwd`` when it is relative, normalized."""
    text = path.replace("\\", "/")
    if cwd and not posixpath.isabs(text) and not _is_drive_path(text):
        text = posixpath.join(cwd.replace("\\", "/"), text)
    return posixpath.normpath(text)


def is_memory_file(path: str) -> bool:
    """Whether ``path`` is a memory file: ``CLAUDE.md``, ``CLAUDE.local.md``, or under ``.claude/rules/``.

    That covers the project's ``CLAUDE.md`` and ``.claude/CLAUDE.md``, the
    user's ``~/.claude/CLAUDE.md`` and ``~/.claude/rules/``, nested
    ``CLAUDE.md`` files in sub-folders, and managed ones.
    """
    parts = normalize_path(path).split("/")
    if parts[-1] in MEMORY_FILE_NAMES:
        return True
    return any(a == ".claude" and b == "rules" for a, b in itertools.pairwise(parts))


def is_plan_file(path: str, plan_path: str | None = None, cwd: str | None = None) -> bool:
    """Whether ``path`` is the session's plan file or any file under a ``.claude/plans/`` folder."""
    normal = normalize_path(path, cwd)
    if plan_path is not None and normal == normalize_path(plan_path, cwd):
        return True
    parts = normal.split("/")
    return any(a == ".claude" and b == "plans" for a, b in itertools.pairwise(parts[:-1]))


def read_paths(messages: Sequence[Message], cwd: str | None = None, *, whole: bool = False) -> set[str]:
    """The normalized ``file_path`` of every Read tool call in ``messages``; with ``whole``, of the
    reads of a whole file only (a read of 20 lines with ``offset``/``limit`` shows only those)."""
    found: set[str] = set()
    for message in messages:
        for use in message.tool_uses():
            if use.name in _READ_TOOLS and not (whole and is_partial_read(use.input)):
                found.update(normalize_path(p, cwd) for p in _paths(use.input))
    return found


def is_partial_read(tool_input: Mapping[str, object]) -> bool:
    """Whether a Read call's input asks for part of the file (an ``offset`` or a ``limit``), as
    ``ReadFileEntry.is_partial`` says of the read it recorded."""
    return tool_input.get("offset") is not None or tool_input.get("limit") is not None


def _paths(tool_input: dict[str, object]) -> Iterable[str]:
    value = tool_input.get("file_path", tool_input.get("path"))
    if isinstance(value, str) and value:
        yield value


def _is_drive_path(text: str) -> bool:
    return len(text) > 2 and text[0].isalpha() and text[1] == ":" and text[2] == "/"
