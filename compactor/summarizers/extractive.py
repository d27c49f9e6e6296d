"""The extractive summarizer: deterministic, offline, cites CCR handles.

It renders the session ledger (``compactor.core.ledger``: every touched path and
what was done to it, every distinct command and its outcome, errors with
what resolved them, the user's instructions and every message they typed,
the task lists) into the nine summary sections, with numbers the assistant
cited from tool results. Where the work stands (the current request, open
items, the last calls and their outcomes, the next step) is read from the
ledger merged with the preserved tail, so it never contradicts what the
model still sees. Everything long is cut and cited by the CCR handle of the
span it came from (see ``compactor.engine.spans``), and every fact the summary
cannot show stands in the full listing, stored as its own span and cited.

Called by the pipeline, it gets the session's ledger with the head already
merged; called alone, it makes one from the head.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from ccr import handle_for, marker
from compactor.core.config import DEFAULT_SUMMARY_FACTS_TOKENS
from compactor.core.ledger import SessionLedger
from compactor.core.messages import Message, TextBlock, ToolResultBlock
from compactor.core.templating import render
from compactor.core.tokens import RoughCounter, TokenCounter
from compactor.engine.spans import Span, SpanKind, head_spans
from compactor.summarizers.base import SECTION_TITLES, Summary
from compactor.summarizers.ledger import merge_messages, tail_view
from compactor.summarizers.ledger_text import LedgerText, listing_span
from compactor.summarizers.prompts import typed

__all__ = ["ExtractiveSummarizer"]

_NUMBER = re.compile(r"\d(?<=(?<![\w.])\d)(?:[\d,_.]*\d(?![\w])|(?![\w.]))")
r"""A number standing on its own: ``(?<![\w.])\d[\d,_.]*\d(?![\w])|(?<![\w.])\d(?![\w.])``, written to
start with the digit (the look back checks the character before it), so that the scan jumps from
digit to digit instead of trying the look back at every character: about four times faster."""
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
DEFAULT_MAX_CHARS = 15_000
"""Summary text past this many characters lists facts more compactly (down to none: the
cited listing keeps them all): with the message around it, the summary stays near Claude
Code's own 12-16K characters and within 20,000 however long the session."""


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 5].rstrip() + " [...]"


def _own_span(kind: SpanKind, text: str, ref: str | None, index: int | None) -> Span:
    data = text.encode("utf-8")
    return Span(kind=kind, data=data, handle=handle_for(data), content_type="text/plain", ref=ref, message_index=index)


class _Citations:
    """Which handles each section cites, in order."""

    def __init__(self) -> None:
        self.handles: dict[str, list[str]] = {}

    def cite(self, section: str, handle: str | None) -> str:
        """Remember that ``section`` draws on ``handle``; returns its marker ("" for None)."""
        if handle is None:
            return ""
        cited = self.handles.setdefault(section, [])
        if handle not in cited:
            cited.append(handle)
        return marker(handle)


