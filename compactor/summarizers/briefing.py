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

import functools
import re
from collections.abc import Callable

from compactor.core.ledger import (
    LedgerMessage,
    LedgerPath,
    LedgerStatement,
    SessionLedger,
)
from compactor.summarizers.briefing_errors import all_conflicts_edited, conflicts, errors_section
from compactor.summarizers.briefing_text import (
    CODE_NAME,
    HEDGE,
    LOOKING,
    PLAN,
    REASON,
    about_file,
    excerpt,
    explaining,
    headline,
    is_reaction,
    overlap,
    own_answer,
    pushes_back,
    reason_of,
)
from compactor.summarizers.facts import relative_path
from compactor.summarizers.statements import flat, is_narration
from compactor.summarizers.where_stopped import Stopped, stopped_at
from compactor.summarizers.work_state import (
    corrections,
    edited_since_plan,
    item_line,
    last_edit_seq,
    session_checks,
    work_state,
)

__all__ = ["Briefing"]

_REQUEST_CHARS = 500
_EARLIER_REQUEST_CHARS = 240
_RECENT_REQUESTS = 3
_DECISIONS_SHOWN = 6
_TASK_WORDS = 5
"""A request shorter than this ("yeah let's do it", after a resume) is a reply, not the session's task."""
_SPEC_WORDS = 25
"""A request this long (a plan, a bug report) states the task the later requests build on."""
_PLAN_MODE_WORK = "In plan mode: the user wants a plan before any change is made."
_PLAN_MODE_STEP = "In plan mode: finish the plan and ask for approval with ExitPlanMode; change nothing else yet."
_COMPACT_FOCUS = re.compile(r"/compact\s+(?=\S+\s+\S+\s+\S)")
"""``/compact`` with what the user asked it to keep: their own words for the work."""
_REPORTS_SHOWN = 6
_CONCEPT_NAMES = 5
_EARLIER_REPORT_CHARS = 360
_REPORT_SHOWN_CHARS = 1_000
_REPORT_WORDS = 8
"""An answer shorter than this ("Done.", "No response requested.") says too little to show."""
_WORKING_SHOWN = 5
_WORDS_CHARS = 320
_CHANGED_SHOWN = 8
_EARLIER_NAMED = 8
_LAST_READ_NAMED = 2
_READ_NAMED = 5
_EDITS_SHOWN = 4
_SMALL_EDIT_LINES = 8
"""An older file's last edit this short is shown with it: the code itself says what changed."""
_STATEMENTS_SHOWN = 12
_IDENTIFIERS_SHOWN = 30


_PLAIN_WORD = re.compile(r"[a-z]+|[A-Z][a-z]+|[A-Z]{1,4}")
"""A name that is also an ordinary word (``text``, ``Read``, ``URL``): shown only when the work uses it often."""


