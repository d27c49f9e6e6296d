"""The briefing's "Errors and fixes": the errors that mattered, one entry per problem, each with the
cause and the fix in the assistant's words and how it was resolved; without any, the causes an
investigation found. A failure that was meant (a test written before its code) is not an error."""

from __future__ import annotations

import re
from collections.abc import Callable

from compactor.core.ledger import LedgerError, LedgerStatement, SessionLedger
from compactor.summarizers._errors import error_lines
from compactor.summarizers.briefing_text import CONFLICT, HEADING, HEDGE, LOOKING, PLAN, explains, overlap
from compactor.summarizers.facts import OUTPUT_PLUMBING
from compactor.summarizers.statements import flat
from compactor.summarizers.work_state import WorkState, is_probe

__all__ = ["all_conflicts_edited", "conflicts", "errors_section"]

_ERRORS_SHOWN = 6
_RESOLVED_SHOWN = 5
"""Resolved errors shown at most: the latest, with their causes and fixes; the rest are in the index."""
_RESOLVED_COMMAND_CHARS = 80
"""A resolved error's command is named, not shown whole: what failed and how it was fixed matter now."""
_CAUSES_SHOWN = 4
_REPORTED_SHOWN = 3
_TERMINAL = re.compile(r"\s*(?:fatal|error|panic|traceback|fail(?:ed|ure)?)\b", re.I)
"""An error line as a terminal prints it, not a line of pasted code ("except Exception:") or notes."""
_EXPECTED = re.compile(r"\b(?:as expected|expected to fail|fails? as it should|red phase)\b", re.I)
"""An explanation saying the failure was meant (a test written before its code): not an error to carry."""


_UNDEFINED = re.compile(r"\b(?:undefined|not defined|cannot find (?:symbol|name)|has no attribute)[: ]+[`'\"]?([\w.]+)")
"""A compiler's word for a name that does not exist (yet)."""


def _one_per_problem(errors: list[LedgerError]) -> list[LedgerError]:
    """``errors`` with one entry per problem: errors the assistant explained or fixed in the same
    words (one failing test seen through three commands) are one, shown as the latest of them."""
    kept: list[LedgerError] = []
    for error in reversed(errors):
        words = {w for w in (error.explanation, error.fix) if len(w.split()) >= 5}
        if any(words & {k.explanation, k.fix} for k in kept):
            continue
        kept.append(error)
    return kept[::-1]


