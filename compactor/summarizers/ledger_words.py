"""What the ledger keeps of the assistant's words as a head is merged (``ledger.merge_messages``).

``Words`` follows one merge: the words before each tool call (what an edit is for), the errors
waiting for the assistant's explanation, its statements of findings, causes and decisions (a
statement said again replaces the first, what it wrote out replaces what it thought), the code
names it writes, its latest plan of steps and the end of its latest thinking.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from compactor.core.ledger import STATEMENTS_KEPT, LedgerError, LedgerStatement, SessionLedger
from compactor.core.messages import TextBlock, ThinkingBlock
from compactor.summarizers.statements import first_words, flat, identifiers, is_narration, sentences, statements

__all__ = ["Words", "decision_of", "plan_of"]

_WHY_CHARS = 300
_SAID_CHARS = 3_000
_THOUGHT_CHARS = 1_500
_THOUGHT_END_CHARS = 400


class Words:
    """What the assistant just said, while one head is merged: the words before its next tool call
    (what an edit is for) and the errors waiting for its explanation."""

    def __init__(self) -> None:
        self.awaiting: list[LedgerError] = []
        self.chose: tuple[str, list[str]] | None = None
        """The latest statement of an approach to take, naming code (``I need to use `:auto` mode``),
        with the names it gave, until the next edit shows whether the work followed it."""
        # Read only where they are needed, or once at the end (``finish``): the text before the next
        # tool call (an edit's why), the blocks a plan may be in, and the latest thinking block.
        self._before_call = ""
        self._why: str | None = ""
        self._blocks: list[tuple[str, int]] = []
        self._thought: tuple[str, int] | None = None

    def called(self) -> None:
        """A tool call's result came: the words before the next call are still to be said."""
        self._before_call, self._why = "", ""

    def why(self) -> str:
        """The first sentences of the assistant's latest text block since the latest tool result,
        up to ``_WHY_CHARS``: what the next edit is for ("" when it said nothing)."""
        if self._why is None:
            self._why = first_words(self._before_call[: _WHY_CHARS * 4], _WHY_CHARS)
        return self._why

    def finish(self, ledger: SessionLedger) -> None:
        """Keep what only the latest of the merge's blocks decides: its latest plan of steps (the newest
        block that lays one out) and the end of its latest thinking."""
        for text, seq in reversed(self._blocks):
            plan = plan_of(text)
            if plan:
                ledger.plan, ledger.plan_seq = plan, seq
                break
        if self._thought is not None:
            text, seq = self._thought
            ledger.last_thought, ledger.last_thought_seq = _thought_end(text), seq

    def edited(self, ledger: SessionLedger, new_text: str) -> None:
        """The next edit after a stated approach: when it writes none of the names the statement gave
        (it used `{:shared, self()}`, not `:auto`), the statement is superseded and leaves the ledger's
        statements (the stored head keeps every word)."""
        if self.chose is None:
            return
        text, names = self.chose
        self.chose = None
        if new_text and not any(name in new_text for name in names):
            ledger.statements = [s for s in ledger.statements if s.text != text]

    def said(self, ledger: SessionLedger, block: TextBlock | ThinkingBlock, seq: int) -> None:
        text = block.text if isinstance(block, TextBlock) else block.thinking
        if not text.strip():
            return
        ledger.calls_since_words = 0
        thinking = isinstance(block, ThinkingBlock)
        if not thinking:
            self._before_call, self._why = text, None
        else:
            self._thought = (text[-_THOUGHT_CHARS:], seq)
        self._blocks.append((text[:_SAID_CHARS], seq))
        # What a block opens with states its point; a long one is read that far (each sentence is
        # judged by several patterns, the largest share of merging a head).
        text = text[: _THOUGHT_CHARS if thinking else _SAID_CHARS]
        found = statements(text, thinking=thinking)
        _count_identifiers(ledger, text)
        if self.awaiting:
            explained = max(found, key=lambda s: s.score).text if found else _explanation(text)
            if explained:
                for error in self.awaiting:
                    error.explanation = error.explanation or explained
                self.awaiting = []
        for item in found:
            names = _CHOICE_NAMES.findall(item.text) if "`" in item.text and _APPROACH.search(item.text) else []
            if names:
                self.chose = (item.text, names)
        known = {s.text for s in ledger.statements} if found else set()
        for item in found:
            if item.text in known:
                continue
            said_before = _restated(item.text, ledger.statements[-6:])
            if said_before is None:
                ledger.statements.append(
                    LedgerStatement(text=item.text, seq=seq, kind=item.kind, score=item.score, thought=thinking)
                )
            elif not thinking:  # what the assistant wrote out, in place of what it thought first
                said_before.text, said_before.seq, said_before.thought = item.text, seq, False
                said_before.score = max(said_before.score, item.score)
        if len(ledger.statements) > STATEMENTS_KEPT:
            del ledger.statements[: len(ledger.statements) - STATEMENTS_KEPT]


