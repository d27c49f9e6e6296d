"""The extractive summarizer: deterministic, offline, cites CCR handles.

It reads the head of a conversation and fills the nine summary sections
with material taken verbatim from it: user messages, file paths and what was
done to them, commands and their outcomes, error lines, numbers the assistant
cited, the todo list, the latest work and request. Everything long is cut
and cited by the CCR handle of the span it came from (see
``compactor.spans``), so the exact text is one retrieval away.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ccr import marker
from compactor._templates import render
from compactor.dedup import without_result_id
from compactor.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.rounds import is_prompt
from compactor.spans import Span, head_spans, tool_result_bytes
from compactor.summarizers.base import SECTION_TITLES, Summary

__all__ = ["ExtractiveSummarizer"]

_ERROR_LINE = re.compile(
    r"\b(error|errors|exception|traceback|failed|failure|fatal|panic|cannot|denied)\b", re.IGNORECASE
)
_NUMBER = re.compile(r"(?<![\w.])\d[\d,_.]*\d(?![\w])|(?<![\w.])\d(?![\w.])")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_PATH_KEYS = ("file_path", "notebook_path")
_EDIT_TOOLS = {"Edit": "edited", "MultiEdit": "edited", "NotebookEdit": "edited", "Write": "written"}
_CONTENT_TOOLS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Grep", "Glob"})
"""Tools whose results show file content: a line saying "error" there is code, not a failure."""


def _cut(text: str, limit: int) -> tuple[str, bool]:
    text = text.strip()
    if len(text) <= limit:
        return text, False
    return text[:limit].rstrip() + " [...]", True


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 5].rstrip() + " [...]"


@dataclass
class _FileNote:
    path: str
    actions: Counter[str] = field(default_factory=Counter)
    handles: list[str] = field(default_factory=list)


@dataclass
class _Digest:
    """What the extractor found, before rendering."""

    user_messages: list[str] = field(default_factory=list)
    context_messages: list[str] = field(default_factory=list)
    earlier_summaries: list[str] = field(default_factory=list)
    files: dict[str, _FileNote] = field(default_factory=dict)
    searches: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    earlier_commands: int = 0
    errors: list[str] = field(default_factory=list)
    numbers: list[str] = field(default_factory=list)
    tools: Counter[str] = field(default_factory=Counter)
    programs: Counter[str] = field(default_factory=Counter)
    todos: list[str] = field(default_factory=list)
    primary: str = ""
    latest_request: str = ""
    current_work: list[str] = field(default_factory=list)
    next_step: str = ""
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

    Limits keep the summary small: each user message is cut at
    ``user_message_chars``, and at most ``max_commands``, ``max_errors`` and
    ``max_numbers`` of the most recent commands, error lines and cited
    numbers are listed; the rest stays reachable through the head's handle.
    """

    name = "extractive"

    def __init__(
        self,
        *,
        user_message_chars: int = 600,
        max_commands: int = 30,
        max_errors: int = 20,
        max_numbers: int = 12,
        tool_result_min_bytes: int | None = None,
    ) -> None:
        self.user_message_chars = user_message_chars
        self.max_commands = max_commands
        self.max_errors = max_errors
        self.max_numbers = max_numbers
        self._span_options = (
            {} if tool_result_min_bytes is None else {"tool_result_min_bytes": tool_result_min_bytes}
        )

    def spans(self, messages: Sequence[Message]) -> list[Span]:
        """The spans this summary may cite; the pipeline stores exactly these."""
        return head_spans(
            messages, user_message_max_bytes=self.user_message_chars, **self._span_options
        )

    def summarize(
        self, messages: Sequence[Message], instructions: str | None = None, *, spans: Sequence[Span] | None = None
    ) -> Summary:
        """Summarize ``messages``; ``spans`` are ``self.spans(messages)`` when the caller has them."""
        if spans is None:
            spans = self.spans(messages)
        head_handle = spans[0].handle
        by_result = {s.ref: s.handle for s in spans if s.kind == "tool_result"}
        by_message = {s.ref: s.handle for s in spans if s.kind == "user_message"}
        digest = self._digest(messages, by_result, by_message)
        sections = self._sections(digest, head_handle)
        text = render(
            "extractive_summary.j2",
            sections=list(sections.items()),
            head=marker(head_handle),
            message_count=len(messages),
            instructions=(instructions or "").strip(),
        )
        cited = [head_handle]
        for handles in digest.handles.values():
            cited.extend(h for h in handles if h not in cited)
        return Summary(text=text, summarizer=self.name, sections=sections, handles=cited)

    # -- extraction -------------------------------------------------------

    def _digest(
        self,
        messages: Sequence[Message],
        by_result: dict[str | None, str],
        by_message: dict[str | None, str],
    ) -> _Digest:
        d = _Digest()
        calls: dict[str, ToolUseBlock] = {}
        result_texts: list[str] = []
        assistant_texts: list[str] = []
        for index, message in enumerate(messages):
            if is_prompt(message):
                self._user_message(d, message, by_message.get(str(index)))
                continue
            for block in message.blocks():
                if isinstance(block, ToolUseBlock):
                    calls[block.id] = block
                    self._tool_use(d, block)
                elif isinstance(block, ToolResultBlock):
                    text = tool_result_bytes(block).decode("utf-8", errors="replace")
                    result_texts.append(text)
                    self._tool_result(d, block, text, calls.get(block.tool_use_id), by_result)
                elif isinstance(block, TextBlock) and message.role == "assistant":
                    if block.text.strip():
                        assistant_texts.append(block.text)
        self._numbers(d, assistant_texts, result_texts)
        d.errors = d.errors[-self.max_errors :]
        if len(d.commands) > self.max_commands:
            d.earlier_commands = len(d.commands) - self.max_commands
            d.commands = d.commands[-self.max_commands :]
        if assistant_texts:
            d.current_work.insert(0, _cut(assistant_texts[-1], 800)[0])
        d.next_step = d.latest_request
        in_progress = [t for t in d.todos if t.startswith("[in_progress]")]
        if in_progress:
            d.next_step += ("\n" if d.next_step else "") + "Task in progress: " + in_progress[0]
        return d

    def _user_message(self, d: _Digest, message: Message, handle: str | None) -> None:
        text = message.text()
        if message.is_compact_summary:
            # An earlier compaction's summary: carry its user messages and request forward.
            d.earlier_summaries.append(d.cite("All user messages", handle))
            d.user_messages.extend(
                item for item in _section_items(text, "All user messages") if not item.startswith(_OWN_NOTES)
            )
            if not d.primary:
                d.primary = "\n".join(_section_lines(text, "Primary request and intent"))
            return
        if message.is_meta:
            d.context_messages.append(d.cite("All user messages", handle))
            return
        cut, was_cut = _cut(text, self.user_message_chars)
        line = cut + (f" {d.cite('All user messages', handle)}" if was_cut else "")
        d.user_messages.append(line)
        if not d.primary:
            d.primary = line
        d.latest_request = line

    def _tool_use(self, d: _Digest, block: ToolUseBlock) -> None:
        d.tools[block.name] += 1
        path = next((block.input[k] for k in _PATH_KEYS if isinstance(block.input.get(k), str)), None)
        if path:
            note = d.files.setdefault(path, _FileNote(path))
            if block.name == "Read":
                offset, limit = block.input.get("offset"), block.input.get("limit")
                if offset is not None or limit is not None:
                    start = int(offset or 1)
                    end = f"{start + int(limit) - 1}" if limit is not None else "end"
                    note.actions[f"read lines {start}-{end}"] += 1
                else:
                    note.actions["read"] += 1
            else:
                note.actions[_EDIT_TOOLS.get(block.name, block.name)] += 1
        elif block.name in ("Grep", "Glob"):
            pattern = block.input.get("pattern", "")
            where = block.input.get("path") or block.input.get("glob") or ""
            d.searches.append(_one_line(f"{block.name} {pattern!r} {where}".strip(), 160))
        if block.name == "Bash" and isinstance(block.input.get("command"), str):
            program = block.input["command"].strip().split(" ", 1)[0]
            if program:
                d.programs[program] += 1
        if block.name == "TodoWrite" and isinstance(block.input.get("todos"), list):
            d.todos = [
                f"[{t.get('status', 'pending')}] {t.get('content', '')}"
                for t in block.input["todos"]
                if isinstance(t, dict)
            ]
        d.current_work = [f"{block.name}: {_one_line(_describe(block), 160)}"] + d.current_work[:2]

    def _tool_result(
        self,
        d: _Digest,
        block: ToolResultBlock,
        text: str,
        call: ToolUseBlock | None,
        by_result: dict[str | None, str],
    ) -> None:
        handle = by_result.get(block.tool_use_id)
        name = call.name if call else "tool"
        if call is not None:
            path = next((call.input[k] for k in _PATH_KEYS if isinstance(call.input.get(k), str)), None)
            if path and handle:
                note = d.files[path]
                if handle not in note.handles:
                    note.handles.append(handle)
                d.cite("Files and code sections", handle)
            if call.name == "Bash":
                outcome = "failed" if block.is_error else "ok"
                last = next((ln for ln in reversed(without_result_id(text).splitlines()) if ln.strip()), "")
                line = f"`{_one_line(str(call.input.get('command', '')), 160)}` -> {outcome}"
                if last:
                    line += f": {_one_line(last, 140)}"
                if handle:
                    line += f" {d.cite('Problem solving', handle)}"
                d.commands.append(line)
        shows_content = call is not None and call.name in _CONTENT_TOOLS
        error_lines = [] if shows_content and not block.is_error else [
            ln for ln in text.splitlines() if _ERROR_LINE.search(ln)
        ]
        if block.is_error and not error_lines and text.strip():
            error_lines = [text.strip().splitlines()[0]]
        if error_lines:
            line = f"{name}: {_one_line(error_lines[0], 200)}"
            if len(error_lines) > 1:
                line += f" (+{len(error_lines) - 1} more)"
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
                    line = _one_line(sentence, 200)
                    if line not in found:
                        found.append(line)
        d.numbers = found[-self.max_numbers :]

    # -- sections ---------------------------------------------------------

    def _sections(self, d: _Digest, head_handle: str) -> dict[str, str]:
        head = marker(head_handle)
        files = [
            f"- {note.path}: {', '.join(_actions(note.actions))}"
            + (f" {' '.join(marker(h) for h in note.handles[-2:])}" if note.handles else "")
            for note in d.files.values()
        ]
        concepts = []
        if d.tools:
            concepts.append("Tools used: " + ", ".join(f"{n} x{c}" for n, c in d.tools.most_common()))
        if d.programs:
            concepts.append("Programs run: " + ", ".join(f"{n} x{c}" for n, c in d.programs.most_common(12)))
        exts = Counter(_extension(p) for p in d.files if _extension(p))
        if exts:
            concepts.append("File types: " + ", ".join(f"{e} x{c}" for e, c in exts.most_common(10)))
        solving = [f"- {line}" for line in d.numbers]
        if d.commands:
            if d.earlier_commands:
                solving.append(f"- ({d.earlier_commands} earlier commands are in {head})")
            solving.extend(f"- {c}" for c in d.commands)
        values = [
            d.primary or "(no user request in this part)",
            "\n".join(f"- {c}" for c in concepts) or "(none recorded)",
            "\n".join(files + [f"- searched: {s}" for s in d.searches[-10:]]) or "(no files touched)",
            "\n".join(f"- {e}" for e in d.errors) or "(no errors seen)",
            "\n".join(solving) or "(nothing recorded)",
            "\n".join(_user_lines(d)) or "(none)",
            "\n".join(f"- {t}" for t in d.todos if not t.startswith("[completed]")) or "(none recorded)",
            "\n".join(f"- {w}" for w in d.current_work) or "(nothing recorded)",
            d.next_step or "(no explicit next step)",
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


_CONTEXT_NOTE = "Context messages (system reminders, restored files and skills): "
_EARLIER_NOTE = "Earlier summaries these messages were carried from: "
_OWN_NOTES = (_CONTEXT_NOTE, _EARLIER_NOTE)


def _user_lines(d: _Digest) -> list[str]:
    lines = [f"- {m}" for m in d.user_messages]
    if d.context_messages:
        lines.append("- " + _CONTEXT_NOTE + " ".join(d.context_messages))
    if d.earlier_summaries:
        lines.append("- " + _EARLIER_NOTE + " ".join(d.earlier_summaries))
    return lines


_HEADING = re.compile(r"^\s*\d+\.\s+(?P<title>[^\n:]+):\s*$", re.MULTILINE)


def _section_lines(summary: str, title: str) -> list[str]:
    """The non-empty lines under ``N. <title>:`` in a summary (any case), up to the next heading."""
    headings = list(_HEADING.finditer(summary))
    for index, heading in enumerate(headings):
        if heading.group("title").strip().lower() == title.lower():
            end = headings[index + 1].start() if index + 1 < len(headings) else len(summary)
            return [line.strip() for line in summary[heading.end() : end].splitlines() if line.strip()]
    return []


def _section_items(summary: str, title: str) -> list[str]:
    """The ``- item`` entries of a summary section, without their bullets."""
    return [line[2:] for line in _section_lines(summary, title) if line.startswith("- ")]


def _describe(block: ToolUseBlock) -> str:
    for key in ("command", "file_path", "notebook_path", "pattern", "description", "skill", "prompt"):
        value = block.input.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _actions(actions: Counter[str]) -> Iterable[str]:
    for action, count in actions.items():
        yield action if count == 1 else f"{action} x{count}"


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""
