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

from compactor.core.client_text import REFUSAL_REASON, REFUSED
from compactor.core.ledger import (
    COMMITS_KEPT,
    DECISIONS_KEPT,
    REPORTS_KEPT,
    LedgerBackground,
    LedgerCommand,
    LedgerError,
    LedgerItem,
    LedgerMessage,
    LedgerPath,
    LedgerReport,
    SessionLedger,
)
from compactor.core.messages import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from compactor.engine.dedup import without_result_id
from compactor.summarizers._errors import error_detail, error_lines
from compactor.summarizers._sections import section_items, section_lines
from compactor.summarizers._thread import Background, Thread, TrackedItem
from compactor.summarizers.facts import (
    EDIT_ACTIONS,
    check_program,
    command_first_line,
    commit_subject,
    commits_work,
    defined_names,
    edit_lines,
    edit_text,
    removed_paths,
    shows_content,
    touched_path,
    wrap_up_steps,
)
from compactor.summarizers.ledger_words import Words, decision_of
from compactor.summarizers.prompts import queued, typed
from compactor.summarizers.statements import flat

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
_SENTENCE_END = re.compile(r"(?<=[^\s.][.!?])\s+|\n+")
"""A sentence ends at a stop after a word, not at a lone dot ("uv tool install . --reinstall")."""
_INSTRUCTION_CHARS = 300
_OF_THE_MOMENT = re.compile(r"\b(?:this|these|those|yet|as well|for now|right now)\b(?![-_/.]\w)", re.I)
"""Words that tie a sentence to the moment ("don't check this in", "we should do a commit as well"):
an instruction for the work at hand, not a standing rule."""
_PASTED_CHARS = 1_500
_PLUMBING = re.compile(
    r"<tool_use_error>|Sibling tool call errored|File does not exist|File has not been read yet|"
    r"has been modified since (?:it was )?read|String to replace not found|Found \d+ matches of the string|"
    r"No such file or directory|Is a directory|EISDIR|ENOENT|does not exist\.?\s*$|"
    r"File content \(\d+ tokens\) exceeds|InputValidationError|Request interrupted|Interrupted by user",
    re.I,
)
"""How a tool reports a call that went wrong on its way (a sibling call failed, a file probed for
is not there, an edit that must be retried): plumbing, neither an error of the work nor a next step."""
_BARE_EXIT = re.compile(r"^\W*Exit code \d+\W*$")
_COMMENT_LINE = re.compile(r"^\s*(?://|#|/\*|\*|--|;|<!--|[+-](?![+-])|>|\d+[→\t])")
"""A line of code, a diff or a numbered file line: an error word there is the content's, not a failure."""
_WORDS_KEPT = 4
_REPORT_CHARS = 2_000
_ASKED_CHARS = 300
_WORDS_CHARS = 600
_NOISE_LINE = re.compile(r"^(?:Shell cwd was reset to .*|\[result-id: r\d+\]|<[^>]{0,40}>)$")
_THREE_ALNUM = re.compile(r"[^\W_][\W_]*[^\W_][\W_]*[^\W_]")
"""Three letters or digits (``str.isalnum``: ``\\w`` less the underscore) somewhere in a line."""


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
        return flat(line, limit)
    return ""


