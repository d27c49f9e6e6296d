"""The recovery tool: how a model asks for what a compaction dropped.

``RECOVERY_TOOL`` is a tool definition in the Anthropic Messages shape that
an agent loop offers the model; ``recover`` answers one call of it from a
CCR store. A bad or unknown handle is an answer the model can read (with
``is_error``), never an exception in the loop. Its output is recovery output:
dedup leaves it alone (``ccr_retrieve`` is one of the recovery tool names).

An answer fits in a context: it holds at most ``max_tokens`` tokens
(``DEFAULT_MAX_TOKENS`` unless the call says otherwise; 0 means no bound),
cut at whole lines (or whole units of a query), and ends with a notice that
names the ``lines`` (or ``bytes``) ranges that page through the rest. A
stored conversation (JSONL, one message a line) is shown as text, each tool
output raw as the tool gave it rather than JSON-escaped inside its message;
``exact`` gives the stored bytes as they are (as base64, after a notice
saying so, when they are not UTF-8 text: a text answer could not be exact).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from ccr import Store
from ccr._conversation import message_of, render_rows
from ccr.retrieval import Retrieval, is_utf8, notice_text
from ccr.root_errors import CompactorError
from ccr.tokens import TextCounter

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "RECOVERY_TOOL",
    "RECOVERY_TOOL_NAME",
    "RecoveryAnswer",
    "RecoveryRequest",
    "TINYJUICE_RECOVERY_TOOL",
    "recover",
]

DEFAULT_MAX_TOKENS = 5_000
"""The most tokens a recovery answer holds unless the call asks otherwise: as much as one restored file."""

RECOVERY_TOOL_NAME = "ccr_retrieve"

RECOVERY_TOOL: dict[str, Any] = {
    "name": RECOVERY_TOOL_NAME,
    "description": (
        "Bring back text that was dropped from this conversation when it was compacted. "
        "Pass a handle exactly as it appears in the conversation (for example <<ccr:ccr_...>>). "
        "Without other arguments it returns the whole original. With 'query' it returns only the "
        "messages, rows or paragraphs that match, in their original order. With 'lines' or 'bytes' "
        "it returns that range. Prefer a query or a range for large originals. An answer holds at most "
        "'max_tokens' tokens (default 5000; 0 for no bound); a longer one is cut at whole lines and ends "
        "with the 'lines' or 'bytes' ranges to ask for next. A stored conversation is shown as text with "
        "each tool output raw; 'exact': true returns the stored bytes as they are."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "handle": {"type": "string", "description": "the handle or marker, e.g. <<ccr:ccr_0123...>>"},
            "query": {"type": "string", "description": "words to look for (file names, errors, identifiers)"},
            "lines": {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": 2,
                "maxItems": 2,
                "description": "first and last line, 1-based and inclusive",
            },
            "bytes": {
                "type": "array",
                "items": {"type": "integer"},
                "minItems": 2,
                "maxItems": 2,
                "description": "start and end byte offsets, end excluded",
            },
            "max_tokens": {
                "type": "integer",
                "minimum": 0,
                "description": "at most this many tokens in the answer (default 5000); 0 for no bound",
            },
            "exact": {
                "type": "boolean",
                "description": "the stored bytes as they are (a stored conversation stays JSONL; "
                "bytes that are not UTF-8 text come as base64, after a notice saying so)",
            },
        },
        "required": ["handle"],
        "additionalProperties": False,
    },
}
"""The tool definition to put in a Messages request's ``tools``."""

TINYJUICE_RECOVERY_TOOL: dict[str, Any] = {
    "name": "tokenjuice_retrieve",
    "description": (
        "Return the exact original of a compacted tool output shown as a PARTIAL view. Pass the token "
        "exactly as the partial view's footer gives it. Call it only when the omitted data matters; "
        "keep the token for later exact retrieval."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "token": {"type": "string", "description": 'the token from the footer, e.g. "tj:0123..."'},
            "query": RECOVERY_TOOL["input_schema"]["properties"]["query"],
            "lines": RECOVERY_TOOL["input_schema"]["properties"]["lines"],
            "bytes": RECOVERY_TOOL["input_schema"]["properties"]["bytes"],
        },
        "required": ["token"],
        "additionalProperties": False,
    },
}
"""The same tool as TinyJuice names it, for agents shown its partial-view footer (``[masking] footer``).

``recover`` answers it too: ``token`` is read as the handle."""


