"""Retrieval from an original: exact, by query, by line range, by byte range.

Pure functions over bytes; the store resolves a reference to its original
and calls ``retrieve``. Every result is a ``Retrieval`` flagged
``recovered=True``: recovery output must never be deduped, compacted or
summarized again, or the agent could never get the exact bytes back.

Query retrieval over-returns rather than cutting: it returns only whole
units (see ``ccr._units``), the best ``QUERY_UNITS`` by BM25 in their
original order, with a visible gap marker wherever units were left out. When
the original has no units, or no unit matches, it returns the whole original.
Units are ranked by ``ccr.bm25`` with retrieval's own terms (``unit_words``:
lowercase word runs, ``snake_case`` also as its parts) and k1 1.2, b 0.75.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ccr import bm25
from ccr._units import Segmentation, segment
from ccr.errors import InvalidRequest

__all__ = [
    "B",
    "K1",
    "QUERY_UNITS",
    "Retrieval",
    "RetrievalMode",
    "RetrievalNotice",
    "check_selection",
    "gap_marker",
    "is_utf8",
    "notice_text",
    "rank_units",
    "retrieve",
    "select_bytes",
    "select_lines",
    "select_query",
    "unit_words",
]

QUERY_UNITS = 20
"""How many best-scoring units a query returns at most."""
K1 = 1.2
"""Retrieval's BM25 term saturation (``ccr.bm25``)."""
B = 0.75
"""Retrieval's BM25 length normalisation (``ccr.bm25``)."""

_WORD = re.compile(r"\w+")

RetrievalMode = Literal["exact", "query", "lines", "bytes"]

RetrievalNotice = Literal["query_no_units", "query_no_match", "past_end"]
"""What the caller should be told besides the data: the original has no units
to select from, or no unit matched (so the whole original came back), or the
range starts past the end (so nothing came back)."""


class Retrieval(BaseModel):
    """What a recovery call returns. ``recovered`` marks it as never to be compacted again.

    ``start``/``end`` are the clamped span actually returned: byte offsets
    (half-open) for ``bytes``, 1-based line numbers (inclusive) for ``lines``.
    ``whole`` is true when the complete original was returned. ``notice``
    says when the answer is not what the selection asked for (see
    ``RetrievalNotice``); ``lines_total`` counts the original's lines for a
    line range; ``unit_lines`` says which lines of the original each unit a
    query returned spans, and ``unit_scores`` how well it matched, so that a
    caller can keep the best ones and point at the others.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    handle: str
    ref: str
    mode: RetrievalMode
    data: bytes
    recovered: bool = True
    original_size: int
    whole: bool
    start: int | None = None
    end: int | None = None
    units_total: int | None = None
    units_returned: int | None = None
    notice: RetrievalNotice | None = None
    lines_total: int | None = None
    unit_lines: tuple[tuple[int, int], ...] | None = None
    """For a query: where each returned unit is in the original, as 1-based inclusive line ranges."""
    unit_scores: tuple[float, ...] | None = None
    """For a query: each returned unit's BM25 score, in the same order."""

    @property
    def text(self) -> str:
        """The data as text (invalid UTF-8 shown with replacement characters)."""
        return self.data.decode("utf-8", errors="replace")


def notice_text(result: Retrieval, *, query: str | None = None) -> str | None:
    """One line saying what ``result.notice`` means, or None when there is nothing to say.

    The same words go to a person (the command line's stderr) and to a model
    (before the recovered text), rendered from ``ccr/templates/retrieval_notice.j2``.
    """
    if result.notice is None:
        return None
    from ccr.templating import environment  # jinja2 only when there is something to say

    template = environment("ccr").get_template("retrieval_notice.j2")
    return template.render(
        notice=result.notice,
        mode=result.mode,
        handle=result.ref or result.handle,
        query=query,
        size=result.original_size,
        start=result.start,
        lines_total=result.lines_total,
    ).strip()


def gap_marker(count: int, unit: str = "unit") -> str:
    """The visible line that stands for ``count`` omitted units (``unit`` names what they are)."""
    noun = unit if count == 1 else f"{unit}s"
    return f"[... {count} {noun} omitted ...]"