def instruction_sentences(text: str) -> list[str]:
    """The sentences of a typed message that tell the agent how to work, verbatim (whitespace folded)."""
    found: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip().lstrip("-*• ").strip()
        if (
            sentence
            and _INSTRUCTION.search(sentence)
            and not sentence.endswith("?")
            and not _OF_THE_MOMENT.search(sentence)
        ):
            found.append(flat(sentence, _INSTRUCTION_CHARS))
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
    words = Words()
    last_edits: dict[str, ToolUseBlock] = {}
    for index, message in enumerate(messages):
        seq = ledger.seq + index
        if message.is_compact_summary:
            if not wrote_before:
                _borrow(ledger, message)
            continue
        said = typed(message)
        if said is not None:
            _user(ledger, said.text, said.is_request, seq, stored_messages.get(index))
            words.awaiting.clear()
            continue
        for text in queued(message):
            if not text.startswith("<task-notification>"):
                _user(ledger, text, not text.startswith("/"), seq, None)
        if message.role == "user" and "<task-notification>" in message.text():
            ledger.last_notification_seq = seq
        thread.add(message)
        if message.role == "assistant":
            text = message.text().strip()
            if text:
                ledger.last_statement, ledger.last_statement_seq = text, seq
                ledger.recent_words = [*ledger.recent_words, flat(text, _WORDS_CHARS)][-_WORDS_KEPT:]
        for block in message.blocks():
            if isinstance(block, TextBlock | ThinkingBlock) and message.role == "assistant":
                words.said(ledger, block, seq)
            elif isinstance(block, ToolUseBlock):
                calls[block.id] = block
                if block.name in EDIT_ACTIONS:
                    words.edited(ledger, edit_text(block))
                _call(ledger, block, seq, words.why() if block.name in EDIT_ACTIONS else "", last_edits)
            elif isinstance(block, ToolResultBlock):
                words.called()
                call = calls.get(block.tool_use_id)
                if call is not None:
                    error = _result(ledger, call, block, seq, results.get(block.tool_use_id))
                    if error is not None:
                        words.awaiting.append(error)
    words.finish(ledger)
    for path, use in last_edits.items():  # only a path's last edit is kept: the others are not shown
        ledger.paths[path].last_edit = edit_lines(use)
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
    if ledger.last_statement_seq > max(ledger.current_request_seq, ledger.last_action_seq):
        decision = decision_of(ledger.last_statement, text)  # a reply to the options it had just offered
        if decision:
            ledger.decisions = [*ledger.decisions, decision][-DECISIONS_KEPT:]
    _report(ledger)
    if ledger.original_goal is None:
        ledger.original_goal = text
    ledger.current_request, ledger.current_request_seq = text, seq
    ledger.recent_words = []
    for error in ledger.errors:
        if error.resolved is None:
            error.resolved, error.resolved_by, error.resolved_seq = (
                "the user moved on to a new request",
                "moved_on",
                seq,
            )
    if len(text) > _PASTED_CHARS:  # a pasted plan, document or log: its imperatives are not the user's rules
        return
    for sentence in instruction_sentences(text):
        if sentence not in ledger.instructions:
            ledger.instructions.append(sentence)


def _report(ledger: SessionLedger) -> None:
    """Keep the assistant's answer to the request before a new one: its last words of that turn,
    when they came after its last tool call (a turn the user cut short has no answer)."""
    if ledger.last_statement_seq <= max(ledger.current_request_seq, ledger.last_action_seq):
        return
    text = ledger.last_statement.strip()
    if len(text) > _REPORT_CHARS:
        text = text[:_REPORT_CHARS].rstrip() + " [...]"
    asked = flat(ledger.current_request or "", _ASKED_CHARS)
    ledger.reports = [*ledger.reports, LedgerReport(text=text, seq=ledger.last_statement_seq, asked=asked)][
        -REPORTS_KEPT:
    ]


def _borrow(ledger: SessionLedger, summary: Message) -> None:
    """What a summary this ledger did not write says of the user: its messages and its request."""
    text = summary.text()
    for item in section_items(text, "All user messages"):
        if not _placeholder(item) and item not in ledger.carried:
            ledger.carried.append(item)
    ledger.carried_pending = [item for item in section_items(text, "Pending tasks") if not _placeholder(item)]
    if ledger.original_goal is None:
        lines = section_lines(text, "Primary request and intent")
        ours = [m for line in lines if (m := _CURRENT.match(line) or _LISTED.match(line))]
        goal = [line.removeprefix("- Original goal: ") for line in lines if line.startswith("- Original goal: ")]
        if ours:
            request = ours[0].group(1)
        elif goal:
            request = goal[0]
        else:
            request = "\n".join(line for line in lines if not line.startswith("- Current request: "))
        ledger.original_goal = request or None


