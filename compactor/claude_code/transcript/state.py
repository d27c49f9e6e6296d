"""StateBuilder: rebuilds ``SessionState`` from a transcript, one step at a time.

The reader drives it over the whole main chain to get the state at the end of
a session; a replay drives it itself to get the state as of any point::

    builder = StateBuilder()
    for entry in transcript.entries:
        builder.apply(entry)
        ...  # builder.state is the session state right after this entry

A tool call takes effect when its result arrives and did not fail (a
rejected Edit changed nothing). What is rebuilt: files read (from the
structured ``toolUseResult.file`` or the model-visible text with its line
numbers removed), written and edited; memory files read; skills invoked;
plan mode and plan files; the todo list; background agents and whether
their results were collected; the deferred tools, agent types and MCP
server instructions announced in ``attachment`` records (Claude Code's
``*_delta`` attachments); the session id, cwd and permission mode; the
session ledger a boundary we wrote carries.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from compactor.claude_code.transcript._models import TranscriptEntry
from compactor.claude_code.transcript.file_effects import FileEdit, FileRead, FileWrite, file_effect, strip_line_numbers
from compactor.core.ledger import LEDGER_KEY, SessionLedger
from compactor.core.messages import Message, ToolResultBlock, ToolUseBlock
from compactor.core.session import (
    MAIN_AGENT,
    BackgroundTask,
    InvokedSkill,
    Plan,
    ReadFileEntry,
    SessionState,
    TodoItem,
)

__all__ = ["StateBuilder", "parse_timestamp", "strip_line_numbers"]

_SKILL_BASE = re.compile(r"^Base directory for this skill:\s*(\S.*?)\s*$", re.M)
_NOTIFICATION = re.compile(r"<task-notification>(.*?)</task-notification>", re.S)
_TAG = "<{0}>(.*?)</{0}>"
_MEMORY_NAMES = frozenset({"claude.md", "claude.local.md"})
_BACKGROUND_TOOLS = frozenset({"Task", "Agent"})
_OUTPUT_TOOLS = frozenset({"TaskOutput", "AgentOutputTool"})
_STOP_TOOLS = frozenset({"TaskStop", "KillShell", "KillBash"})
_TERMINAL = frozenset({"completed", "failed", "killed"})
_TODO_STATUSES = frozenset({"pending", "in_progress", "completed"})


def parse_timestamp(value: Any) -> float | None:
    """An ISO 8601 timestamp (``2026-02-11T20:48:34.573Z``) as epoch seconds, else None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _is_memory_file(path: str) -> bool:
    normal = path.replace("\\", "/")
    return normal.rsplit("/", 1)[-1].lower() in _MEMORY_NAMES or "/.claude/rules/" in normal


def _is_plan_file(path: str) -> bool:
    return "/.claude/plans/" in path.replace("\\", "/")


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _updated(current: list[str], added: Any, removed: Any) -> list[str]:
    gone = set(_strings(removed))
    return [n for n in dict.fromkeys([*current, *_strings(added)]) if n not in gone]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _replace(content: str, old: str, new: str, replace_all: bool) -> str | None:
    """``content`` with the edit applied, or None when ``old`` is not in it."""
    if old == "":
        return new + content if content == "" else None
    if old not in content:
        return None
    return content.replace(old, new) if replace_all else content.replace(old, new, 1)


