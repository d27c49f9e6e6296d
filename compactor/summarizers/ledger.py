"""Merging messages into a ``SessionLedger``: what a compaction's head adds to the session's facts.

``merge_messages`` reads messages in order, once each, and folds what they
show into the ledger: touched paths and commands with their outcomes, errors
(and, later, what resolved them: the next successful run of the same
command, or a successful edit of the same file), the user's messages and
standing instructions, the task lists, background work, the latest request
and the assistant's latest words and calls. An earlier summary in the
messages is skipped when the ledger already holds what it summarized (the
ledger wrote it); a summary the ledger did not write (a transcript that
starts after another tool's compaction) lends its user messages and request.

The pipeline merges each head into ``SessionState.ledger``; the summary is
rendered from the ledger merged with the preserved tail as well
(``tail_view``), so that where the work stands is read at the end of
everything the model will see.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from compactor.core.ledger import (
    LedgerBackground,
    LedgerCommand,
    LedgerError,
    LedgerItem,
    LedgerMessage,
    LedgerPath,
    SessionLedger,
)
from compactor.core.messages import Message, ToolResultBlock, ToolUseBlock
from compactor.engine.dedup import without_result_id
from compactor.summarizers._errors import error_lines
from compactor.summarizers._sections import section_items, section_lines
from compactor.summarizers._thread import Background, Thread, TrackedItem
from compactor.summarizers.facts import EDIT_ACTIONS, command_first_line, touched_path
from compactor.summarizers.prompts import typed

__all__ = ["instruction_sentences", "merge_messages", "searched_path", "tail_view", "useful_last_line"]

_SEARCH_TOOLS = frozenset({"Grep", "Glob", "LS"})
_OUTPUT_CHARS = 100
_ERROR_CHARS = 180
_ACTIONS_KEPT = 4
_EDITED_KEPT = 6
_INSTRUCTION = re.compile(
    r"^(?:(?:please|and|also|but|so|ok|okay|now|then)[,\s]+)*"
    r"(?:don'?t|do not|never|always|make sure|be sure|avoid|stop|use|prefer|keep|remember|only|no need|"
    r"(?:you|we) (?:must|should|need to|have to)|let'?s not|from now on)\b"
    r"|\binstead\b|\brather than\b",
    re.IGNORECASE,
)
"""A sentence that tells the agent how to work: it starts with an imperative of that kind
("don't ...", "always ...", "use X ..."), or it says to do one thing instead of another."""
_CONTENT_COMMANDS = re.compile(
    r"^(?:cd\s+\S+\s*&&\s*)?(?:cat|head|tail|less|more|zcat|grep|egrep|rg|ag|awk|sed -n|jq|"
    r"git (?:diff|show|log|blame|grep))\b"
)
"""Shell commands that show content: an error line in what they print is the content's, not
theirs (a log read with ``tail``, a diff); only their own failure counts."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_INSTRUCTION_CHARS = 300
_REJECTED = ("The user doesn't want to proceed", "The user doesn't want to take this action")
"""How the client words a tool call the user turned down: a decision, not an error to fix."""
_NOISE_LINE = re.compile(r"^(?:Shell cwd was reset to .*|\[result-id: r\d+\]|<[^>]{0,40}>)$")
_THREE_ALNUM = re.compile(r"[^\W_][\W_]*[^\W_][\W_]*[^\W_]")
"""Three letters or digits (``str.isalnum``: ``\\w`` less the underscore) somewhere in a line."""


def _flat(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 5].rstrip() + " [...]"


def searched_path(use: ToolUseBlock) -> str | None:
    """The folder or file a search tool call looked in (``Grep``/``Glob``/``LS`` ``path``), if any."""
    if use.name not in _SEARCH_TOOLS:
        return None
    value = use.input.get("path")
    return value.strip() if isinstance(value, str) and value.strip() else None


def useful_last_line(text: str, limit: int = _OUTPUT_CHARS) -> str:
    """The last line of a command's output that says something, cut to ``limit``; "" when none does.

    Passed over: blank lines, the client's "Shell cwd was reset" notes, result
    tags, a lone tag, and lines with fewer than three letters or digits (a
    closing brace, a rule of dashes).
    """
    stripped = without_result_id(text).rstrip()
    for line in reversed(stripped[-8192:].splitlines()[-40:]):
        line = line.strip()
        if not line or _NOISE_LINE.match(line) or _THREE_ALNUM.search(line) is None:
            continue
        return _flat(line, limit)
    return ""


def instruction_sentences(text: str) -> list[str]:
    """The sentences of a typed message that tell the agent how to work, verbatim (whitespace folded)."""
    found: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip().lstrip("-*• ").strip()
        if sentence and _INSTRUCTION.search(sentence):
            found.append(_flat(sentence, _INSTRUCTION_CHARS))
    return found