def errors_section(
    view: SessionLedger, state: WorkState, chosen: list[LedgerStatement], rel: Callable[[str], str]
) -> tuple[str, set[str]]:
    """The section's text and the explanations it shows (``chosen``: the briefing's statements, best
    first; ``rel`` shortens a path)."""
    worth = [
        e
        for e in view.errors
        if e in state.open_errors
        or (
            not is_probe(e)
            and (e.resolved_by not in ("moved_on", "commit") or _fixed_then_left(e))
            and (explains(e.explanation, e) or (e.resolved_by == "rerun" and bool(e.edited_since)))
        )
    ]
    worth = [e for e in worth if e in state.open_errors or not _meant(e, view)]
    worth = _one_per_problem(worth)
    open_now = [e for e in worth if e in state.open_errors]
    rest = [e for e in worth if e not in open_now]
    resolved = rest[-min(_RESOLVED_SHOWN, _ERRORS_SHOWN - len(open_now[-3:])) :]
    shown = sorted([*resolved, *open_now[-3:]], key=lambda e: e.seq)
    lines, used = [], set()
    for error in shown:
        command = OUTPUT_PLUMBING.sub("", error.key).strip() or error.key
        command = flat(command, 100 if error in open_now else _RESOLVED_COMMAND_CHARS)
        where = f"`{command}`" if error.tool == "Bash" else f"{error.tool} {rel(error.key)}"
        line = f"- {where}: {error.line}"
        if error.detail and error not in open_now and len(error.line.split()) <= 5:
            line += f" ({error.detail[0]})"  # "[lint] ERROR task failed" says nothing of what failed
        lines.append(line)
        # Words about something else, or about what it will do next, are not its explanation.
        if (
            explains(error.explanation, error)
            and not PLAN.match(error.explanation)
            and not HEDGE.search(error.explanation)
        ):
            lines.append(f"  Cause: {error.explanation}")
            used.add(error.explanation)
        fix = error.fix.strip().rstrip(":.")
        if (
            error.resolved
            and len(fix.split()) >= 5
            and not LOOKING.search(fix.split(".")[0])  # "Let me check the file" looks, it does not fix
            and not overlap(fix, error.explanation)
        ):
            lines.append(f"  Fix, in its words: {fix}.")
        if _fixed_then_left(error):
            named = ", ".join(f"`{p.rsplit('/', 1)[-1]}`" for p in error.edited_since[:3])
            lines.append(f"  Resolved, it seems: it edited {named} after it, and the user moved on.")
        elif error.resolved:
            lines.append(f"  Resolved: {error.resolved}.")
        elif error in open_now:
            still, edited = conflicts(error)
            named = ", ".join(f"`{path}`" for path in edited)
            if edited and not still:
                lines.append(f"  Its conflicts ({named}) were edited since; not committed yet.")
            else:
                left = [d for d in error.detail if not ((m := CONFLICT.search(d)) and m.group(1) in edited)]
                lines.append("  Still open" + (":" if left else "."))
                lines.extend(f"  {detail}" for detail in left)
                if edited:
                    lines.append(f"  Edited since, their conflicts resolved it seems: {named}.")
    if not lines:
        # No tool error to fix (an investigation): the causes the assistant stated are its findings.
        # (Without answers of turns, "Problem solving" shows the causes itself.)
        answered = max((r.seq for r in view.reports), default=-1)
        causes = [
            c
            for c in chosen
            if c.kind == "cause"
            and c.seq <= answered
            and not c.thought
            and len(c.text.split()) >= 8
            and not (PLAN.match(c.text) or HEDGE.search(c.text) or c.text.rstrip().endswith(("?", "!")))
            and not HEADING.match(c.text)
        ][:_CAUSES_SHOWN]
        if causes:
            lines.append("Causes it found, oldest first (no tool error is open):")
            lines.extend(f"- {c.text}" for c in sorted(causes, key=lambda c: c.seq))
            used.update(c.text for c in causes)
    # What the user pasted from their own terminal ("fatal: bad tree object ...") is the session's too.
    pasted = (error_lines(m.text, False)[0] for m in view.user_messages)
    met = [said for said in pasted if said is not None and _TERMINAL.match(said)][-_REPORTED_SHOWN:]
    if met:
        lines.append("Errors the user met, from their messages:")
        lines.extend(f"- `{flat(said, 160)}`" for said in met)
    return "\n".join(lines) or "No error is open.", used


def _fixed_then_left(error: LedgerError) -> bool:
    """Whether the assistant edited files after ``error`` and the user then moved on without it being
    run again: fixed, it seems (a lint's findings edited away before the next request)."""
    return error.resolved_by == "moved_on" and bool(error.edited_since)


def _meant(error: LedgerError, view: SessionLedger) -> bool:
    """Whether a resolved failure was meant: the assistant said so ("fails as expected"), or the
    test named code not written yet (``undefined: SliceFromLine``) that a later edit defined."""
    if _EXPECTED.search(error.explanation):
        return True
    missing = {m.group(1) for m in _UNDEFINED.finditer(" ".join([error.line, *error.detail]))}
    defined = {n for p in view.paths.values() if p.edit_seq > error.seq for n in p.symbols}
    return bool(missing) and error.resolved is not None and missing <= defined


def conflicts(error: LedgerError) -> tuple[list[str], list[str]]:
    """The files an open merge or rebase left in conflict: those not edited since, and those the
    assistant edited after it (their conflicts resolved, it seems, though the error reads open)."""
    left: list[str] = []
    edited: list[str] = []
    for line in error.detail:
        found = CONFLICT.search(line)
        if found is None:
            continue
        path = found.group(1)
        done = any(p == path or p.endswith("/" + path) for p in error.edited_since)
        into = edited if done else left
        if path not in into:
            into.append(path)
    return left, edited


def all_conflicts_edited(error: LedgerError) -> str:
    """The files of a merge's conflicts, named, when the assistant edited every one of them since (the
    merge is then left to commit, not to fix); else ""."""
    left, edited = conflicts(error)
    return ", ".join(f"`{path}`" for path in edited) if edited and not left else ""
