"""The extractive summarizer: deterministic, offline, cites CCR handles.

It reads the head of a conversation and fills the nine summary sections
with material taken verbatim from it: every message the user typed, every
touched path and what was done to it, every distinct command and its
outcome (``_facts``: under a token budget, the rest in a cited listing),
error lines, numbers the assistant cited, and the thread of the work
(``_thread``: the last request, the last statement, open todo items, tasks
and tracker items, background work not yet collected). Everything long is
cut and cited by the CCR handle of the span it came from (see
``compactor.spans``), so the exact text is one retrieval away.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ccr import handle_for, marker
from compactor._templates import render
from compactor.config import DEFAULT_SUMMARY_FACTS_TOKENS
from compactor.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.rounds import is_prompt
from compactor.spans import MESSAGE_KINDS, Span, SpanKind, head_spans
from compactor.summarizers._facts import Facts, command_first_line, layout, relative_path, touched_path
from compactor.summarizers._prompts import typed
from compactor.summarizers._thread import Thread
from compactor.summarizers.base import SECTION_TITLES, Summary
from compactor.tokens import RoughCounter, TokenCounter

__all__ = ["ExtractiveSummarizer"]

_ERROR_LINE = re.compile(
    r"\b(error|errors|exception|traceback|failed|failure|fatal|panic|cannot|denied)\b", re.IGNORECASE
)
_ERROR_WORDS = ("error", "exception", "traceback", "fail", "fatal", "panic", "cannot", "denied", "e  ", "** (")
"""Every match of the error patterns below holds one of these, lowercased, on its line."""
_REPORTED_ERROR = re.compile(
    r"^\s*(?:error|fatal|panic|traceback|exception|failed|fail\b|E {2,}|\*\* \()"
    r"|(?:error|exception|fatal)(?:\[\w+\])?:|\b[1-9]\d* (?:failed|failures?|errors?)\b",
    re.IGNORECASE | re.MULTILINE,
)
"""A line of a result that did not fail but reports an error: ``error: ...``, ``ValueError: ...``,
``FAILED tests/...``, ``5 tests, 2 failures``."""
_LINE_WORD = r"\s*(?:error|fatal|panic|traceback|exception|failed|fail\b|e {2,}|\*\* \()"
_FIRST_LINE_WORD = re.compile(_LINE_WORD)
_LATER_LINE_WORD = re.compile(r"\n" + _LINE_WORD)
_ERROR_COLONS = tuple(re.compile(word + r"(?:\[\w+\])?:") for word in ("error", "exception", "fatal"))
_COUNTED = re.compile(r" (?:failed|failures?|errors?)\b")


def _may_report_error(low: str) -> bool:
    r"""Whether a lowercased result (lines joined by ``\n``) may hold a line ``_REPORTED_ERROR`` finds.

    ``_REPORTED_ERROR``'s branches in lower case, each written to start with
    a literal so that the scan jumps between its occurrences (the case-insensitive
    whole pattern, or a branch starting with ``^`` or ``\d``, tries every
    character: several times slower over a long result): a word after only
    blanks from a line start, ``error:`` (or ``exception``, ``fatal``, each
    maybe with ``[code]``), and a digit before `` failed``/`` errors``. The
    last is looser than its branch (any digit), which only costs a search of
    the lines with ``_REPORTED_ERROR`` itself, the one that decides.
    """
    if _FIRST_LINE_WORD.match(low) or _LATER_LINE_WORD.search(low):
        return True
    if any(colon.search(low) for colon in _ERROR_COLONS):
        return True
    for word in (" fail", " error"):
        at = low.find(word)
        while at != -1:
            if at and low[at - 1].isdecimal() and _COUNTED.match(low, at):
                return True
            at = low.find(word, at + 1)
    return False


_NUMBER = re.compile(r"\d(?<=(?<![\w.])\d)(?:[\d,_.]*\d(?![\w])|(?![\w.]))")
r"""A number standing on its own: ``(?<![\w.])\d[\d,_.]*\d(?![\w])|(?<![\w.])\d(?![\w.])``, written to
start with the digit (the look back checks the character before it), so that the scan jumps from
digit to digit instead of trying the look back at every character: about four times faster."""
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CONTENT_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Grep", "Glob"})
"""Tools whose results show file content: a line saying "error" there is code, not a failure."""
_MIN_USER_CHARS = 120
"""However many user messages there are, each shows at least this many characters."""
_STATEMENT_CHARS = 700
DEFAULT_MAX_CHARS = 14_500
"""Summary text past this many characters lists fewer facts: with the message around it, the
summary stays within Claude Code's own 12-16K characters."""


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 5].rstrip() + " [...]"