class ExtractiveSummarizer:
    """Fills the nine sections from the session ledger; no model involved.

    Paths and commands are budgeted by tokens, not by count: every touched
    path (relative to ``cwd`` where shorter) and every distinct command's
    first line are shown in full lines while they fit ``facts_tokens``
    (measured with ``counter``: ``make_summarizer`` passes the configured one;
    by default Claude Code's rough characters/4), older ones more compactly;
    the rest is in the full listing, cited with the number left out. Every
    user message is kept verbatim, the newest up to ``user_message_chars``,
    older ones shorter when together they pass ``user_messages_chars``, each
    cut one whole in its own stored span or the listing. At most
    ``max_errors`` errors (unresolved first) and ``max_numbers`` cited numbers
    are listed. A summary longer than ``max_chars`` lists facts more
    compactly; user messages are never dropped for it.
    """

    name = "extractive"
    lists_facts = True
    """``spans`` takes ``listing=False``: the pipeline, which stores the session's listing in place of
    this one, is spared merging the head into a ledger only to drop it."""

    def __init__(
        self,
        *,
        facts_tokens: int = DEFAULT_SUMMARY_FACTS_TOKENS,
        counter: TokenCounter | None = None,
        user_message_chars: int = 600,
        user_messages_chars: int = 5_000,
        max_errors: int = 12,
        max_numbers: int = 6,
        max_chars: int = DEFAULT_MAX_CHARS,
        tool_result_min_bytes: int | None = None,
    ) -> None:
        self.facts_tokens = facts_tokens
        self.max_chars = max_chars
        self.counter: TokenCounter = counter if counter is not None else RoughCounter()
        self.user_message_chars = user_message_chars
        self.user_messages_chars = user_messages_chars
        self.max_errors = max_errors
        self.max_numbers = max_numbers
        self._span_options = {} if tool_result_min_bytes is None else {"tool_result_min_bytes": tool_result_min_bytes}

    def spans(self, messages: Sequence[Message], *, listing: bool = True) -> list[Span]:
        """The spans this summary may cite; the pipeline stores exactly these.

        The head, large tool results, meta messages and earlier summaries
        (``compactor.engine.spans.head_spans``), every typed user message longer than
        ``user_message_chars`` (its text whole), and the full listing of the
        head's facts unless ``listing`` is false (the pipeline stores the session's instead).
        """
        spans = head_spans(messages, user_message_max_bytes=sys.maxsize, **self._span_options)
        seen = {s.handle for s in spans}
        extra: list[Span] = []
        for index, message in enumerate(messages):
            said = typed(message)
            if said is not None and len(said.text.strip()) > self.user_message_chars:
                # The message's own text when it holds the typed text whole, else the typed text.
                whole = message.text()
                text = whole if said.text in whole else said.text
                extra.append(_own_span("user_message", text, str(index), index))
        if listing:
            extra.append(listing_span(merge_messages(SessionLedger(), messages)))
        for span in extra:
            if span.handle not in seen:
                seen.add(span.handle)
                spans.append(span)
        return spans

    def summarize(
        self,
        messages: Sequence[Message],
        instructions: str | None = None,
        *,
        spans: Sequence[Span] | None = None,
        cwd: str | None = None,
        ledger: SessionLedger | None = None,
        tail: Sequence[Message] = (),
    ) -> Summary:
        """Summarize ``messages``; ``spans`` are ``self.spans(messages)`` when the caller has them;
        ``cwd`` is the session's working directory (paths under it are shown relative).

        ``ledger`` is the session's ledger with ``messages`` already merged (the pipeline's); without
        it the summary covers ``messages`` alone. ``tail`` is what the context keeps after them:
        where the work stands is read at its end.
        """
        if spans is None:
            spans = self.spans(messages)
        head_handle = spans[0].handle
        if ledger is None:
            ledger = merge_messages(
                SessionLedger(),
                messages,
                result_handles={s.ref: s.handle for s in spans if s.kind == "tool_result" and s.ref},
                message_handles={
                    s.message_index: s.handle for s in spans if s.kind == "user_message" and s.message_index is not None
                },
            )
        view = tail_view(ledger, tail) if tail else ledger
        listing_handle = next((s.handle for s in spans if s.kind == "facts"), None)
        numbers = self._numbers(messages)
        citations = _Citations()
        text_of = LedgerText(
            ledger,
            view,
            cwd=cwd,
            cite=citations.cite,
            count=self.counter.count_text,
            head_start=ledger.seq - len(messages),
        )
        shows_relative = cwd is not None and any(text_of.rel(p) != p for p in text_of.view.paths)

        def attempt(budget: int) -> tuple[dict[str, str], str]:
            citations.handles = {}
            sections = self._sections(text_of, numbers, listing_handle or head_handle, budget, citations)
            text = render(
                "extractive_summary.j2",
                sections=list(sections.items()),
                message_count=len(messages),
                compactions=ledger.compactions,
                instructions=(instructions or "").strip(),
                cwd=cwd if shows_relative else None,
            )
            return sections, text

        sections, text = attempt(self.facts_tokens)
        if len(text) > self.max_chars:
            # Too long: list facts more compactly (the listing keeps them all), never fewer user messages.
            # The largest facts budget that fits, by bisection (or none at all).
            low, high = 0, self.facts_tokens
            while low < high:
                middle = (low + high + 1) // 2
                if len(attempt(middle)[1]) <= self.max_chars:
                    low = middle
                else:
                    high = middle - 1
            sections, text = attempt(low)
        cited = [head_handle]
        for handles in citations.handles.values():
            cited.extend(h for h in handles if h not in cited)
        return Summary(text=text, summarizer=self.name, sections=sections, handles=cited)

    def _numbers(self, messages: Sequence[Message]) -> list[str]:
        """The newest ``max_numbers`` sentences of the assistant that cite a number (2+ digits) also seen
        in a tool result, oldest first.

        Read from the end back, so that a long head is searched only until they are found.
        """
        assistant_texts = [
            b.text
            for m in messages
            if m.role == "assistant"
            for b in m.blocks()
            if isinstance(b, TextBlock) and b.text.strip()
        ]
        if not assistant_texts or self.max_numbers <= 0:
            return []
        results: str | None = None
        in_results: dict[str, bool] = {}

        def seen(number: str) -> bool:
            # Searching the results for the few numbers the assistant wrote is far
            # cheaper than listing every number in megabytes of tool output.
            nonlocal results
            if results is None:
                results = "\n".join(b.text() for m in messages for b in m.blocks() if isinstance(b, ToolResultBlock))
            if number not in in_results:
                in_results[number] = _occurs_as_number(number, results)
            return in_results[number]

        found: list[str] = []
        for text in reversed(assistant_texts):
            for sentence in reversed(_SENTENCE.split(text)):
                if any(len(n) > 1 and seen(n) for n in _NUMBER.findall(sentence)):
                    line = _one_line(sentence.strip().lstrip("-*• ").strip(), 180)
                    if line not in found:
                        found.append(line)
                        if len(found) == self.max_numbers:
                            return found[::-1]
        return found[::-1]

    # -- sections ---------------------------------------------------------

    def _sections(
        self, text_of: LedgerText, numbers: list[str], listing_handle: str, budget: int, citations: _Citations
    ) -> dict[str, str]:
        shown = text_of.facts(budget)
        listing = marker(listing_handle)
        files = list(shown.files)
        if shown.spilled_files:
            files.append(
                f"- ({shown.spilled_files} more paths of {len(text_of.view.paths)} are in the full listing {listing})"
            )
        instructions = text_of.instructions()
        concepts = ["The user's instructions and decisions, verbatim:", *instructions] if instructions else []
        solving = [f"- {line}" for line in numbers]
        if shown.spilled_commands:
            solving.append(
                f"- ({shown.spilled_commands} earlier commands of {len(text_of.view.commands)} are in the full listing {listing})"
            )
        if shown.cut_commands:
            solving.append(f"- ({shown.cut_commands} long first lines are cut here; whole in {listing})")
        solving.extend(shown.commands)
        users = text_of.user_messages(
            limit=self.user_message_chars, total_chars=self.user_messages_chars, listing=listing
        )
        for section, lines in (
            ("Files and code sections", files),
            ("Problem solving", solving),
            ("All user messages", users),
        ):
            if any(listing in line for line in lines):
                citations.cite(section, listing_handle)
        values = [
            text_of.goal(),
            "\n".join(concepts) or "(no standing instructions from the user)",
            "\n".join(files) or "(no files touched)",
            "\n".join(text_of.errors(self.max_errors)) or "(no errors seen)",
            "\n".join(solving) or "(nothing recorded)",
            "\n".join(users) or "(none)",
            "\n".join(text_of.pending()) or "(none recorded)",
            text_of.current_work(),
            text_of.next_step(),
        ]
        return dict(zip(SECTION_TITLES, values, strict=True))


def _occurs_as_number(number: str, text: str) -> bool:
    """Whether ``number`` stands in ``text`` on its own (not inside a longer number or word)."""
    start = text.find(number)
    while start != -1:
        before = text[start - 1] if start else " "
        end = start + len(number)
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before in "._") and not (after.isalnum() or after == "_"):
            return True
        start = text.find(number, start + 1)
    return False
