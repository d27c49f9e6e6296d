"""Packing ranked memories into a token budget, greedily, without counting huge texts whole.

Every hit passes through compression on its way into a context: one longer
than ``hit_tokens`` comes back as its head (whole lines where possible,
never a broken character) with a ``recovery_handle`` naming the whole text
in the recovery store, so that one long memory cannot crowd out the rest.
Hits are then taken in rank order while they fit what is left of the
budget; one that does not fit is passed over for the next. The exception is
the first hit: when even its head is larger than the whole budget it comes
back as a head within the budget (with its handle), because a recall that
answers nothing about the best match would hide it. That head uses up the
budget. An unlimited budget takes every hit whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ccr.truncate import truncate_head
from compactor.core.tokens import TokenCounter
from compactor.memory.models import Hit

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
    hit_tokens: int | None = None,
) -> list[Hit]:
    """At most ``limit`` hits whose ``tokens_added`` sum to at most ``budget`` (None: unlimited).

    With a budget, a hit over ``hit_tokens`` (None: no cap of its own) is
    cut to its head and carries a handle. ``stash`` stores a whole text and
    returns its recovery handle; it is called only for hits that are cut.
    """
    hits: list[Hit] = []
    left = budget
    cap = None if budget is None or hit_tokens is None else min(hit_tokens, budget)
    for index, (memory_id, score, text) in enumerate(candidates):
        if len(hits) >= limit or left == 0:
            break
        if left is None:
            hits.append(Hit(id=memory_id, text=text, score=score, tokens_added=counter.count_text(text)))
            continue
        tokens = _tokens_within(text, left if cap is None else cap, counter)
        if tokens is not None:  # within its cap (without one: within what is left)
            if tokens <= left:
                hits.append(Hit(id=memory_id, text=text, score=score, tokens_added=tokens))
                left -= tokens
            continue
        room = (left if cap is None else min(cap, left)) if index == 0 else cap
        if room is None:  # without a cap, only the best hit is cut
            continue
        head = _head(text, room, counter)
        head_tokens = counter.count_text(head)
        if head_tokens > left or (index > 0 and not head):
            continue
        hits.append(Hit(id=memory_id, text=head, score=score, tokens_added=head_tokens, recovery_handle=stash(text)))
        left -= head_tokens
        if index == 0 and room == budget:  # the best hit alone was larger than the whole budget
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
