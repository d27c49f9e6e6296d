"""Fact survival: how much of a head's hard facts a summary still carries.

Three kinds of fact are counted in the head that a compaction drops:

- **paths**: every distinct ``file_path``/``notebook_path`` a tool call
  named (reads, writes, edits);
- **commands**: the first line of every distinct shell command (the Bash
  tool's ``command``, first non-blank line, stripped);
- **user messages**: every distinct message the user typed, as
  ``compactor.summarizers.prompts.typed`` reads it (requests, slash commands
  with their arguments, ``!`` shell input; never tool results, reminders,
  notifications, command output or meta messages).

A fact is kept **verbatim** when the summary text contains it, comparing
with every run of whitespace made one space. A path also counts in its
form relative to ``cwd``; a path or command must stand on its own there (not
inside a longer word or path). A fact is kept **by handle** when it is not
verbatim but the summary cites (``<<ccr:...>>``) one of the ``stored`` spans
and that span's text contains it, compared the same way. The caller passes
only the spans it stored for this compaction, and never the whole head: the
whole head holds every fact, so citing it would prove nothing.

Each share is kept / total, or None when the head has no fact of that kind.
Pure: no store, no files. ``compactor.engine.pipeline`` puts the result in every
``CompactionReport`` as ``survival``; ``compactor tune`` reads it from there.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ccr import find_handles
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.summarizers.facts import command_first_line, relative_path, touched_path
from compactor.summarizers.prompts import collapse, typed

__all__ = [
    "COMMAND_PREFIX_CHARS",
    "Continuation",
    "FactCount",
    "Retention",
    "Survival",
    "SurvivalCounts",
    "USER_PREFIX_CHARS",
    "context_retention",
    "continuation",
    "fact_survival",
    "head_facts",
    "missing_facts",
    "model_text",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FactCount(_Model):
    """How many facts of one kind the head had, and how many the summary kept."""

    total: int = 0
    kept: int = 0
    """Verbatim or by handle."""
    verbatim: int = 0


class SurvivalCounts(_Model):
    paths: FactCount = Field(default_factory=FactCount)
    commands: FactCount = Field(default_factory=FactCount)
    user_messages: FactCount = Field(default_factory=FactCount)


class Survival(_Model):
    """Shares of the head's facts the summary kept (verbatim or by handle); None: nothing to keep."""

    paths: float | None = None
    commands: float | None = None
    user_messages: float | None = None
    counts: SurvivalCounts = Field(default_factory=SurvivalCounts)


def head_facts(head: Sequence[Message]) -> dict[str, list[str]]:
    """The distinct facts of each kind in ``head``, in order of first appearance."""
    facts: dict[str, list[str]] = {"paths": [], "commands": [], "user_messages": []}
    seen: dict[str, set[str]] = {kind: set() for kind in facts}

    def add(kind: str, value: str) -> None:
        if value and value not in seen[kind]:
            seen[kind].add(value)
            facts[kind].append(value)

    for message in head:
        said = typed(message)
        if said is not None:
            add("user_messages", said.text)
        if message.role != "assistant":
            continue
        for use in message.tool_uses():
            path = touched_path(use)
            if path:
                add("paths", path)
            command = command_first_line(use)
            if command:
                add("commands", command)
    return facts


def _stands_alone(needle: str, haystack: str) -> bool:
    """``needle`` occurs in ``haystack`` not glued to a longer word or path."""
    if not needle:
        return False
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        before = haystack[start - 1] if start else " "
        after = haystack[end] if end < len(haystack) else " "
        after_next = haystack[end + 1] if end + 1 < len(haystack) else " "
        glued_before = _is_word(needle[0]) and (_is_word(before) or before in "/.~-")
        glued_after = _is_word(needle[-1]) and (
            _is_word(after) or after in "/-" or (after == "." and _is_word(after_next))
        )
        if not glued_before and not glued_after:
            return True
        start = haystack.find(needle, start + 1)
    return False


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _measure(
    head: Sequence[Message], summary_text: str, cwd: str | None, stored: Mapping[str, bytes | str] | None
) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, list[str]]]:
    """(facts, kept verbatim, kept by handle) per kind."""
    facts = head_facts(head)
    text = collapse(summary_text)
    cited = [h for h in find_handles(summary_text) if stored and h in stored]
    joined: dict[str, str] = {}

    def recovered(flat: bool) -> str:
        """The cited spans' text (``flat``: whitespace collapsed); made only when needed."""
        key = "flat" if flat else "raw"
        if key not in joined:
            if "raw" not in joined:
                joined["raw"] = "\n".join(
                    (d.decode("utf-8", errors="replace") if isinstance(d, bytes) else d)
                    for d in (stored[h] for h in cited)  # type: ignore[index]
                )
            if flat:
                joined["flat"] = collapse(joined["raw"])
        return joined[key]

    def by_handle_found(kind: str, fact: str) -> bool:
        # A fact found in the raw text is found in the collapsed one too; collapsing the
        # (possibly large) cited spans is needed only for a fact with whitespace in it.
        return found(kind, fact, recovered(False)) or (
            any(c.isspace() for c in fact) and found(kind, fact, recovered(True))
        )

    def forms(kind: str, fact: str) -> list[str]:
        flat = collapse(fact)
        if kind == "paths" and cwd:
            short = relative_path(fact, cwd)
            return [flat] if short == fact else [flat, collapse(short)]
        return [flat]

    def found(kind: str, fact: str, where: str) -> bool:
        if not where:
            return False
        if kind == "user_messages":
            return collapse(fact) in where
        return any(_stands_alone(form, where) for form in forms(kind, fact))

    verbatim: dict[str, list[str]] = {}
    by_handle: dict[str, list[str]] = {}
    for kind, values in facts.items():
        verbatim[kind] = [v for v in values if found(kind, v, text)]
        kept = set(verbatim[kind])
        by_handle[kind] = [v for v in values if v not in kept and cited and by_handle_found(kind, v)]
    return facts, verbatim, by_handle