_CURRENT = re.compile(
    r'^(?:The user\'s current request, verbatim|Current request): "(.*)"(?: <<ccr:[^>]+>>| \(whole in the stored conversation\))?$',
    re.S,
)
_LISTED = re.compile(
    r'^- "(.*)"(?: <<ccr:[^>]+>>| \(whole in the stored conversation\))?(?: \(the current request[^)]*\))?$', re.S
)
"""How a briefing states the requests (``compactor.summarizers.briefing``): the current one on its own
line (worded as earlier versions did, too), the ones around it as a list; the text between the quotes."""


def _placeholder(item: str) -> bool:
    """Whether a section's item only says there is nothing: "(none)", "(no open tasks)"."""
    return item.startswith("(") and item.endswith(")") and item.count("(") == 1


_SYMBOLS_KEPT = 8


def _call(ledger: SessionLedger, use: ToolUseBlock, seq: int, why: str, last_edits: dict[str, ToolUseBlock]) -> None:
    ledger.calls_since_words += 1
    path = touched_path(use)
    if path:
        entry = ledger.paths.get(path)
        if entry is None:
            entry = ledger.paths[path] = LedgerPath(path=path)
        entry.seq = seq
        if use.name in EDIT_ACTIONS:
            ledger.wrap_up = []
            for error in ledger.errors[-_FIX_LOOKBACK:]:
                # The first edit after an open error: its words are the fix.
                if error.resolved is None and not error.edited_since and not error.fix and why:
                    error.fix = why
            entry.edit_seq, entry.deleted = seq, False
            entry.why = why or entry.why
            last_edits[path] = use  # shown as of the merge's last edit of the path (``merge_messages``)
            for name in defined_names(use):
                if name in entry.symbols:
                    entry.symbols.remove(name)
                entry.symbols = [*entry.symbols, name][-_SYMBOLS_KEPT:]
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
        entry = ledger.paths.get(searched)
        if entry is None:
            entry = ledger.paths[searched] = LedgerPath(path=searched)
        entry.seq = seq
        entry.actions["searched"] = entry.actions.get("searched", 0) + 1
    first = command_first_line(use)
    if first:
        command = ledger.commands.get(first)
        if command is None:
            command = ledger.commands[first] = LedgerCommand(first=first)
        text = str(use.input.get("command", ""))
        command.more_lines = max(0, sum(1 for line in text.splitlines() if line.strip()) - 1)
        command.runs += 1
        command.seq = seq


def _describe(use: ToolUseBlock) -> str:
    first = command_first_line(use)
    if first:
        return f"{use.name} `{flat(first, 120)}`"
    target = touched_path(use) or searched_path(use)
    offset, limit = use.input.get("offset"), use.input.get("limit")
    if target and use.name == "Read" and isinstance(offset, int) and isinstance(limit, int):
        return f"Read {target} lines {offset}-{offset + limit - 1}"
    if target:
        pattern = use.input.get("pattern")
        return f"{use.name} {target}" + (f" for {flat(pattern, 60)!r}" if isinstance(pattern, str) else "")
    for key in ("pattern", "description", "subject", "skill", "prompt", "url", "query"):
        value = use.input.get(key)
        if isinstance(value, str) and value:
            return f"{use.name}: {flat(value, 100)}"
    return use.name


def _first_error(text: str, failed: bool, first_error: str | None, count: int) -> tuple[str | None, int]:
    """The error line to show: past a bare ``Exit code N`` to the line that says what failed, and
    never a line of code, a diff or a numbered file line in a result that did not fail."""
    if first_error is None:
        return None, 0
    if not failed and _COMMENT_LINE.match(first_error):
        rest = [
            line
            for line in text.splitlines()
            if line.strip() and not _COMMENT_LINE.match(line) and error_lines(line, False)[0] is not None
        ]
        return (rest[0], len(rest)) if rest else (None, 0)
    if _BARE_EXIT.match(first_error) and count > 1:
        for line in text.splitlines():
            if line.strip() and not _BARE_EXIT.match(line) and error_lines(line, failed)[0] is not None:
                return line.strip(), count - 1
    return first_error, count


