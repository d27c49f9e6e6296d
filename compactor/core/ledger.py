"""SessionLedger: the facts of a whole session, carried across every compaction.

A plain pydantic value kept in ``SessionState.ledger``. Each compaction
merges the messages it drops into it (``compactor.summarizers.ledger``), so
that the ledger holds everything the session has done so far, however many
times it was compacted: it is never re-extracted from an earlier summary's
text. It holds:

- every touched path, what was done to it and the last outcome;
- every distinct shell command (its first line), its runs and last outcome;
- each error, paired with what resolved it, or marked unresolved;
- the user's instructions and decisions, verbatim, and every typed message;
- the task list as of its latest update, background work not yet collected;
- the current request, with the original goal beside it;
- what the assistant said that matters: its findings, causes and decisions
  (``statements``), why it changed each file, how it explained each error;
- the assistant's answers: its last words of each turn, with what they answered (``reports``);
- what the user pinned, to be kept verbatim in every later summary.

``seq`` numbers the merged messages across the whole session, so that
"newer" has one meaning in every compaction.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "COMMITS_KEPT",
    "DECISIONS_KEPT",
    "LEDGER_KEY",
    "REPORTS_KEPT",
    "STATEMENTS_KEPT",
    "LedgerBackground",
    "LedgerCommand",
    "LedgerError",
    "LedgerItem",
    "LedgerMessage",
    "LedgerPath",
    "LedgerReport",
    "LedgerStatement",
    "SessionLedger",
]


STATEMENTS_KEPT = 60
"""The ledger keeps the assistant's newest this many statements; older ones are in the stored heads."""

REPORTS_KEPT = 8
"""The ledger keeps the assistant's newest this many answers (``SessionLedger.reports``)."""
DECISIONS_KEPT = 12
"""The ledger keeps the user's newest this many choices (``SessionLedger.decisions``)."""
COMMITS_KEPT = 12
"""The ledger keeps the newest this many commit subjects (``SessionLedger.commits``)."""

LEDGER_KEY = "compactorLedger"
"""The ``compactMetadata`` key under which a written compaction boundary carries the ledger, so that
a session read back (a resumed one, a replay, the plugin's hooks) goes on with it."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LedgerPath(_Model):
    """A path a tool call named: what was done to it (``read``, ``edited``, ``searched``, ... and how often)."""

    path: str
    actions: dict[str, int] = Field(default_factory=dict)
    last_outcome: str = ""
    """``ok`` or ``failed: <first error line>`` of the latest call that named it."""
    seq: int = 0
    """When it was last named (``SessionLedger.seq`` numbering)."""
    handle: str | None = None
    """The stored result of the latest call that named it, when that result was stored on its own."""
    edit_seq: int = -1
    """When it was last edited or written (-1: never)."""
    why: str = ""
    """The assistant's words before its latest edit or write: what the change is for."""
    last_edit: str = ""
    """The latest edit itself when it is small (``-`` old lines, ``+`` new lines), else ""."""
    symbols: list[str] = Field(default_factory=list)
    """Names its edits and writes defined or changed (functions, classes, modules), newest last."""
    deleted: bool = False
    """A later shell command removed it (``rm``, ``git rm``, ``mv`` away)."""


class LedgerCommand(_Model):
    """A distinct shell command, by its first line."""

    first: str
    more_lines: int = 0
    runs: int = 0
    ok: int = 0
    failed: int = 0
    last_output: str = ""
    """The last non-blank line of its latest output (cut), "" when it printed nothing worth showing."""
    seq: int = 0
    ok_seq: int = -1
    """When it last ran without failing (-1: never)."""


class LedgerError(_Model):
    """An error a tool reported, and what resolved it (None while unresolved)."""

    tool: str
    key: str
    """What a fix would touch again: the command's first line, or the path the call named."""
    line: str
    more: int = 0
    """Further error lines in the same result."""
    handle: str | None = None
    seq: int = 0
    edited_since: list[str] = Field(default_factory=list)
    """Paths edited or written after the error, while it was open."""
    detail: list[str] = Field(default_factory=list)
    """A few more lines of the failed output that say what failed (``CONFLICT ... in FILE``, test names)."""
    resolved: str | None = None
    """What resolved it, in words for the summary."""
    resolved_by: str = ""
    """How it was resolved, for code to judge: ``rerun`` (the same step ran ok, ``edited_since`` says
    after which edits), ``check`` (a later run of its check), ``edit`` (the file was edited
    successfully), ``call`` (a later call of the tool), ``commit`` (the work was committed) or
    ``moved_on`` (the user made a new request); "" while unresolved."""
    resolved_seq: int = -1
    explanation: str = ""
    """What the assistant said next about it: the cause it found or the fix it chose."""
    fix: str = ""
    """The assistant's words before the first edit after it (what that edit is for), "" without any."""


class LedgerItem(_Model):
    """An item of the todo list, the task tools or an issue tracker."""

    key: str
    text: str
    status: str


class LedgerBackground(_Model):
    """Background work (a shell command or an agent) and whether its output was read."""

    id: str
    description: str
    status: str = "running"
    collected: bool = False
    output_file: str | None = None


class LedgerStatement(_Model):
    """A sentence or two of the assistant's own (its text or thinking) that state a finding, a cause,
    a decision or a result, with the files and identifiers it names."""

    text: str
    seq: int
    kind: str
    """``cause`` (why something fails or works), ``decision`` (what was chosen, and over what),
    ``result`` (what now holds: tests pass, pushed), or ``finding`` (a fact found)."""
    score: float = 0.0
    thought: bool = False
    """From a thinking block (what the assistant considered), not from what it wrote out."""
    handle: str | None = None
    """The stored head it came from, when a compaction stored it."""