def _thread_of(ledger: SessionLedger) -> Thread:
    return Thread(
        todos=[TrackedItem(t.key, t.text, t.status) for t in ledger.todos],
        tasks={k: TrackedItem(t.key, t.text, t.status) for k, t in ledger.tasks.items()},
        tracker={k: TrackedItem(t.key, t.text, t.status) for k, t in ledger.tracker.items()},
        background={
            k: Background(b.id, b.description, b.status, b.collected, b.output_file)
            for k, b in ledger.background.items()
        },
    )


def _lists_back(ledger: SessionLedger, thread: Thread) -> None:
    ledger.todos = [LedgerItem(key=t.key, text=t.text, status=t.status) for t in thread.todos]
    ledger.tasks = {k: LedgerItem(key=t.key, text=t.text, status=t.status) for k, t in thread.tasks.items()}
    ledger.tracker = {k: LedgerItem(key=t.key, text=t.text, status=t.status) for k, t in thread.tracker.items()}
    ledger.background = {
        k: LedgerBackground(
            id=b.id, description=b.description, status=b.status, collected=b.collected, output_file=b.output_file
        )
        for k, b in thread.background.items()
    }


def merge_messages(
    ledger: SessionLedger,
    messages: Sequence[Message],
    *,
    result_handles: Mapping[str, str] | None = None,
    message_handles: Mapping[int, str] | None = None,
) -> SessionLedger:
    """Fold ``messages`` into ``ledger`` (changed in place, and returned).

    ``result_handles`` maps a tool_use id to the handle its result is stored
    under, ``message_handles`` a message's index in ``messages`` to the handle
    of its own stored copy; the ledger keeps them beside the facts.
    """
    results = result_handles or {}
    stored_messages = message_handles or {}
    thread = _thread_of(ledger)
    calls: dict[str, ToolUseBlock] = {}
    wrote_before = ledger.seq > 0
    for index, message in enumerate(messages):
        seq = ledger.seq + index
        if message.is_compact_summary:
            if not wrote_before:
                _borrow(ledger, message)
            continue
        said = typed(message)
        if said is not None:
            _user(ledger, said.text, said.is_request, seq, stored_messages.get(index))
            continue
        thread.add(message)
        if message.role == "assistant":
            text = message.text().strip()
            if text:
                ledger.last_statement, ledger.last_statement_seq = text, seq
        for block in message.blocks():
            if isinstance(block, ToolUseBlock):
                calls[block.id] = block
                _call(ledger, block, seq)
            elif isinstance(block, ToolResultBlock):
                call = calls.get(block.tool_use_id)
                if call is not None:
                    _result(ledger, call, block, seq, results.get(block.tool_use_id))
    ledger.seq += len(messages)
    _lists_back(ledger, thread)
    return ledger


def tail_view(ledger: SessionLedger, tail: Sequence[Message]) -> SessionLedger:
    """A copy of ``ledger`` with ``tail`` merged too: where the work stands at the end of the context."""
    copy = SessionLedger.model_validate(ledger.model_dump())  # a deep copy, three times faster than ``deepcopy``
    return merge_messages(copy, tail)


def _user(ledger: SessionLedger, text: str, is_request: bool, seq: int, handle: str | None) -> None:
    for known in ledger.user_messages:
        if known.text == text:
            known.count += 1
            known.seq = seq
            break
    else:
        ledger.user_messages.append(LedgerMessage(text=text, seq=seq, is_request=is_request, handle=handle))
    if not is_request:
        return
    if ledger.original_goal is None:
        ledger.original_goal = text
    ledger.current_request, ledger.current_request_seq = text, seq
    for sentence in instruction_sentences(text):
        if sentence not in ledger.instructions:
            ledger.instructions.append(sentence)


def _borrow(ledger: SessionLedger, summary: Message) -> None:
    """What a summary this ledger did not write says of the user: its messages and its request."""
    text = summary.text()
    for item in section_items(text, "All user messages"):
        if not item.startswith("(") and item not in ledger.carried:
            ledger.carried.append(item)
    ledger.carried_pending = [item for item in section_items(text, "Pending tasks") if not item.startswith("(")]
    if ledger.original_goal is None:
        lines = section_lines(text, "Primary request and intent")
        goal = [line.removeprefix("- Original goal: ") for line in lines if line.startswith("- Original goal: ")]
        request = goal[0] if goal else "\n".join(line for line in lines if not line.startswith("- Current request: "))
        ledger.original_goal = request or None


def _call(ledger: SessionLedger, use: ToolUseBlock, seq: int) -> None:
    path = touched_path(use)
    if path:
        entry = ledger.paths.setdefault(path, LedgerPath(path=path))
        entry.seq = seq
        action = EDIT_ACTIONS.get(use.name, use.name)
        if use.name == "Read":
            offset, limit = use.input.get("offset"), use.input.get("limit")
            action = "read"
            if isinstance(offset, int | None) and isinstance(limit, int | None) and (offset or limit):
                start = int(offset or 1)
                action = f"read lines {start}-{start + int(limit) - 1 if limit else 'end'}"
        entry.actions[action] = entry.actions.get(action, 0) + 1
    searched = searched_path(use)
    if searched and not path:
        entry = ledger.paths.setdefault(searched, LedgerPath(path=searched))
        entry.seq = seq
        entry.actions["searched"] = entry.actions.get("searched", 0) + 1
    first = command_first_line(use)
    if first:
        command = ledger.commands.setdefault(first, LedgerCommand(first=first))
        text = str(use.input.get("command", ""))
        command.more_lines = max(0, sum(1 for line in text.splitlines() if line.strip()) - 1)
        command.runs += 1
        command.seq = seq


