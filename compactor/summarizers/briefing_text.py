"""How the briefing cuts, weighs and pairs text: an answer cut at a line or sentence end, an earlier
answer in brief, the share of a summary that is bookkeeping, whether two statements say the same,
whether what the assistant said after an error (or before an edit) is about it, whether a reply
pushes back on an answer, whether a sentence only reacts to what a call printed."""

from __future__ import annotations

import re

from compactor.core.ledger import LedgerError, LedgerPath, LedgerStatement
from compactor.summarizers.facts import check_program
from compactor.summarizers.statements import flat, is_narration, sentences

__all__ = [
    "CODE_NAME",
    "CONFLICT",
    "HEADING",
    "HEDGE",
    "LABEL",
    "LOOKING",
    "NOT_PROSE",
    "PLAN",
    "REASON",
    "about_file",
    "excerpt",
    "explaining",
    "explains",
    "headline",
    "is_reaction",
    "listing_share",
    "overlap",
    "own_answer",
    "pushes_back",
    "reason_of",
]

HEDGE = re.compile(r"\b(?:probably|likely|might|maybe|perhaps|I think|I suspect|could be|possibly|seems to)\b", re.I)
"""A guess, which the work may have dropped since: not carried as a conclusion."""
PLAN = re.compile(
    r"(?:so |now |then |first,? )?(?:I need to|I'll|I will|I should|let me|we need to|I'm going to)\b", re.I
)
"""A statement of what the assistant meant to do next, not of what it found or decided."""
LOOKING = re.compile(r"\b(?:I need to (?:check|see|look|find|read|understand)|let me|let's)\b", re.I)
"""A statement that only says what the assistant is about to look at, not what it found."""


REASON = re.compile(
    r"\b(?:because|since|so that|in order to|to (?:fix|avoid|support|make|handle|match|keep|prevent|allow)|"
    r"missing|instead|rather than|the (?:issue|problem|bug|cause|fix)|fails?|broken|wrong|must)\b",
    re.I,
)
"""Words that give a reason: an edit's "why" is shown only when it has one (not "Now let me ...")."""


CODE_NAME = re.compile(r"[\w.]*(?:[_./()]|[a-z][A-Z])[\w./()]*|[A-Z][a-z]+[A-Z]\w*")
"""A name that looks like code (``snake_case``, ``camelCase``, ``a.b``, ``f()``), not an ordinary word."""


HEADING = re.compile(r"^[A-Z][\w ]{0,30}:\s*(?:Why|How|What|Where|When)\b")
"""A heading of the assistant's ("Root Cause: Why session files aren't cleaned up"), not a cause."""
NOT_PROSE = re.compile(r"→|->|[✅❌]|^(?:Task|Step|Phase|Part)\s*\d+\s*[:.)]", re.I)
"""A line of a table, a flow or a plan's heading (``AfterAgent`` → creates a commit; "Task 3: Update
`X`"), not a sentence that says what a name is."""


_PATHY = re.compile(
    r"(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|go|ts|tsx|js|jsx|rs|java|kt|swift|rb|ex|exs|md|json|toml|yaml|yml|sh|c|h|"
    r"cpp|cs|sql|html|css)\b"
)
_BOOKKEEPING = re.compile(
    r"read lines \d|edited x\d|searched x\d|\bread, |-> ok\b|-> FAIL|->\s*(?:not )?resolved|, `[^`]+`, `"
)
_LIST_ITEM = re.compile(r"^(?:[-*] |\d+\.\s)")


CONFLICT = re.compile(r"\bconflict in (\S+)", re.I)
"""A file git left in conflict (``CONFLICT (content): Merge conflict in PATH``)."""
LABEL = re.compile(r"^[A-Z][\w ]{0,20}:\s")
"""A fragment under a label ("Result: ...", "Note: ..."), not a sentence of its own."""
_ABOUT_CHARS = 30
"""A sentence names what it is about near its start ("`writeTranscript` stores ...", "The `Phase` field ...")."""
_ANNOUNCES = re.compile(
    r"^\W*(?:here(?:'s| is| are)\b|now i (?:can|have)\b|i now have\b|let me (?:provide|give|present|summari[sz]e)\b)"
    r"[^.!?\n]*[.:]?\s*$",
    re.I,
)
"""A line that only announces the answer after it ("Here are the answers based on the code analysis:")."""