class LedgerReport(_Model):
    """What the assistant wrote last in a turn, after its last tool call, before the user typed again:
    its answer, in its own words (what it found, what it changed, what it proposes)."""

    text: str
    seq: int
    asked: str = ""
    """The request it answered (cut), "" when the session had none yet."""


class LedgerMessage(_Model):
    """A message the user typed, whole, with how often it was sent."""

    text: str
    count: int = 1
    seq: int = 0
    is_request: bool = True
    handle: str | None = None
    """The stored message, when the session stored it on its own (a long one)."""


class SessionLedger(_Model):
    """Everything the session did so far (see the module docstring)."""

    seq: int = 0
    """Messages merged so far; the next one merged is numbered ``seq``."""
    compactions: int = 0
    paths: dict[str, LedgerPath] = Field(default_factory=dict)
    commands: dict[str, LedgerCommand] = Field(default_factory=dict)
    errors: list[LedgerError] = Field(default_factory=list)
    instructions: list[str] = Field(default_factory=list)
    """Sentences of the user's that tell the agent how to work ("don't ...", "always ...", "use X instead")."""
    user_messages: list[LedgerMessage] = Field(default_factory=list)
    todos: list[LedgerItem] = Field(default_factory=list)
    tasks: dict[str, LedgerItem] = Field(default_factory=dict)
    tracker: dict[str, LedgerItem] = Field(default_factory=dict)
    background: dict[str, LedgerBackground] = Field(default_factory=dict)
    original_goal: str | None = None
    """The first request the user typed in the session."""
    current_request: str | None = None
    """The latest request the user typed."""
    current_request_seq: int = -1
    last_statement: str = ""
    """The assistant's latest words (its latest statement of intent or result)."""
    last_statement_seq: int = -1
    last_actions: list[str] = Field(default_factory=list)
    """The latest tool calls, each with its outcome."""
    last_action_seq: int = -1
    calls_since_words: int = 0
    """Tool calls since the assistant last wrote or thought anything: the tail of ``last_actions``
    that came after its latest words."""
    carried: list[str] = Field(default_factory=list)
    """User messages read from a summary this ledger did not write (a transcript that starts
    after someone else's compaction): kept as that summary listed them."""
    carried_pending: list[str] = Field(default_factory=list)
    """That summary's pending tasks, shown while the session has no list of its own."""
    statements: list[LedgerStatement] = Field(default_factory=list)
    """The assistant's statements that matter, oldest first (at most ``STATEMENTS_KEPT``)."""
    plan: str = ""
    """The assistant's latest plan of steps ("I'll need to: 1. ... 2. ..."), from its text or thinking."""
    plan_seq: int = -1
    last_thought: str = ""
    """The end of the assistant's latest thinking block: what it was about to do, in its own terms."""
    last_thought_seq: int = -1
    reports: list[LedgerReport] = Field(default_factory=list)
    """The assistant's answers at the end of its turns, oldest first (at most ``REPORTS_KEPT``)."""
    recent_words: list[str] = Field(default_factory=list)
    """The assistant's last few text blocks since the latest request, oldest first."""
    decisions: list[str] = Field(default_factory=list)
    """The user's choices among options the assistant offered (``ledger_words.decision_of``), oldest
    first (at most ``DECISIONS_KEPT``)."""
    pins: list[str] = Field(default_factory=list)
    """What the user pinned (``Orchestrator.pin``): kept verbatim in every summary."""
    last_commit_seq: int = -1
    """When a commit or push last went through."""
    last_commit: str = ""
    wrap_up: list[str] = Field(default_factory=list)
    """The checks, tracker closes, commits and pushes that went through since the last edit, in order."""
    routine: list[str] = Field(default_factory=list)
    """How the latest finished piece of work was wrapped up: ``wrap_up`` as it stood at the latest
    commit or push (``mix test``, ``bd close X``, ``git commit ...``, ``git push``)."""
    last_notification_seq: int = -1
    """When a background task's notification last arrived."""
    identifiers: dict[str, int] = Field(default_factory=dict)
    """The code spans the assistant wrote (```name```), with how often: the names the work turns on."""
    titles: dict[str, str] = Field(default_factory=dict)
    """Issue-tracker item titles, by id, as the tracker printed them (``bd show``, ``gh issue view``)."""
    commits: list[str] = Field(default_factory=list)
    """The subjects of the commits the session made, oldest first (at most ``COMMITS_KEPT``): what
    is done, in the words the session chose for it."""
    plan_mode: bool = False
    """Whether the session is in plan mode (the user wants a plan before any change): set by an
    ``EnterPlanMode`` call, left by an ``ExitPlanMode`` the user approved, and by the client's own
    permission mode where the caller knows it (``SessionState.permission_mode``)."""

    @property
    def is_empty(self) -> bool:
        return self.seq == 0 and not self.carried

    def open_items(self) -> list[LedgerItem]:
        """Todo items, tasks and tracker items not done, in progress first."""
        items = [
            *(t for t in self.todos if t.status in ("in_progress", "pending")),
            *(t for t in self.tasks.values() if t.status not in ("completed", "deleted")),
            *(t for t in self.tracker.values() if t.status != "closed"),
        ]
        return sorted(items, key=lambda item: item.status != "in_progress")

    def unresolved_errors(self) -> list[LedgerError]:
        return [e for e in self.errors if e.resolved is None]