_APPROACH = re.compile(
    r"\b(?:I need to|I'll|I will|I'm going to|we need to|I should|let's|let me)\s+(?:use|go with|switch to|set|call|pass)\b",
    re.I,
)
"""Words that choose an approach ("I need to use ..."), which the next edit follows or not."""
_CHOICE_NAMES = re.compile(r"`([^`\n]{2,60})`")

_IDENTIFIERS_KEPT = 400


def _count_identifiers(ledger: SessionLedger, text: str) -> None:
    """Count the code spans of ``text``; past ``_IDENTIFIERS_KEPT`` names the rarest are forgotten."""
    counts = ledger.identifiers
    for name in identifiers(text):
        if 2 <= len(name) <= 60 and not name.isdigit():
            counts[name] = counts.get(name, 0) + 1
    if len(counts) > _IDENTIFIERS_KEPT:
        keep = sorted(counts.items(), key=lambda item: -item[1])[: _IDENTIFIERS_KEPT // 2]
        ledger.identifiers = dict(keep)


def _explanation(text: str) -> str:
    """The first sentence of ``text`` that says something about an error (six words or more)."""
    for sentence in sentences(text):
        if len(sentence.split()) >= 6 and not sentence.endswith(":") and not is_narration(sentence):
            return flat(sentence, 300)
    return ""


@functools.lru_cache(maxsize=4_096)
def _terms(text: str) -> frozenset[str]:
    """The words of ``text`` (three letters or more), cached: each statement is compared with the
    ones before it many times while a session is merged."""
    return frozenset(re.findall(r"[a-z0-9_]{3,}", text.lower()))


def _restated(text: str, recent: Sequence[LedgerStatement]) -> LedgerStatement | None:
    """The one of the ``recent`` statements that ``text`` says again (the text block after a
    thinking block often does: most of its words are that statement's), if any."""
    words = _terms(text)
    for other in recent:
        theirs = _terms(other.text)
        if words and theirs and len(words & theirs) >= 0.6 * min(len(words), len(theirs)):
            return other
    return None


_PLAN_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*])\s+(\S.*)$")
_PLAN_CUE = re.compile(r"\b(?:I'll|I will|I need to|I'm going to|let me|plan|steps|we need to|need to|next)\b", re.I)
_PLAN_ITEMS = 6
# A sentence after the items that says which of them it will do names them: by number, or as a
# group ("these", "all of them", "the actionable ones"); narration ("Let me present this clearly") does not.
_PLAN_REFERS = re.compile(r"\(\d|\b\d+\b|\b(?:these|those|them|each|all|both|ones|items|fixes|steps)\b", re.I)
_PLAN_ITEM_CHARS = 240
_LOOKS_ONLY = re.compile(
    r"^(?:so |now |first,? |then )?(?:let me|let's|I'll|I will)\s+(?:look|see|view|examine|inspect)\b", re.I
)
"""A cue that only looks ("Let me look at the ephemeral branches again:"): what follows is what it saw."""