def _own_span(kind: SpanKind, text: str, ref: str | None, index: int | None) -> Span:
    data = text.encode("utf-8")
    return Span(kind=kind, data=data, handle=handle_for(data), content_type="text/plain", ref=ref, message_index=index)


def _full_listing(messages: Sequence[Message]) -> str | None:
    """Every path and command of ``messages`` in full (absolute paths, whole first lines)."""
    facts = Facts()
    calls: dict[str, ToolUseBlock] = {}
    for index, message in enumerate(messages):
        for block in message.blocks():
            if isinstance(block, ToolUseBlock):
                calls[block.id] = block
                facts.tool_use(block, index)
            elif isinstance(block, ToolResultBlock) and block.tool_use_id in calls:
                text = block.text()
                facts.tool_result(calls[block.tool_use_id], block, text, None, index)
    if not facts.files and not facts.commands:
        return None
    return layout(facts, cwd=None, budget_tokens=0, count=len).listing


@dataclass
class _Digest:
    """What the extractor found, before rendering."""

    limit: int
    user_counts: dict[str, int] = field(default_factory=dict)
    user_lines: dict[str, str] = field(default_factory=dict)
    carried: list[str] = field(default_factory=list)
    carried_pending: list[str] = field(default_factory=list)
    context_messages: list[str] = field(default_factory=list)
    earlier_summaries: list[str] = field(default_factory=list)
    facts: Facts = field(default_factory=Facts)
    file_handles: set[str] = field(default_factory=set)
    thread: Thread = field(default_factory=Thread)
    searches: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    numbers: list[str] = field(default_factory=list)
    tools: Counter[str] = field(default_factory=Counter)
    programs: Counter[str] = field(default_factory=Counter)
    primary: str = ""
    handles: dict[str, list[str]] = field(default_factory=dict)

    def cite(self, section: str, handle: str | None) -> str:
        """Remember that ``section`` draws on ``handle``; returns its marker ("" for None)."""
        if handle is None:
            return ""
        cited = self.handles.setdefault(section, [])
        if handle not in cited:
            cited.append(handle)
        return marker(handle)


