"""Packing ranked memories into a token budget, greedily, without counting huge texts whole.

Hits are taken in rank order while they fit what is left of the budget; one
that does not fit is passed over for the next. The exception is the first
hit: when it alone is larger than the whole budget it comes back as its head
(whole lines where possible, never a broken character) with a handle to the
whole text, because a recall that answers nothing about the best match
would hide it. That head uses up the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from compactor.tokens import TokenCounter
from memory.models import Hit
from skills.truncate import truncate_head

__all__ = ["Candidate", "pack"]

Candidate = tuple[str, float, str]
"""``(id, score, text)`` in rank order."""

_CHARS_PER_TOKEN_PROBE = 8
"""A prefix of this many characters per budget token is counted first; a longer text is cut from it."""


def pack(
    candidates: Iterable[Candidate],
    *,
    limit: int,
    budget: int | None,
    counter: TokenCounter,
    stash: Callable[[str], str],
) -> list[Hit]:
    """At most ``limit`` hits whose ``tokens_added`` sum to at most ``budget`` (None: unlimited).

    ``stash`` stores a whole text and returns its recovery handle; it is
    called only for a first hit that has to be cut.
    """
    hits: list[Hit] = []
    left = budget
    for index, (memory_id, score, text) in enumerate(candidates):
        if len(hits) >= limit or left == 0:
            break
        tokens = _tokens_within(text, left, counter)
        if tokens is not None:
            hits.append(Hit(id=memory_id, text=text, score=score, tokens_added=tokens))
            left = None if left is None else left - tokens
            continue
        if index == 0 and left is not None:
            head = _head(text, left, counter)
            handle = stash(text)
            hits.append(
                Hit(
                    id=memory_id,
                    text=head,
                    score=score,
                    tokens_added=counter.count_text(head),
                    recovery_handle=handle,
                )
            )
            break
    return hits


def _tokens_within(text: str, limit: int | None, counter: TokenCounter) -> int | None:
    """``text``'s token count, or None when it is over ``limit`` (learned from a prefix when long)."""
    if limit is not None:
        window = max(limit * _CHARS_PER_TOKEN_PROBE, 1_024)
        if len(text) > 2 * window and counter.count_text(text[:window]) > limit:
            return None
    tokens = counter.count_text(text)
    return None if limit is not None and tokens > limit else tokens


def _head(text: str, limit: int, counter: TokenCounter) -> str:
    """The longest head of ``text`` (whole lines first) within ``limit`` tokens."""
    window = max(limit * _CHARS_PER_TOKEN_PROBE, 1_024)
    while window < len(text) and counter.count_text(text[:window]) <= limit:
        window *= 4
    head, _ = truncate_head(text[:window], limit, counter)
    return head
