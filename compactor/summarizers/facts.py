"""What the facts of a session are: the paths its tool calls touched and its shell commands.

``touched_path``, ``command_first_line`` and ``relative_path`` define the
facts; the session ledger (``compactor.summarizers.ledger``) records them
and ``compactor.engine.survival`` measures with the same definitions.
"""

from __future__ import annotations

from compactor.core.messages import ToolUseBlock

__all__ = ["DEFAULT_COMMAND_LINE_CHARS", "EDIT_ACTIONS", "command_first_line", "relative_path", "touched_path"]

_PATH_KEYS = ("file_path", "notebook_path")
EDIT_ACTIONS = {"Edit": "edited", "MultiEdit": "edited", "NotebookEdit": "edited", "Write": "written"}
"""The tools that change a file, and what each did to it."""
_SHELL_TOOLS = frozenset({"Bash"})

DEFAULT_COMMAND_LINE_CHARS = 240
"""A command whose first line is longer is shown cut; the ledger's listing keeps it whole."""


def touched_path(use: ToolUseBlock) -> str | None:
    """The file a tool call read, wrote or edited (its ``file_path``/``notebook_path``), if any."""
    for key in _PATH_KEYS:
        value = use.input.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def command_first_line(use: ToolUseBlock) -> str | None:
    """The first non-blank line of a shell tool call's command, stripped; None for other calls."""
    if use.name not in _SHELL_TOOLS:
        return None
    command = use.input.get("command")
    if not isinstance(command, str):
        return None
    return next((line.strip() for line in command.splitlines() if line.strip()), None)


def relative_path(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies under it (shorter), else unchanged."""
    if not cwd:
        return path
    prefix = cwd.rstrip("/") + "/"
    if path.startswith(prefix) and len(path) > len(prefix):
        return path[len(prefix) :]
    return path
