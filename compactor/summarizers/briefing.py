"""The summary as a briefing: what a model taking over the work needs to read, from the ledger.

The ledger (``compactor.core.ledger``) remembers everything; a briefing picks
what matters now and says it in the session's own words. ``work_state``
holds the judgements (what the current request is, whether the work is done,
what is open, which files and which check come next), judged on the whole
session up to the cut, the kept tail included, so that finished work is not
shown as open and an error a later run answered is not an error any more.
The extractive summary (``Briefing``) and the plugin's text for Claude Code
users (``ledger_text.session_start_text``) both read them.

Bookkeeping (every path with its reads and edits, every command) is not in the
briefing: it goes to the index that follows it (``index_text``) and to the
stored listing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from compactor.core.ledger import (
    LedgerBackground,
    LedgerError,
    LedgerItem,
    LedgerMessage,
    LedgerPath,
    LedgerStatement,
    SessionLedger,
)
from compactor.summarizers.facts import changes_state, check_program, relative_path
from compactor.summarizers.statements import is_narration, sentences

__all__ = ["Briefing", "WorkState", "is_follow_up", "item_line", "listing_share", "work_state"]

_FOLLOW_UP = re.compile(
    r"^(?:please\s+)?(?:continue|go on|go ahead|carry on|keep going|proceed|yes|yep|yeah|ok(?:ay)?|sure|do it|"
    r"check again|try again|again|retry|next|thanks?|thank you|great|good|perfect|done\??|and\??|status\??|"
    r"what now\??|lgtm|ship it|sounds good|looks good)[.!?]*$",
    re.I,
)
_DONE_WORDS = re.compile(
    r"\b(?:done|complete[d]?|finished|implemented|all (?:\d+ )?tests? pass|tests? pass|0 failures|pushed|committed|"
    r"merged|ready for review|all green|summary of (?:the )?changes|here'?s (?:a |the )?summary|everything (?:is )?in place)\b",
    re.I,
)
_REQUEST_CHARS = 900
_EARLIER_REQUEST_CHARS = 400
_WORDS_CHARS = 500
_FILES_SHOWN = 6
_CHANGED_SHOWN = 14
_READ_SHOWN = 10
_EDITS_SHOWN = 2
_ERRORS_SHOWN = 6
_STATEMENTS_SHOWN = 12
_CONCEPTS_SHOWN = 3
_IDENTIFIERS_SHOWN = 40


def _flat(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 5].rstrip() + " [...]"


_PATHY = re.compile(
    r"(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|go|ts|tsx|js|jsx|rs|java|kt|swift|rb|ex|exs|md|json|toml|yaml|yml|sh|c|h|"
    r"cpp|cs|sql|html|css)\b"
)
_BOOKKEEPING = re.compile(
    r"read lines \d|edited x\d|searched x\d|\bread, |-> ok\b|-> FAIL|->\s*(?:not )?resolved|, `[^`]+`, `"
)
_LIST_ITEM = re.compile(r"^(?:[-*] |\d+\.\s)")


def listing_share(text: str) -> float:
    """The share of ``text``'s characters on list lines that are bookkeeping: a line with "read lines
    A-B", "edited xN" or "-> ok", or a path or command with fewer than six words of prose around it."""
    lines = [line for line in text.splitlines() if line.strip()]
    total = sum(len(line) for line in lines) or 1
    listed = 0
    for line in lines:
        body = line.strip()
        if not _LIST_ITEM.match(body):
            continue
        body = _LIST_ITEM.sub("", body)
        prose = re.sub(r"`[^`]*`|<<[^>]*>>", " ", _PATHY.sub(" ", body))
        words = len(re.findall(r"[A-Za-z]{3,}", prose))
        if _BOOKKEEPING.search(body) or ((_PATHY.search(body) or "`" in body) and words < 6):
            listed += len(line)
    return listed / total


def is_follow_up(text: str) -> bool:
    """Whether a typed request only tells the agent to go on ("continue", "check again")."""
    return _FOLLOW_UP.match(text.strip()) is not None


