"""Where the work stands at a compaction: the judgements a briefing and the plugin's text share.

``work_state`` reads a ledger (with the kept tail merged) as a colleague taking over would: which
typed request is the current one (not a bare "continue" or an aside), which errors are still open
(``ledger.merge_messages`` resolves the rest), which files the current work changed and which of
them no check has covered since, what the assistant said it was about to do, which background work
waits, and whether the work is done (committed after its last change, checked clean after it, or
reported done), a task list left showing finished work in progress included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from compactor.core.ledger import (
    LedgerBackground,
    LedgerError,
    LedgerItem,
    LedgerMessage,
    LedgerPath,
    LedgerStatement,
    SessionLedger,
)
from compactor.summarizers.facts import OUTPUT_PLUMBING, changes_state, check_program, inspects, plain_check
from compactor.summarizers.statements import flat, sentences

__all__ = [
    "WorkState",
    "corrections",
    "edited_since_plan",
    "is_follow_up",
    "is_probe",
    "item_line",
    "last_edit_seq",
    "session_checks",
    "work_state",
]

_FOLLOW_UP = re.compile(
    r"^(?:please\s+)?(?:continue|go on|go ahead|carry on|keep going|proceed|yes|yep|yeah|ok(?:ay)?|sure|do it|"
    r"check again|try again|again|retry|next|thanks?|thank you|great|good|perfect|done\??|and\??|status\??|"
    r"what now\??|lgtm|ship it|sounds good|looks good)[.!?]*$",
    re.I,
)
_REMARK_WORDS = 12
_ASKING = frozenset(
    [
        "can",
        "could",
        "would",
        "will",
        "should",
        "let's",
        "lets",
        "please",
        "add",
        "make",
        "fix",
        "implement",
        "create",
        "write",
        "run",
        "update",
        "change",
        "remove",
        "delete",
        "rename",
        "move",
        "check",
        "test",
        "look",
        "review",
        "explain",
        "show",
        "tell",
        "find",
        "use",
        "try",
        "build",
        "refactor",
        "merge",
        "rebase",
        "commit",
        "push",
        "open",
        "start",
        "stop",
        "do",
        "go",
        "continue",
        "investigate",
        "debug",
        "help",
        "describe",
        "list",
        "set",
        "get",
        "install",
        "deploy",
        "read",
        "keep",
        "ship",
        "split",
        "clean",
        "draft",
        "respond",
        "reply",
        "mark",
        "port",
        "revert",
        "undo",
        "restore",
        "switch",
        "give",
        "tackle",
        "handle",
        "address",
        "finish",
        "complete",
        "resolve",
        "wire",
        "document",
        "log",
        "note",
        "bump",
        "pick",
    ]
)
"""Words a request asks with: a verb of work, a polite form."""


def _is_remark(text: str) -> bool:
    """Whether a short typed message comments on the work rather than asking for it ("that was a while
    back", "I think the reuse is for ..."): under ``_REMARK_WORDS`` words, no question, no word that
    asks for work ("new beads were added. tackle them" asks)."""
    text = text.strip()
    if len(text.split()) >= _REMARK_WORDS or "?" in text:
        return False
    return not any(word in _ASKING for word in re.findall(r"[a-z']+", text.lower()))


_DONE_WORDS = re.compile(
    r"\b(?:done|complete[d]?|finished|implemented|all (?:\d+ )?tests? pass|tests? pass|0 failures|pushed|committed|"
    r"merged|ready for review|all green|summary of (?:the )?changes|here'?s (?:a |the )?summary|everything (?:is )?in place)\b",
    re.I,
)
_FILES_SHOWN = 6
_READ_SHOWN = 10


def _substantive(text: str) -> bool:
    """Whether a typed request sets work rather than steering it: not a bare "continue", not an aside
    in parentheses ("(I'm not sure, but it did start with an 'e')") and not a short remark ("that
    was a little while back"): those steer the request before them."""
    text = text.strip()
    aside = text.startswith("(") and text.rstrip(".!?").endswith(")")
    return text.startswith("/") or not (is_follow_up(text) or aside or _is_remark(text))


def is_probe(error: LedgerError) -> bool:
    """Whether a failed shell command only looked at something (``facts.inspects``): what it printed
    is evidence for the work, not an error of it."""
    return error.tool == "Bash" and check_program(error.key) is None and inspects(error.key)


def is_follow_up(text: str) -> bool:
    """Whether a typed request only tells the agent to go on ("continue", "check again")."""
    return _FOLLOW_UP.match(text.strip()) is not None


@dataclass
class WorkState:
    """Where the work stands at the cut (see ``work_state``)."""

    request: LedgerMessage | None
    """The latest substantive request (not a bare "continue")."""
    follow_up: LedgerMessage | None
    """A bare follow-up typed after ``request`` ("check again"), if any."""
    since: int
    """The ``seq`` from which the current work counts: the latest typed request."""
    open_items: list[LedgerItem]
    in_progress: list[LedgerItem]
    open_errors: list[LedgerError]
    current_files: list[LedgerPath]
    """Files edited or written since ``since`` (newest first), else the newest edited ones."""
    read_files: list[LedgerPath]
    """Files read and never edited, newest first."""
    check: str | None
    """The session's latest test, lint or build command (never one that changes state)."""
    finished: str | None
    """Why the work counts as done, or None while something is open."""
    unanswered: bool
    """The latest typed request has had no answer yet."""
    results: list[LedgerStatement] = field(default_factory=list)
    """The assistant's statements of results since ``since``."""
    running: list[LedgerBackground] = field(default_factory=list)
    """Background work still running, its output not collected."""
    arrived: list[LedgerBackground] = field(default_factory=list)
    """Background work that finished after the assistant's last word or call, its output not read yet."""
    unverified: list[LedgerPath] = field(default_factory=list)
    """Files changed since the request and after the last check that ran clean."""
    intent: str | None = None
    """What the assistant's last words say it was about to do, when they say it."""
    read_since: list[LedgerPath] = field(default_factory=list)
    """Files read since the request (newest first)."""
    stale_items: list[LedgerItem] = field(default_factory=list)
    """Items the list still shows in progress although the work is done."""
    changed_since: list[LedgerPath] = field(default_factory=list)
    """Files edited or written since ``since``, committed or not (newest first)."""
    offer: str | None = None
    """What the assistant last offered or proposed to do ("Want me to ...?"), while nothing was
    changed since and the work is not done."""


def _requests(view: SessionLedger) -> list[LedgerMessage]:
    return [m for m in view.user_messages if m.is_request]


def last_edit_seq(view: SessionLedger) -> int:
    return max((p.edit_seq for p in view.paths.values()), default=-1)


def work_state(view: SessionLedger) -> WorkState:
    """The judgements a briefing makes of ``view`` (the ledger with the tail merged).

    - the request: the latest typed request that is more than a follow-up;
    - an error is open only when nothing resolved it (``ledger.merge_messages``: a later success of
      the command or of its check, the file edited, the work committed, the user moving on) and it
      came after the latest request;
    - the work is finished when nothing is in progress or open and, since the latest request, the
      work was committed after its last edit, or a check ran clean after it, or the assistant's last
      words (after its last call) report it done.
    """
    requests = _requests(view)
    substantive = [m for m in requests if _substantive(m.text)]
    request = substantive[-1] if substantive else (requests[-1] if requests else None)
    latest = requests[-1] if requests else None
    follow_up = latest if latest is not None and latest is not request else None
    since = view.current_request_seq
    open_items = view.open_items()
    in_progress = [i for i in open_items if i.status == "in_progress"]
    # A probe that failed is open only while nothing was done after it.
    open_errors = [
        e
        for e in view.errors
        if e.resolved is None and e.seq > since and not (is_probe(e) and view.last_action_seq > e.seq)
    ]
    paths = sorted(view.paths.values(), key=lambda p: -p.edit_seq)
    edited = [p for p in paths if p.edit_seq >= 0 and not p.deleted]
    # What the current request changed and has not committed yet (a commit closes a piece of the work).
    current = [p for p in edited if p.edit_seq > max(since, view.last_commit_seq)]
    read = [
        p
        for p in sorted(view.paths.values(), key=lambda p: -p.seq)
        if p.edit_seq < 0 and not p.deleted and any(a.startswith("read") for a in p.actions)
    ]
    read_since = [p for p in read if p.seq > since]
    checks = sorted(
        (c for c in view.commands.values() if check_program(c.first) and not changes_state(c.first)),
        key=lambda c: -c.seq,
    )
    recent_checks = [c for c in checks if c.seq > since]
    last_clean = max((c.ok_seq for c in checks), default=-1)
    unverified = [p for p in current if p.edit_seq > last_clean]
    # The check to propose: one this work ran, else (changes wait for one) the session's latest; a
    # plain one (checks alone) before one joined to a probe of the work before.
    plain = [c for c in checks if plain_check(c.first)]
    recent_plain = [c for c in plain if c.seq > since]
    proposed = recent_plain or ((plain or recent_checks or checks) if unverified else recent_checks)
    check = proposed[0].first if proposed else None
    last_edit = last_edit_seq(view)
    unanswered = latest is not None and latest.seq > max(view.last_statement_seq, view.last_action_seq)
    results = [s for s in view.statements if s.kind == "result" and s.seq > since]
    running = [b for b in view.background.values() if b.status == "running" and not b.collected]
    fresh = view.last_notification_seq > max(view.last_statement_seq, view.last_action_seq)
    arrived = [b for b in view.background.values() if b.status != "running" and not b.collected] if fresh else []
    words = view.recent_words[-1] if view.recent_words else ""
    spoke_last = view.last_statement_seq > view.last_action_seq
    reported_done = spoke_last and _DONE_WORDS.search(words) is not None
    checked_clean = bool(checks) and checks[0].ok_seq > max(since, last_edit) and checks[0].ok_seq >= checks[0].seq
    finished: str | None = None
    stale: list[LedgerItem] = []
    if in_progress and checked_clean and not (unanswered or open_errors or running or arrived):
        # A list left showing finished work: reported done, or an item that is itself the checking.
        stale = [i for i in in_progress if reported_done or _CHECKING.search(i.text)]
        open_items = [i for i in open_items if i not in stale]
        in_progress = [i for i in in_progress if i not in stale]
    if not (unanswered or in_progress or open_items or open_errors or running or arrived) and since >= 0:
        if view.last_commit_seq > max(since, last_edit):
            finished = f"the work was committed after its last change (`{flat(view.last_commit, 120)}`)"
        elif checked_clean:
            finished = f"`{flat(checks[0].first, 120)}` ran clean after the last change"
        elif reported_done:
            finished = f'the assistant reported: "{flat(_first_sentence(words), 240)}"'
    # Words after the last call say what comes next; words before a call were acted on since.
    intent = None if finished or reported_done or not spoke_last else _intent(words)
    offer = None if finished else _open_offer(view, words if spoke_last else "", last_edit)
    return WorkState(
        request=request,
        follow_up=follow_up,
        since=since,
        open_items=open_items,
        in_progress=in_progress,
        open_errors=open_errors,
        current_files=current[:_FILES_SHOWN],
        read_files=read[:_READ_SHOWN],
        check=check,
        finished=finished,
        unanswered=unanswered,
        results=results,
        running=running,
        arrived=arrived,
        unverified=unverified,
        intent=intent,
        read_since=read_since[:_FILES_SHOWN],
        stale_items=stale,
        offer=offer,
        changed_since=[p for p in edited if p.edit_seq > since][:_FILES_SHOWN],
    )


_CHECKING = re.compile(r"\b(?:run|running)\b.*\b(?:tests?|lint|fmt|format|checks?|build|ci)\b|\bverify\b", re.I)
"""A list item that is itself the checking ("Run fmt, lint, and tests"): a clean check after the last
change finishes it."""
_INTENT = re.compile(
    r"\b(?:I need to|I'll|I will|I'm going to|let me|now I|next,? I|then I|we need to|still need|left to|remaining)\b"
    r"|^(?:now|next|then),?\s+(?:let'?s\s+)?(?:check|fix|add|update|remove|run|read|look|write|edit|implement|test|verify)\b",
    re.I,
)


def _intent(words: str) -> str | None:
    """The last sentence of the assistant's last words that says what it was about to do."""
    found = [s for s in sentences(words) if _INTENT.search(s) and len(s.split()) >= 4]
    return flat(found[-1], 300) if found else None


_OFFER = re.compile(
    r"\b(?:want me to|would you like (?:me )?to|shall I|should I|do you want me to|if you(?:'d)? like,? I|"
    r"I can (?:also )?(?:add|implement|fix|make|update|write|change|remove|create|run|do)|ready to (?:implement|proceed))\b",
    re.I,
)
_OFFERS_BACK = 3


def _open_offer(view: SessionLedger, words: str, last_edit: int) -> str | None:
    """What the assistant's current words or one of its last answers offered to do, when no edit came
    after it (an offer taken up leaves edits behind)."""
    candidates = [(view.last_statement_seq, words)] if words else []
    candidates += [(r.seq, r.text) for r in reversed(view.reports[-_OFFERS_BACK:])]
    for seq, text in candidates:
        if seq < last_edit:
            break
        said = sentences(text)
        for index in range(len(said) - 1, -1, -1):
            if _OFFER.search(said[index]):
                offer = said[index]
                if len(offer.split()) < 8 and index > 0:  # "Want me to do that?" says it with the sentence before
                    offer = f"{said[index - 1]} {offer}"
                return flat(offer, 400)
    return None


def _first_sentence(text: str) -> str:
    said = sentences(text)
    return said[0] if said else text


def item_line(item: LedgerItem, view: SessionLedger, *, status: bool = True) -> str:
    """An open item as a reader wants it: its id, its state (unless ``status`` is false: the line
    around it says it) and its title."""
    state = f" ({item.status.replace('_', ' ')})" if status else ""
    if item.key in view.tracker and view.tracker[item.key] is item:
        title = view.titles.get(item.key)
        return f"{item.key}{state}" + (f": {title}" if title else "")
    if item.key in view.tasks and view.tasks[item.key] is item:
        return f"task #{item.key}{state}: {flat(item.text, 200)}"
    return f"{state.strip()} {flat(item.text, 200)}".strip()


_NAMED_FILE = re.compile(r"[\w.-]+\.[A-Za-z]{1,5}\b")
"""A file name with its extension, as a plan step names one (``manual_commit.go``)."""


def edited_since_plan(view: SessionLedger, step: str) -> bool:
    """Whether a step of the assistant's plan names a file edited after the plan was laid out: a step
    the work may have done since (a reader took such a step, shown bare, as still to do)."""
    named = _NAMED_FILE.findall(step)
    return any(
        entry.path.rsplit("/", 1)[-1] in named
        for entry in view.paths.values()
        if entry.edit_seq >= view.plan_seq and not entry.deleted  # one message may hold both
    )


def session_checks(view: SessionLedger, limit: int = 4) -> list[str]:
    """The distinct test, lint and build commands of the session, newest first, without their
    output plumbing (``2>&1 | tail -5``)."""
    found: list[str] = []
    for command in sorted(view.commands.values(), key=lambda c: -c.seq):
        if check_program(command.first) is None:
            continue
        bare = flat(OUTPUT_PLUMBING.sub("", command.first).strip(), 160)
        if bare and bare not in found:  # compared as shown: two runs that differ only in spacing are one
            found.append(bare)
        if len(found) == limit:
            break
    return found


_CORRECTS = re.compile(
    r"\b(?:doesn'?t mean|does not mean|you'?ve called|you (?:are|'re) (?:wrong|jumping|guessing)|prematurely|"
    r"too early|jump(?:ing)? to|that'?s not (?:right|it|what)|not what I (?:meant|asked)|I don'?t think (?:so|that)|"
    r"are you sure|I'?m challenging|challenging the|stop (?:guessing|assuming))",
    re.I,
)
"""Words of a user who corrects the assistant's reasoning ("it doesn't mean the stop hook caused it",
"you've called root cause prematurely"): a rule for the rest of the work, said once."""
_CORRECTIONS_SHOWN = 4


def corrections(view: SessionLedger) -> list[LedgerMessage]:
    """The user's messages that corrected the assistant's reasoning, the latest few, oldest first (a bare
    "are you sure?" says nothing without the answer before it)."""
    said = [m for m in view.user_messages if m.is_request and _CORRECTS.search(m.text) and len(m.text.split()) >= 6]
    return sorted(said, key=lambda m: m.seq)[-_CORRECTIONS_SHOWN:]
