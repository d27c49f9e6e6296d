"""SessionState: everything compaction must know about a session besides its messages.

A plain pydantic value: the transcript reader rebuilds it from tool calls, the
``Orchestrator`` updates it as an agent loop runs, and ``compact`` returns a
new one. No open files or database handles live here.

The values it composes that the lower packages restore are theirs, and are
re-exported here: ``ReadFileEntry``, ``Plan``, ``BackgroundTask`` and
``TaskStatus`` are ``attachments.state``'s, ``InvokedSkill`` and
``MAIN_AGENT`` are ``skills.invocations``'s. ``SessionState`` satisfies
``attachments.state.AttachmentState`` and ``skills.invocations.SkillState``,
the parts of it those packages read.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from attachments.state import BackgroundTask, Plan, ReadFileEntry, TaskStatus
from compactor.core.ledger import SessionLedger
from skills.invocations import MAIN_AGENT, InvokedSkill

__all__ = [
    "BackgroundTask",
    "DedupEntry",
    "DedupState",
    "InvokedSkill",
    "MAIN_AGENT",
    "Plan",
    "ReadFileEntry",
    "SessionState",
    "TaskStatus",
    "TodoItem",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TodoItem(_Model):
    content: str
    status: Literal["pending", "in_progress", "completed"] = "pending"
    active_form: str | None = None


class DedupEntry(_Model):
    """One distinct tool result seen since the last compaction."""

    result_id: str
    tool: str
    content: str


class DedupState(_Model):
    """The dedup table's slot in the session (see ``compactor.engine.dedup``).

    ``seen`` maps the djb2 hash to the distinct results that had it (a hash
    match alone never dedups). ``originals`` keeps every ``rN``'s content so
    that references can be re-expanded after a compaction drops the first
    occurrence; ``handles`` maps ``rN`` to the CCR handle of that content once
    it has been stored.
    """

    counter: int = 0
    seen: dict[int, list[DedupEntry]] = Field(default_factory=dict)
    originals: dict[str, str] = Field(default_factory=dict)
    handles: dict[str, str] = Field(default_factory=dict)
    hits: dict[str, int] = Field(default_factory=dict)
    saved_bytes: dict[str, int] = Field(default_factory=dict)
    hits_at_last_compaction: int = 0
    saved_bytes_at_last_compaction: int = 0
    """Session totals when the last compaction reported, so each report counts its own window."""


class SessionState(_Model):
    """The non-message state of one session.

    Skills are kept per agent: ``skills[agent_id]`` lists invocations in
    order. ``deferred_tools``/``agent_types``/``mcp_instructions`` are what is
    available now; the ``announced_*`` fields are what the history has
    already told the model (the deltas announce the difference). ``ledger``
    carries the session's facts across compactions.
    """

    session_id: str | None = None
    cwd: str | None = None
    agent_id: str = MAIN_AGENT
    read_files: dict[str, ReadFileEntry] = Field(default_factory=dict)
    memory_paths: list[str] = Field(default_factory=list)
    skills: dict[str, list[InvokedSkill]] = Field(default_factory=dict)
    announced_skills: list[str] = Field(default_factory=list)
    plan: Plan | None = None
    permission_mode: str = "default"
    todos: list[TodoItem] = Field(default_factory=list)
    tasks: dict[str, BackgroundTask] = Field(default_factory=dict)
    deferred_tools: list[str] = Field(default_factory=list)
    agent_types: list[str] = Field(default_factory=list)
    mcp_instructions: dict[str, str] = Field(default_factory=dict)
    announced_tools: list[str] = Field(default_factory=list)
    announced_agent_types: list[str] = Field(default_factory=list)
    announced_mcp: list[str] = Field(default_factory=list)
    dedup: DedupState = Field(default_factory=DedupState)
    ledger: SessionLedger = Field(default_factory=SessionLedger)
    """The facts of the whole session so far, merged at every compaction (``compactor.core.ledger``)."""

    @property
    def in_plan_mode(self) -> bool:
        return self.permission_mode == "plan"

    def record_read(self, entry: ReadFileEntry) -> None:
        """Remember a read; a newer read of the same path replaces the older one.

        ``read_files`` stays in the order of the last read of each path, so
        that reads the clock does not separate (messages without timestamps)
        are still ordered by their position in the conversation.
        """
        self.read_files.pop(entry.path, None)
        self.read_files[entry.path] = entry

    def invoke_skill(self, skill: InvokedSkill) -> None:
        """Record a skill invocation for its agent; re-invoking moves it to newest."""
        invoked = [s for s in self.skills.get(skill.agent_id, []) if s.name != skill.name]
        invoked.append(skill)
        self.skills[skill.agent_id] = invoked
        if skill.name not in self.announced_skills:
            self.announced_skills.append(skill.name)
