"""The extractive summarizer: deterministic, offline, cites CCR handles.

It writes a briefing from the session ledger (``compactor.core.ledger``) in
Claude Code's nine sections (``compactor.summarizers.briefing``): the current
request and the user's standing instructions in their words, the assistant's
own statements of causes, findings and decisions, the files it changed and
why, the errors that mattered and how they were fixed, every message the user
typed, the open items, where the work stands and what comes next (nothing,
when it is done). Where the work stands is read from the ledger merged with
the preserved tail, so it never contradicts what the model still sees.

Bookkeeping (every path with what was done to it, every command and its
outcome) is not in the briefing: it is the index (``Summary.index``) that the
compacted context carries as its own message, within ``facts_tokens``, and
every fact stands in the full listing, stored as its own span and cited.

Called by the pipeline, it gets the session's ledger with the head already
merged; called alone, it makes one from the head.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ccr import handle_for, marker
from compactor.core.config import DEFAULT_SUMMARY_FACTS_TOKENS
from compactor.core.ledger import SessionLedger
from compactor.core.messages import Message
from compactor.core.templating import render
from compactor.core.tokens import RoughCounter, TokenCounter
from compactor.engine.spans import Span, SpanKind, head_spans
from compactor.summarizers.base import SECTION_TITLES, BriefingFacts, Summary
from compactor.summarizers.briefing import Briefing
from compactor.summarizers.ledger import merge_messages, tail_view
from compactor.summarizers.ledger_text import LedgerText, index_text, listing_span
from compactor.summarizers.prompts import typed

__all__ = ["ExtractiveSummarizer"]

DEFAULT_MAX_CHARS = 15_000
"""Summary text past this many characters lists facts more compactly (down to none: the
cited listing keeps them all): with the message around it, the summary stays near Claude
Code's own 12-16K characters and within 20,000 however long the session."""


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
    """Writes a briefing from the session ledger; no model involved.

    The index's paths and commands are budgeted by tokens, not by count:
    every touched path (relative to ``cwd`` where shorter) and every distinct
    command's first line are shown in full lines while they fit
    ``facts_tokens`` (measured with ``counter``: ``make_summarizer`` passes the
    configured one; by default Claude Code's rough characters/4), older ones
    more compactly; the rest is in the full listing, cited with the number
    left out. Every user message is kept verbatim, the newest up to
    ``user_message_chars``, older ones shorter when together they pass
    ``user_messages_chars``, each cut one whole in its own stored span or the
    listing. A summary longer than ``max_chars`` cuts older user messages
    shorter; none is dropped for it.
    """

    name = "extractive"
    lists_facts = True
    """``spans`` takes ``listing=False``: the pipeline, which stores the session's listing in place of
    this one, is spared merging the head into a ledger only to drop it."""
    takes_view = True
    """``summarize`` takes ``view``, the ledger with the tail merged too, when the caller has made it (the
    pipeline, which reads it for its report as well): the tail is merged once."""

    def __init__(
        self,
        *,
        facts_tokens: int = DEFAULT_SUMMARY_FACTS_TOKENS,
        counter: TokenCounter | None = None,
        user_message_chars: int = 600,
        user_messages_chars: int = 5_000,
        max_chars: int = DEFAULT_MAX_CHARS,
        tool_result_min_bytes: int | None = None,
    ) -> None:
        self.facts_tokens = facts_tokens
        self.max_chars = max_chars
        self.counter: TokenCounter = counter if counter is not None else RoughCounter()
        self.user_message_chars = user_message_chars
        self.user_messages_chars = user_messages_chars
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
        view: SessionLedger | None = None,
    ) -> Summary:
        """Summarize ``messages``; ``spans`` are ``self.spans(messages)`` when the caller has them;
        ``cwd`` is the session's working directory (paths under it are shown relative).

        ``ledger`` is the session's ledger with ``messages`` already merged (the pipeline's); without
        it the summary covers ``messages`` alone. ``tail`` is what the context keeps after them:
        where the work stands is read at its end; ``view`` is ``ledger`` with ``tail`` merged too, when
        the caller has it (``tail_view``: read, never changed).
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
        if view is None:
            view = tail_view(ledger, tail) if tail else ledger
        listing_handle = next((s.handle for s in spans if s.kind == "facts"), None) or head_handle
        citations = _Citations()
        briefing = Briefing(ledger, view, cwd=cwd, cite=citations.cite)
        text_of = LedgerText(
            ledger,
            view,
            cwd=cwd,
            cite=citations.cite,
            count=self.counter.count_text,
            head_start=ledger.seq - len(messages),
        )
        shows_relative = cwd is not None and any(text_of.rel(p) != p for p in view.paths)

        def attempt(user_chars: int) -> tuple[dict[str, str], str]:
            citations.handles = {}
            sections = self._sections(briefing, text_of, listing_handle, user_chars)
            text = render(
                "extractive_summary.j2",
                sections=list(sections.items()),
                message_count=len(messages),
                compactions=ledger.compactions,
                instructions=(instructions or "").strip(),
                cwd=cwd if shows_relative else None,
            )
            return sections, text

        sections, text = attempt(self.user_messages_chars)
        if len(text) > self.max_chars:
            # Too long: older user messages shorter (each stays, cut, its whole text stored).
            sections, text = attempt(max(1_000, self.user_messages_chars - (len(text) - self.max_chars)))
        index = index_text(
            ledger,
            view,
            cwd=cwd,
            count=self.counter.count_text,
            budget_tokens=self.facts_tokens,
            listing=citations.cite("index", listing_handle),
            cite=citations.cite,
            names=briefing.names,
        )
        cited = [head_handle]
        for handles in citations.handles.values():
            cited.extend(h for h in handles if h not in cited)
        facts = BriefingFacts(
            next_step=not (briefing.state.finished and not briefing.state.unanswered),
            next_files=briefing.next_files(),
            check=briefing.state.check,
            finished=briefing.state.finished,
        )
        return Summary(text=text, summarizer=self.name, sections=sections, handles=cited, index=index, briefing=facts)

    # -- sections ---------------------------------------------------------

    def _sections(
        self, briefing: Briefing, text_of: LedgerText, listing_handle: str, user_chars: int
    ) -> dict[str, str]:
        listing = marker(listing_handle)
        users = text_of.user_messages(limit=self.user_message_chars, total_chars=user_chars, listing=listing)
        if any(listing in line for line in users):
            briefing.cite("All user messages", listing_handle)
        errors, explained = briefing.errors()
        concepts = briefing.concepts(explained)  # adds the sentences it shows, so "Problem solving" skips them
        values = [
            briefing.request(),
            concepts,
            briefing.files(),
            errors,
            briefing.solving(explained),
            "\n".join(users) or "(none)",
            briefing.pending(),
            briefing.current_work(),
            briefing.next_step(),
        ]
        return dict(zip(SECTION_TITLES, values, strict=True))