class StateBuilder:
    """Applies transcript entries to a ``SessionState`` in order.

    ``state`` is the live state (it changes as entries are applied); take
    ``snapshot()`` to keep the state as of one point. A tool call is
    remembered until its result arrives; a result whose call was never seen
    is ignored (the reader warns about it).
    """

    def __init__(self, state: SessionState | None = None, *, agent_id: str = MAIN_AGENT) -> None:
        self._state = state if state is not None else SessionState(agent_id=agent_id)
        self._calls: dict[str, ToolUseBlock] = {}
        self._pending_skill: InvokedSkill | None = None
        self._now = 0.0

    @property
    def state(self) -> SessionState:
        """The state as of the last applied entry (live; see ``snapshot``)."""
        return self._state

    def snapshot(self) -> SessionState:
        """A deep copy of the current state, unaffected by later entries."""
        return self._state.model_copy(deep=True)

    def apply(self, entry: TranscriptEntry) -> None:
        """Apply one transcript entry: its record metadata, then its message.

        Record metadata: ``sessionId``, ``cwd``, ``permissionMode`` and
        ``timestamp``; a user record's ``toolUseResult`` supplies the
        structured output of the tool result it carries.
        """
        for record in entry.records:
            self._apply_record_metadata(record)
        if entry.kind == "compact_boundary":
            self._apply_ledger(entry.records[0] if entry.records else {})
        if entry.message is not None:
            self.apply_message(entry.message, tool_use_results=entry.structured_results())

    def _apply_ledger(self, record: Mapping[str, Any]) -> None:
        """A boundary we wrote carries the session ledger as it stood (``compactor.core.ledger``); one
        that does not parse is passed over (the next compaction rebuilds from what it sees)."""
        meta = record.get("compactMetadata")
        data = meta.get(LEDGER_KEY) if isinstance(meta, dict) else None
        if isinstance(data, dict):
            try:
                self._state.ledger = SessionLedger.model_validate(data)
            except ValidationError:
                pass

    def apply_message(
        self,
        message: Message,
        *,
        tool_use_results: Mapping[str, Any] | None = None,
        permission_mode: str | None = None,
    ) -> None:
        """Apply one message (for agent loops that have no transcript records).

        ``tool_use_results`` maps a tool_use id to the structured output of
        its result (Claude Code's ``toolUseResult``), when known.
        """
        if permission_mode:
            self._state.permission_mode = permission_mode
        when = parse_timestamp(message.timestamp)
        if when is not None:
            self._now = when
        if message.role == "assistant":
            for call in message.tool_uses():
                self._calls[call.id] = call
            self._pending_skill = None
            return
        results = message.tool_results()
        if not results:
            self._apply_user_text(message)
            return
        structured = tool_use_results or {}
        self._pending_skill = None
        for result in results:
            asked = self._calls.pop(result.tool_use_id, None)
            if asked is None or result.is_error:
                continue
            self._apply_result(asked, result, structured.get(result.tool_use_id))

    def _apply_record_metadata(self, record: Mapping[str, Any]) -> None:
        state = self._state
        session_id = _str(record.get("sessionId"))
        if session_id and state.session_id is None:
            state.session_id = session_id
        cwd = _str(record.get("cwd"))
        if cwd:
            state.cwd = cwd
        mode = _str(record.get("permissionMode"))
        if mode and record.get("type") == "user":
            state.permission_mode = mode
        when = parse_timestamp(record.get("timestamp"))
        if when is not None:
            self._now = when
        attachment = record.get("attachment")
        if record.get("type") == "attachment" and isinstance(attachment, Mapping):
            self._apply_announcement(attachment)

    def _apply_announcement(self, attachment: Mapping[str, Any]) -> None:
        """A delta Claude Code told the model: deferred tools, agent types or MCP server instructions."""
        state = self._state
        kind = attachment.get("type")
        if kind == "deferred_tools_delta":
            state.deferred_tools = _updated(
                state.deferred_tools, attachment.get("addedNames"), attachment.get("removedNames")
            )
            state.announced_tools = list(state.deferred_tools)
        elif kind == "agent_listing_delta":
            state.agent_types = _updated(
                state.agent_types, attachment.get("addedTypes"), attachment.get("removedTypes")
            )
            state.announced_agent_types = list(state.agent_types)
        elif kind == "mcp_instructions_delta":
            names, blocks = attachment.get("addedNames"), attachment.get("addedBlocks")
            if isinstance(names, list) and isinstance(blocks, list):
                for name, block in zip(names, blocks, strict=False):
                    if isinstance(name, str) and isinstance(block, str):
                        state.mcp_instructions[name] = block
            for name in _strings(attachment.get("removedNames")):
                state.mcp_instructions.pop(name, None)
            state.announced_mcp = list(state.mcp_instructions)

    def _apply_user_text(self, message: Message) -> None:
        text = message.text()
        if message.is_meta and self._pending_skill is not None:
            skill = self._pending_skill
            base = _SKILL_BASE.search(text)
            path = f"{base.group(1).rstrip('/')}/SKILL.md" if base else skill.path
            self._record_skill(skill.model_copy(update={"content": text, "path": path}))
            self._pending_skill = None
            return
        if not message.is_meta:
            self._pending_skill = None
        for body in _NOTIFICATION.findall(text):
            self._apply_notification(body)

    def _apply_notification(self, body: str) -> None:
        task_id = _tag(body, "task-id")
        status = _tag(body, "status")
        task = self._state.tasks.get(task_id or "")
        if task is not None and status in _TERMINAL:
            task.status = status  # type: ignore[assignment]
            task.result = _tag(body, "result") or task.result

    def _apply_result(self, call: ToolUseBlock, result: ToolResultBlock, structured: Any) -> None:
        name = call.name
        effect = file_effect(call, result, structured)
        if isinstance(effect, FileRead):
            self._apply_read(effect)
        elif isinstance(effect, FileWrite):
            self._apply_write(effect)
        elif isinstance(effect, FileEdit):
            self._apply_edit(effect)
        elif name == "Skill":
            self._apply_skill(call, result)
        elif name == "EnterPlanMode":
            self._state.permission_mode = "plan"
        elif name == "ExitPlanMode":
            self._apply_exit_plan(call, structured)
        elif name == "TodoWrite":
            self._apply_todos(call)
        elif name in _BACKGROUND_TOOLS:
            self._apply_agent(call, structured)
        elif name in _OUTPUT_TOOLS:
            self._apply_task_output(call, result, structured)
        elif name in _STOP_TOOLS:
            task = self._state.tasks.get(_str(call.input.get("task_id")) or _str(call.input.get("shell_id")) or "")
            if task is not None and task.status == "running":
                task.status = "killed"

    # -- files -----------------------------------------------------------

    def _apply_read(self, read: FileRead) -> None:
        if read.content is None:  # Claude Code's "file unchanged" stub: the same content, read again now
            entry = self._state.read_files.get(read.path)
            if entry is not None:
                self._state.record_read(entry.model_copy(update={"timestamp": self._now}))
            return
        self._state.record_read(
            ReadFileEntry(
                path=read.path, content=read.content, timestamp=self._now, offset=read.offset, limit=read.limit
            )
        )
        if _is_memory_file(read.path) and read.path not in self._state.memory_paths:
            self._state.memory_paths.append(read.path)

    def _apply_write(self, write: FileWrite) -> None:
        self._state.record_read(ReadFileEntry(path=write.path, content=write.content, timestamp=self._now))
        if _is_plan_file(write.path):
            self._state.plan = Plan(path=write.path, content=write.content)

    def _apply_edit(self, edit: FileEdit) -> None:
        path = edit.path
        known = self._state.read_files.get(path)
        base, partial = (
            (edit.original, False)
            if edit.original is not None
            else ((known.content, known.is_partial) if known is not None else (None, False))
        )
        content = base if edit.replacements is not None else None
        for replacement in edit.replacements or ():
            if content is None:
                break
            content = _replace(content, replacement.old, replacement.new, replacement.replace_all)
        if content is None:
            if known is not None:
                self._state.record_read(known.model_copy(update={"stale": True, "timestamp": self._now}))
            return
        if partial and known is not None:
            entry = known.model_copy(update={"content": content, "timestamp": self._now, "stale": False})
        else:
            entry = ReadFileEntry(path=path, content=content, timestamp=self._now)
        self._state.record_read(entry)
        if _is_plan_file(path) and not entry.is_partial:
            self._state.plan = Plan(path=path, content=content)

    # -- skills, plan, todos, agents --------------------------------------

    def _apply_skill(self, call: ToolUseBlock, result: ToolResultBlock) -> None:
        name = _str(call.input.get("skill")) or _str(call.input.get("command"))
        if not name:
            return
        name = name.lstrip("/")
        skill = InvokedSkill(
            name=name,
            path=name,
            content=result.text(),
            invoked_at=self._now,
            agent_id=self._state.agent_id,
        )
        self._record_skill(skill)
        self._pending_skill = skill

    def _record_skill(self, skill: InvokedSkill) -> None:
        self._state.invoke_skill(skill)

    def _apply_exit_plan(self, call: ToolUseBlock, structured: Any) -> None:
        info = structured if isinstance(structured, dict) else {}
        path = _str(info.get("filePath")) or (self._state.plan.path if self._state.plan else None)
        content = _str(call.input.get("plan")) or _str(info.get("plan"))
        if content is None and path is not None and path in self._state.read_files:
            content = self._state.read_files[path].content
        if content is None and self._state.plan is not None:
            content = self._state.plan.content
        if content is not None:
            self._state.plan = Plan(path=path or "", content=content)
        self._state.permission_mode = "default"

    def _apply_todos(self, call: ToolUseBlock) -> None:
        todos = call.input.get("todos")
        if not isinstance(todos, list):
            return
        items: list[TodoItem] = []
        for todo in todos:
            if not isinstance(todo, dict) or not isinstance(todo.get("content"), str):
                continue
            status = todo.get("status")
            items.append(
                TodoItem(
                    content=todo["content"],
                    status=status if status in _TODO_STATUSES else "pending",
                    active_form=_str(todo.get("activeForm")),
                )
            )
        self._state.todos = items

    def _apply_agent(self, call: ToolUseBlock, structured: Any) -> None:
        info = structured if isinstance(structured, dict) else {}
        background = call.input.get("run_in_background") is True or info.get("status") == "async_launched"
        if not background:
            return
        task_id = _str(info.get("agentId")) or call.id
        self._state.tasks[task_id] = BackgroundTask(
            id=task_id,
            description=_str(call.input.get("description")) or "",
            agent_type=_str(call.input.get("subagent_type")),
        )

    def _apply_task_output(self, call: ToolUseBlock, result: ToolResultBlock, structured: Any) -> None:
        info = structured if isinstance(structured, dict) else {}
        raw_task = info.get("task")
        task_info: dict[str, Any] = raw_task if isinstance(raw_task, dict) else {}
        task_id = (
            _str(task_info.get("task_id"))
            or _str(call.input.get("task_id"))
            or _str(call.input.get("agentId"))
            or _tag(result.text(), "task_id")
        )
        task = self._state.tasks.get(task_id or "")
        if task is None:
            return
        status = _str(task_info.get("status")) or _tag(result.text(), "status")
        if status in _TERMINAL:
            task.status = status  # type: ignore[assignment]
            retrieved = _str(info.get("retrieval_status")) or _tag(result.text(), "retrieval_status")
            task.collected = retrieved in (None, "success")
            task.result = _str(task_info.get("output")) or _tag(result.text(), "output") or task.result


def _tag(text: str, name: str) -> str | None:
    match = re.search(_TAG.format(re.escape(name)), text, re.S)
    return match.group(1).strip() if match else None
