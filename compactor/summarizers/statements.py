"""What the assistant said that a successor needs: its findings, causes, decisions and results.

A briefing is written in the assistant's own words, chosen for what they say.
``statements`` cuts a text or thinking block into sentences (code spans and
paths kept whole, code blocks and tables passed over) and keeps those that
state something: a cause ("SQLite doesn't support ``ALTER ... MODIFY``"), a
decision ("I need to rewrite it with a table rewrite"), a result ("All 43
tests pass"), or a finding about the code. Narration of the next tool call
("Let me check the test helper.") states nothing and is passed over, unless
it gives a reason. A statement that goes on with a decision ("... I need to
use `:auto` mode.") keeps it beside the cause.

The scores only order statements of one session against each other; what a
summary shows is chosen by the briefing (``compactor.summarizers.briefing``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["Said", "first_words", "flat", "identifiers", "is_narration", "sentences", "statements"]

_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_TABLE_LINE = re.compile(r"^\s*\|.*\|\s*$", re.M)
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_HEADING = re.compile(r"^\s*#{1,6}\s+", re.M)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])")
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_IDENTIFIER = re.compile(r"`([^`\n]{2,80})`")

_CAUSE = re.compile(
    r"\b(?:because|since the|due to|caused by|root cause|the (?:issue|problem|bug|cause|reason|culprit|error)\b"
    r"|doesn'?t (?:support|exist|work|match|render|handle|have|include|accept)|does not (?:support|exist|work)"
    r"|isn'?t (?:supported|defined|available|configured|registered|set|picked up)|can'?t|cannot|won'?t"
    r"|missing|stale|wrong|broken|undefined|not (?:found|defined|available|configured|registered|supported)"
    r"|fails? (?:because|when|with|on)|failing because|conflict|race|leak|regression|turns out|it seems|looks like)\b",
    re.I,
)
_DECISION = re.compile(
    r"\b(?:instead of|instead|rather than|switch(?:ed)? to|decided|chose|the fix (?:is|was)|fix(?:ed)? (?:it|this|that) by"
    r"|I need to|we need to|need(?:s)? to be|I'll use|we'll use|I will use|the (?:right|best|simplest) (?:way|approach|fix)"
    r"|approach|pattern|so that|to avoid|in order to|better to|prefer|must|should(?: not)?|the plan is)\b",
    re.I,
)
_RESULT = re.compile(
    r"\b(?:all (?:\d+ )?(?:tests?|checks?|specs?) (?:pass|passed|green)|tests? pass(?:es|ed)?\b|\d+ (?:tests?|examples?), 0 failures"
    r"|0 failures|passes|now passes|all green|clean (?:compile|build)|compiles cleanly|committed|pushed|merged|works now"
    r"|now works|is done|are done|is complete|implemented|fixed|resolved|no (?:more )?(?:issues|errors|warnings|failures))\b",
    re.I,
)
_NARRATION = re.compile(
    r"^(?:let me|let's|now let me|now let's|now i'?ll|i'?ll (?:now |first |also |then )?(?:check|read|look|run|start|"
    r"search|open|see|examine|explore|review|verify|test|try|update|add|write|create|fix|apply|implement|do|make|use|go|"
    r"continue|wait|grab|get|find)|i'?m going to|i will (?:now )?(?:check|read|look|run)|now (?:add|update|run|write|"
    r"implement|create|check|the|for|to|we|i|let)|next,?|then,?|first,?|good\b|great\b|perfect\b|ok(?:ay)?\b|excellent\b|"
    r"alright\b|done\b|got it\b|still\b|waiting\b|checking\b|looking\b|reading\b|here(?:'s| is| are)\b|"
    r"now i (?:can|have|understand|see)\b|i now (?:have|understand|see)\b)",
    re.I,
)
_MIN_WORDS = 5
_MAX_CHARS = 420


@dataclass(frozen=True)
class Said:
    """One statement of the assistant's: its text, what kind it is, and how much it says."""

    text: str
    kind: str
    """``cause``, ``decision``, ``result`` or ``finding``."""
    score: float