def _describe(use: ToolUseBlock) -> str:
    first = command_first_line(use)
    if first:
        return f"{use.name} `{_flat(first, 120)}`"
    target = touched_path(use) or searched_path(use)
    if target:
        pattern = use.input.get("pattern")
        return f"{use.name} {target}" + (f" for {_flat(pattern, 60)!r}" if isinstance(pattern, str) else "")
    for key in ("pattern", "description", "subject", "skill", "prompt", "url", "query"):
        value = use.input.get(key)
        if isinstance(value, str) and value:
            return f"{use.name}: {_flat(value, 100)}"
    return use.name


def _result(ledger: SessionLedger, call: ToolUseBlock, block: ToolResultBlock, seq: int, handle: str | None) -> None:
    text = block.text()
    first = command_first_line(call)
    # Only a shell command's own output reports errors in its lines; any other tool's output is
    # content (a file, a page, a plan) unless the call failed.
    shows_content = first is None or _CONTENT_COMMANDS.match(first) is not None
    first_error, count = (None, 0) if shows_content and not block.is_error else error_lines(text, block.is_error)
    if block.is_error and first_error is None and text.strip():
        first_error, count = text.strip().splitlines()[0], 1
    failed = block.is_error or first_error is not None
    outcome = f"failed: {_flat(first_error or '', 120)}" if failed else "ok"

    path = touched_path(call) or searched_path(call)
    if path and path in ledger.paths:
        entry = ledger.paths[path]
        entry.last_outcome = outcome
        if handle:
            entry.handle = handle
    command = ledger.commands.get(first) if first else None
    if command is not None:
        if block.is_error:
            command.failed += 1
        else:
            command.ok += 1
        command.last_output = useful_last_line(text)
    ledger.last_actions = [*ledger.last_actions[-(_ACTIONS_KEPT - 1) :], f"{_describe(call)} -> {outcome}"]
    ledger.last_action_seq = seq

    key = first or touched_path(call) or call.name
    if block.is_error and text.lstrip().startswith(_REJECTED):
        decision = f"The user turned down this call: {_describe(call)}"
        if decision not in ledger.instructions:
            ledger.instructions.append(decision)
        return
    if failed and first_error is not None:
        ledger.errors.append(
            LedgerError(
                tool=call.name,
                key=key,
                line=_flat(first_error, _ERROR_CHARS),
                more=max(0, count - 1),
                handle=handle,
                seq=seq,
            )
        )
        return
    if failed:
        return
    edited = touched_path(call) if call.name in EDIT_ACTIONS else None
    for error in ledger.errors:
        if error.resolved is not None:
            continue
        if first and _same_command(error.key, first):
            fixes = f"after editing {', '.join(_short(error.edited_since))}, " if error.edited_since else ""
            again = "ran ok again" if error.key == first else f"ran ok as `{_flat(first, 120)}`"
            error.resolved = f"{fixes}`{_flat(error.key, 120)}` {again}" if error.tool == "Bash" else f"{fixes}{again}"
        elif edited and error.key == edited:
            error.resolved = f"{EDIT_ACTIONS[call.name]} successfully afterwards"
        elif error.key == call.name == error.tool:
            error.resolved = f"a later {call.name} call went through"
        elif edited and edited not in error.edited_since and len(error.edited_since) < _EDITED_KEPT:
            error.edited_since.append(edited)


def _short(paths: list[str]) -> list[str]:
    """File names, for a line that says which files an error's fix touched."""
    return [p.rstrip("/").rsplit("/", 1)[-1] for p in paths]


_WRAPPERS = re.compile(
    r"^(?:cd\s+\S+\s*(?:&&|;)\s*)?(?:(?:uv|poetry|pdm|hatch|pipenv)\s+run\s+|npx\s+|pnpm\s+(?:exec\s+)?|"
    r"yarn\s+|bunx\s+|python3?\s+-m\s+|env\s+(?:\w+=\S+\s+)*|(?:\w+=\S+\s+)+)?"
)
"""What runs a program without being it: a leading ``cd DIR &&``, ``uv run``, ``npx``, ``python -m``,
variable assignments."""


def _same_command(failed: str, ran: str) -> bool:
    """Whether a successful run ``ran`` answers the failed command ``failed``: the same first line,
    or the same program and first argument once what merely runs it is set aside
    (``uv run pytest -x tests/a.py`` then ``pytest tests/a.py``; but ``ruff check`` is not
    answered by ``ruff format``)."""
    if failed == ran:
        return True
    a = _WRAPPERS.sub("", failed, count=1).split()
    b = _WRAPPERS.sub("", ran, count=1).split()
    return len(a) >= 2 and len(b) >= 2 and a[:2] == b[:2]