def plan_of(text: str) -> str:
    """The plan a block of the assistant's lays out, as its cue line and its items ("I'll need to:" and
    two or more numbered or bulleted steps after it, blank lines between them or not), and the
    sentence after them when it says what it will do of them; or "" when it lays out none."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if not line.rstrip().endswith(":") or not _PLAN_CUE.search(line):
            continue
        # The cue is the sentence that leads into the list ("The `explain` command can:" lists what is,
        # not what it will do, though an earlier sentence of the line says "Let me check").
        cue = flat(sentences(line)[-1] if sentences(line) else line, 200)
        if not _PLAN_CUE.search(cue):
            continue
        items: list[str] = []
        closing = ""
        for after in lines[index + 1 :]:
            found = _PLAN_ITEM.match(after)
            if found is not None:
                items.append(flat(found.group(1), _PLAN_ITEM_CHARS))
            elif after.strip():  # blank lines may part the items; other words end the list
                # ... and may say which of them it will do ("Let me fix the actionable ones (1, 2, 3).")
                if items and _PLAN_CUE.search(after) and _PLAN_REFERS.search(after) and len(after) <= _PLAN_ITEM_CHARS:
                    closing = after.strip()
                break
        if _LOOKS_ONLY.match(cue) and not closing:
            continue  # what it looked at, listed: findings, not steps to take
        if len(items) >= 2:
            steps = [f"{n}. {item}" for n, item in enumerate(items[:_PLAN_ITEMS], 1)]
            return "\n".join([cue, *steps, *([closing] if closing else [])])
    return ""


def _thought_end(text: str) -> str:
    """The last sentences of a thinking block, as many as fit ``_THOUGHT_END_CHARS``: where it says
    what it will do."""
    joined = " ".join(line.strip() for line in text.splitlines() if line.strip())
    kept: list[str] = []
    for sentence in reversed(sentences(joined) or [joined]):
        if kept and sum(len(k) + 1 for k in kept) + len(sentence) > _THOUGHT_END_CHARS:
            break
        kept.insert(0, sentence)
    return flat(" ".join(kept), _THOUGHT_END_CHARS)


_OPTION = re.compile(
    r"^\W*(?:\|\s*)?(?:\*\*)?(?:Option\s+)?(?P<label>[A-H]|[1-9])[.):]\s+(?P<title>[^|*\n]{2,120}?)[ \t]*(?:\*\*)?"
    r"[ \t]*(?:\||[-—–:]\s|$)(?P<what>[^|\n]*)",
    re.M,
)
"""An option the assistant offered, in a table row or a list: ``| **A. At commit time** | Generate ... |``,
``**1. Subagent-Driven** - I dispatch ...``."""
_CHOICE = re.compile(
    r"^\s*(?:(?:yes|yeah|ok|okay)[,.]?\s+)?(?:I think\s+|let'?s (?:go with|do)\s+|go with\s+|option\s+)?"
    r"\(?(?P<label>[A-H]|[1-9])\b(?![.)]?\s*(?:is|are|was)\s+\w+ing\b)(?:[.),]|\s|$)",
    re.I,
)
"""A reply that picks one: ``A.``, ``I think B, nested in ...``, ``1``, ``C) update this branch first``."""
_OPEN_OPTION = re.compile(r"(?:something else|other|none of (?:these|the above)|anything else)\b", re.I)
"""An option that leaves the choice to the user ("C) Something else?")."""
_DECISION_CHARS = 360
_REPLY_WORDS = 30


def decision_of(offered: str, reply: str) -> str:
    """The user's choice among the options the assistant's last words offered, with the question, the
    option and the reply verbatim (its reason), or "" when the words offered no options or the reply
    picks none of them."""
    chosen = _CHOICE.match(reply)
    if chosen is None:
        return ""
    options = {m.group("label").upper(): m for m in _OPTION.finditer(offered[-_SAID_CHARS:])}
    label = chosen.group("label").upper()
    if len(options) < 2 or label not in options:
        return ""
    if 2 * sum(o.group("title").rstrip().endswith("?") for o in options.values()) > len(options):
        return ""  # numbered questions ("1. Are these fields right?"), not options to choose from
    rest = reply[chosen.end() :]
    if len(rest.split()) > _REPLY_WORDS and chosen.start("label") == len(reply) - len(reply.lstrip()):
        return ""  # "2. User committed: ..." and a long discussion: about item 2, not choosing it
    if re.search(r"(?:^|\s)(?:[B-H]|[2-9])[.)]\s", rest):
        return ""  # answers to numbered questions ("1. option 3, 2. left most"), not one choice
    option = options[label]
    questions = [q for q in sentences(offered[-600:]) if q.rstrip().endswith("?") and not _OPTION.match(q)]
    asked = f'To "{flat(questions[-1], 160)}" ' if questions else ""
    if _OPEN_OPTION.match(option.group("title").replace("**", "").strip()):
        # "C) Something else?" chosen: what the user chose is what they wrote, beside what it offered.
        offers = "; ".join(
            f"{key}. {flat(o.group('title').replace('**', ''), 60)}" for key, o in options.items() if key != label
        )
        return flat(f'{asked}offered {offers}, the user answered: "{reply.strip()}"', _DECISION_CHARS)
    what = option.group("what").replace("**", "").strip()
    title = " ".join(f"{label}. {option.group('title')}".replace("**", "").split()) + (f" — {what}" if what else "")
    title = flat(title, 200).rstrip()
    title += "" if title.endswith((".", "?", "!", "]")) else "."
    return flat(f'{asked}the user chose {title} Their reply: "{reply.strip()}"', _DECISION_CHARS)