def _clean(text: str) -> str:
    text = _CODE_FENCE.sub(" ", text)
    text = _TABLE_LINE.sub(" ", text)
    text = _HEADING.sub("", text)
    return _BOLD.sub(lambda m: m.group(1) or m.group(2) or "", text)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order: each bullet and line its own, code spans kept whole,
    code blocks and tables left out, whitespace folded."""
    out: list[str] = []
    for line in _clean(text).splitlines():
        line = _BULLET.sub("", line).strip()
        if not line:
            continue
        out.extend(_line_sentences(line))
    return out


def _line_sentences(line: str) -> list[str]:
    """One line's sentences, split at sentence ends outside code spans (masked while splitting)."""
    if "\x00" in line:  # the mask itself: split plainly
        return [" ".join(p.split()) for p in _SPLIT.split(line) if p.strip()]
    spans = _CODE_SPAN.findall(line)
    masked = _CODE_SPAN.sub("\x00", line)
    out: list[str] = []
    taken = 0
    for part in _SPLIT.split(masked):
        pieces = part.split("\x00")
        restored = pieces[0]
        for piece in pieces[1:]:
            restored += spans[taken] + piece
            taken += 1
        restored = " ".join(restored.split())
        if restored:
            out.append(restored)
    return out


def is_narration(sentence: str) -> bool:
    """Whether ``sentence`` only announces the next step ("Let me read the router.")."""
    return _NARRATION.match(sentence.strip().lstrip("-*• ")) is not None


_BARE_NAME = re.compile(
    r"[^\w`/.]((?:[A-Za-z_]\w*+\.)*+[A-Za-z_]\w*+\(\)|[a-z][a-z0-9]*+(?:[A-Z][a-z0-9]++)++"
    r"|[A-Z][a-z0-9]++(?:[A-Z][a-z0-9]++)++|[a-z][a-z0-9]*+(?:_[a-z0-9]++){2,}+)(?![\w`])"
)
"""A name written without backticks that is still code: ``call()``, ``camelCase``, ``PascalCase``,
``snake_case_name`` (two underscores or more, so that ``e_mail`` is not one), after a character that
is not part of a name, a path or a code span (``identifiers`` puts a space before the text).

The character before is matched, not looked behind at, so that the search skips to the characters
that can precede a name; and no part gives back characters it took (none of them could be matched
by what follows it). Together these take about 40% off the time ``identifiers`` takes on the
assistant's words."""


def identifiers(text: str) -> list[str]:
    """The names ``text`` writes as code, in order: its code spans (without the backticks), then the
    bare names shaped like code (``_BARE_NAME``) outside them."""
    spans = [m.strip() for m in _IDENTIFIER.findall(text) if m.strip()]
    bare = _bare_names(" " + _CODE_SPAN.sub(" ", text))
    return spans + [name for name in bare if name not in spans]


_OTHER_MARKS = re.compile(r"\(\)|_[a-z0-9]++_")
"""What a bare call or a snake_case name always holds: ``()``, or an underscore, letters, an underscore."""
_SHAPES = bytes(
    ord("a")
    if chr(i).isascii() and (chr(i).islower() or chr(i).isdigit())
    else ord("A")
    if chr(i).isascii() and chr(i).isupper()
    else ord(" ")
    for i in range(256)
)
"""Latin-1 bytes to their shape: ``a`` for a lower-case letter or a digit, ``A`` for an upper-case one."""


def _bare_names(text: str) -> list[str]:
    """``_BARE_NAME.findall(text)``, run only on the stretches between spaces and newlines that hold a mark
    every such name holds (``()``, ``_x_``, or a lower-case letter or digit before an upper-case letter).

    No name holds a space or a newline, and one before a name is all that a match takes of the text
    before it, so matching each stretch from the space before it finds what matching the whole does.
    Most of a text has no mark; the marks are found by a search for a literal (the camel-case one in
    the text's shapes, one byte per character), about a tenth of the time the pattern takes to try
    every character.
    """
    marks = [m.start() for m in _OTHER_MARKS.finditer(text)]
    shapes = text.encode("latin-1", "replace").translate(_SHAPES)  # "?" for each other character
    at = shapes.find(b"aA")
    while at >= 0:
        marks.append(at)
        at = shapes.find(b"aA", at + 2)
    found: list[str] = []
    end = 0
    for at in sorted(marks):
        if at < end:
            continue  # in the stretch matched last
        start = text.rfind(" ", 0, at)
        start = max(start, text.rfind("\n", start + 1, at), 0)
        end = text.find(" ", at)
        end = len(text) if end < 0 else end
        newline = text.find("\n", at, end)
        end = end if newline < 0 else newline
        found += _BARE_NAME.findall(text, start, end)
    return found


