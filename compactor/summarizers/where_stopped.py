"""Where the work stopped, for the briefing's next step: the lines that say what is left to do
when the cut fell in the middle of the assistant's calls.

A model taking over reads "Edit resume.go -> ok" after "I need to fix the junk code" as the fix
done; it is not known to be. So the next step quotes what the assistant last thought or wrote it
would do and shows the edit it made after that, not the call's outcome, and leaves the judgement
to the reader, with which of the things it named that edit touched and which not yet.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from compactor.core.ledger import LedgerPath, SessionLedger
from compactor.summarizers.briefing_text import excerpt
from compactor.summarizers.facts import EDIT_ACTIONS
from compactor.summarizers.statements import flat
from compactor.summarizers.work_state import WorkState

__all__ = ["Stopped", "stopped_at"]

_WORDS_CHARS = 320
_OUTCOME = re.compile(r" -> ok$")
_SPAN = re.compile(r"`([^`\n]{1,120})`")
_LEFT_SHOWN = 4


class Stopped:
    """What ``stopped_at`` found: the lines for the next step and the file whose last edit they show."""

    def __init__(self, lines: list[str], shown_edit: str | None = None) -> None:
        self.lines = lines
        self.shown_edit = shown_edit


def _is_prose(text: str) -> bool:
    return bool(text) and sum(text.count(c) for c in "{}();=<>") < 0.03 * len(text)  # not code it read


def stopped_at(view: SessionLedger, state: WorkState, rel: Callable[[str], str], here: Callable[[str], str]) -> Stopped:
    """The next step's lines when the work stopped between the assistant's words and its calls: what
    it last thought or wrote it would do, then its last edit after that (with which of the things it
    named that edit touched) or the calls it made, without their outcome. Nothing when the work is
    done or the assistant's words came after its last call (an answer, not an interruption). ``rel``
    shortens a path, ``here`` the paths in a call's description."""
    if state.finished or view.last_action_seq <= view.last_statement_seq or not view.last_actions:
        return Stopped([])
    thought, words = view.last_thought, flat(excerpt(view.last_statement, _WORDS_CHARS), _WORDS_CHARS + 6)
    if (
        _is_prose(thought)
        and view.last_thought_seq >= view.last_statement_seq - 1
        and view.last_thought_seq > state.since
    ):
        said = f'Its last thought before the cut: "{thought}"'
        if view.last_statement_seq > view.last_thought_seq and words:
            said += f' Then it wrote: "{words}"'
        words_seq = max(view.last_thought_seq, view.last_statement_seq)
    elif words and view.last_statement_seq > state.since:
        said = f'Its last words before the cut: "{words}"'
        words_seq = view.last_statement_seq
    else:
        return Stopped([f"Pick up where it stopped; its last call: {here(_OUTCOME.sub('', view.last_actions[-1]))}."])
    since = view.calls_since_words
    calls = [here(_OUTCOME.sub("", c)) for c in view.last_actions[-since:]] if since else []
    edited = _edited_after(view, words_seq)
    if edited is not None and edited.last_edit:
        body = "\n".join(f"  {line}" for line in edited.last_edit.splitlines())
        lines = [said, f"After that it edited `{rel(edited.path)}`:\n  ```\n{body}\n  ```"]
        edits = [c for c in calls if c.split(" ", 1)[0] in EDIT_ACTIONS]
        if len(edits) == 1 and len(calls) == since:  # that edit alone came after its words
            lines += _covered(f"{thought} {words}", edited.last_edit)
        return Stopped(lines, shown_edit=edited.path)
    if not calls:
        return Stopped([said])
    more = f" (the last {len(calls)} of {since})" if since > len(calls) else ""
    # Made already: a reader took "Then it called: Edit x" for a step still to take, and redid it.
    return Stopped([said, f"Its last calls{more}, made already: {'; '.join(calls)}."])


def _covered(said: str, edit: str) -> list[str]:
    """Which of the code spans the assistant named before its edit the edit touched, and which not
    yet: what of the step is left ("`# Type usage percentages`" when it named two comments and
    removed one). Nothing when it named fewer than two or the edit touched all or none of them."""
    named = list(dict.fromkeys(span.strip() for span in _SPAN.findall(said) if len(span.strip()) >= 3))
    done = [n for n in named if n in edit]
    left = [n for n in named if n not in edit]
    if len(named) < 2 or not done or not left:
        return []
    quoted = ", ".join(f"`{n}`" for n in left[:_LEFT_SHOWN])
    return [
        f"Of what it named, that edit touched {', '.join(f'`{n}`' for n in done[:_LEFT_SHOWN])}; not yet: {quoted}."
    ]


def _edited_after(view: SessionLedger, seq: int) -> LedgerPath | None:
    """The file last edited after ``seq`` (or in the same message), if any."""
    edited = [p for p in view.paths.values() if p.edit_seq >= seq and not p.deleted]  # one message may hold both
    return max(edited, key=lambda p: p.edit_seq, default=None)
