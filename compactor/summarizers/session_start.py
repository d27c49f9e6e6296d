"""What the Claude Code plugin adds to Claude Code's own summary after a compaction.

Claude Code writes its summary; the SessionStart hook may add up to 10,000
characters. A colleague reading that summary would add only what it lacks and
what is right, led by what helps carry on: where the work stands (the current
request if the summary does not quote it, the tracker's or task list's state,
whether the work is done), the files needed next with their stored reads, the
check to run, and the messages the user typed that the summary drops. The
rest (touched paths and commands the summary never names) comes after the
recovery note, shorter. Everything is judged as the briefing judges it
(``compactor.summarizers.briefing.work_state``): a rejected call is not an
instruction, an error a later run answered is not open, a finished background
task is not waiting, a removed file is not needed next. With Claude Code's
summary at hand (the PostCompact hook ran first), facts it states are not
repeated; without it, the text stays short.
"""

from __future__ import annotations

from dataclasses import dataclass

from ccr import marker
from compactor.core.ledger import SessionLedger
from compactor.summarizers.facts import relative_path
from compactor.summarizers.statements import flat
from compactor.summarizers.work_state import item_line, work_state

__all__ = ["SessionStartText", "session_start_text"]

_MESSAGE_CHARS = 1_500
_LEAD_MESSAGE_CHARS = 300
_REQUEST_CHARS = 600
_FILES_NEXT = 5
_READS_SHOWN = 6
_COMMAND_CHARS = 300
_PROBE = 60
"""A fact counts as stated by the summary when its first this many characters are in it."""


@dataclass(frozen=True)
class SessionStartText:
    """The plugin's text in two parts: ``lead`` goes before the recovery note, ``rest`` after it."""

    lead: str
    rest: str

    def __str__(self) -> str:
        return "\n\n".join(p for p in (self.lead, self.rest) if p)

    def __len__(self) -> int:
        return len(str(self))


