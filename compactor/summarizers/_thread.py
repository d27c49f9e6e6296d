"""The lists of a session's work: what is open, as the tool calls show it.

``Thread`` follows messages one by one and keeps:

- the items of the todo list (``TodoWrite``), of the task tools
  (``TaskCreate``/``TaskUpdate``/``TaskList``), and of an issue tracker driven
  from the shell (``<cli> update ID --status S``, ``<cli> close ID``);
- background work and whether it was collected: shell commands and agents
  started in the background whose output was never read
  (``TaskOutput``/``BashOutput``, or a read of the output file a
  notification named).

The session ledger (``compactor.summarizers.ledger``) keeps these lists
across compactions, seeding a ``Thread`` with them and reading them back.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from compactor.core.messages import Message, ToolResultBlock, ToolUseBlock

__all__ = ["Background", "Thread", "TrackedItem", "tracker_updates"]

_BACKGROUND_AGENTS = frozenset({"Task", "Agent"})
_OUTPUT_TOOLS = frozenset({"TaskOutput", "BashOutput", "AgentOutputTool"})
_STOP_TOOLS = frozenset({"TaskStop", "KillShell", "KillBash"})
_NOTIFICATION = re.compile(r"<task-notification>(.*?)</task-notification>", re.S)
_BASH_ID = re.compile(r"running in background with ID:\s*([\w-]+)")
_AGENT_ID = re.compile(r"agentId:\s*([\w-]+)")
_OUTPUT_PATH = re.compile(r"Output is being written to:\s*(\S+)")
_TASK_CREATED = re.compile(r"Task #(\w+) created")
_TASK_LISTED = re.compile(r"^#(\w+) \[(\w+)\] (.+)$", re.M)
_ID = re.compile(r"^#?[A-Za-z0-9][\w.#-]*$")
_SEGMENT = re.compile(r"&&|\|\||;|\|")
_CLOSING = frozenset({"close", "done", "resolve"})
_VERB = re.compile(r"\s(update|close|done|resolve)\s")


@dataclass
class TrackedItem:
    """An item of a todo list, the task tools or an issue tracker."""

    key: str
    text: str
    status: str


@dataclass
class Background:
    """Background work (a shell command or an agent) and whether its output was read."""

    id: str
    description: str
    status: str = "running"
    collected: bool = False
    output_file: str | None = None


def _tag(body: str, name: str) -> str | None:
    match = re.search(rf"<{name}>(.*?)</{name}>", body, re.S)
    return match.group(1).strip() if match else None


def tracker_updates(command: str) -> list[tuple[str, str, str]]:
    """(id, status, command part) for each issue-tracker update in a shell command.

    Recognized: ``<cli> [issue] update ID... --status S`` and
    ``<cli> [issue] close|done|resolve ID...`` (status ``closed``), where an
    ID has a digit, a dash or a dot (``spotter-gqc.6``, ``#12``, ``ABC-7``).
    """
    found: list[tuple[str, str, str]] = []
    if not _VERB.search(command):
        return found
    for part in _SEGMENT.split(command):
        part = part.strip()
        if not _VERB.search(part):
            continue
        try:
            tokens = shlex.split(part)
        except ValueError:
            tokens = part.split()
        if tokens[1:2] and tokens[1] in ("issue", "issues"):
            tokens = [tokens[0], *tokens[2:]]
        if len(tokens) < 3:
            continue
        verb, rest = tokens[1], tokens[2:]
        ids: list[str] = []
        for token in rest:
            if token.startswith("-") or not _ID.match(token) or not re.search(r"[\d.#-]", token):
                break
            ids.append(token)
        if not ids:
            continue
        status: str | None = None
        if verb in _CLOSING:
            status = "closed"
        elif verb == "update":
            for i, token in enumerate(rest):
                if token.startswith("--status="):
                    status = token.split("=", 1)[1]
                elif token == "--status" and i + 1 < len(rest):
                    status = rest[i + 1]
        if status:
            found.extend((item, status, part) for item in ids)
    return found


@dataclass
class Thread:
    """The state of the work as of the end of a head (see the module docstring)."""

    todos: list[TrackedItem] = field(default_factory=list)
    tasks: dict[str, TrackedItem] = field(default_factory=dict)
    tracker: dict[str, TrackedItem] = field(default_factory=dict)
    background: dict[str, Background] = field(default_factory=dict)
    _calls: dict[str, ToolUseBlock] = field(default_factory=dict)

    def add(self, message: Message) -> None:
        """Follow one message that the user did not type (``prompts.typed``): calls, results, notifications."""
        if message.role == "user":
            for body in _NOTIFICATION.findall(message.text()):
                self._notification(body)
        for block in message.blocks():
            if isinstance(block, ToolUseBlock):
                self._call(block)
            elif isinstance(block, ToolResultBlock):
                call = self._calls.get(block.tool_use_id)
                if call is not None:
                    self._result(call, block)

    # -- calls and results -----------------------------------------------

    def _call(self, use: ToolUseBlock) -> None:
        self._calls[use.id] = use
        name, args = use.name, use.input
        if name == "TodoWrite" and isinstance(args.get("todos"), list):
            self.todos = [
                TrackedItem(str(i), str(t.get("content", "")), str(t.get("status", "pending")))
                for i, t in enumerate(args["todos"])
                if isinstance(t, dict) and t.get("content")
            ]
        elif name == "TaskUpdate":
            key = str(args.get("taskId", ""))
            item = self.tasks.setdefault(key, TrackedItem(key, f"task #{key}", "pending"))
            if isinstance(args.get("subject"), str):
                item.text = args["subject"]
            if isinstance(args.get("status"), str):
                item.status = args["status"]
        elif name == "Bash" and isinstance(args.get("command"), str):
            for key, status, part in tracker_updates(args["command"]):
                self.tracker[key] = TrackedItem(key, part, status)
            self._read_output(args["command"], whole=False)
        elif name == "Read" and isinstance(args.get("file_path"), str):
            self._read_output(args["file_path"], whole=True)

    def _read_output(self, text: str, *, whole: bool) -> None:
        """A read of a background task's output file collects it (a Read, or a shell command naming it)."""
        for task in self.background.values():
            if task.output_file and (text == task.output_file if whole else task.output_file in text):
                task.collected = True

    def _result(self, call: ToolUseBlock, block: ToolResultBlock) -> None:
        text = block.text()
        name, args = call.name, call.input
        if block.is_error:
            return
        if name == "TaskCreate":
            created = _TASK_CREATED.search(text)
            key = created.group(1) if created else call.id
            subject = args.get("subject") or args.get("description") or ""
            self.tasks[key] = TrackedItem(key, str(subject), "pending")
        elif name == "TaskList":
            # The list is the tracker's own word: it also shows updates made by subagents.
            for key, status, subject in _TASK_LISTED.findall(text):
                self.tasks[key] = TrackedItem(key, subject.strip(), status)
        elif args.get("run_in_background") is True and (name == "Bash" or name in _BACKGROUND_AGENTS):
            found = (_BASH_ID if name == "Bash" else _AGENT_ID).search(text)
            key = found.group(1) if found else call.id
            output = _OUTPUT_PATH.search(text)
            self.background[key] = Background(
                key,
                str(args.get("description") or args.get("command") or ""),
                output_file=output.group(1).rstrip(".") if output else None,
            )
        elif name in _OUTPUT_TOOLS or name in _STOP_TOOLS:
            key = str(args.get("task_id") or args.get("bash_id") or args.get("shell_id") or args.get("agentId") or "")
            task = self.background.get(key)
            if task is not None:
                status = _tag(text, "status")
                if name in _STOP_TOOLS:
                    task.status, task.collected = "killed", True
                elif status in (None, "completed", "failed", "killed"):
                    task.status, task.collected = status or task.status, status is not None or name == "BashOutput"
                else:
                    task.status = status

    def _notification(self, body: str) -> None:
        key = _tag(body, "task-id") or ""
        task = self.background.setdefault(key, Background(key, _tag(body, "summary") or ""))
        task.status = _tag(body, "status") or task.status
        task.output_file = _tag(body, "output-file") or task.output_file
        task.collected = False