def flat(text: str, limit: int) -> str:
    """``text`` on one line (whitespace folded), cut to ``limit`` characters with a ``[...]`` mark."""
    folded = " ".join(text.split())
    return folded if len(folded) <= limit else folded[: limit - 5].rstrip() + " [...]"


def first_words(text: str, limit: int = 300) -> str:
    """``text``'s first sentences up to ``limit`` characters, markdown folded: what an edit is for."""
    said = sentences(text)
    out = ""
    for sentence in said:
        if out and len(out) + len(sentence) + 1 > limit:
            break
        out = f"{out} {sentence}".strip()
    return out if len(out) <= limit else out[: limit - 5].rstrip() + " [...]"


def _words(sentence: str) -> int:
    return len(re.findall(r"[A-Za-z]{2,}", _CODE_SPAN.sub(" xx ", sentence)))


def _judge(sentence: str) -> Said | None:
    if sentence.count(" ") < 2:  # fewer than three words: nothing to judge (and the common case)
        return None
    words = _words(sentence)
    cause = _CAUSE.search(sentence) is not None
    decision = _DECISION.search(sentence) is not None
    result = _RESULT.search(sentence) is not None
    if words < (3 if result and not cause else _MIN_WORDS) or (sentence.endswith(":") and words < 10):
        return None
    narration = is_narration(sentence)
    if narration and not cause:
        return None
    kind = "cause" if cause else "decision" if decision else "result" if result else "finding"
    score = {"cause": 3.0, "decision": 2.5, "result": 1.5, "finding": 0.5}[kind]
    score += min(2.0, 0.5 * len(identifiers(sentence)))
    if narration:
        score -= 1.0
    if kind == "finding" and not identifiers(sentence):
        return None
    return Said(
        sentence if len(sentence) <= _MAX_CHARS else sentence[: _MAX_CHARS - 5].rstrip() + " [...]", kind, score
    )


_GOES_ON = re.compile(
    r"^(?:so |which means |that means |this means |hence )?(?:I|we) (?:need to|have to|must|should|'ll|will)\b|^I'll\b|^We'll\b",
    re.I,
)


def _goes_on(sentence: str) -> bool:
    """Whether ``sentence`` says what follows from the one before it: a decision, or what the
    assistant will do about it ("I need to use `:auto` mode.", "I'll add a flash display ...")."""
    if _words(sentence) < 3:
        return False
    judged = _judge(sentence)
    return (judged is not None and judged.kind == "decision") or _GOES_ON.match(sentence) is not None


def statements(text: str, *, thinking: bool = False) -> list[Said]:
    """The statements of one text (or thinking) block worth a briefing, in order (see ``_statements``).

    Remembered for the last 2,048 blocks: a compaction merges the kept tail more than once (into
    the summary's view and the report's), and a block judged once is not judged again."""
    return list(_remembered(text, thinking))


@functools.lru_cache(maxsize=2048)
def _remembered(text: str, thinking: bool) -> tuple[Said, ...]:
    return tuple(_statements(text, thinking=thinking))


def _statements(text: str, *, thinking: bool = False) -> list[Said]:
    """The statements of one text (or thinking) block worth a briefing, in order.

    A cause or finding followed by a decision is kept as one statement, the
    two sentences together. Thinking weighs a little less than what the
    assistant wrote out: it restates itself, and the text usually says the same.
    """
    said: list[Said] = []
    parts = sentences(text)
    skip = False
    for index, sentence in enumerate(parts):
        if skip:
            skip = False
            continue
        judged = _judge(sentence)
        if judged is None:
            continue
        follow = parts[index + 1] if index + 1 < len(parts) else None
        if judged.kind in ("cause", "finding") and follow is not None and _goes_on(follow):
            joined = f"{judged.text} {follow}"
            if len(joined) <= _MAX_CHARS:
                judged = Said(joined, judged.kind, judged.score + 1.0)
                skip = True
        if thinking:
            judged = Said(judged.text, judged.kind, judged.score - 0.5)
        said.append(judged)
    return said