@dataclass
class WorkState:
    """Where the work stands at the cut (see ``work_state``)."""

    request: LedgerMessage | None
    """The latest substantive request (not a bare "continue")."""
    earlier: LedgerMessage | None
    """The substantive request before it, when there is one: the task the latest may belong to."""
    follow_up: LedgerMessage | None
    """A bare follow-up typed after ``request`` ("check again"), if any."""
    since: int
    """The ``seq`` from which the current work counts: the latest typed request."""
    open_items: list[LedgerItem]
    in_progress: list[LedgerItem]
    open_errors: list[LedgerError]
    current_files: list[LedgerPath]
    """Files edited or written since ``since`` (newest first), else the newest edited ones."""
    read_files: list[LedgerPath]
    """Files read and never edited, newest first."""
    check: str | None
    """The session's latest test, lint or build command (never one that changes state)."""
    finished: str | None
    """Why the work counts as done, or None while something is open."""
    unanswered: bool
    """The latest typed request has had no answer yet."""
    results: list[LedgerStatement] = field(default_factory=list)
    """The assistant's statements of results since ``since``."""
    running: list[LedgerBackground] = field(default_factory=list)
    """Background work still running, its output not collected."""
    arrived: list[LedgerBackground] = field(default_factory=list)
    """Background work that finished after the assistant's last word or call, its output not read yet."""


def _requests(view: SessionLedger) -> list[LedgerMessage]:
    return [m for m in view.user_messages if m.is_request]


def _last_edit_seq(view: SessionLedger) -> int:
    return max((p.edit_seq for p in view.paths.values()), default=-1)


def work_state(view: SessionLedger) -> WorkState:
    """The judgements a briefing makes of ``view`` (the ledger with the tail merged).

    - the request: the latest typed request that is more than a follow-up;
    - an error is open only when nothing resolved it (``ledger.merge_messages``: a later success of
      the command or of its check, the file edited, the work committed, the user moving on) and it
      came after the latest request;
    - the work is finished when nothing is in progress or open and, since the latest request, the
      work was committed after its last edit, or a check ran clean after it, or the assistant's last
      words (after its last call) report it done.
    """
    requests = _requests(view)
    substantive = [m for m in requests if not is_follow_up(m.text)]
    request = substantive[-1] if substantive else (requests[-1] if requests else None)
    earlier = substantive[-2] if len(substantive) > 1 else None
    latest = requests[-1] if requests else None
    follow_up = latest if latest is not None and latest is not request else None
    since = view.current_request_seq
    open_items = view.open_items()
    in_progress = [i for i in open_items if i.status == "in_progress"]
    open_errors = [e for e in view.errors if e.resolved is None and e.seq > since]
    paths = sorted(view.paths.values(), key=lambda p: -p.edit_seq)
    edited = [p for p in paths if p.edit_seq >= 0 and not p.deleted]
    current = [p for p in edited if p.edit_seq > since] or edited[:3]
    read = [
        p
        for p in sorted(view.paths.values(), key=lambda p: -p.seq)
        if p.edit_seq < 0 and not p.deleted and any(a.startswith("read") for a in p.actions)
    ]
    checks = sorted(
        (c for c in view.commands.values() if check_program(c.first) and not changes_state(c.first)),
        key=lambda c: -c.seq,
    )
    check = checks[0].first if checks else None
    last_edit = _last_edit_seq(view)
    unanswered = latest is not None and latest.seq > max(view.last_statement_seq, view.last_action_seq)
    results = [s for s in view.statements if s.kind == "result" and s.seq > since]
    running = [b for b in view.background.values() if b.status == "running" and not b.collected]
    fresh = view.last_notification_seq > max(view.last_statement_seq, view.last_action_seq)
    arrived = [b for b in view.background.values() if b.status != "running" and not b.collected] if fresh else []
    finished: str | None = None
    if not (unanswered or in_progress or open_items or open_errors or running or arrived) and since >= 0:
        words = view.recent_words[-1] if view.recent_words else ""
        spoke_last = view.last_statement_seq > view.last_action_seq
        if view.last_commit_seq > max(since, last_edit):
            finished = f"the work was committed after its last change (`{_flat(view.last_commit, 120)}`)"
        elif checks and checks[0].ok_seq > max(since, last_edit) and checks[0].ok_seq >= checks[0].seq:
            finished = f"`{_flat(checks[0].first, 120)}` ran clean after the last change"
        elif spoke_last and _DONE_WORDS.search(words):
            finished = f'the assistant reported: "{_flat(_first_sentence(words), 240)}"'
    return WorkState(
        request=request,
        earlier=earlier,
        follow_up=follow_up,
        since=since,
        open_items=open_items,
        in_progress=in_progress,
        open_errors=open_errors,
        current_files=current[:_FILES_SHOWN],
        read_files=read[:_READ_SHOWN],
        check=check,
        finished=finished,
        unanswered=unanswered,
        results=results,
        running=running,
        arrived=arrived,
    )