class RecoveryRequest(BaseModel):
    """One call of the recovery tool, validated."""

    model_config = ConfigDict(extra="forbid")

    handle: str = Field(validation_alias=AliasChoices("handle", "token"))
    """The handle or marker; TinyJuice's tool calls it ``token``."""
    query: str | None = None
    lines: tuple[int, int] | None = None
    bytes_: tuple[int, int] | None = Field(default=None, alias="bytes")
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=0)
    exact: bool = False


class RecoveryAnswer(BaseModel):
    """What goes back to the model as the tool result."""

    model_config = ConfigDict(extra="forbid")

    content: str
    is_error: bool = False


def recover(store: Store, tool_input: dict[str, Any], *, counter: TextCounter | None = None) -> RecoveryAnswer:
    """Answer one recovery-tool call from ``store``; errors become readable answers.

    ``counter`` measures ``max_tokens`` (default: the project's tiktoken counter).
    """
    try:
        request = RecoveryRequest.model_validate(tool_input)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors())
        return RecoveryAnswer(content=f"invalid {RECOVERY_TOOL_NAME} call: {problems}", is_error=True)
    chosen = sum(x is not None for x in (request.query, request.lines, request.bytes_))
    if chosen > 1:
        return RecoveryAnswer(content="give at most one of 'query', 'lines' and 'bytes'", is_error=True)
    try:
        found = store.retrieve(request.handle, query=request.query, lines=request.lines, byte_range=request.bytes_)
    except CompactorError as exc:  # ccr's own errors and the shared concepts it raises (StoreError, ...)
        return RecoveryAnswer(content=f"{exc.error_id}: {exc}", is_error=True)
    notice = notice_text(found, query=request.query)  # no match, no units, or past the end
    if request.exact and not is_utf8(found.data):  # as text it could not be exact: give base64
        return RecoveryAnswer(content=_base64_answer(found, request.max_tokens, _counter(counter)))
    try:
        return RecoveryAnswer(content=_answer_text(store, found, request, counter, notice))
    except CompactorError as exc:  # the original could not be read again to name a long line's bytes
        return RecoveryAnswer(content=f"{exc.error_id}: {exc}", is_error=True)


# -- bytes that are not text -----------------------------------------------------------------------------


def _base64_answer(found: Retrieval, max_tokens: int, count: TextCounter) -> str:
    """An exact answer for bytes that are not UTF-8: base64 after a notice saying so, within ``max_tokens``.

    What does not fit is left out at a 3-byte boundary, and the notice says
    which byte range to ask for next.
    """
    first = found.start or 0
    data = found.data

    def text(size: int) -> str:
        end = first + size
        rest = "" if size == len(data) else f"; bytes [{end}, {first + len(data)}) are left out to fit: ask for them"
        head = (
            f"[{found.ref}: bytes [{first}, {end}) are not UTF-8 text, so they are given as base64, "
            f"exact once decoded{rest}]\n"
        )
        return head + base64.b64encode(data[:size]).decode("ascii") + "\n"

    if max_tokens == 0 or count.count_text(text(len(data))) <= max_tokens:
        return text(len(data))
    low, high = 0, len(data) // 3  # whole 3-byte groups that fit
    while low < high:
        middle = (low + high + 1) // 2
        if count.count_text(text(middle * 3)) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return text(low * 3)


# -- answers that fit ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Piece:
    """A whole line (or a query's whole unit, with the gap markers before it) of an answer."""

    data: bytes
    lines: tuple[int, int] | None
    """Where it is in the original: 1-based inclusive lines (None: not a line of it, or not known)."""
    offset: int | None = None
    """Its first byte in the original, when known."""


_DEFAULT_COUNTER: list[TextCounter] = []


def _counter(counter: TextCounter | None) -> TextCounter:
    if counter is not None:
        return counter
    if not _DEFAULT_COUNTER:
        from ccr.tokens import TiktokenTextCounter

        _DEFAULT_COUNTER.append(TiktokenTextCounter())
    return _DEFAULT_COUNTER[0]