def excerpt(text: str, limit: int) -> str:
    """``text`` with its lines, cut at a line or sentence end before ``limit`` characters; a first line
    that only announces ("Now I can give you the complete answer.") is left out."""
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) > 1 and _ANNOUNCES.match(lines[0]):
        lines = lines[1:]
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind("\n"), cut.rfind(". "))
    cut = (cut[: end + 1] if end > limit // 2 else cut).rstrip()
    if sum(1 for line in cut.splitlines() if line.lstrip().startswith("```")) % 2:
        cut += "\n```"  # a code block cut open is closed
    return cut + " [...]"


_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_HEADING_LINE = re.compile(r"^\s*#{1,6}\s+(.+)$", re.M)
_STRESSED_WORDS = 4
_SAID_WORDS = 8
_LEAD_IN_WORDS = 12
"""A line leading into a list says something of its own only when it is this long (a result's first line)."""


def headline(text: str, limit: int) -> str:
    """An earlier answer in brief: two of its sentences that say something. Whole sentences it set in
    bold come first (what the assistant stressed: "**So yes, Option 1 would have prevented this
    issue!**"), then whole sentences, each in its order; without either, the answer as it begins.
    A heading, a short lead-in to a list ("the session states would have been:"), a question or
    offer, and narration are no brief."""
    headings = {" ".join(sentences(m.group(1))) for m in _HEADING_LINE.finditer(text)}
    bold = [" ".join(sentences(m.group(1) or m.group(2))).rstrip(".!") for m in _BOLD.finditer(text)]
    ranked: list[tuple[int, int, str]] = []
    all_said = sentences(text)
    for index, said in enumerate(all_said):
        words = len(said.split())
        if said in headings or said.endswith("?") or is_narration(said) or words < _STRESSED_WORDS:
            continue
        if said.endswith(":") and words < _LEAD_IN_WORDS:  # "the session states would have been:"
            continue
        whole = said.endswith((".", "!")) and not LABEL.match(said)
        if whole and any(b in said and len(b) >= 0.8 * len(said.rstrip(".!")) for b in bold):
            ranked.append((0, index, said))
        elif words >= _SAID_WORDS:
            ranked.append((1 if whole else 2, index, said))
    if not any(tier < 2 for tier, _, _ in ranked):  # no whole sentence: the answer as it begins
        return flat(" ".join(all_said) or text, limit)
    return flat(" ".join(said for _, _, said in sorted(ranked)[:2]), limit)


def listing_share(text: str) -> float:
    """The share of ``text``'s characters on list lines that are bookkeeping: a line with "read lines
    A-B", "edited xN" or "-> ok", or a path or command with fewer than six words of prose around it."""
    lines = [line for line in text.splitlines() if line.strip()]
    total = sum(len(line) for line in lines) or 1
    listed = 0
    for line in lines:
        body = line.strip()
        if not _LIST_ITEM.match(body):
            continue
        body = _LIST_ITEM.sub("", body)
        prose = re.sub(r"`[^`]*`|<<[^>]*>>", " ", _PATHY.sub(" ", body))
        words = len(re.findall(r"[A-Za-z]{3,}", prose))
        if _BOOKKEEPING.search(body) or ((_PATHY.search(body) or "`" in body) and words < 6):
            listed += len(line)
    return listed / total


def overlap(a: str, b: str) -> bool:
    """Whether two statements say mostly the same (half the words of the shorter are the other's)."""
    x = set(re.findall(r"[a-z0-9_]{3,}", a.lower()))
    y = set(re.findall(r"[a-z0-9_]{3,}", b.lower()))
    return bool(x and y) and len(x & y) >= 0.5 * min(len(x), len(y))


_COMMON = frozenset(
    [
        "error",
        "failed",
        "fail",
        "failure",
        "file",
        "with",
        "that",
        "this",
        "from",
        "exit",
        "code",
        "line",
        "found",
        "could",
        "which",
        "there",
        "their",
        "what",
        "when",
        "will",
        "would",
        "should",
        "have",
        "been",
        "does",
        "cannot",
        "command",
        "output",
        "the",
        "and",
        "for",
        "not",
        "but",
        "was",
        "are",
        "has",
        "can",
        "now",
        "let",
        "see",
        "use",
        "get",
        "run",
        "need",
        "just",
        "also",
        "into",
        "then",
        "than",
        "still",
    ]
)


def _terms_of(text: str) -> set[str]:
    return {w.rstrip("s") for w in re.findall(r"[a-z0-9_]{3,}", text.lower())} - _COMMON


def explains(explanation: str, error: LedgerError) -> bool:
    """Whether what the assistant said after an error is about it: they share a word (of three letters
    or more, not a common one; a number counts), or the error is a failed test, lint or build and the
    words give a reason ("when the agent type is empty, `GetByAgentType("")` fails"). The next
    sentence after a probe that failed is often about something else, and pairing them reads as nonsense."""
    if not explanation:
        return False
    if error.tool == "Bash" and check_program(error.key) is not None and REASON.search(explanation):
        return True
    return bool(_terms_of(explanation) & _terms_of(f"{error.key} {error.line} {' '.join(error.detail)}"))


_PUSHBACK = re.compile(
    r"\W*(?:no\b|nope|but\b|actually|hmm|hang on|wait\b|I think\b|I don'?t think|that'?s not|not quite|"
    r"wrong|are you sure|I'?m not sure|why would|shouldn'?t)",
    re.I,
)
"""A reply that may question or correct the answer before it ("I think the reuse is for ..."): the
answer is then shown in brief, beside the reply, not whole as the conclusion."""
_REACTION = re.compile(r"(?:Expected|Good|Great|Perfect|OK|Okay|Right|Hmm|Interesting|Ah|Oh|Excellent)\b\W", re.I)
"""A reaction to what a call printed ("Expected — the module doesn't exist yet."): of its moment only."""


def pushes_back(reply: str) -> bool:
    """Whether a user's reply may question or correct the answer before it (see ``_PUSHBACK``)."""
    return _PUSHBACK.match(reply) is not None


def is_reaction(sentence: str) -> bool:
    """Whether a sentence only reacts to what a call printed (see ``_REACTION``)."""
    return _REACTION.match(sentence) is not None


_REASON_WORDS = 6
"""A sentence shorter than this beside an edit reacts ("I can see the pattern."), it gives no reason."""
_STEP_LEAD = re.compile(
    r"^(?:so |now |then |first,? )?(?:I need to|I'll|I will|I should|let me|let's|we need to|I'm going to)\s+(?:just |now |also )?",
    re.I,
)
"""The words that lead into a step it took ("Let me just "), left out where the step gives its reason."""


def reason_of(words: str) -> str:
    """The assistant's words before an edit as its reason: without what only reacts ("I can see the
    pattern.") or narrates ("Let me check the file."), and a step it took for a reason without its
    lead ("Let me resolve all conflicts to keep HEAD" -> "Resolve all conflicts to keep HEAD");
    "" when nothing is left."""
    kept = []
    for said in sentences(words):
        if len(said.split()) < _REASON_WORDS or is_reaction(said):
            continue
        if is_narration(said) or PLAN.match(said):
            if not REASON.search(said):
                continue
            said = _STEP_LEAD.sub("", said)
            said = said[:1].upper() + said[1:]
        kept.append(said.removesuffix(":").rstrip() + ("" if said.endswith((".", "!", "?")) else "."))
    return " ".join(kept)


def about_file(entry: LedgerPath, words: str) -> bool:
    """Whether the assistant's words before an edit are about that file: they name it, a name it
    defines, or a name the edit changed (words about another file read as nonsense beside it)."""
    stem = entry.path.rsplit("/", 1)[-1].split(".", 1)[0]
    names = [stem, *entry.symbols, *re.findall(r"[A-Za-z_][\w.]{3,}", entry.last_edit)]
    return any(len(n) >= 4 and n in words for n in names)


def explaining(name: str, chosen: list[LedgerStatement], taken: set[str]) -> LedgerStatement | None:
    """The assistant's best written statement (of ``chosen``, best first, none of ``taken``) about
    ``name``, naming it as code near its start, that says what it found it is or does: not a cause or a
    decision (those are the problem solving's), not what it was about to look at; none when it made none."""
    quoted = f"`{name}`"
    for s in chosen:
        text = s.text
        if s.kind not in ("finding", "result") or s.thought or quoted not in text or text in taken:
            continue
        prose = re.sub(r"`[^`]*`", " ", text)
        if len(re.findall(r"[A-Za-z]{2,}", prose)) < 6 or NOT_PROSE.search(text):
            continue
        if text.find(quoted) > _ABOUT_CHARS or LABEL.match(text) or not text.rstrip().endswith("."):
            continue  # about something else; a label's fragment ("Result: ..."); a cut or a lead-in
        if PLAN.match(text) or LOOKING.search(text) or HEDGE.search(text) or is_reaction(text):
            continue
        return s
    return None


_OWN_ANSWER = re.compile(r'(?:To ".*?" )?offered (.+), the user answered: "([^"]{1,60})')
"""A choice of "Something else" (``decision_of``): what it offered, and the start of the user's own answer."""


def own_answer(decisions: list[str], request: str) -> tuple[str, list[str]]:
    """What the assistant offered when ``request`` was the user's own answer to its options ("C)
    Something else?" chosen), and ``decisions`` without that choice: the answer is the request, said
    once, with what it answered. ("", ``decisions``) when the request answered no options."""
    said = " ".join(request.split())
    own = [m for d in decisions if (m := _OWN_ANSWER.match(d)) and said.startswith(m.group(2))]
    if not own:
        return "", decisions
    return own[-1].group(1), [d for d in decisions if d not in {m.string for m in own}]