def _result(
    ledger: SessionLedger, call: ToolUseBlock, block: ToolResultBlock, seq: int, handle: str | None
) -> LedgerError | None:
    """Fold one tool result in; returns the error it recorded, if any."""
    text = block.text()
    first = command_first_line(call)
    # Only a shell command's own output reports errors in its lines; any other tool's output is
    # content (a file, a page, a plan) unless the call failed.
    is_content = first is None or shows_content(first)
    first_error, count = (None, 0) if is_content and not block.is_error else error_lines(text, block.is_error)
    first_error, count = _first_error(text, block.is_error, first_error, count)
    if block.is_error and first_error is None and text.strip():
        first_error, count = text.strip().splitlines()[0], 1
    failed = block.is_error or first_error is not None
    outcome = f"failed: {flat(first_error or '', 120)}" if failed else "ok"
    if call.name in ("EnterPlanMode", "ExitPlanMode") and not block.is_error:  # a plan turned down: still planning
        ledger.plan_mode = call.name == "EnterPlanMode"

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
            if not failed:
                command.ok_seq = seq
        command.last_output = useful_last_line(text)
    ledger.last_actions = [*ledger.last_actions[-(_ACTIONS_KEPT - 1) :], f"{_describe(call)} -> {outcome}"]
    ledger.last_action_seq = seq

    key = first or touched_path(call) or call.name
    if block.is_error and text.lstrip().startswith(REFUSED):
        # Turned down: an instruction only when the user typed why, and then in their words.
        reason = REFUSAL_REASON.search(text)
        if reason is not None and reason.group(1).strip():
            _user(ledger, reason.group(1).strip(), True, seq, None)  # the user's own words, typed with the refusal
        return None
    if failed and first_error is not None:
        if _is_plumbing(first, first_error, text, count):
            return None
        error = LedgerError(
            tool=call.name,
            key=key,
            line=flat(first_error, _ERROR_CHARS),
            more=max(0, count - 1),
            handle=handle,
            seq=seq,
            detail=error_detail(text, first_error),
        )
        ledger.errors.append(error)
        return error
    if failed:
        return None
    if first is not None:
        _shell_effects(ledger, str(call.input.get("command", "")), seq)
        if _TRACKER_CLI.match(first):
            _titles(ledger, text)
    edited = touched_path(call) if call.name in EDIT_ACTIONS else None
    # The check a run performs matters only to an error still open.
    check = check_program(first) if first and any(e.resolved is None for e in ledger.errors) else None
    for error in ledger.errors:
        if error.resolved is not None:
            continue
        if first and _same_command(error.key, first):
            fixes = f"after editing {', '.join(_short(error.edited_since))}, " if error.edited_since else ""
            if error.key != first:  # the same step, run another way
                error.resolved = f"{fixes}a later `{flat(first, 120)}` ran ok"
            elif error.tool == "Bash":
                error.resolved = f"{fixes}`{flat(error.key, 120)}` ran ok again"
            else:
                error.resolved = f"{fixes}ran ok again"
            error.resolved_by = "rerun"
        elif check and error.tool == "Bash" and check_program(error.key) == check:
            error.resolved, error.resolved_by = f"a later `{flat(first or check, 120)}` ran ok", "check"
        elif edited and error.key == edited:
            error.resolved, error.resolved_by = f"{EDIT_ACTIONS[call.name]} successfully afterwards", "edit"
        elif error.key == call.name == error.tool:
            error.resolved, error.resolved_by = f"a later {call.name} call went through", "call"
        elif first and commits_work(first):
            error.resolved, error.resolved_by = f"the work was committed afterwards (`{flat(first, 120)}`)", "commit"
        elif edited and edited not in error.edited_since and len(error.edited_since) < _EDITED_KEPT:
            error.edited_since.append(edited)
        if error.resolved is not None:
            error.resolved_seq = seq
    return None