def _answer_text(
    store: Store, found: Retrieval, request: RecoveryRequest, counter: TextCounter | None, notice: str | None
) -> str:
    """The answer as the model gets it: ``notice``, then the text (rendered unless ``exact``), within ``max_tokens``.

    The notices count towards ``max_tokens`` too, so the whole answer fits
    (unless the bound is smaller than the notices themselves).
    """
    lead = "" if notice is None else f"{notice}\n"
    pieces = _pieces(found)
    render = not request.exact and found.mode != "bytes" and _is_conversation(pieces)
    texts = [_render(p) if render else p.data.decode("utf-8", errors="replace") for p in pieces]
    if request.max_tokens == 0:
        return lead + "".join(texts)
    count = _counter(counter)
    budget = request.max_tokens
    room = max(budget - (count.count_text(lead) if lead else 0), 1)
    shown = _fitting(texts, room, count)
    if shown == len(pieces):
        return lead + "".join(texts)
    scores = found.unit_scores
    if scores is not None and found.mode == "query" and not found.whole:
        best = _best_units(found, pieces, texts, room, count, rendered=render, bound=budget, query=request.query)
        if best is not None:
            return lead + best
        top = max(range(len(scores)), key=lambda i: (scores[i], -i))
        return lead + _long_first_piece(
            store, found, pieces[top], texts[top], room, count, rendered=render, bound=budget
        )
    if shown == 0:
        return lead + _long_first_piece(store, found, pieces[0], texts[0], room, count, rendered=render, bound=budget)
    cut = _cut_notice(found, pieces, shown, budget, rendered=render)
    shown = _fitting(texts[:shown], max(room - count.count_text(cut) - 2, 1), count)
    if shown == 0:
        return lead + _long_first_piece(store, found, pieces[0], texts[0], room, count, rendered=render, bound=budget)
    return lead + "".join(texts[:shown]) + _cut_notice(found, pieces, shown, budget, rendered=render) + "\n"


def _best_units(
    found: Retrieval,
    pieces: Sequence[_Piece],
    texts: Sequence[str],
    room: int,
    count: TextCounter,
    *,
    rendered: bool,
    bound: int,
    query: str | None = None,
) -> str | None:
    """A query's answer within ``room``: the best-scoring units that fit, in their original order.

    Each unit left out is marked where it was, with the few lines of it that hold the most of the
    query's words (``_matching_lines``), and the notice names its lines. None when not even one
    unit fits.
    """
    from ccr.templating import render_text

    assert found.unit_scores is not None
    scores = found.unit_scores
    units = [i for i, p in enumerate(pieces) if p.lines is not None]
    reserve = 0
    for _ in range(2):  # once with no room kept for the notice, once with the room it took
        chosen: set[int] = set()
        used = 0
        for i in sorted(units, key=lambda i: (-scores[i], i)):
            cost = count.count_text(texts[i])
            if used + cost <= room - reserve:
                chosen.add(i)
                used += cost
        if not chosen:
            return None
        left_out = [pieces[i].lines for i in units if i not in chosen]
        notice = render_text(
            "ccr",
            "recovery_cut_notice.j2",
            kind="units",
            max_tokens=bound,
            handle=found.ref or found.handle,
            rendered=rendered,
            shown=len(chosen),
            total=len(units),
            pages=[x for x in left_out if x is not None][:_RANGES_NAMED],
            more=max(len(left_out) - _RANGES_NAMED, 0),
        ).rstrip("\n")
        out = "".join(
            texts[i] if i in chosen or pieces[i].lines is None else _left_out_marker(pieces[i], texts[i], query)
            for i in range(len(pieces))
        )
        if count.count_text(out + notice) <= room or reserve:
            return out + notice + "\n"
        reserve = (
            count.count_text(notice)
            + sum(count.count_text(_left_out_marker(pieces[i], texts[i], query)) for i in units)
            + 2
        )
    raise AssertionError("unreachable")


def _left_out_marker(piece: _Piece, text: str = "", query: str | None = None) -> str:
    """What stands where a matching unit was left out to fit: its gap markers, one for it, and the
    lines of its ``text`` that hold the most of ``query``'s words (a handful, each cut short)."""
    before = b"".join(r for r in piece.data.splitlines(keepends=True) if _is_filler(r) and r.strip())
    lines = piece.lines or (0, 0)
    where = f"line {lines[0]}" if lines[0] == lines[1] else f"lines {lines[0]}-{lines[1]}"
    found = _matching_lines(text, query)
    if not found:
        return before.decode("utf-8", errors="replace") + f"[... 1 matching unit left out to fit: {where} ...]\n"
    shown = "".join(f"{line}\n" for line in found)
    return (
        before.decode("utf-8", errors="replace")
        + f"[... 1 matching unit left out to fit: {where}; the lines of it that match most of the query: ...]\n"
        + shown
        + "[... end of those lines ...]\n"
    )


