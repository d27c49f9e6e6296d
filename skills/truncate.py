"""Head-keeping truncation: keep the start of a text, on a line boundary, within a budget.

Shared by skills and file attachments. The head is the longest run of whole
lines that fits; only when not even the first line fits is it cut inside that
line, so that a one-line (minified) file still shows something. ``head +
tail`` is always the original text, so the tail can be stored and recovered
exactly.

Each line is tokenized once: the cut is chosen from the lines' cumulative
counts, and only the heads those counts point at are measured whole (usually
one or two), instead of measuring a head at every step of a binary search.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence

from compactor.tokens import TokenCounter

__all__ = ["LineCounts", "fit_head", "truncate_head"]

_GUIDED_PROBES = 3
"""Heads measured where the counts point before falling back to plain bisection.

The counts are exact for tiktoken up to the text around the head, so the
first or second probe almost always settles the cut; the fallback only
bounds the work for a counter whose counts do not add up across lines."""

_LINE_START = re.compile(r"\n(?=[ \t\r]*\S)")
"""A newline followed by a line with content."""

_CHUNK = 256
"""Characters per piece when a single line has to be cut inside."""


def truncate_head(text: str, max_tokens: int, counter: TokenCounter) -> tuple[str, str]:
    """Split ``text`` into ``(head, tail)`` with ``head`` at most ``max_tokens`` tokens.

    The whole text comes back as the head (tail empty) when it fits.
    """
    return fit_head(text, max_tokens, counter)


def fit_head(
    text: str,
    limit: int,
    counter: TokenCounter,
    *,
    measure: Callable[[str], int] | None = None,
    whole: bool = True,
    lines: LineCounts | None = None,
) -> tuple[str, str]:
    """Split ``text`` at the longest head whose ``measure`` is at most ``limit``.

    ``measure(head)`` is the size that must fit: by default the head's own
    count, or, for a head shown inside a wrapper, the count of the rendered
    wrapper. Candidates are line ends (see ``LineCounts``); when no whole
    line fits, points inside the first line. With ``whole`` false the text
    itself is not a candidate (a cut is wanted). ``lines`` reuses counts the
    caller already has. Only heads that ``measure`` found within ``limit``
    are ever returned (an empty head when nothing fits), so the budget holds
    even where the counts are only estimates.
    """
    if not text:
        return "", ""
    size = measure if measure is not None else counter.count_text
    lines = lines if lines is not None else LineCounts(text, counter)
    best = _longest(lines, limit, size, proper=not whole)
    if best == 0:
        first_line = min(lines.end(1), len(text) if whole else len(text) - 1)
        inside = LineCounts(text, counter, ends=[*range(_CHUNK, first_line, _CHUNK), first_line])
        best = _longest(inside, limit, size, proper=False)
        upper = min(best + _CHUNK, first_line + 1)
        exact = _largest(range(best + 1, upper), lambda cut: size(text[:cut]) <= limit)
        best = exact if exact is not None else best
    return text[:best], text[best:]


class LineCounts:
    """Running token counts of a text at its line ends, each line counted once, on demand.

    The text is cut into pieces: each ends where a line with content starts
    (just after a newline), the last at the end of the text. Blank
    (whitespace-only) lines stay with the line before them, because tiktoken
    counts a run of newlines as one token, so a cut between them would count
    differently from the pieces on either side. ``total(k)`` is the sum of
    the first ``k`` pieces' counts: for tiktoken, the count of the text up
    to ``end(k)``. Piece ends are found, and pieces counted, only as far as
    a caller asks, so a huge text costs what its head costs.
    """

    def __init__(self, text: str, counter: TokenCounter, *, ends: Sequence[int] | None = None) -> None:
        self.text = text
        self._counter = counter
        self._ends: list[int] = list(ends) if ends is not None else []
        self._more: Iterator[re.Match[str]] | None = None if ends is not None else _LINE_START.finditer(text)
        self._totals = [0]

    def exists(self, k: int) -> bool:
        """Whether the text has a ``k``-th piece (1-based)."""
        if k <= len(self._ends):
            return True
        while len(self._ends) < k and self._more is not None:
            match = next(self._more, None)
            if match is None:
                self._ends.append(len(self.text))
                self._more = None
            else:
                self._ends.append(match.end())
        return k <= len(self._ends)

    def end(self, k: int) -> int:
        """Where the ``k``-th piece ends (1-based); the head of ``k`` pieces is ``text[:end(k)]``.

        Raises:
            IndexError: the text has fewer pieces.
        """
        if not self.exists(k):
            raise IndexError(f"the text has fewer than {k} pieces")
        return self._ends[k - 1]

    @property
    def counted(self) -> int:
        """How many pieces have been counted so far."""
        return len(self._totals) - 1

    def total(self, k: int) -> int:
        """The summed counts of the first ``k`` pieces.

        Raises:
            IndexError: the text has fewer pieces.
        """
        if k:
            self.end(k)
        while len(self._totals) <= k:
            self._count_next()
        return self._totals[k]

    def last_within(self, budget: int, lo: int = 0, hi: int | None = None, *, proper: bool = False) -> int:
        """The largest ``k`` in ``[lo, hi)`` with ``total(k) <= budget`` (``lo`` when none is).

        ``proper`` leaves out the piece that ends the text (a head shorter than the text is wanted).
        """
        totals = self._totals
        while totals[-1] <= budget and (hi is None or len(totals) < hi) and self._candidate(len(totals), proper):
            self._count_next()
        top = len(totals) if hi is None else min(hi, len(totals))
        while top > lo + 1 and not self._candidate(top - 1, proper):
            top -= 1
        return max(bisect.bisect_right(totals, budget, lo, top) - 1, lo)

    def pieces_in(self, end: int) -> int | None:
        """The ``k`` whose head ``text[:end(k)]`` ends at ``end``, among the piece ends found so far (None: none)."""
        k = bisect.bisect_left(self._ends, end)
        return k + 1 if k < len(self._ends) and self._ends[k] == end else None

    def _count_next(self) -> None:
        """Count the next piece (whose end is already found)."""
        totals, ends = self._totals, self._ends
        start = ends[len(totals) - 2] if len(totals) > 1 else 0
        totals.append(totals[-1] + self._counter.count_text(self.text[start : ends[len(totals) - 1]]))

    def all_within(self, budget: int) -> bool:
        """Whether every piece together counts at most ``budget``."""
        return not self.exists(self.last_within(budget) + 1)

    def _candidate(self, k: int, proper: bool) -> bool:
        return self.exists(k) and not (proper and self._ends[k - 1] == len(self.text))


def _longest(lines: LineCounts, limit: int, size: Callable[[str], int], *, proper: bool) -> int:
    """The end of the longest head of whole pieces that measures within ``limit`` (0 if none).

    The estimate for the head of ``k`` pieces is the measured size of the
    empty head plus the pieces' counts, corrected after each measurement by
    what that measurement showed. ``lo`` is the longest head known to fit,
    ``hi`` the shortest known not to (None: none measured yet); each probe
    narrows them. After ``_GUIDED_PROBES`` the search bisects instead.
    """
    offset = size("")
    if offset > limit:
        return 0
    lo, hi = 0, None
    probes = 0
    while hi is None or hi - lo > 1:
        if probes < _GUIDED_PROBES:
            k = lines.last_within(limit - offset, lo, hi, proper=proper)
            if k == lo:
                break  # the counts say nothing longer fits
        else:
            top = hi if hi is not None else lines.counted + 1
            k = (lo + top) // 2
            if k == lo:
                break
        probes += 1
        measured = size(lines.text[: lines.end(k)])
        offset = measured - lines.total(k)
        if measured <= limit:
            lo = k
        else:
            hi = k
    return lines.end(lo) if lo else 0


def _largest(candidates: Sequence[int], ok: Callable[[int], bool]) -> int | None:
    """The largest candidate accepted by ``ok``, assuming acceptance is (mostly) monotone."""
    lo, hi = 0, len(candidates) - 1
    best: int | None = None
    while lo <= hi:
        mid = (lo + hi) // 2
        if ok(candidates[mid]):
            best = candidates[mid]
            lo = mid + 1
        else:
            hi = mid - 1
    return best