def check_selection(
    *,
    query: str | None = None,
    lines: tuple[int, int] | None = None,
    byte_range: tuple[int, int] | None = None,
) -> None:
    """Refuse a malformed selection before anything is read.

    Raises:
        InvalidRequest: more than one selection, a query that is empty or not
            text, or a range that is not two integers in order.
    """
    if sum(x is not None for x in (query, lines, byte_range)) > 1:
        raise InvalidRequest("choose one of query, lines or byte_range")
    if query is not None and not isinstance(query, str):
        raise InvalidRequest(f"the query must be text, not {type(query).__name__}")
    if query is not None and not query.strip():
        raise InvalidRequest("the query is empty")
    if lines is not None:
        _check_span("line", lines, minimum=1)
    if byte_range is not None:
        _check_span("byte", byte_range, minimum=0)


def _check_span(unit: str, span: object, *, minimum: int) -> None:
    """Refuse a range that is not two integers ``minimum <= first <= last``.

    Raises:
        InvalidRequest: the range has another shape or its ends are out of order.
    """
    if not (
        isinstance(span, tuple | list)
        and len(span) == 2
        and all(isinstance(end, int) and not isinstance(end, bool) for end in span)
    ):
        raise InvalidRequest(f"a {unit} range is two integers (first, last), not {span!r}")
    first, last = span
    if first < minimum or last < first:
        name = "first" if unit == "line" else "start"
        other = "last" if unit == "line" else "end"
        raise InvalidRequest(f"bad {unit} range {first}:{last} (need {minimum} <= {name} <= {other})")


def retrieve(
    data: bytes,
    *,
    handle: str,
    ref: str | None = None,
    query: str | None = None,
    lines: tuple[int, int] | None = None,
    byte_range: tuple[int, int] | None = None,
) -> Retrieval:
    """Apply at most one selection to ``data``; with none, return it exactly.

    Raises:
        InvalidRequest: more than one selection, or a malformed one.
    """
    check_selection(query=query, lines=lines, byte_range=byte_range)
    if query is not None:
        result = select_query(data, query)
    elif lines is not None:
        result = select_lines(data, lines)
    elif byte_range is not None:
        result = select_bytes(data, byte_range)
    else:
        result = Retrieval(handle="", ref="", mode="exact", data=data, original_size=len(data), whole=True)
    return result.model_copy(update={"handle": handle, "ref": ref or handle})


def select_lines(data: bytes, lines: tuple[int, int]) -> Retrieval:
    """Lines ``first..last`` (1-based, inclusive), clamped to the end; empty past the end.

    Raises:
        InvalidRequest: ``first`` < 1 or ``last`` < ``first``.
    """
    _check_span("line", lines, minimum=1)
    first, last = lines
    spans = data.splitlines(keepends=True)
    if first > len(spans):
        chunk = b""
        last = first - 1
    else:
        last = min(last, len(spans))
        chunk = b"".join(spans[first - 1 : last])
    result = _partial("lines", data, chunk, first, last)
    notice: RetrievalNotice | None = "past_end" if first > len(spans) else None
    return result.model_copy(update={"notice": notice, "lines_total": len(spans)})


def select_bytes(data: bytes, byte_range: tuple[int, int]) -> Retrieval:
    """Bytes ``[start, end)``, clamped to the data and widened to whole UTF-8 characters.

    Widening (never narrowing) means a range that starts or ends inside a
    multi-byte character returns that whole character. Data that is not
    UTF-8 is sliced as plain bytes.

    Raises:
        InvalidRequest: ``start`` < 0 or ``end`` < ``start``.
    """
    _check_span("byte", byte_range, minimum=0)
    start, end = byte_range
    size = len(data)
    past_end = start > 0 and start >= size  # nothing at or after start
    start, end = min(start, size), min(end, size)
    if is_utf8(data):
        empty = end <= start
        start = _char_start(data, start)
        end = start if empty else _char_end(data, end)
    result = _partial("bytes", data, data[start:end], start, end)
    return result.model_copy(update={"notice": "past_end"}) if past_end else result


