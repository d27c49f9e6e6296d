"""The session ledger as text: the index that follows a summary, its facts for a model, the listing.

``LedgerText`` renders a ``SessionLedger``'s bookkeeping: paths and what was
done to them, commands and their outcomes, errors with what resolved them,
the user's instructions and messages, the open items (the briefing, in
``compactor.summarizers.briefing``, says where the work stands). Older facts
are compressed, never dropped:
past ``budget_tokens`` a path is shown without its actions and a command as
its first line only; past that they are left to the full listing, stored as
its own span (``listing_span``) and cited with how many facts it holds.

Every path and command stands in the text verbatim (a path relative to the
working directory where it lies under it), so that a reader, or a search,
finds it as the session wrote it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from ccr import handle_for, marker
from compactor.core.ledger import LedgerCommand, LedgerError, LedgerPath, SessionLedger
from compactor.core.messages import Message
from compactor.engine.spans import Span
from compactor.summarizers.base import Summary
from compactor.summarizers.facts import DEFAULT_COMMAND_LINE_CHARS, relative_path
from compactor.summarizers.statements import flat

__all__ = ["FactsShown", "LedgerText", "index_text", "ledger_digest", "listing_span", "listing_text", "with_index"]

_COMMAND_CHARS = DEFAULT_COMMAND_LINE_CHARS
_COMPACT_COMMAND_CHARS = _COMMAND_CHARS
_DETAIL_SHARE = 0.6
"""Of the facts budget, the share spent on full lines (actions, outcomes); the rest on compact ones."""
_RECENT_USER_MESSAGES = 4
_MIN_USER_CHARS = 100
_REQUEST_CHARS = 900


def _cut(text: str, limit: int) -> str:
    """``text`` cut at ``limit`` characters (its own line breaks kept), marked when cut."""
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rstrip() + " [...]"


def _actions(entry: LedgerPath) -> str:
    return ", ".join(a if n == 1 else f"{a} x{n}" for a, n in entry.actions.items())


def _outcome(command: LedgerCommand) -> str:
    if command.ok + command.failed == 0:
        return "no result"
    if command.failed == 0:
        return "ok"
    if command.ok == 0:
        return "failed"
    return f"ok {command.ok}, failed {command.failed}"


def _first(command: LedgerCommand, limit: int) -> str:
    first = command.first
    return first if len(first) <= limit else first[: limit - 5].rstrip() + " [...]"


T = TypeVar("T")


class _Room:
    """What is left of a facts budget: in all, and of the share for full lines."""

    def __init__(self, total: int, detail: int) -> None:
        self.total, self.detail = total, detail

    def fit(self, items: list[T], cost: Callable[[T], int], *, detail: bool = False) -> tuple[list[T], list[T]]:
        """The items that fit, in order, each spending its cost (``detail``: of the full-line share
        too), and the ones that did not; a miss does not stop later, smaller items."""
        taken: list[T] = []
        rest: list[T] = []
        for item in items:
            n = cost(item)
            if n <= self.total and (not detail or n <= self.detail):
                self.total -= n
                if detail:
                    self.detail -= n
                taken.append(item)
            else:
                rest.append(item)
        return taken, rest


@dataclass
class FactsShown:
    """The path and command lines a budget allows, and how many went to the listing."""

    files: list[str]
    commands: list[str]
    spilled_files: int = 0
    spilled_commands: int = 0
    compact_files: int = 0
    compact_commands: int = 0
    cut_commands: int = 0
    """Shown commands whose first line is too long to show whole (the listing has it)."""


class LedgerText:
    """Renders ``ledger`` (the session up to the end of the head) and ``view`` (the same with the
    tail merged: where the work stands). ``cite(section, handle)`` returns a handle's marker and
    remembers that the section draws on it; ``cwd`` shortens paths under it."""

    def __init__(
        self,
        ledger: SessionLedger,
        view: SessionLedger,
        *,
        cwd: str | None,
        cite: Callable[[str, str | None], str],
        count: Callable[[str], int],
        head_start: int = 0,
    ) -> None:
        self.ledger = ledger
        self.view = view
        self.cwd = cwd
        self.cite = cite
        self.count = count
        self.head_start = head_start
        """The ``seq`` of the first message of this compaction's head: handles of facts from here on
        were stored by this compaction."""

    def rel(self, path: str) -> str:
        return relative_path(path, self.cwd)

    # -- facts -----------------------------------------------------------

    def facts(self, budget_tokens: int) -> FactsShown:
        """Paths, then commands, of the whole context (the view: the tail's too, so that the summary
        stands on its own), newest first: full lines within ``_DETAIL_SHARE`` of the budget, compact
        ones (path alone, first line alone) within the rest; the others are spilled."""
        paths = sorted(self.view.paths.values(), key=lambda p: -p.seq)
        commands = sorted(self.view.commands.values(), key=lambda c: -c.seq)
        room = _Room(budget_tokens, int(budget_tokens * _DETAIL_SHARE))
        full_paths, rest_paths = room.fit(paths, lambda e: self.count(self._path_line(e) + "\n"), detail=True)
        full_commands, rest_commands = room.fit(
            commands, lambda c: self.count(self._command_line(c) + "\n"), detail=True
        )
        compact_paths, _ = room.fit(rest_paths, lambda e: self.count(self.rel(e.path) + ", "))
        compact_commands, _ = room.fit(rest_commands, lambda c: self.count(self._compact_command(c) + ", "))
        files = [self._path_line(e, cite=True) for e in sorted(full_paths, key=lambda p: self.rel(p.path))]
        if compact_paths:
            names = ", ".join(self.rel(e.path) for e in sorted(compact_paths, key=lambda p: self.rel(p.path)))
            files.append(f"- Also touched earlier: {names}")
        lines = [self._command_line(c) for c in sorted(full_commands, key=lambda c: c.seq)]
        if compact_commands:
            lines.insert(
                0,
                "- Also run earlier: "
                + ", ".join(self._compact_command(c) for c in sorted(compact_commands, key=lambda c: c.seq)),
            )
        return FactsShown(
            files=files,
            commands=lines,
            spilled_files=len(rest_paths) - len(compact_paths),
            spilled_commands=len(rest_commands) - len(compact_commands),
            compact_files=len(compact_paths),
            compact_commands=len(compact_commands),
            cut_commands=sum(1 for c in [*full_commands, *compact_commands] if len(c.first) > _COMMAND_CHARS),
        )

    def _path_line(self, entry: LedgerPath, *, cite: bool = False) -> str:
        line = f"- {self.rel(entry.path)}: {_actions(entry)}"
        if entry.last_outcome.startswith("failed"):
            line += f" (last {entry.last_outcome})"
        if cite and entry.handle and entry.seq >= self.head_start:
            line += " " + self.cite("Files and code sections", entry.handle)
        return line

    def _command_line(self, command: LedgerCommand) -> str:
        line = f"- `{_first(command, _COMMAND_CHARS)}`"
        if command.more_lines:
            line += f" (+{command.more_lines} lines)"
        if command.runs > 1:
            line += f" x{command.runs}"
        line += f" -> {_outcome(command)}"
        if command.last_output:
            line += f": {command.last_output}"
        return line

    def _compact_command(self, command: LedgerCommand) -> str:
        return f"`{_first(command, _COMPACT_COMMAND_CHARS)}`" + (f" x{command.runs}" if command.runs > 1 else "")

    # -- errors ----------------------------------------------------------

    def errors(self, max_errors: int) -> list[str]:
        """Each error with what resolved it (as of the end of the tail), unresolved ones first kept;
        at most ``max_errors`` lines, with a count of the rest."""
        resolved_in_view = {(e.key, e.seq): e.resolved for e in self.view.errors}
        errors = list(self.view.errors)
        unresolved = [e for e in errors if e.resolved is None]
        resolved = [e for e in errors if e.resolved is not None]
        keep = unresolved[-max_errors:]
        keep += resolved[-max(0, max_errors - len(keep)) :] if max_errors > len(keep) else []
        shown = sorted(keep, key=lambda e: e.seq)
        lines = [self._error_line(e, resolved_in_view.get((e.key, e.seq))) for e in shown]
        left_out = len(errors) - len(shown)
        if left_out:
            lines.insert(
                0,
                f"- ({left_out} earlier errors are in the full listing; "
                f"{sum(1 for e in errors if e.resolved) - sum(1 for e in shown if e.resolved)} of them resolved)",
            )
        return lines

    def _error_line(self, error: LedgerError, resolved: str | None) -> str:
        where = (
            f"`{flat(error.key, 100)}`"
            if error.tool == "Bash"
            else (self.rel(error.key) if error.key.startswith("/") else error.key)
        )
        line = f"- {error.tool} {where}: {error.line}" if error.tool != error.key else f"- {error.tool}: {error.line}"
        if error.more:
            line += f" (+{error.more} more)"
        if error.handle and error.seq >= self.head_start:
            line += " " + self.cite("Errors and fixes", error.handle)
        if resolved:
            line += f" -> resolved: {resolved}"
        elif error.edited_since:
            line += f" -> not resolved yet (edited since: {', '.join(self.rel(p) for p in error.edited_since)})"
        else:
            line += " -> not resolved yet"
        return line

    # -- the user --------------------------------------------------------

    def instructions(self) -> list[str]:
        return [f'- "{sentence}"' for sentence in self.ledger.instructions]

    def user_messages(self, *, limit: int, total_chars: int, listing: str) -> list[str]:
        """Every typed message: the newest ones up to ``limit`` characters, older ones shorter when
        all of them would pass ``total_chars`` (never below ``_MIN_USER_CHARS``), cut ones named."""
        messages = list(self.ledger.user_messages)
        recent = messages[-_RECENT_USER_MESSAGES:]
        older = messages[:-_RECENT_USER_MESSAGES] if len(messages) > _RECENT_USER_MESSAGES else []
        spent = sum(min(len(m.text), limit) for m in recent) + sum(len(c) for c in self.ledger.carried)
        older_limit = limit
        if older and spent + sum(min(len(m.text), limit) for m in older) > total_chars:
            older_limit = max(_MIN_USER_CHARS, (total_chars - spent) // len(older))
        lines = [f"- {item}" for item in self.ledger.carried]
        cut = 0
        for message in messages:
            cap = limit if message in recent else older_limit
            text = _cut(message.text, cap)
            if len(message.text.strip()) > cap:
                if message.handle:
                    text += " " + self.cite("All user messages", message.handle)
                else:
                    cut += 1
            lines.append(f"- {text}" + (f" (sent {message.count} times)" if message.count > 1 else ""))
        if cut:
            lines.append(f"- ({cut} long messages are cut here; each is whole in the full listing {listing})")
        return lines

    def goal(self) -> str:
        view = self.view
        goal = view.original_goal
        latest = view.current_request
        if goal is None and latest is None:
            return "(no user request recorded)"
        if latest is None or latest == goal:
            return _cut(goal or latest or "", _REQUEST_CHARS)
        return f"- Original goal: {_cut(goal or '', _REQUEST_CHARS)}\n- Current request: {_cut(latest, _REQUEST_CHARS)}"

    # -- where the work stands (from the view: head and tail) --------------

    def pending(self) -> list[str]:
        view = self.view
        items = []
        for item in view.open_items():
            if item.key in view.tasks and view.tasks[item.key] is item:
                items.append(f"task #{item.key} [{item.status}] {item.text}")
            elif item.key in view.tracker and view.tracker[item.key] is item:
                items.append(f"{item.key} [{item.status}] (last tracker command: `{flat(item.text, 160)}`)")
            else:
                items.append(f"[{item.status}] {item.text}")
        for task in view.background.values():
            if not task.collected:
                state = "still running" if task.status == "running" else f"{task.status}, output not read yet"
                where = f" (output: {task.output_file})" if task.output_file else ""
                items.append(f"background task {task.id} ({state}): {flat(task.description, 160)}{where}")
        if not (view.todos or view.tasks or view.tracker):
            items = [f"{item} (carried from the earlier summary)" for item in view.carried_pending] + items
        return [f"- {item}" for item in items]


def listing_text(ledger: SessionLedger, cwd: str | None = None) -> str:
    """Every fact of the ledger in full: paths, commands (whole first lines), errors, user messages."""
    out = ["Files touched (action counts, last outcome):"]
    for entry in sorted(ledger.paths.values(), key=lambda p: p.path):
        out.append(f"- {entry.path}: {_actions(entry)}" + (f" ({entry.last_outcome})" if entry.last_outcome else ""))
    out += ["", "Commands run (first line, runs, outcome, last output line):"]
    for command in sorted(ledger.commands.values(), key=lambda c: c.seq):
        line = f"- `{command.first}`" + (f" (+{command.more_lines} lines)" if command.more_lines else "")
        line += (f" x{command.runs}" if command.runs > 1 else "") + f" -> {_outcome(command)}"
        out.append(line + (f": {command.last_output}" if command.last_output else ""))
    out += ["", "Errors (and what resolved them):"]
    for error in ledger.errors:
        out.append(f"- {error.tool} {error.key}: {error.line} -> {error.resolved or 'not resolved'}")
    out += ["", "The user's instructions:"] + [f"- {s}" for s in ledger.instructions]
    out += ["", "Every message the user typed:"]
    out += [f"- {c}" for c in ledger.carried]
    out += [f"- {_indent(m.text)}" for m in ledger.user_messages]
    return "\n".join(out) + "\n"


def _indent(text: str) -> str:
    return text.strip().replace("\n", "\n  ")


def listing_span(ledger: SessionLedger, cwd: str | None = None) -> Span:
    """The full listing as a span the compaction stores (kind ``facts``: cited as the listing)."""
    data = listing_text(ledger, cwd).encode("utf-8")
    return Span(
        kind="facts", data=data, handle=handle_for(data), content_type="text/plain", ref="ledger", message_index=None
    )


def ledger_digest(
    ledger: SessionLedger,
    view: SessionLedger,
    *,
    cwd: str | None,
    count: Callable[[str], int],
    budget_tokens: int,
) -> str:
    """The ledger's facts as one plain block, for a summary a model writes: the model reads it as
    input, and the block is appended to what it wrote, so that no fact rests on its memory."""
    text_of = LedgerText(ledger, view, cwd=cwd, cite=lambda _section, h: marker(h) if h else "", count=count)
    shown = text_of.facts(budget_tokens)
    parts = [f"Current request: {text_of.goal()}"]
    if view.plan_mode:
        parts.append("The session is in plan mode: the user wants a plan before any change is made.")
    for title, lines in (
        ("The user's instructions, verbatim", text_of.instructions()),
        ("The user's choices among the options offered", [f"- {d}" for d in view.decisions]),
        ("How the session finished its last piece of work", [f"- `{step}`" for step in view.routine]),
        ("Files touched", shown.files),
        ("Commands run", shown.commands),
        ("Errors and what resolved them", text_of.errors(12)),
        ("Open items", text_of.pending()),
    ):
        if lines:
            parts.append(f"{title}:\n" + "\n".join(lines))
    left = shown.spilled_files + shown.spilled_commands
    if left:
        parts.append(f"({left} older facts are in the session's full listing.)")
    return "\n\n".join(parts)


def index_text(
    ledger: SessionLedger,
    view: SessionLedger,
    *,
    cwd: str | None,
    count: Callable[[str], int],
    budget_tokens: int,
    listing: str,
    cite: Callable[[str, str | None], str] | None = None,
    names: list[str] | None = None,
) -> str:
    """The session's index: every path and command that fits ``budget_tokens`` (newest in full lines,
    older compactly, the rest counted and left to the stored ``listing``, a marker), and the ``names``
    the work turns on, as the message that follows a summary shows it (``summary_index.j2``)."""
    from compactor.core.templating import render

    text_of = LedgerText(ledger, view, cwd=cwd, cite=cite or (lambda _s, h: marker(h) if h else ""), count=count)
    shown = text_of.facts(budget_tokens)
    relative = cwd is not None and any(text_of.rel(p) != p for p in view.paths)
    return render(
        "summary_index.j2",
        files=shown.files,
        commands=shown.commands,
        spilled=shown.spilled_files + shown.spilled_commands,
        listing=listing,
        compactions=ledger.compactions,
        cwd=cwd if relative else None,
        names=names or [],
    ).strip()


def with_index(
    summary: Summary,
    ledger: SessionLedger,
    tail: Sequence[Message],
    *,
    listing: str,
    cwd: str | None,
    count: Callable[[str], int],
) -> Summary:
    """``summary`` (a model's or a provider's) with the session's index after it, citing ``listing``
    (the handle of the stored listing), as the extractive summary writes one."""
    from compactor.core.config import DEFAULT_SUMMARY_FACTS_TOKENS
    from compactor.summarizers.ledger import tail_view

    index = index_text(
        ledger,
        tail_view(ledger, tail) if tail else ledger,
        cwd=cwd,
        count=count,
        budget_tokens=DEFAULT_SUMMARY_FACTS_TOKENS,
        listing=marker(listing),
    )
    handles = [*summary.handles, *([listing] if listing not in summary.handles else [])]
    return summary.model_copy(update={"index": index, "handles": handles})