def _is_plumbing(first: str | None, line: str, text: str, count: int) -> bool:
    """Whether a failed call is plumbing (``_PLUMBING``), or a probe that found nothing: a bare
    ``Exit code N`` from a command that runs no check."""
    if _PLUMBING.search(line) or _PLUMBING.search(text[:400]):
        return True
    return bool(_BARE_EXIT.match(line) and count <= 1 and (first is None or check_program(first) is None))


def _shell_effects(ledger: SessionLedger, command: str, seq: int) -> None:
    """What a shell command that went through did to the session: a commit or push, removed files."""
    first = _first_line(command)
    for step in wrap_up_steps(first):
        step = flat(step, 120)
        ledger.wrap_up = [*(c for c in ledger.wrap_up if c != step), step][-_WRAP_UP_KEPT:]
    if commits_work(command):
        ledger.last_commit_seq, ledger.last_commit = seq, flat(first, 160)
        ledger.routine = list(ledger.wrap_up)
        if subject := commit_subject(command):
            ledger.commits = [*ledger.commits, flat(subject, 160)][-COMMITS_KEPT:]
    for gone in removed_paths(command):
        gone = gone.rstrip("/")
        for path, entry in ledger.paths.items():
            if gone and (path == gone or path.endswith("/" + gone) or path.startswith(gone + "/")):
                entry.deleted = True


_WRAP_UP_KEPT = 8
_FIX_LOOKBACK = 8
"""How many of the latest errors an edit's words can be the fix of."""

_TRACKER_CLI = re.compile(r"^(?:cd\s+\S+\s*&&\s*)?(?:bd|beads|gh|glab|jira|linear|tea)\s")
_TITLE = re.compile(r"(?:^|[\s(\[])((?:[A-Za-z][\w]*-[\w.]*\d[\w.]*)|#\d+)\]?:\s+([^\n●|]{4,140})", re.M)
_TITLES_KEPT = 200


def _titles(ledger: SessionLedger, output: str) -> None:
    """Remember the item titles a tracker printed (``spotter-gqc.6: Close the review session``)."""
    for key, title in _TITLE.findall(output[:20_000]):
        title = " ".join(title.split()).strip(" -")
        if key not in ledger.titles and len(ledger.titles) < _TITLES_KEPT and len(title.split()) >= 2:
            ledger.titles[key] = title


def _first_line(command: str) -> str:
    return next((line.strip() for line in command.splitlines() if line.strip()), command)


def _short(paths: list[str]) -> list[str]:
    """File names, for a line that says which files an error's fix touched."""
    return [p.rstrip("/").rsplit("/", 1)[-1] for p in paths]


_WRAPPERS = re.compile(
    r"^(?:cd\s+\S+\s*(?:&&|;)\s*)?(?:(?:uv|poetry|pdm|hatch|pipenv)\s+run\s+|npx\s+|pnpm\s+(?:exec\s+)?|"
    r"yarn\s+|bunx\s+|python3?\s+-m\s+|env\s+(?:\w+=\S+\s+)*|(?:\w+=\S+\s+)+)?"
)
"""What runs a program without being it: a leading ``cd DIR &&``, ``uv run``, ``npx``, ``python -m``,
variable assignments."""


_TASK_VERBS = frozenset({"run", "exec", "run-script", "task", "x"})


def _same_command(failed: str, ran: str) -> bool:
    """Whether a successful run ``ran`` answers the failed command ``failed``: the same first line,
    or the same program and first argument once what merely runs it is set aside
    (``uv run pytest -x tests/a.py`` then ``pytest tests/a.py``; but ``ruff check`` is not
    answered by ``ruff format``)."""
    if failed == ran:
        return True
    a = _WRAPPERS.sub("", failed, count=1).split()
    b = _WRAPPERS.sub("", ran, count=1).split()
    # ``mise run test`` is not answered by ``mise run fmt``: a task runner's task is part of the program.
    n = 3 if len(a) >= 2 and a[1] in _TASK_VERBS else 2
    return len(a) >= n and len(b) >= n and a[:n] == b[:n]