_PLUMBING_TAIL = re.compile(r"\s*(?:2>&1|\|\s*(?:tail|head|grep|less|tee)\b.*|>\s*/dev/null)+\s*$")
_LOOKING = re.compile(r"\b(?:I need to (?:check|see|look|find|read|understand)|let me|let's)\b", re.I)
"""A statement that only says what the assistant is about to look at, not what it found."""


def _overlap(a: str, b: str) -> bool:
    """Whether two statements say mostly the same (half the words of the shorter are the other's)."""
    x = set(re.findall(r"[a-z0-9_]{3,}", a.lower()))
    y = set(re.findall(r"[a-z0-9_]{3,}", b.lower()))
    return bool(x and y) and len(x & y) >= 0.5 * min(len(x), len(y))


def _first_sentence(text: str) -> str:
    said = sentences(text)
    return said[0] if said else text


def item_line(item: LedgerItem, view: SessionLedger) -> str:
    """An open item as a reader wants it: its id, its state and its title."""
    status = item.status.replace("_", " ")
    if item.key in view.tracker and view.tracker[item.key] is item:
        title = view.titles.get(item.key)
        return f"{item.key} ({status})" + (f": {title}" if title else "")
    if item.key in view.tasks and view.tasks[item.key] is item:
        return f"task #{item.key} ({status}): {_flat(item.text, 200)}"
    return f"({status}) {_flat(item.text, 200)}"