def session_start_text(
    ledger: SessionLedger,
    *,
    budget: int,
    cwd: str | None,
    listing: str | None,
    summary: str | None = None,
    kept_paths: frozenset[str] = frozenset(),
    read_handles: dict[str, str] | None = None,
) -> SessionStartText | None:
    """The plugin's text for ``ledger`` in at most ``budget`` characters; None when it has nothing to add.

    ``summary`` is Claude Code's own summary when known; ``listing`` the
    marker of the stored full listing; ``read_handles`` the stored read of each
    file the session read (by path); ``kept_paths`` files read in the messages
    Claude Code kept verbatim.
    """
    if ledger.is_empty or budget <= 0:
        return None
    raw = summary or ""
    known = " ".join(raw.split())
    reads = read_handles or {}

    def new(fact: str, *, whole: bool = False) -> bool:
        folded = " ".join(fact.split())
        return not known or (folded if whole else folded[:_PROBE]) not in known

    def rel(path: str) -> str:
        return relative_path(path, cwd)

    state = work_state(ledger)
    lead: list[str] = []
    where: list[str] = []
    if state.request is not None and new(state.request.text):
        where.append(f'- The current request, verbatim: "{flat(state.request.text, _REQUEST_CHARS)}"')
    if state.finished:
        where.append(f"- Done: {state.finished}. Nothing is open until the user asks for more.")
    for item in state.open_items[:8]:
        where.append(f"- Open: {item_line(item, ledger)}")
    for error in state.open_errors[-2:]:
        source = f"`{flat(error.key, 80)}`" if error.tool == "Bash" else rel(error.key)
        where.append(f"- Still failing: {source}: {error.line}")
    if where:
        lead += ["Where the work stands (compactor's ledger of the whole session):", *where]
    files = [p for p in state.current_files if not p.deleted][:_FILES_NEXT]
    if files and not state.finished:
        lead.append("\nFiles the open work concerns" + (" (each with its stored last read):" if reads else ":"))
        for entry in files:
            stored = f" (stored read: {marker(reads[entry.path])})" if entry.path in reads else ""
            lead.append(f"- {rel(entry.path)}{stored}")  # the assistant's old narration would read as orders
    if state.check and not state.finished:
        lead.append(f"\nCheck the work with: `{flat(state.check, 200)}`")
    # Messages the summary never mentions lead, short; the ones it paraphrases follow the note, whole.
    unquoted = [m for m in ledger.user_messages if not raw or m.text.strip() not in raw]
    dropped = [m for m in unquoted if new(m.text)]
    if dropped:
        lead.append("\nMessages the user typed that the summary leaves out (oldest first):")
        lead += [f"- {_quoted(m.text, m.handle, _LEAD_MESSAGE_CHARS)}" for m in dropped]
    instructions = [i for i in ledger.instructions if not i.startswith("The user turned down") and new(i)]
    if instructions:
        lead.append("\nThe user's standing instructions, verbatim:")
        lead += [f'- "{i}"' for i in instructions[-8:]]

    pointer = (
        f"Every fact of the session (all paths, commands, errors and messages) is in {listing}." if listing else ""
    )
    rest: list[str] = []
    named = {p.path for p in files}
    recent_reads = [
        p
        for p in sorted(ledger.paths.values(), key=lambda p: -p.seq)
        if p.path not in named and p.path not in kept_paths and p.path in reads and not p.deleted
    ][:_READS_SHOWN]
    if recent_reads:
        rest.append("Other files read recently, with their stored reads:")
        rest += [f"- {rel(p.path)} ({marker(reads[p.path])})" for p in recent_reads]
    shown = named | {p.path for p in recent_reads}
    paths = [
        rel(p.path)
        for p in sorted(ledger.paths.values(), key=lambda p: -p.seq)
        if p.path not in shown and new(p.path) and new(rel(p.path))
    ]
    paraphrased = [m for m in unquoted if m not in dropped]
    if paraphrased:
        rest.append("\nThe user's messages as typed, where the summary paraphrases them (oldest first):")
        rest += [f"- {_quoted(m.text, m.handle, _MESSAGE_CHARS)}" for m in paraphrased]
    if paths:
        rest.append("\nOther paths the session touched, newest first: " + ", ".join(paths))
    commands = [c for c in sorted(ledger.commands.values(), key=lambda c: -c.seq) if new(c.first, whole=True)]
    if commands:
        # A record of what ran, not a to-do list: one line, newest first, cut by whole commands.
        rest.append(
            "\nFor reference, commands the session ran (already run; first lines, newest first): "
            + ", ".join(f"`{flat(c.first, _COMMAND_CHARS)}`" for c in commands)
        )
    return _fit("\n".join(lead).strip(), pointer, "\n".join(rest).strip(), budget)


def _quoted(text: str, handle: str | None, limit: int) -> str:
    """A typed message whole, or cut at ``limit`` with where it is stored."""
    said = text.strip()
    if len(said) <= limit:
        return f'"{said}"'
    where = f" (whole: {marker(handle)})" if handle else " (whole in the stored conversation)"
    return f'"{said[:limit].rstrip()} [...]"{where}'


def _fit(lead: str, pointer: str, rest: str, budget: int) -> SessionStartText | None:
    """``lead`` (which always ends with ``pointer``, the stored listing's line) and ``rest`` within
    ``budget`` characters: the rest is cut first, then the lead, by whole lines, never the pointer."""
    if not lead and not rest:
        return None
    room = budget - (len(pointer) + 2 if pointer else 0)
    if room <= 0:
        return SessionStartText(pointer, "") if pointer and len(pointer) <= budget else None
    lead = _lines_within(lead, room) if lead else ""
    lead = "\n\n".join(p for p in (lead, pointer) if p)
    left = budget - len(lead) - 2
    return SessionStartText(lead, _lines_within(rest, left) if left > 0 else "")


def _lines_within(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: whole lines, and a last line of commands cut after a
    whole command."""
    if len(text) <= limit:
        return text
    out, used = [], 0
    for line in text.splitlines():
        if used + len(line) + 1 > limit:
            room = limit - used - 1
            cut = line.rfind("`, `", 0, room - 20)
            if cut > 0 and "`, `" in line:  # a list of commands: keep the ones that fit, say how many not
                left = line[cut + 3 :].count("`, `") + 1
                out.append(line[: cut + 1] + f" (and {left} more)")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out).strip()