class ExtractiveSummarizer:
    """Fills the nine sections from the transcript itself; no model involved.

    Paths and commands are budgeted by tokens, not by count: every touched
    path (relative to ``cwd`` where shorter) and every distinct command's
    first line are shown while they fit ``facts_tokens`` (measured with
    ``counter``: ``make_summarizer`` passes the configured one; by default
    Claude Code's rough characters/4); the rest, and any first line too long to show whole, is in a
    full listing stored as its own span and cited with the number left out.
    Every distinct user message is kept verbatim, or cut with the handle of
    the whole text when long: at ``user_message_chars``, or shorter when the
    messages together pass ``user_messages_chars``. At most ``max_errors``
    error lines and ``max_numbers`` cited numbers are listed (the newest);
    the rest stays reachable through the head's handle. A summary longer
    than ``max_chars`` lists fewer paths and commands (down to none: the
    cited listing keeps them all); user messages are never dropped for it.
    """

    name = "extractive"

    def __init__(
        self,
        *,
        facts_tokens: int = DEFAULT_SUMMARY_FACTS_TOKENS,
        counter: TokenCounter | None = None,
        user_message_chars: int = 600,
        user_messages_chars: int = 5_000,
        max_errors: int = 10,
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
        self._span_options = (
            {} if tool_result_min_bytes is None else {"tool_result_min_bytes": tool_result_min_bytes}
        )

    def spans(self, messages: Sequence[Message]) -> list[Span]:
        """The spans this summary may cite; the pipeline stores exactly these.

        The head, large tool results, meta messages and earlier summaries
        (``compactor.spans.head_spans``), every user message the summary cuts
        (its typed text whole), and the full listing of paths and commands.
        """
        spans = head_spans(messages, user_message_max_bytes=sys.maxsize, **self._span_options)
        seen = {s.handle for s in spans}
        limit = self._user_limit(messages)
        extra: list[Span] = []
        for index, message in enumerate(messages):
            said = typed(message)
            if said is not None and len(said.text) > limit:
                # The message's own text when it holds the typed text whole, else the typed text.
                whole = message.text()
                text = whole if said.text in whole else said.text
                extra.append(_own_span("user_message", text, str(index), index))
        listing = _full_listing(messages)
        if listing:
            extra.append(_own_span("facts", listing, "facts", None))
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
    ) -> Summary:
        """Summarize ``messages``; ``spans`` are ``self.spans(messages)`` when the caller has them;
        ``cwd`` is the session's working directory (paths under it are shown relative)."""
        if spans is None:
            spans = self.spans(messages)
        head_handle = spans[0].handle
        by_result = {s.ref: s.handle for s in spans if s.kind == "tool_result"}
        by_message = {s.ref: s.handle for s in spans if s.kind in MESSAGE_KINDS}
        facts_handle = next((s.handle for s in spans if s.kind == "facts"), None)
        digest = self._digest(messages, by_result, by_message)
        cited_before = {section: list(handles) for section, handles in digest.handles.items()}
        shows_relative = any(relative_path(p, cwd) != p for p in digest.facts.files)

        def attempt(budget: int) -> tuple[dict[str, str], str]:
            digest.handles = {section: list(handles) for section, handles in cited_before.items()}
            sections = self._sections(digest, head_handle, facts_handle, cwd, budget)
            text = render(
                "extractive_summary.j2",
                sections=list(sections.items()),
                head=marker(head_handle),
                message_count=len(messages),
                instructions=(instructions or "").strip(),
                cwd=cwd if shows_relative else None,
            )
            return sections, text

        sections, text = attempt(self.facts_tokens)
        if len(text) > self.max_chars:
            # Too long: list fewer facts (the listing keeps them all), never fewer user messages.
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
        for handles in digest.handles.values():
            cited.extend(h for h in handles if h not in cited)
        return Summary(text=text, summarizer=self.name, sections=sections, handles=cited)

    def _user_limit(self, messages: Sequence[Message]) -> int:
        """Characters each user message may show: less when there are many."""
        texts = {t.text for m in messages if (t := typed(m)) is not None}
        total = sum(min(len(t), self.user_message_chars) for t in texts)
        if total <= self.user_messages_chars or not texts:
            return self.user_message_chars
        return max(_MIN_USER_CHARS, self.user_messages_chars // len(texts))

    # -- extraction -------------------------------------------------------

    def _digest(
        self,
        messages: Sequence[Message],
        by_result: dict[str | None, str],
        by_message: dict[str | None, str],
    ) -> _Digest:
        d = _Digest(limit=self._user_limit(messages))
        calls: dict[str, ToolUseBlock] = {}
        result_texts: list[str] = []
        assistant_texts: list[str] = []
        for index, message in enumerate(messages):
            d.thread.add(index, message)
            if is_prompt(message):
                self._user_message(d, index, message, by_message)
                continue
            for block in message.blocks():
                if isinstance(block, ToolUseBlock):
                    calls[block.id] = block
                    self._tool_use(d, block, index)
                elif isinstance(block, ToolResultBlock):
                    text = block.text()
                    result_texts.append(text)
                    self._tool_result(d, block, text, calls.get(block.tool_use_id), by_result, index)
                elif isinstance(block, TextBlock) and message.role == "assistant":
                    if block.text.strip():
                        assistant_texts.append(block.text)
        self._numbers(d, assistant_texts, result_texts)
        d.errors = d.errors[-self.max_errors :]
        return d

    def _user_message(self, d: _Digest, index: int, message: Message, by_message: dict[str | None, str]) -> None:
        handle = by_message.get(str(index))
        if message.is_compact_summary:
            # An earlier compaction's summary: carry its user messages and request forward.
            d.earlier_summaries.append(d.cite("All user messages", handle))
            for item in _section_items(message.text(), "All user messages"):
                if not item.startswith(_OWN_NOTES) and item not in d.carried:
                    d.carried.append(item)
            d.carried_pending = [
                item for item in _section_items(message.text(), "Pending tasks") if not item.startswith("(")
            ]
            if not d.primary:
                d.primary = "\n".join(_section_lines(message.text(), "Primary request and intent"))
            return
        said = typed(message)
        if said is None:
            if message.is_meta:
                d.context_messages.append(d.cite("All user messages", handle))
            return
        if said.text in d.user_counts:
            d.user_counts[said.text] += 1
            return
        d.user_counts[said.text] = 1
        if len(said.text) > d.limit:
            d.user_lines[said.text] = said.text[: d.limit].rstrip() + f" [...] {d.cite('All user messages', handle)}"
        else:
            d.user_lines[said.text] = said.text
        if said.is_request and not d.primary:
            d.primary = d.user_lines[said.text]

    def _tool_use(self, d: _Digest, block: ToolUseBlock, index: int) -> None:
        d.tools[block.name] += 1
        d.facts.tool_use(block, index)
        if touched_path(block) is None and block.name in ("Grep", "Glob"):
            pattern = block.input.get("pattern", "")
            where = block.input.get("path") or block.input.get("glob") or ""
            search = _one_line(f"{block.name} {pattern!r} {where}".strip(), 120)
            if search not in d.searches:
                d.searches.append(search)
        first = command_first_line(block)
        if first:
            program = first.split(" ", 1)[0]
            if program:
                d.programs[program] += 1

    def _tool_result(
        self,
        d: _Digest,
        block: ToolResultBlock,
        text: str,
        call: ToolUseBlock | None,
        by_result: dict[str | None, str],
        index: int,
    ) -> None:
        handle = by_result.get(block.tool_use_id)
        name = call.name if call else "tool"
        if call is not None:
            d.facts.tool_result(call, block, text, handle, index)
            if touched_path(call) and handle:
                d.file_handles.add(handle)
        shows_content = call is not None and call.name in _CONTENT_TOOLS
        # A result that did not fail names an error only in a line shaped like one (a git log
        # subject or a docstring that says "error" is not a failure).
        first, count = (None, 0) if shows_content and not block.is_error else _error_lines(text, block.is_error)
        if block.is_error and first is None and text.strip():
            first, count = text.strip().splitlines()[0], 1
        if first is not None:
            line = f"{name}: {_one_line(first, 180)}"
            if count > 1:
                line += f" (+{count - 1} more)"
            if handle:
                line += f" {d.cite('Errors and fixes', handle)}"
            if line not in d.errors:
                d.errors.append(line)

    def _numbers(self, d: _Digest, assistant_texts: list[str], result_texts: list[str]) -> None:
        """Sentences of the assistant that cite a number (2+ digits) also seen in a tool result."""
        results = "\n".join(result_texts)
        in_results: dict[str, bool] = {}

        def seen(number: str) -> bool:
            # Searching the results for the few numbers the assistant wrote is far
            # cheaper than listing every number in megabytes of tool output.
            if number not in in_results:
                in_results[number] = _occurs_as_number(number, results)
            return in_results[number]

        found: list[str] = []
        for text in assistant_texts:
            for sentence in _SENTENCE.split(text):
                if any(len(n) > 1 and seen(n) for n in _NUMBER.findall(sentence)):
                    line = _one_line(sentence.strip().lstrip("-*• ").strip(), 180)
                    if line not in found:
                        found.append(line)
        d.numbers = found[-self.max_numbers :]

    # -- sections ---------------------------------------------------------

    def _sections(
        self, d: _Digest, head_handle: str, facts_handle: str | None, cwd: str | None, budget: int
    ) -> dict[str, str]:
        def file_handle(handle: str) -> str:
            return d.cite("Files and code sections", handle) if handle in d.file_handles else ""

        shown = layout(
            d.facts, cwd=cwd, budget_tokens=budget, count=self.counter.count_text, file_handle=file_handle
        )
        listing = d.cite("Files and code sections", facts_handle) if shown.listing and facts_handle else marker(head_handle)
        files = list(shown.files)
        if shown.spilled_files:
            files.append(f"- ({shown.spilled_files} more files of {len(d.facts.files)} are listed in {listing})")
        files.extend(f"- searched: {s}" for s in d.searches[-6:])
        concepts = []
        if d.tools:
            concepts.append("Tools used: " + ", ".join(f"{n} x{c}" for n, c in d.tools.most_common()))
        if d.programs:
            concepts.append("Programs run: " + ", ".join(f"{n} x{c}" for n, c in d.programs.most_common(12)))
        exts = Counter(_extension(p) for p in d.facts.files if _extension(p))
        if exts:
            concepts.append("File types: " + ", ".join(f"{e} x{c}" for e, c in exts.most_common(10)))
        solving = [f"- {line}" for line in d.numbers]
        if shown.spilled_commands:
            solving.append(
                f"- ({shown.spilled_commands} earlier commands of {len(d.facts.commands)} are listed in {listing})"
            )
        if shown.cut_commands:
            solving.append(f"- ({shown.cut_commands} long first lines are cut here; whole in {listing})")
        solving.extend(shown.commands)
        values = [
            d.primary or "(no user request in this part)",
            "\n".join(f"- {c}" for c in concepts) or "(none recorded)",
            "\n".join(files) or "(no files touched)",
            "\n".join(f"- {e}" for e in d.errors) or "(no errors seen)",
            "\n".join(solving) or "(nothing recorded)",
            "\n".join(_user_lines(d)) or "(none)",
            "\n".join(f"- {item}" for item in _pending(d)) or "(none recorded)",
            _current_work(d),
            _next_step(d),
        ]
        return dict(zip(SECTION_TITLES, values, strict=True))


def _error_lines(text: str, failed: bool) -> tuple[str | None, int]:
    """The first line of a tool result (as ``str.splitlines`` cuts it) that names an error, and how many do.

    A line of a ``failed`` result names one when ``_ERROR_LINE`` finds it,
    else only when it is shaped like one (``_REPORTED_ERROR``). That is what
    a search of each line with the pattern answers, found faster: most
    results are let go by the cheap tests on the whole lowercased text (an
    error word, then ``_may_report_error``), and of the rest only lines
    holding an error word, found with ``str.find``, are searched (running the
    case-insensitive pattern over every line of a long log costs several
    times more). The lines are joined with plain newlines first, so that a
    position's line is found by looking for ``\\n`` alone.
    """
    pattern = _ERROR_LINE if failed else _REPORTED_ERROR
    joined = "\n".join(text.splitlines())
    low = joined.lower()
    if not any(word in low for word in _ERROR_WORDS):
        return None, 0
    if not (_ERROR_LINE.search(joined) if failed else _may_report_error(low)):
        return None, 0
    if len(low) != len(joined):  # a character lowercased to two: positions no longer line up
        lines = [line for line in joined.split("\n") if pattern.search(line)]
        return (lines[0] if lines else None), len(lines)
    starts: set[int] = set()
    for word in _ERROR_WORDS:
        at = low.find(word)
        while at != -1:
            starts.add(low.rfind("\n", 0, at) + 1)
            end = low.find("\n", at)
            at = -1 if end == -1 else low.find(word, end)
    first: str | None = None
    count = 0
    for start in sorted(starts):
        stop = joined.find("\n", start)
        line = joined[start:] if stop == -1 else joined[start:stop]
        if pattern.search(line):
            count += 1
            first = line if first is None else first
    return first, count


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


_CONTEXT_NOTE = "Context messages (system reminders, restored files and skills): "
_EARLIER_NOTE = "Earlier summaries these messages were carried from: "
_OWN_NOTES = (_CONTEXT_NOTE, _EARLIER_NOTE)


def _user_lines(d: _Digest) -> list[str]:
    lines = [f"- {m}" for m in d.carried]
    for text, line in d.user_lines.items():
        count = d.user_counts[text]
        lines.append(f"- {line}" + (f" (sent {count} times)" if count > 1 else ""))
    if d.context_messages:
        lines.append("- " + _CONTEXT_NOTE + " ".join(d.context_messages))
    if d.earlier_summaries:
        lines.append("- " + _EARLIER_NOTE + " ".join(d.earlier_summaries))
    return lines


def _pending(d: _Digest) -> list[str]:
    """The open items; when this part never touched a list, the earlier summary's."""
    thread = d.thread
    if thread.todos or thread.tasks or thread.tracker:
        return thread.open_items()
    carried = [f"{item} (carried from the earlier summary)" for item in d.carried_pending]
    return carried + thread.open_items()


def _request_line(d: _Digest) -> str | None:
    request = d.thread.last_request
    return d.user_lines.get(request.text) if request is not None else None


def _current_work(d: _Digest) -> str:
    thread = d.thread
    lines = []
    if thread.last_statement:
        lines.append(f"- The assistant's last statement: {_one_line(thread.last_statement, _STATEMENT_CHARS)}")
    if thread.actions:
        lines.append("- Its latest tool calls: " + "; ".join(thread.actions))
    lines.extend(f"- In progress: {item}" for item in thread.in_progress())
    request = _request_line(d)
    if request:
        lines.append(f"- The user's latest request: {request}")
    return "\n".join(lines) or "(nothing recorded)"


def _next_step(d: _Digest) -> str:
    """From the latest request, the last statement of intent and what is open; the newest first."""
    thread = d.thread
    lines = []
    request = _request_line(d)
    answered = thread.last_statement_index > thread.last_request_index
    if request and not answered:
        lines.append(f"- Answer the user's latest request: {request}")
    for item in thread.in_progress()[:3]:
        lines.append(f"- Finish the item in progress: {item}")
    if thread.last_statement and answered:
        lines.append(f"- Carry on from the assistant's last statement: {_one_line(thread.last_statement, 400)}")
    if request and answered:
        lines.append(f"- Within the user's latest request: {request}")
    waiting = [t for t in thread.background.values() if not t.collected]
    for task in waiting[:3]:
        if task.status == "running":
            lines.append(f"- Collect background task {task.id} when it finishes (it is still running)")
        else:
            lines.append(f"- Read the output of background task {task.id} ({task.status})")
    return "\n".join(lines) or "(no explicit next step)"


_HEADING = re.compile(r"^\s*\d+\.\s+(?P<title>[^\n:]+):\s*$", re.MULTILINE)


def _section_body(summary: str, title: str) -> str:
    """The text under ``N. <title>:`` in a summary (any case), up to the next heading."""
    headings = list(_HEADING.finditer(summary))
    for index, heading in enumerate(headings):
        if heading.group("title").strip().lower() == title.lower():
            end = headings[index + 1].start() if index + 1 < len(headings) else len(summary)
            return summary[heading.end() : end]
    return ""


def _section_lines(summary: str, title: str) -> list[str]:
    """The non-empty lines of a summary section, stripped."""
    return [line.strip() for line in _section_body(summary, title).splitlines() if line.strip()]


def _section_items(summary: str, title: str) -> list[str]:
    """The ``- item`` entries of a summary section, without their bullets; an item's
    continuation lines (a multi-line user message) stay with it."""
    items: list[str] = []
    for line in _section_body(summary, title).strip("\n").splitlines():
        if line.startswith("- "):
            items.append(line[2:])
        elif items:
            items[-1] += "\n" + line
    return [item.rstrip() for item in items]


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""