class Briefing:
    """The nine sections of a briefing, from ``ledger`` (up to the end of the head) and ``view`` (the
    same with the tail merged). ``cite(section, handle)`` returns a handle's marker and remembers the
    citation; ``cwd`` shortens paths under it."""

    def __init__(
        self,
        ledger: SessionLedger,
        view: SessionLedger,
        *,
        cwd: str | None,
        cite: Callable[[str, str | None], str],
    ) -> None:
        self.ledger = ledger
        self.view = view
        self.cwd = cwd
        self.cite = cite
        self.state = work_state(view)

    def rel(self, path: str) -> str:
        return relative_path(path, self.cwd)

    def _quote(self, message: LedgerMessage, limit: int, section: str) -> str:
        text = message.text.strip()
        if len(text) <= limit:
            return f'"{text}"'
        cut = text[:limit].rstrip()
        where = self.cite(section, message.handle) if message.handle else "(whole in the stored conversation)"
        return f'"{cut} [...]" {where}'

    # -- 1 -----------------------------------------------------------------

    def request(self) -> str:
        state, lines = self.state, []
        section = "Primary request and intent"
        if state.request is not None:
            lines.append(f"The user's current request, verbatim: {self._quote(state.request, _REQUEST_CHARS, section)}")
        if state.earlier is not None:
            lines.append(
                f"It came after this earlier request: {self._quote(state.earlier, _EARLIER_REQUEST_CHARS, section)}"
            )
        elif self.view.original_goal and (state.request is None or self.view.original_goal != state.request.text):
            lines.append(
                f'It came after this earlier request: "{_flat(self.view.original_goal, _EARLIER_REQUEST_CHARS)}"'
            )
        if state.follow_up is not None:
            lines.append(f'Since then the user said: "{_flat(state.follow_up.text, 200)}"')
        if self.view.carried and state.request is None:
            lines.append(f"From the earlier summary: {_flat(self.view.carried[-1], _REQUEST_CHARS)}")
        if self.view.pins:
            lines.append("Pinned by the user, to keep as written:")
            lines.extend(f'- "{pin}"' for pin in self.view.pins)
        instructions = [i for i in self.view.instructions if not i.startswith("The user turned down")]
        if instructions:
            lines.append("The user's standing instructions, verbatim:")
            lines.extend(f'- "{i}"' for i in instructions[-8:])
        return "\n".join(lines) or "(no request from the user recorded)"

    # -- 2 and 5 -------------------------------------------------------------

    def _chosen(self) -> list[LedgerStatement]:
        """The statements worth showing: the best by what they say, how recent they are, and whether
        they name what the current work touches; newest last."""
        statements = self.view.statements
        if not statements:
            return []
        newest = statements[-1].seq or 1
        names = {p.path.rsplit("/", 1)[-1] for p in self.state.current_files}

        def worth(s: LedgerStatement) -> float:
            recency = 1.5 * (s.seq / newest) if newest > 0 else 0.0
            touches = 1.0 if any(n and n in s.text for n in names) else 0.0
            return s.score + recency + touches

        ranked = sorted(statements, key=worth, reverse=True)
        return ranked

    def concepts(self) -> str:
        chosen = self._chosen()
        said = " ".join(s.text for s in chosen[: _STATEMENTS_SHOWN * 2])

        def weight(item: tuple[str, int]) -> tuple[float, str]:
            name, count = item
            return (-(count + (2 if name in said else 0)), name)

        names = [n for n, c in sorted(self.view.identifiers.items(), key=weight) if ": " not in n]
        often = [n for n in names if self.view.identifiers[n] > 1 or n in said]
        shown = [f"`{n}`" for n in (often if len(often) >= 6 else names)[:_IDENTIFIERS_SHOWN]]
        lines = []
        if shown:
            lines.append("The names the work turns on: " + ", ".join(shown) + ".")
        findings = [s for s in chosen if s.kind == "finding" and not _LOOKING.search(s.text)][:_CONCEPTS_SHOWN]
        lines.extend(f"- {s.text}" for s in sorted(findings, key=lambda s: s.seq))
        return "\n".join(lines) or "(none recorded)"

    def solving(self, shown_elsewhere: set[str]) -> str:
        picked: list[LedgerStatement] = []
        for s in self._chosen():
            if s.kind not in ("cause", "decision") or s.text in shown_elsewhere or len(s.text.split()) < 6:
                continue
            if _LOOKING.search(s.text) or any(_overlap(s.text, p.text) for p in picked):
                continue
            picked.append(s)
            if len(picked) == _STATEMENTS_SHOWN:
                break
        picked.sort(key=lambda s: s.seq)
        lines = [f"- {s.text}" for s in picked]
        checks = self.checks()
        if checks:
            lines.append("Checks the session ran: " + ", ".join(f"`{c}`" for c in checks) + ".")
        return "\n".join(lines) or "(nothing the assistant concluded is recorded)"

    def checks(self, limit: int = 6) -> list[str]:
        """The distinct test, lint and build commands of the session, newest first, without their
        output plumbing (``2>&1 | tail -5``)."""
        found: list[str] = []
        for command in sorted(self.view.commands.values(), key=lambda c: -c.seq):
            if check_program(command.first) is None:
                continue
            bare = _PLUMBING_TAIL.sub("", command.first).strip()
            if bare and bare not in found:
                found.append(_flat(bare, 160))
            if len(found) == limit:
                break
        return found

    # -- 3 -------------------------------------------------------------------

    def files(self) -> str:
        state, view = self.state, self.view
        lines: list[str] = []
        current = {p.path for p in state.current_files}
        changed = [p for p in sorted(view.paths.values(), key=lambda p: -p.edit_seq) if p.edit_seq >= 0]
        shown = 0
        for entry in changed[:_CHANGED_SHOWN]:
            what = "written" if "written" in entry.actions and len(entry.actions) == 1 else "changed"
            if entry.deleted:
                what = "removed since"
            names = ", ".join(f"`{n}`" for n in entry.symbols[-5:])
            line = f"- `{self.rel(entry.path)}` ({what}{': ' + names if names else ''})"
            if entry.why:
                line += f": {entry.why}"
            lines.append(line)
            if entry.path in current and entry.last_edit and shown < _EDITS_SHOWN:
                shown += 1
                body = "\n".join(f"  {x}" for x in entry.last_edit.splitlines())
                lines.append(f"  Its last edit:\n  ```\n{body}\n  ```")
        if len(changed) > _CHANGED_SHOWN:
            lines.append(f"(and {len(changed) - _CHANGED_SHOWN} files changed earlier, in the index.)")
        if state.read_files:
            lines.append(
                "Files it read (newest first): " + ", ".join(f"`{self.rel(p.path)}`" for p in state.read_files) + "."
            )
        listed = {p.path for p in [*changed[:_CHANGED_SHOWN], *state.read_files]}
        others = [p for p in view.paths.values() if p.path not in listed]
        if others:
            lines.append(
                f"The session read or searched {len(others)} other path{'s' if len(others) != 1 else ''}; "
                "the index after this summary lists every one."
            )
        return "\n".join(lines) or "(no files touched)"

    # -- 4 -------------------------------------------------------------------

    def errors(self) -> tuple[str, set[str]]:
        """The errors that mattered, with how each was explained and fixed; the explanations shown."""
        view = self.view
        worth = [e for e in view.errors if e.explanation or e.resolved is None or not e.resolved.startswith("the user")]
        open_now = [e for e in worth if e in self.state.open_errors]
        rest = [e for e in worth if e not in open_now]
        shown = sorted([*rest[-(_ERRORS_SHOWN - len(open_now[-3:])) :], *open_now[-3:]], key=lambda e: e.seq)
        lines, used = [], set()
        for error in shown:
            where = f"`{_flat(error.key, 100)}`" if error.tool == "Bash" else f"{error.tool} {self.rel(error.key)}"
            line = f"- {where}: {error.line}"
            if error.explanation:
                line += f" - {error.explanation}"
                used.add(error.explanation)
            if error.resolved:
                line += f" Resolved: {error.resolved}."
            elif error in open_now:
                line += " Still open."
            lines.append(line)
        return "\n".join(lines) or "(no errors that are still relevant)", used

    # -- 7 -------------------------------------------------------------------

    def pending(self) -> str:
        view, state = self.view, self.state
        lines = [f"- {item_line(item, view)}" for item in state.open_items]
        for task in state.running:
            lines.append(f"- background task {task.id} is still running: {_flat(task.description, 160)}")
        for task in state.arrived:
            lines.append(
                f"- background task {task.id} has just {task.status}; its output is not read yet: {_flat(task.description, 160)}"
            )
        if not (view.todos or view.tasks or view.tracker) and view.carried_pending:
            lines += [f"- {item} (from the earlier summary)" for item in view.carried_pending]
        return "\n".join(lines) or "(no open tasks)"

    # -- 8 -------------------------------------------------------------------

    def current_work(self) -> str:
        view, state = self.view, self.state
        lines = []
        if state.finished:
            lines.append(f"Done: {state.finished}.")
        elif state.in_progress:
            lines.append("In progress: " + "; ".join(item_line(i, view) for i in state.in_progress[:3]) + ".")
        words = [w for w in view.recent_words if w.strip()]
        if words:
            last = words[-1]
            if len(words) > 1 and (is_narration(last) or last.rstrip().endswith(":")):
                lines.append(f'Before that it wrote: "{_flat(words[-2], _WORDS_CHARS)}"')
            lines.append(f'The assistant\'s last words: "{_flat(last, _WORDS_CHARS)}"')
        last_edit = _last_edit_seq(view)
        for statement in [r for r in state.results if r.seq > last_edit][-2:]:
            if not words or statement.text not in words[-1]:
                lines.append(f"- {statement.text}")
        return "\n".join(lines) or "(nothing recorded)"

    # -- 9 -------------------------------------------------------------------

    def next_step(self) -> str:
        view, state = self.view, self.state
        if state.finished and not state.unanswered:
            return (
                f"Nothing is open: {state.finished}. Wait for the user's next request; do not redo or re-check "
                "finished work."
            )
        lines = []
        latest = view.user_messages[-1] if view.user_messages else None
        if state.unanswered and latest is not None:
            lines.append(f'Answer the user\'s latest message: "{_flat(latest.text, 300)}"')
        for item in state.in_progress[:2]:
            lines.append(f"Finish {item_line(item, view)}.")
        for error in state.open_errors[-2:]:
            where = f"`{_flat(error.key, 100)}`" if error.tool == "Bash" else self.rel(error.key)
            lines.append(f"Fix what {where} reported: {error.line}")
        for task in state.arrived[:2]:
            where = f" ({task.output_file})" if task.output_file else ""
            lines.append(f"Read the output of background task {task.id}{where}, which has just {task.status}.")
        waiting = [i for i in state.open_items if i.status != "in_progress"]
        if waiting:
            lines.append(f"Then {item_line(waiting[0], view)}.")
        for task in state.running[:2]:
            lines.append(f"Collect background task {task.id} when it finishes (it is still running).")
        if state.request is not None and not state.unanswered:
            if lines:
                lines.append(f'All of it serves the current request: "{_flat(state.request.text, 300)}"')
            else:
                lines.append(f'Carry on with the current request: "{_flat(state.request.text, 300)}"')
        files = [f"`{self.rel(p.path)}`" for p in state.current_files[:4]]
        if files:
            lines.append("Files it concerns: " + ", ".join(files) + ".")
        if state.check:
            lines.append(f"Check the work with: `{_flat(state.check, 200)}`")
        return "\n".join(lines) or "(no next step recorded)"

    def next_files(self) -> list[str]:
        """The files the next step names (none when the work is done)."""
        if self.state.finished and not self.state.unanswered:
            return []
        return [self.rel(p.path) for p in self.state.current_files[:4]]