def _plain(text: str) -> str:
    """``text`` on one line with markdown emphasis folded, as the ledger keeps an edit's words."""
    return " ".join(text.replace("**", "").split())


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
        """The session's first request that states a task (the task the later requests build on, or a
        plan's title, even when work was committed or compacted since) and the user's ``/compact``
        description of the work, then the latest requests verbatim (a short remark reads with the
        request before it), pins, the user's decisions and standing instructions."""
        state, view, lines = self.state, self.view, []
        section = "Primary request and intent"
        requests = sorted((m for m in view.user_messages if m.is_request), key=lambda m: m.seq)
        recent = requests[-_RECENT_REQUESTS:]
        if not requests and view.carried:
            lines.append(f"From the earlier summary: {flat(view.carried[-1], _REQUEST_CHARS)}")
        # Its first request that states a task: after a resume the first is a reply ("yeah let's do it").
        # Committed since, a short one was a piece of work done ("group the changes into commits"); a
        # plan or a bug report is the task the later requests build on.
        first = next((m for m in requests if len(m.text.split()) >= _TASK_WORDS), None)
        if (
            first is not None
            and first not in recent
            and (view.last_commit_seq < first.seq or len(first.text.split()) >= _SPEC_WORDS)
        ):
            lines.append(f"The session began with: {self._quote(first, _EARLIER_REQUEST_CHARS, section)}")
        focus = [m for m in view.user_messages if _COMPACT_FOCUS.match(m.text)]
        if focus and focus[-1] not in recent:
            said = _COMPACT_FOCUS.sub("", focus[-1].text, count=1)
            lines.append(
                f'When the user last compacted, they described the work as: "{flat(said, _EARLIER_REQUEST_CHARS)}"'
            )
        # The current request stands on its own line, where a reader looks first; what the user asked
        # before it and what they wrote after it (a remark that steers it) read around it.
        current = state.request if state.request in recent else (recent[-1] if recent else None)
        before = [m for m in recent if current is not None and m.seq < current.seq]
        after = [m for m in recent if current is not None and m.seq > current.seq]
        if before:
            lines.append("Earlier requests, oldest first:")
            lines.extend(f"- {self._quote(m, _EARLIER_REQUEST_CHARS, section)}" for m in before)
        decisions = view.decisions[-_DECISIONS_SHOWN:]
        if current is not None:
            offered, decisions = own_answer(decisions, current.text)
            offered = f" (its answer to what it offered: {offered})" if offered else ""
            lines.append(f"Current request: {self._quote(current, _REQUEST_CHARS, section)}{offered}")
        if after:
            lines.append("Then the user wrote:")
            lines.extend(f"- {self._quote(m, _REQUEST_CHARS, section)}" for m in after)
        if view.pins:
            lines.append("Pinned by the user, to keep as written:")
            lines.extend(f'- "{pin}"' for pin in view.pins)
        if decisions:
            lines.append("The user's choices among the options it offered, oldest first:")
            lines.extend(f"- {d}" for d in decisions)
        shown = " ".join(" ".join(m.text.split()) for m in recent)  # whitespace folded, as instructions are
        instructions = [
            i
            for i in view.instructions
            if not i.startswith("The user turned down") and " ".join(i.split()) not in shown
        ]
        if instructions:
            lines.append("Standing instructions from the user, verbatim:")
            lines.extend(f'- "{i}"' for i in instructions[-8:])
        if corrected := [m for m in corrections(view) if m not in recent]:
            lines.append("Where the user corrected it, verbatim:")
            lines.extend(f'- "{flat(m.text, _EARLIER_REQUEST_CHARS)}"' for m in corrected)
        return "\n".join(lines) or "(no request from the user recorded)"

    # -- 2 and 5 -------------------------------------------------------------

    @functools.cached_property
    def _chosen(self) -> list[LedgerStatement]:
        """The statements worth showing: the best by what they say, how recent they are, and whether
        they name what the current work touches. Statements of the current request's work come
        first (what was said before it is more often superseded)."""
        statements = self.view.statements
        if not statements:
            return []
        current = [s for s in statements if s.seq > self.state.since]
        newest = statements[-1].seq or 1
        names = {p.path.rsplit("/", 1)[-1] for p in self.state.current_files}

        def worth(s: LedgerStatement) -> float:
            recency = 1.5 * (s.seq / newest) if newest > 0 else 0.0
            touches = 1.0 if any(n and n in s.text for n in names) else 0.0
            return s.score + recency + touches

        ranked = sorted(current, key=worth, reverse=True)
        return ranked + sorted([s for s in statements if s not in current], key=worth, reverse=True)

    def concepts(self, shown_elsewhere: set[str]) -> str:
        """The code names the work turns on most, each with the assistant's own sentence that says
        what it is or does (a bare list of names reads as bookkeeping), then the checks the session
        runs. Names no sentence explains are named on one line, the few the work turns on most."""
        lines: list[str] = []
        used: set[str] = set()
        explained: set[str] = set()
        names = [n for n in self.names if CODE_NAME.fullmatch(n)][: _CONCEPT_NAMES * 2]
        for name in names:
            said = explaining(name, self._chosen, shown_elsewhere | used)
            if said is None:
                continue
            used.add(said.text)
            explained.add(name)
            lines.append(f"- `{name}`: {said.text}")
            if len(lines) == _CONCEPT_NAMES:
                break
        shown_elsewhere.update(used)
        files = sorted(self.view.paths.values(), key=lambda p: p.edit_seq)  # a name's file: the last that changed it
        where = {n: p.path.rsplit("/", 1)[-1] for p in files for n in p.symbols}
        others = [f"`{n}`" + (f" (in `{where[n]}`)" if n in where else "") for n in names if n not in explained]
        if others and len(lines) < _CONCEPT_NAMES:
            lines.append("Other names the work turns on: " + ", ".join(others[: _CONCEPT_NAMES - len(lines)]) + ".")
        checks = session_checks(self.view)
        if checks:
            lines.append("Test, lint and build commands it used: " + ", ".join(f"`{c}`" for c in checks) + ".")
        return "\n".join(lines) or "(none recorded)"

    @functools.cached_property
    def names(self) -> list[str]:
        """The names the work turns on (for the index): often written, or in what the briefing quotes."""
        said = " ".join(s.text for s in self._chosen[: _STATEMENTS_SHOWN * 2])

        def weight(item: tuple[str, int]) -> tuple[float, str]:
            name, count = item
            return (-(count + (2 if name in said else 0)), name)

        names = [
            n
            for n, c in sorted(self.view.identifiers.items(), key=weight)
            if ": " not in n
            and not n.startswith(("#", "//"))
            and n.count(" ") < 4
            and (c >= 4 or _PLAIN_WORD.fullmatch(n) is None)
        ]
        return names[:_IDENTIFIERS_SHOWN]

    def solving(self, shown_elsewhere: set[str]) -> str:
        """The work told as a story: each earlier turn's request with the assistant's answer in brief and
        the files it changed for it, oldest first, then the latest answer whole (with what the user
        replied), then what it wrote out while working on since. Without answers (one long turn), its
        statements of causes and decisions."""
        reports = [r for r in self.view.reports if len(r.text.split()) >= _REPORT_WORDS][-_REPORTS_SHOWN:]
        lines: list[str] = []
        if len(reports) > 1:
            lines.append("The work so far, turn by turn (oldest first; a later answer may revise an earlier one):")
        for report in reports:
            asked = f'"{flat(report.asked, 100)}"' if report.asked else "its work"
            # The turn's files: last edited after the request it answered, up to the answer.
            start = max((m.seq for m in self.view.user_messages if m.is_request and m.seq < report.seq), default=-1)
            changed = [
                f"`{self.rel(p.path)}`"
                for p in self.view.paths.values()
                if start < p.edit_seq <= report.seq and not p.deleted
            ]
            done = f"It changed {', '.join(changed[:4])}." if changed else ""
            later = [m for m in self.view.user_messages if m.seq > report.seq] if report is reports[-1] else []
            reply = min(later, key=lambda m: m.seq, default=None)  # the user's first message after it
            if report is reports[-1] and not (reply and pushes_back(reply.text)):
                lines.append(f"Its latest answer, to {asked}:")
                lines.extend(f"  {line}" for line in excerpt(report.text, _REPORT_SHOWN_CHARS).splitlines())
                lines += [f"  {done}"] if done else []
            else:  # an earlier answer, or one the user pushed back on: in brief
                brief = headline(report.text, _EARLIER_REPORT_CHARS)
                brief += "" if not done or brief.endswith((".", "!", "?", ":", "]")) else "."
                lines.append(f"- To {asked}: {brief}{' ' + done if done else ''}")
            if reply is not None:
                # What the user said to it, right there: a correction ("I think the reuse is for
                # ...") read pages later leaves the answer looking like the conclusion.
                lines.append(f'  The user replied: "{flat(reply.text, _EARLIER_REQUEST_CHARS)}"')
        after = reports[-1].seq if reports else -1
        limit = _WORKING_SHOWN if reports else _STATEMENTS_SHOWN
        picked = [
            s for s in self._statements(shown_elsewhere, after=after, limit=limit) if not self._quoted_later(s.text)
        ]
        if picked:
            if reports:
                lines.append("What it found since:")
            lines.extend(f"- {s.text}" for s in picked)
        if self.view.commits:  # what is done, in the words the session chose for it
            lines[:0] = ["Committed so far, oldest first:", *(f'- "{c}"' for c in self.view.commits[-5:])]
        return "\n".join(lines) or "(nothing the assistant concluded is recorded)"

    def _statements(self, shown_elsewhere: set[str], *, after: int, limit: int) -> list[LedgerStatement]:
        """Up to ``limit`` statements of causes and decisions said after ``after``, oldest first."""
        picked: list[LedgerStatement] = []
        # What the assistant wrote out; what it only thought was often dropped on the way.
        for s in (s for s in self._chosen if not s.thought and s.seq > after):
            if s.kind not in ("cause", "decision") or s.text in shown_elsewhere:
                continue
            if s.text.rstrip().endswith(":"):  # it leads into a call: what it was about to do, not a conclusion
                continue
            if len(s.text.split()) < 8:  # "I can see the issue.", "The `CreatedAt` field doesn't use it."
                continue
            if PLAN.match(s.text) or is_reaction(s.text):  # what it meant to do then; a reaction
                continue
            if LOOKING.search(s.text) or HEDGE.search(s.text) or any(overlap(s.text, p.text) for p in picked):
                continue
            picked.append(s)
            if len(picked) == limit:
                break
        return sorted(picked, key=lambda s: s.seq)

    # -- 3 -------------------------------------------------------------------

    def files(self) -> str:
        state, view = self.state, self.view
        lines: list[str] = []
        current = {p.path for p in state.current_files}
        changed = [p for p in sorted(view.paths.values(), key=lambda p: -p.edit_seq) if p.edit_seq >= 0]
        shown = 0
        said: set[str] = set()
        for entry in changed[:_CHANGED_SHOWN]:
            what = "written" if "written" in entry.actions and len(entry.actions) == 1 else "changed"
            if entry.deleted:
                what = "removed since"
            names = ", ".join(f"`{n}`" for n in entry.symbols[-5:])
            line = f"- `{self.rel(entry.path)}` ({what}{': ' + names if names else ''})"
            # Why an older file was changed is mostly stale ("Now also replace ..."): the current files' only.
            why = reason_of(entry.why)  # without "I can see the pattern." or "Let me check ..."
            if (
                entry.path in current
                and why
                and about_file(entry, why)
                and entry.why not in said
                and not self._quoted_later(entry.why)
                and REASON.search(why)
            ):
                said.add(entry.why)
                line += f": why: {why}"
            lines.append(line)
            # An older file's small edit, unless committed since: work of another piece, maybe of
            # another branch, read as the current one's.
            small = len(entry.last_edit.splitlines()) <= _SMALL_EDIT_LINES and entry.edit_seq > view.last_commit_seq
            small = small and "/.git/" not in entry.path  # a git hook it set up is tooling, not the work
            if (
                (entry.path in current or small)
                and entry.last_edit
                and shown < _EDITS_SHOWN
                and entry.path != self._stopped.shown_edit
            ):
                shown += 1
                edit_lines = entry.last_edit.splitlines()
                if len(edit_lines) == 1 and "`" not in edit_lines[0]:
                    lines.append(f"  Its last edit: `{' '.join(edit_lines[0].split())}`")
                else:
                    body = "\n".join(f"  {x}" for x in edit_lines)
                    lines.append(f"  Its last edit:\n  ```\n{body}\n  ```")
        earlier = changed[_CHANGED_SHOWN : _CHANGED_SHOWN + _EARLIER_NAMED]
        if earlier:
            more = len(changed) - _CHANGED_SHOWN - len(earlier)
            rest = f" and {more} more, in the index" if more else ""
            lines.append("Changed earlier: " + ", ".join(f"`{self.rel(p.path)}`" for p in earlier) + f"{rest}.")
        if state.read_files:  # every other path is in the index that follows the summary
            read = state.read_files[:_READ_NAMED]
            line = "Files it read last (newest first): " + ", ".join(f"`{self.rel(p.path)}`" for p in read) + "."
            # The current work changed nothing (an investigation): what it read is what it works on.
            lines.insert(0 if state.read_since and not state.current_files else len(lines), line)
        return "\n".join(lines) or "(no files touched)"

    # -- 4 -------------------------------------------------------------------

    def errors(self) -> tuple[str, set[str]]:
        """The errors that mattered, with how each was explained and fixed; the explanations shown."""
        return errors_section(self.view, self.state, self._chosen, self.rel)

    # -- 7 -------------------------------------------------------------------

    def pending(self) -> str:
        view, state = self.view, self.state
        lines = [f"- {item_line(item, view)}" for item in state.open_items]
        for task in state.running:
            lines.append(f"- background task {task.id} is still running: {flat(task.description, 160)}")
        for task in state.arrived:
            lines.append(
                f"- background task {task.id} has just {task.status}; its output is not read yet: {flat(task.description, 160)}"
            )
        for item in [] if state.finished else state.stale_items:  # finished: the list's lag is no news
            lines.append(
                f"- {item_line(item, view)}: done, it seems (the check ran clean after the last change); "
                "the list was not updated"
            )
        if not (view.todos or view.tasks or view.tracker) and view.carried_pending:
            lines += [f"- {item} (from the earlier summary)" for item in view.carried_pending]
        left = self._left()
        if left:
            lines.append("Left to do, from the last rounds:")
            lines += [f"- {line}" for line in left]
        stopped_mid_work = view.last_action_seq >= view.last_statement_seq  # no words after its last call
        if not lines and not state.finished and state.request is not None and stopped_mid_work:
            # "(no open tasks)" beside work plainly unfinished reads as a contradiction
            return "No task list is open; the current request is not done yet (see Current work and Next step)."
        return "\n".join(lines) or "(no open tasks)"

    def _left(self) -> list[str]:
        """What the last rounds leave open, besides the lists: the latest request unanswered, a merge's
        conflicts left, changes not checked yet, what the assistant said it would do next."""
        state, left = self.state, []
        if state.unanswered and self.view.user_messages:
            left.append(f'answer the user\'s latest message: "{flat(self.view.user_messages[-1].text, 200)}"')
        for error in state.open_errors[-2:]:  # "state.go is not checked yet" hid four conflicts left
            left_in, edited = conflicts(error)
            if left_in:
                named = ", ".join(f"`{path}`" for path in left_in)
                left.append(
                    f"resolve the merge conflicts left in {named} ({len(left_in)} of {len(left_in) + len(edited)})"
                )
        if state.unverified and not state.finished:  # without it, unfinished work reads "(no open tasks)"
            names = ", ".join(f"`{self.rel(p.path)}`" for p in state.unverified[:4])
            check = f" (`{flat(state.check, 120)}`)" if state.check else ""
            left.append(f"the changes to {names} are not checked yet{check}")
        if state.intent:
            left.append(f'it was about to: "{state.intent}"')
        return left

    # -- 8 -------------------------------------------------------------------

    def current_work(self) -> str:
        view, state = self.view, self.state
        lines = [_PLAN_MODE_WORK] if view.plan_mode else []
        if state.finished:
            lines.append(f"Done: {state.finished}.")
        elif state.in_progress:
            lines.append(
                "In progress: " + "; ".join(item_line(i, view, status=False) for i in state.in_progress[:3]) + "."
            )
        elif state.request is not None:
            answered = any(r.seq > state.request.seq for r in view.reports)
            if answered and state.follow_up is not None:
                lines.append(
                    f'It answered the current request ("{flat(state.request.text, 200)}"); the user then wrote: '
                    f'"{flat(state.follow_up.text, 200)}"'
                )
            elif answered:
                lines.append(f'It answered the current request: "{flat(state.request.text, 200)}"')
            else:
                lines.append(f'Working on the current request: "{flat(state.request.text, 200)}"')
        if state.current_files:
            names = ", ".join(f"`{self.rel(p.path)}`" for p in state.current_files)
            lines.append(f"Changed for it so far: {names}.")
        last_edit = last_edit_seq(view)
        for statement in [r for r in state.results if r.seq > last_edit and not r.thought][-2:]:
            if not self._quoted_later(statement.text):  # shown in its closing answer below
                lines.append(f"- {statement.text}")
        if self._closing:
            # Its closing answer after its last call is its own account of the work: shown as it wrote it.
            lines.append("Its last answer, in its own words:")
            lines.extend(f"  {line}" for line in excerpt(self._closing, _REPORT_SHOWN_CHARS).splitlines())
            return "\n".join(lines)
        words = self._words_shown
        if len(words) > 1:
            lines.append(f'Before that it wrote: "{flat(excerpt(words[0], _WORDS_CHARS), _WORDS_CHARS + 6)}"')
        if words:
            lines.append(f'Its last words: "{flat(excerpt(words[-1], _WORDS_CHARS), _WORDS_CHARS + 6)}"')
        return "\n".join(lines) or "(nothing recorded)"

    def _quoted_later(self, text: str) -> bool:
        """Whether "Current work" or "Next step" quotes ``text`` (its closing answer, its words before
        the cut): said once there, where it matters most, and not again."""
        said = _plain(text).removesuffix(" [...]")
        return bool(said) and said in self._later

    @functools.cached_property
    def _later(self) -> str:
        """What "Current work" and "Next step" quote (``_quoted_later``), as ``_plain`` text."""
        return _plain(" ".join([self._closing, *self._stopped.lines]))

    @functools.cached_property
    def _words_shown(self) -> list[str]:
        """The assistant's last words "Current work" quotes: none when the next step says where it
        stopped; once the work is done, not the words that led into a call (stale by then)."""
        words = [] if self._stopped.lines else self._last_words()
        if self.state.finished:
            words = [w for w in words if not w.rstrip().endswith(":")]
        return words

    @functools.cached_property
    def _closing(self) -> str:
        """The assistant's closing answer, shown whole in "Current work": its last words when they came
        after its last call and say enough (an answer to the turn, not "Done."); else ""."""
        view, words = self.view, self._words_shown
        if words and view.last_statement_seq > view.last_action_seq and len(words[-1].split()) >= _REPORT_WORDS:
            return view.last_statement
        return ""

    def _last_words(self) -> list[str]:
        """The assistant's words "Current work" quotes: its last, with the ones before when the last only
        narrates or leads into a call ("Let me look:")."""
        # "No response requested." is what the client has the assistant say when a turn needs no answer.
        words = [w for w in self.view.recent_words if w.strip() and w.strip() != "No response requested."]
        if not words:
            return []
        last = words[-1]
        if len(words) > 1 and (is_narration(last) or last.rstrip().endswith(":")):
            return words[-2:]
        return [last]

    # -- 9 -------------------------------------------------------------------

    def next_step(self) -> str:
        view, state = self.view, self.state
        if state.finished and not (state.unanswered or view.plan_mode):
            return (
                f"Nothing is open: {state.finished}. Wait for the user's next request; do not redo or re-check "
                "finished work."
            )
        lines = [_PLAN_MODE_STEP] if view.plan_mode else []
        if state.offer:  # the one concrete action on the table, so it leads
            lines.append(f'What it last offered to do, not taken up yet: "{state.offer}"')
        latest = view.user_messages[-1] if view.user_messages else None
        if state.unanswered and latest is not None:
            lines.append(f'Answer the user\'s latest message: "{flat(latest.text, 300)}"')
        for item in state.in_progress[:2]:
            lines.append(f"Finish: {item_line(item, view, status=False)}.")
        finish = []  # a merge left to commit comes after the fixes it waits for
        for error in state.open_errors[-2:]:
            where = f"`{flat(error.key, 100)}`" if error.tool == "Bash" else self.rel(error.key)
            if done := all_conflicts_edited(error):
                finish.append(f"Then finish {where}: its conflicts ({done}) were edited since; commit it.")
            else:
                lines.append(f"Fix what {where} reported: {error.line}")
        lines += finish
        if (
            state.intent
            and state.intent != state.offer
            and not (state.unanswered or state.in_progress or state.open_errors)
        ):
            lines.append(f'Go on with what it was about to do: "{state.intent}"')
        for task in state.arrived[:2]:
            where = f" ({task.output_file})" if task.output_file else ""
            lines.append(f"Read the output of background task {task.id}{where}, which has just {task.status}.")
        waiting = [i for i in state.open_items if i.status != "in_progress"]
        if waiting:
            lines.append(f"Then {item_line(waiting[0], view)}.")
        for task in state.running[:2]:
            lines.append(f"Collect background task {task.id} when it finishes (it is still running).")
        if view.plan and view.plan_seq > state.since and not state.finished:
            cue, *steps = view.plan.splitlines()
            lines.append(f'Its plan ("{cue}"):')
            lines.extend(
                f"  {step}" + (" (its file was edited since)" if edited_since_plan(view, step) else "")
                for step in steps
            )
        lines.extend(self._stopped.lines)
        # The request itself is in "Primary request" and "Current work": said a third time it buries the step.
        if state.request is not None and not state.unanswered and not lines:
            lines.append(f'Carry on with the current request: "{flat(state.request.text, 300)}"')
        files = [f"`{f}`" for f in self.next_files()]
        if files:
            lines.append("Files it concerns: " + ", ".join(files) + ".")
        if state.check and not view.plan_mode:  # a plan changes nothing to check
            lines.append(f"Check the work with: `{flat(state.check, 200)}`")
        return "\n".join(lines) or "(no next step recorded)"

    @functools.cached_property
    def _stopped(self) -> Stopped:
        here = f"{self.cwd.rstrip('/')}/" if self.cwd else ""  # paths in a call's description shown relative
        return stopped_at(self.view, self.state, self.rel, lambda text: text.replace(here, "") if here else text)

    def _next_paths(self) -> list[LedgerPath]:
        """The files the current work changed and has not checked yet, else the ones it changed and did
        not commit, else the ones it changed, else the ones it read, since the latest request; else the
        ones it read last (an investigation the user steered with a new message)."""
        state = self.state
        worked_on = state.unverified or state.current_files or state.changed_since or state.read_since
        return worked_on[:4] if worked_on else state.read_files[:_LAST_READ_NAMED]

    def next_files(self) -> list[str]:
        """The files the next step names (none when the work is done): files an open merge or rebase
        left in conflict and not edited since (those alone), else ``_next_paths``."""
        if self.state.finished and not self.state.unanswered:
            return []
        conflicted = list(dict.fromkeys(path for error in self.state.open_errors for path in conflicts(error)[0]))
        return conflicted or [self.rel(p.path) for p in self._next_paths()]