_MATCHING_LINES = 12
_MATCHING_LINE_CHARS = 300
_WORD = re.compile(r"[A-Za-z0-9_]+")


def _matching_lines(text: str, query: str | None) -> list[str]:
    """The lines of ``text`` holding the most distinct words of ``query`` (at least one), in their
    order, at most ``_MATCHING_LINES`` of them, each cut to ``_MATCHING_LINE_CHARS``."""
    if not query or not text:
        return []
    words = {w.lower() for w in _WORD.findall(query) if len(w) > 2 or w.isdigit()}
    if not words:
        return []
    scored = []
    for line in text.splitlines():
        have = {w.lower() for w in _WORD.findall(line)} & words
        if have:
            scored.append((len(have), line))
    if not scored:
        return []
    best = max(n for n, _ in scored)
    picked = [line for n, line in scored if n == best][:_MATCHING_LINES]
    return [
        line if len(line) <= _MATCHING_LINE_CHARS else line[: _MATCHING_LINE_CHARS - 5] + " [...]" for line in picked
    ]


def _fitting(texts: Sequence[str], room: int, count: TextCounter) -> int:
    """How many of ``texts``, from the first, fit in ``room`` tokens together."""
    shown = used = 0
    for text in texts:
        used += count.count_text(text)
        if used > room:
            break
        shown += 1
    while shown and count.count_text("".join(texts[:shown])) > room:  # counts of parts need not add up
        shown -= 1
    return shown


def _pieces(found: Retrieval) -> list[_Piece]:
    data = found.data
    if found.mode == "query" and not found.whole and found.unit_lines is not None:
        return _unit_pieces(data, found.unit_lines)
    first_line = found.start if found.mode == "lines" and found.start is not None else 1
    base = found.start if found.mode == "bytes" and found.start is not None else 0
    lines = data.splitlines(keepends=True)
    pieces: list[_Piece] = []
    offset = 0
    for index, line in enumerate(lines):
        known_lines = found.mode != "bytes"
        number = first_line + index
        pieces.append(
            _Piece(
                data=line,
                lines=(number, number) if known_lines else None,
                offset=(offset if found.mode in ("exact", "query") else None) if known_lines else base + offset,
            )
        )
        offset += len(line)
    return pieces


def _unit_pieces(data: bytes, unit_lines: Sequence[tuple[int, int]]) -> list[_Piece]:
    """A query's answer as one piece per unit, each with the gap markers (and header) before it."""
    rows = data.splitlines(keepends=True)
    header = sum(not _is_filler(r) for r in rows) - sum(last - first + 1 for first, last in unit_lines)
    pieces: list[_Piece] = []
    row = 0
    for first, last in unit_lines:
        start = row
        while row < len(rows) and (_is_filler(rows[row]) or header > 0):  # a kept header (CSV) rides along
            header -= not _is_filler(rows[row])
            row += 1
        row = min(row + (last - first + 1), len(rows))
        pieces.append(_Piece(data=b"".join(rows[start:row]), lines=(first, last)))
    if row < len(rows):
        pieces.append(_Piece(data=b"".join(rows[row:]), lines=None))
    return pieces


def _is_filler(row: bytes) -> bool:
    """A gap marker or the blank line between paragraphs: what a query answer holds besides its units."""
    text = row.strip()
    return not text or (text.startswith(b"[... ") and text.endswith(b" omitted ...]"))


def _render(piece: _Piece) -> str:
    """A piece of a stored conversation as text: each message's blocks, tool outputs raw."""
    return render_rows(piece.data, piece.lines[0] if piece.lines is not None else None)


def _is_conversation(pieces: Sequence[_Piece]) -> bool:
    """Whether every line with content is a stored message (``{"role", "content"}`` or a transcript entry)."""
    seen = False
    for piece in pieces:
        for row in piece.data.splitlines():
            if _is_filler(row):
                continue
            if message_of(row) is None:
                return False
            seen = True
    return seen


_PAGES_NAMED = 3
_RANGES_NAMED = 10
_LONG_NOTICE_TOKENS = 120
"""Room kept for the notice after the start of a line that alone is over the bound."""