def fact_survival(
    head: Sequence[Message],
    summary_text: str,
    *,
    cwd: str | None = None,
    stored: Mapping[str, bytes | str] | None = None,
) -> Survival:
    """The share of ``head``'s paths, command first lines and typed user messages that
    ``summary_text`` keeps verbatim or by the handle of one of the ``stored`` spans.

    ``stored`` maps handle -> content of the spans stored with this summary,
    without the whole head (see the module docstring for the exact rules).
    """
    facts, verbatim, by_handle = _measure(head, summary_text, cwd, stored)
    counts: dict[str, FactCount] = {}
    shares: dict[str, float | None] = {}
    for kind, values in facts.items():
        kept = len(verbatim[kind]) + len(by_handle[kind])
        counts[kind] = FactCount(total=len(values), kept=kept, verbatim=len(verbatim[kind]))
        shares[kind] = kept / len(values) if values else None
    return Survival(
        paths=shares["paths"],
        commands=shares["commands"],
        user_messages=shares["user_messages"],
        counts=SurvivalCounts(**counts),
    )


def missing_facts(
    head: Sequence[Message],
    summary_text: str,
    *,
    cwd: str | None = None,
    stored: Mapping[str, bytes | str] | None = None,
) -> dict[str, list[str]]:
    """The facts of each kind that ``fact_survival`` counts as lost (for diagnosis)."""
    facts, verbatim, by_handle = _measure(head, summary_text, cwd, stored)
    return {
        kind: [v for v in values if v not in set(verbatim[kind]) | set(by_handle[kind])]
        for kind, values in facts.items()
    }


COMMAND_PREFIX_CHARS = 60
"""A command counts as kept when this many characters of its first line stand in the context."""
USER_PREFIX_CHARS = 80
"""A typed message counts as kept when this many of its first characters stand in the context."""


class Retention(_Model):
    """Of the whole session's facts so far, how many the compacted context (summary, tail,
    attachments) holds where the model reads them: verbatim, not only inside a stored span."""

    paths: FactCount = Field(default_factory=FactCount)
    commands: FactCount = Field(default_factory=FactCount)
    user_messages: FactCount = Field(default_factory=FactCount)


class Continuation(_Model):
    """Whether the summary says where the work stands: the latest typed request, the open items."""

    latest_request: bool | None = None
    """None when the session has no typed request."""
    open_items: FactCount = Field(default_factory=FactCount)


def model_text(messages: Sequence[Message]) -> str:
    """What the model reads of ``messages``: text, tool results, and each tool call's input as
    JSON and as its plain values (a command or path as written, not JSON-escaped)."""
    parts: list[str] = []
    for message in messages:
        for block in message.blocks():
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolResultBlock):
                parts.append(block.text())
            elif isinstance(block, ToolUseBlock):
                parts.append(json.dumps(block.input, ensure_ascii=False))
                parts.extend(v for v in block.input.values() if isinstance(v, str))
    return "\n".join(parts)


def context_retention(
    paths: Sequence[str], commands: Sequence[str], user_messages: Sequence[str], context: str, *, cwd: str | None
) -> Retention:
    """How many of the session's ``paths``, command first lines and typed ``user_messages`` stand in
    ``context`` (what the model reads of a context: ``model_text``) verbatim: a path whole or relative to ``cwd``, a command's first
    ``COMMAND_PREFIX_CHARS`` characters, a message's first ``USER_PREFIX_CHARS`` (stripped)."""

    def count(values: Sequence[str], found: Callable[[str], bool]) -> FactCount:
        kept = sum(1 for v in values if found(v))
        return FactCount(total=len(values), kept=kept, verbatim=kept)

    return Retention(
        paths=count(paths, lambda p: p in context or (relative_path(p, cwd) != p and relative_path(p, cwd) in context)),
        commands=count(commands, lambda c: c[:COMMAND_PREFIX_CHARS] in context),
        user_messages=count(user_messages, lambda u: u.strip()[:USER_PREFIX_CHARS] in context),
    )


def continuation(latest_request: str | None, open_items: Sequence[str], summary: str) -> Continuation:
    """Whether ``summary`` names the latest request (its first 60 characters, whitespace folded)
    and each open item (the same)."""
    folded = collapse(summary)

    def named(text: str) -> bool:
        return collapse(text)[:60] in folded

    kept = sum(1 for item in open_items if named(item))
    return Continuation(
        latest_request=None if not latest_request else named(latest_request),
        open_items=FactCount(total=len(open_items), kept=kept, verbatim=kept),
    )
