"""Head-keeping truncation: keep the start of a text, on a line boundary, within a budget.

Shared by skills and file attachments. The head is the longest run of whole
lines that fits; only when not even the first line fits is it cut inside that
line, so that a one-line (minified) file still shows something. ``head +
tail`` is always the original text, so the tail can be stored and recovered
exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from compactor.tokens import TokenCounter

__all__ = ["fit_head", "truncate_head"]


def truncate_head(text: str, max_tokens: int, counter: TokenCounter) -> tuple[str, str]:
    """Split ``text`` into ``(head, tail)`` with ``head`` at most ``max_tokens`` tokens.

    The whole text comes back as the head (tail empty) when it fits.
    """
    return fit_head(text, lambda head: counter.count_text(head) <= max_tokens)


def fit_head(text: str, fits: Callable[[str], bool]) -> tuple[str, str]:
    """Split ``text`` at the longest head for which ``fits(head)`` holds.

    Candidates are line ends (just after each ``\\n``); when no whole line
    fits, character positions inside the first line. The search is a binary
    search, so ``fits`` is called O(log n) times; only heads for which it
    returned true are ever returned (an empty head when nothing fits), so the
    caller's budget holds even if ``fits`` is not perfectly monotone.
    """
    if fits(text):
        return text, ""
    cuts = _line_ends(text)
    best = _largest(cuts, lambda cut: fits(text[:cut]))
    if best is None:
        first_line_end = cuts[0] if cuts else len(text)
        best = _largest(range(1, first_line_end), lambda cut: fits(text[:cut]))
    if best is None:
        return "", text
    return text[:best], text[best:]


def _line_ends(text: str) -> list[int]:
    """Positions just after each newline, short of the end of the text."""
    ends: list[int] = []
    at = text.find("\n")
    while 0 <= at < len(text) - 1:
        ends.append(at + 1)
        at = text.find("\n", at + 1)
    return ends


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