def select_query(data: bytes, query: str) -> Retrieval:
    """The best whole units for ``query``, in original order, with gap markers.

    Raises:
        InvalidRequest: the query is empty.
    """
    if not query.strip():
        raise InvalidRequest("the query is empty")
    seg = segment(data)
    if seg is None:
        return _whole_query(data, None, "query_no_units")
    texts = [data[a:b].decode("utf-8") for a, b in seg.units]
    scores = rank_units(query, texts)
    hits = [i for i, s in enumerate(scores) if s > 0]
    if not hits:
        return _whole_query(data, len(seg.units), "query_no_match")
    best = sorted(sorted(hits, key=lambda i: -scores[i])[:QUERY_UNITS])
    return Retrieval(
        handle="",
        ref="",
        mode="query",
        data=_assemble(data, seg, best),
        original_size=len(data),
        whole=False,
        units_total=len(seg.units),
        units_returned=len(best),
        unit_lines=tuple(_line_span(data, *seg.units[i]) for i in best),
        unit_scores=tuple(scores[i] for i in best),
    )


def unit_words(text: str) -> list[str]:
    """Retrieval's terms: lowercase word runs; ``snake_case`` also yields its parts."""
    tokens: list[str] = []
    for word in _WORD.findall(text.lower()):
        tokens.append(word)
        if "_" in word:
            tokens.extend(part for part in word.split("_") if part)
    return tokens


def rank_units(query: str, texts: list[str]) -> list[float]:
    """Each unit's BM25 score for ``query`` (0.0 where no query term occurs), in the units' order."""
    return bm25.rank(query, texts, tokenize=unit_words, k1=K1, b=B)


def _line_span(data: bytes, start: int, end: int) -> tuple[int, int]:
    """The 1-based inclusive lines of ``data`` that bytes ``[start, end)`` lie on."""
    first = data.count(b"\n", 0, start) + 1
    body = data[start:end].rstrip(b"\r\n")
    return first, first + body.count(b"\n")


def _assemble(data: bytes, seg: Segmentation, chosen: list[int]) -> bytes:
    sep = b"\n\n" if seg.kind == "paragraph" else b"\n"
    unit = "line" if seg.kind == "numbered_lines" else "unit"
    pieces: list[bytes] = []
    if seg.header is not None:
        pieces.append(data[seg.header[0] : seg.header[1]].rstrip(b"\r\n"))
    previous = -1
    for index in chosen:
        if index > previous + 1:
            pieces.append(gap_marker(index - previous - 1, unit).encode())
        a, b = seg.units[index]
        pieces.append(data[a:b].rstrip(b"\r\n"))
        previous = index
    if previous < len(seg.units) - 1:
        pieces.append(gap_marker(len(seg.units) - 1 - previous, unit).encode())
    return sep.join(pieces) + b"\n"


def _whole_query(data: bytes, units_total: int | None, notice: RetrievalNotice) -> Retrieval:
    return Retrieval(
        notice=notice,
        handle="",
        ref="",
        mode="query",
        data=data,
        original_size=len(data),
        whole=True,
        units_total=units_total,
        units_returned=units_total,
    )


def _partial(mode: RetrievalMode, data: bytes, chunk: bytes, start: int, end: int) -> Retrieval:
    return Retrieval(
        handle="",
        ref="",
        mode=mode,
        data=chunk,
        original_size=len(data),
        whole=chunk == data,
        start=start,
        end=end,
    )


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` decodes as UTF-8 (else an exact answer must be base64)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _is_continuation(data: bytes, pos: int) -> bool:
    return pos < len(data) and data[pos] & 0xC0 == 0x80


def _char_start(data: bytes, pos: int) -> int:
    while pos > 0 and _is_continuation(data, pos):
        pos -= 1
    return pos


def _char_end(data: bytes, pos: int) -> int:
    while _is_continuation(data, pos):
        pos += 1
    return pos
