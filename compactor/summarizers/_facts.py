"""The hard facts of a head: every touched path and every shell command, under a token budget.

``Facts`` collects, from the tool calls and their results, what was done to
each file (read, read lines a-b, edited, written; how many times) and each
distinct command's first line with its outcome (runs, ok/failed, the last
output line). ``layout`` fits them into a budget in the summarizer's
tokens: paths first (they are few and short), then commands, newest kept;
whatever does not fit, and every command whose first line is too long to
show whole, goes into a full listing that is stored as its own span and cited
by handle, with a note saying how many were left out.

``touched_path``, ``command_first_line`` and ``relative_path`` define the
facts; ``compactor.survival`` measures with the same definitions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from compactor.dedup import without_result_id
from compactor.messages import ToolResultBlock, ToolUseBlock

__all__ = [
    "CommandNote",
    "DEFAULT_COMMAND_LINE_CHARS",
    "FactLayout",
    "Facts",
    "FileNote",
    "command_first_line",
    "last_line",
    "layout",
    "relative_path",
    "touched_path",
]

_PATH_KEYS = ("file_path", "notebook_path")
_EDIT_ACTIONS = {"Edit": "edited", "MultiEdit": "edited", "NotebookEdit": "edited", "Write": "written"}
_SHELL_TOOLS = frozenset({"Bash"})

DEFAULT_COMMAND_LINE_CHARS = 240
"""A command whose first line is longer is shown cut; the listing keeps it whole."""
_OUTPUT_CHARS = 72


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


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 5].rstrip() + " [...]"


@dataclass
class FileNote:
    path: str
    actions: Counter[str] = field(default_factory=Counter)
    handles: list[str] = field(default_factory=list)
    last: int = 0


@dataclass
class CommandNote:
    first: str
    more_lines: int = 0
    runs: int = 0
    ok: int = 0
    failed: int = 0
    last_output: str = ""
    last: int = 0


@dataclass
class Facts:
    """Files and commands of a head, filled call by call."""

    files: dict[str, FileNote] = field(default_factory=dict)
    commands: dict[str, CommandNote] = field(default_factory=dict)

    def tool_use(self, use: ToolUseBlock, index: int) -> None:
        path = touched_path(use)
        if path:
            note = self.files.setdefault(path, FileNote(path))
            note.last = index
            if use.name == "Read":
                offset, limit = use.input.get("offset"), use.input.get("limit")
                if isinstance(offset, int | None) and isinstance(limit, int | None) and (offset or limit):
                    start = int(offset or 1)
                    end = f"{start + int(limit) - 1}" if limit else "end"
                    note.actions[f"read lines {start}-{end}"] += 1
                else:
                    note.actions["read"] += 1
            else:
                note.actions[_EDIT_ACTIONS.get(use.name, use.name)] += 1
        first = command_first_line(use)
        if first:
            note_c = self.commands.setdefault(first, CommandNote(first))
            command = str(use.input.get("command", ""))
            note_c.more_lines = max(0, sum(1 for ln in command.splitlines() if ln.strip()) - 1)
            note_c.runs += 1
            note_c.last = index

    def tool_result(
        self, call: ToolUseBlock, block: ToolResultBlock, text: str, handle: str | None, index: int
    ) -> None:
        path = touched_path(call)
        if path and handle and path in self.files:
            note = self.files[path]
            if handle not in note.handles:
                note.handles.append(handle)
        first = command_first_line(call)
        if first and first in self.commands:
            command = self.commands[first]
            if block.is_error:
                command.failed += 1
            else:
                command.ok += 1
            last = last_line(without_result_id(text))
            command.last_output = _one_line(last, _OUTPUT_CHARS) if last else ""


_LAST_LINE_WINDOW = 4096


def last_line(text: str) -> str:
    """The last line of ``text`` that is not blank, without its trailing whitespace ("" when none is),
    as ``str.splitlines`` cuts lines.

    Only the end of the text is split when the line starts within it: a
    command's output can be megabytes, and splitting all of it made a list
    of every line to read one.
    """
    stripped = text.rstrip()
    tail = stripped[-_LAST_LINE_WINDOW:]
    lines = tail.splitlines()
    if len(lines) < 2 and len(tail) < len(stripped):
        lines = stripped.splitlines()  # a last line longer than the window
    return lines[-1] if lines else ""


def _file_line(note: FileNote, cwd: str | None, *, absolute: bool = False) -> str:
    actions = ", ".join(a if n == 1 else f"{a} x{n}" for a, n in note.actions.items())
    return f"- {note.path if absolute else relative_path(note.path, cwd)}: {actions}"


def _command_line(note: CommandNote, *, whole: bool = False) -> tuple[str, bool]:
    """The rendered line, and whether the first line had to be cut."""
    first, cut = note.first, False
    if not whole and len(first) > DEFAULT_COMMAND_LINE_CHARS:
        first, cut = first[: DEFAULT_COMMAND_LINE_CHARS - 5].rstrip() + " [...]", True
    line = f"- `{first}`"
    if note.more_lines:
        line += f" (+{note.more_lines} lines)"
    if note.runs > 1:
        line += f" x{note.runs}"
    if note.ok + note.failed == 0:
        outcome = "no result"
    elif note.failed == 0:
        outcome = "ok"
    elif note.ok == 0:
        outcome = "failed"
    else:
        outcome = f"ok {note.ok}, failed {note.failed}"
    line += f" -> {outcome}"
    if note.last_output:
        line += f": {note.last_output}"
    return line, cut


@dataclass
class FactLayout:
    """What the summary shows of the facts, and the full listing when it cannot show all."""

    files: list[str]
    commands: list[str]
    spilled_files: int = 0
    spilled_commands: int = 0
    cut_commands: int = 0
    listing: str | None = None
    """Every path and command in full; None when the summary shows them all whole."""


def layout(
    facts: Facts,
    *,
    cwd: str | None,
    budget_tokens: int,
    count: Callable[[str], int],
    file_handle: Callable[[str], str] = lambda handle: "",
) -> FactLayout:
    """Fit the facts into ``budget_tokens`` (``count`` measures a line): paths first, then
    commands, the most recently used kept; the rest is left to the listing.

    ``file_handle(handle)`` renders a file's stored result for its line ("" to leave it out).
    """
    files = sorted(facts.files.values(), key=lambda n: relative_path(n.path, cwd))
    file_lines = {
        n.path: _file_line(n, cwd) + (f" {file_handle(n.handles[-1])}".rstrip() if n.handles else "")
        for n in files
    }
    left = budget_tokens
    shown_files: set[str] = set()
    for note in sorted(files, key=lambda n: -n.last):
        cost = count(file_lines[note.path] + "\n")
        if cost > left:
            break
        left -= cost
        shown_files.add(note.path)
    commands = sorted(facts.commands.values(), key=lambda n: n.last)
    rendered = {n.first: _command_line(n) for n in commands}
    shown_commands: set[str] = set()
    for command in reversed(commands):
        cost = count(rendered[command.first][0] + "\n")
        if cost > left:
            break
        left -= cost
        shown_commands.add(command.first)
    result = FactLayout(
        files=[file_lines[n.path] for n in files if n.path in shown_files],
        commands=[rendered[n.first][0] for n in commands if n.first in shown_commands],
        spilled_files=len(files) - len(shown_files),
        spilled_commands=len(commands) - len(shown_commands),
        cut_commands=sum(1 for n in commands if n.first in shown_commands and rendered[n.first][1]),
    )
    if result.spilled_files or result.spilled_commands or result.cut_commands:
        listing = ["Files touched:"] + [_file_line(n, cwd, absolute=True) for n in files]
        listing += ["", "Commands run (first line, runs, outcome, last output line):"]
        listing += [_command_line(n, whole=True)[0] for n in commands]
        result.listing = "\n".join(listing) + "\n"
    return result
