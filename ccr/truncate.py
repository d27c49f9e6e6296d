"""Head-keeping truncation: keep the start of a text, on a line boundary, within a budget.

Shared by skills, file attachments and the recovery tool. The head is the longest run of whole
lines that fits; only when not even the first line fits is it cut inside that
line, so that a one-line (minified) file still shows something. ``head +
tail`` is always the original text, so the tail can be stored and recovered
exactly.

Only a head measured within the budget is returned. ``LineCounts`` counts
each line about once, with the answers of counting line by line (why:
docs/ARCHITECTURE.md, "Why it is fast").
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterator, Sequence

from ccr.tokens import TextCounter

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

_FIRST_RATE = 2.5
"""Characters per token assumed for the first run, before any is counted: less than code or
prose run at (about 4), so the first run rarely overshoots the budget."""

_MOST_RATE = 6.0
"""The most characters per token a run is sized at, however sparse the counted pieces were
(a first piece of blank lines must not size a run far past the budget)."""

_RUN_AIM = 0.9
"""The share of what the budget left may hold that a run aims at: a run short of the budget is
followed by a shorter one, while one past it wastes what it counted past the budget."""

_GUESSES = 4
"""Totals inside a run guessed from its rate before ``LineCounts`` falls back to bisecting."""

_ENDS_AT_ONCE = 32
"""Piece ends found per step: a batch costs about what one end does (found one at a time, the
ends of a cut file cost a third as much as counting its runs)."""


def truncate_head(text: str, max_tokens: int, counter: TextCounter) -> tuple[str, str]:
    """Split ``text`` into ``(head, tail)`` with ``head`` at most ``max_tokens`` tokens.

    The whole text comes back as the head (tail empty) when it fits.
    """
    return fit_head(text, max_tokens, counter)


def fit_head(
    text: str,
    limit: int,
    counter: TextCounter,
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
    to ``end(k)``. Piece ends are found (a few dozen at a time), and pieces
    counted, only as far as a caller asks, so a huge text costs what its
    head costs.

    Why runs are counted whole: with a counter that is additive at line
    starts (``TiktokenCounter``, or a ``CachedCounter`` around it) the
    count of a run of pieces is the sum of its pieces' counts, and each
    counter call has a fixed cost (tokenizer, cache key, bookkeeping) about
    as large as counting a 40-character line, which is what a file's lines
    average. So the pieces are counted in runs, one call each, sized from
    the budget still left at the text's own characters per token, to land
    just short of it (a cut file costs a handful of calls, not two hundred).
    A piece's own total is found only where a caller needs it, by counting
    the shorter side of it within the run that holds it (one call). The
    answers are those of counting piece by piece. Other counters, and
    pieces a caller gave (cuts inside a line, which are not line starts),
    are counted one piece at a time.
    """

    def __init__(self, text: str, counter: TextCounter, *, ends: Sequence[int] | None = None) -> None:
        self.text = text
        self._counter = counter
        self._ends: list[int] = list(ends) if ends is not None else []
        self._more: Iterator[re.Match[str]] | None = None if ends is not None else _LINE_START.finditer(text)
        self._runs = ends is None and bool(getattr(counter, "additive_at_line_starts", False))
        self._known = [0]
        """Piece counts ``k`` whose ``total(k)`` is known, ascending; the last is ``counted``."""
        self._sums = [0]
        """``total(k)`` for each ``k`` in ``_known``."""

    def exists(self, k: int) -> bool:
        """Whether the text has a ``k``-th piece (1-based)."""
        while len(self._ends) < k and self._more is not None:
            self._find_more()
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
        """How many pieces have been counted so far (alone or in runs): the first ``counted``."""
        return self._known[-1]

    def total(self, k: int) -> int:
        """The summed counts of the first ``k`` pieces.

        Raises:
            IndexError: the text has fewer pieces.
        """
        if k:
            self.end(k)
        at = bisect.bisect_left(self._known, k)
        if at == len(self._known):
            self._count_to(k)
            return self._sums[-1]
        if self._known[at] == k:
            return self._sums[at]
        return self._fill(at, k)

    def last_within(self, budget: int, lo: int = 0, hi: int | None = None, *, proper: bool = False) -> int:
        """The largest ``k`` in ``[lo, hi)`` with ``total(k) <= budget`` (``lo`` when none is).

        ``proper`` leaves out the piece that ends the text (a head shorter than the text is wanted).
        """
        self._count_past(budget, hi, proper)
        top = self.counted if hi is None else min(hi - 1, self.counted)
        while top > lo and not self._candidate(top, proper):
            top -= 1
        if top <= lo:
            return lo
        # The known totals bracket the answer: the last within the budget and the next one over it.
        inside = bisect.bisect_right(self._known, top)
        below = bisect.bisect_right(self._sums, budget, 0, inside) - 1
        fits = max(lo, self._known[below]) if below >= 0 else lo
        if below + 1 == len(self._known):
            return fits
        if self._sums[below + 1] <= budget:  # known beyond top and within the budget: so is top
            return top
        return self._search(budget, fits, min(top, self._known[below + 1] - 1))

    def pieces_in(self, end: int) -> int | None:
        """The ``k`` whose head ``text[:end(k)]`` ends at ``end``, among the piece ends found so far (None: none)."""
        k = bisect.bisect_left(self._ends, end)
        return k + 1 if k < len(self._ends) and self._ends[k] == end else None

    def all_within(self, budget: int) -> bool:
        """Whether every piece together counts at most ``budget``."""
        self._count_past(budget, None, False)
        return self._sums[-1] <= budget and not self.exists(self.counted + 1)

    def _candidate(self, k: int, proper: bool) -> bool:
        return self.exists(k) and not (proper and self._ends[k - 1] == len(self.text))

    def _find_more(self) -> None:
        """Find the next ``_ENDS_AT_ONCE`` piece ends (the text's end after the last one)."""
        assert self._more is not None
        found = [match.end() for match in itertools.islice(self._more, _ENDS_AT_ONCE)]
        self._ends.extend(found)
        if len(found) < _ENDS_AT_ONCE:
            self._ends.append(len(self.text))
            self._more = None

    def _count_past(self, budget: int, hi: int | None, proper: bool) -> None:
        """Count on until the counted pieces exceed ``budget``, or no candidate below ``hi`` is left."""
        while (
            self._sums[-1] <= budget
            and (hi is None or self.counted + 1 < hi)
            and self._candidate(self.counted + 1, proper)
        ):
            self._count_to(self._run_end(budget, hi, proper))

    def _run_end(self, budget: int, hi: int | None, proper: bool) -> int:
        """Where the next run ends: its pieces' characters are about ``_RUN_AIM`` of what the budget left may hold.

        The rate is the characters per token counted so far (``_FIRST_RATE``
        before anything is), at most ``_MOST_RATE``. A run is at least one
        piece; without runs, it is exactly one.
        """
        first = self.counted + 1
        if not self._runs:
            return first
        rate = self._ends[first - 2] / self._sums[-1] if first > 1 and self._sums[-1] else _FIRST_RATE
        reach = self._start(first) + (budget - self._sums[-1]) * min(rate, _MOST_RATE) * _RUN_AIM
        while self._more is not None and self._ends[-1] <= reach:
            self._find_more()
        last = len(self._ends) if hi is None else min(len(self._ends), hi - 1)
        if not self._candidate(last, proper):
            last -= 1
        return max(first, min(bisect.bisect_right(self._ends, reach), last))

    def _count_to(self, k: int) -> None:
        """Count the pieces after ``counted`` up to ``k``: as one run, or one by one without runs."""
        while self.counted < k:
            step = k if self._runs else self.counted + 1
            self._sums.append(self._sums[-1] + self._count(self.counted, step))
            self._known.append(step)

    def _fill(self, at: int, k: int) -> int:
        """``total(k)`` for a ``k`` inside a run counted whole (between ``_known[at - 1]`` and ``_known[at]``).

        The shorter side of the run is counted: the pieces from its start
        to ``k``, or those from ``k`` to its end, taken from the run's total.
        """
        start, stop = self._known[at - 1], self._known[at]
        if self._ends[k - 1] - self._start(start + 1) <= self._ends[stop - 1] - self._ends[k - 1]:
            found = self._sums[at - 1] + self._count(start, k)
        else:
            found = self._sums[at] - self._count(k, stop)
        self._known.insert(at, k)
        self._sums.insert(at, found)
        return found

    def _search(self, budget: int, lo: int, top: int) -> int:
        """The largest ``k`` in ``(lo, top]`` with ``total(k) <= budget`` (``lo`` when none is).

        ``lo`` is taken to fit (it is the answer when nothing above it does),
        and the first known total past ``top`` is over the budget. Each probe
        is first guessed from the known totals around it, at their rate of
        characters per token, which usually lands within a piece of the
        answer; after ``_GUESSES`` guesses the search bisects.
        """
        probes = 0
        while lo < top:
            if probes < _GUESSES:
                below = bisect.bisect_right(self._known, lo) - 1
                above = bisect.bisect_right(self._known, top)
                left, right = self._known[below], self._known[above]
                spent, span = self._sums[below], self._sums[above] - self._sums[below]
                start = self._start(left + 1)
                reach = start + (budget - spent) * (self._ends[right - 1] - start) / max(span, 1)
                k = min(max(bisect.bisect_right(self._ends, reach, 0, top), lo + 1), top)
            else:
                k = (lo + top + 1) // 2
            probes += 1
            if self.total(k) <= budget:
                lo = k
            else:
                top = k - 1
        return lo

    def _start(self, k: int) -> int:
        """Where the ``k``-th piece starts (its ends are found)."""
        return self._ends[k - 2] if k > 1 else 0

    def _count(self, after: int, upto: int) -> int:
        """One counter call on the pieces after the first ``after`` up to the ``upto``-th."""
        return self._counter.count_text(self.text[self._start(after + 1) : self._ends[upto - 1]])


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