def _cut_notice(found: Retrieval, pieces: Sequence[_Piece], shown: int, budget: int, *, rendered: bool) -> str:
    from ccr.templating import render_text

    handle = found.ref or found.handle
    common = {"max_tokens": budget, "handle": handle, "rendered": rendered}
    if found.mode == "query" and not found.whole:
        rest = [p.lines for p in pieces[shown:] if p.lines is not None]
        total = sum(1 for p in pieces if p.lines is not None)
        return render_text(
            "ccr",
            "recovery_cut_notice.j2",
            kind="units",
            shown=total - len(rest),
            total=total,
            pages=rest[:_RANGES_NAMED],
            more=max(len(rest) - _RANGES_NAMED, 0),
            **common,
        ).rstrip("\n")
    if found.mode == "bytes":
        first = found.start or 0
        last = first + sum(len(p.data) for p in pieces[:shown])
        end = found.end if found.end is not None else last
        pages = _pages(last, end, last - first, one_based=False)
        return render_text(
            "ccr",
            "recovery_cut_notice.j2",
            kind="bytes",
            first=first,
            last=last,
            end=end,
            pages=pages[:_PAGES_NAMED],
            more=len(pages) > _PAGES_NAMED,
            **common,
        ).rstrip("\n")
    lines = [p.lines for p in pieces if p.lines is not None]
    first, last, end = lines[0][0], lines[shown - 1][1], lines[-1][1]
    span = f"of lines {first}-{end} asked for" if found.mode == "lines" else f"of {end} lines"
    pages = _pages(last + 1, end, last - first + 1, one_based=True)
    return render_text(
        "ccr",
        "recovery_cut_notice.j2",
        kind="lines",
        first=first,
        last=last,
        end=end,
        span=span,
        pages=pages[:_PAGES_NAMED],
        more=len(pages) > _PAGES_NAMED,
        **common,
    ).rstrip("\n")


def _pages(start: int, end: int, size: int, *, one_based: bool) -> list[tuple[int, int]]:
    """Ranges of ``size`` from ``start`` to ``end``: inclusive lines, or half-open byte ranges."""
    size = max(size, 1)
    pages: list[tuple[int, int]] = []
    at = start
    while (at <= end if one_based else at < end) and len(pages) <= _PAGES_NAMED:
        stop = min(at + size - 1, end) if one_based else min(at + size, end)
        pages.append((at, stop))
        at = stop + 1 if one_based else stop
    return pages


def _long_first_piece(
    store: Store,
    found: Retrieval,
    piece: _Piece,
    text: str,
    room: int,
    counter: TextCounter,
    *,
    rendered: bool,
    bound: int,
) -> str:
    """The start of a first line (or unit) that alone is over the budget, and the byte ranges of the rest.

    When it was rendered (a message shown as text), its bytes do not line up
    with what was shown, so the ranges start at its first byte.
    """
    from ccr.templating import render_text

    head = _head_within(text, max(room - _LONG_NOTICE_TOKENS, 1), counter)
    offset = piece.offset
    if offset is None and piece.lines is not None:  # a line range or a unit: find where it starts
        original = store.retrieve(found.ref or found.handle).data
        before = original.split(b"\n", piece.lines[0] - 1)[: piece.lines[0] - 1]
        offset = sum(len(line) + 1 for line in before)
    size = len(piece.data)
    if offset is None:
        offset = 0
    shown = min(len(head.encode("utf-8")), size) or 1
    pages = _pages(offset if rendered else offset + shown, offset + size, shown, one_based=False)
    first = piece.lines[0] if piece.lines is not None else offset
    notice = render_text(
        "ccr",
        "recovery_cut_notice.j2",
        kind="long_line",
        max_tokens=bound,
        handle=found.ref or found.handle,
        first=first,
        size=size,
        end=offset + size,
        pages=pages[:_PAGES_NAMED] or [(offset, offset + size)],
        more=len(pages) > _PAGES_NAMED,
        rendered=False,
    ).rstrip("\n")
    return head + ("" if head.endswith("\n") else "\n") + notice + "\n"


def _head_within(text: str, room: int, counter: TextCounter) -> str:
    """The longest start of ``text`` within ``room`` tokens: whole lines, unless that leaves most of the room empty."""
    from ccr.truncate import truncate_head

    head, _ = truncate_head(text, room, counter)
    if counter.count_text(head) * 2 >= room or len(head) == len(text):
        return head
    low, high = len(head), min(len(text), max(room, 1) * 16)
    while low < high:  # the longest prefix (in characters) that fits
        middle = (low + high + 1) // 2
        if counter.count_text(text[:middle]) <= room:
            low = middle
        else:
            high = middle - 1
    return text[:low]
