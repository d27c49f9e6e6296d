"""Prompt-cache accounting: what a change of the context costs in cached prefix.

A model's prompt cache keeps the prefix of the last request. When the
context changes, the prefix up to the first changed message is still cached
(kept); everything the last request cached after it must be written again
(invalidated). A compaction puts its summary first, so it invalidates every
cached message; masking changes old tool results in place, so it keeps
everything before the oldest one it touches.

The cache lives for a time-to-live after its last use (5 minutes by
default). When the gap since the last request exceeds it, the cache has gone
cold: nothing is cached, and a change then costs nothing more. Times come
from the messages' recorded timestamps when they have them (a replay), else
from the wall clock (a live agent loop).

Pure bookkeeping: ``PromptCache`` holds the last request's time and how many
messages it sent; ``prefix_effect`` measures one change.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime

from compactor.core.messages import Message
from compactor.engine.report import CacheReport

__all__ = ["PromptCache", "first_change", "message_time", "prefix_effect"]


def message_time(message: Message) -> float | None:
    """The message's recorded timestamp in seconds since the epoch; None when it has none or it is unreadable."""
    if not message.timestamp:
        return None
    try:
        return datetime.fromisoformat(message.timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def first_change(before: Sequence[Message], after: Sequence[Message]) -> int:
    """The index of the first message that differs between ``before`` and ``after`` (their common length when none)."""
    for index, (old, new) in enumerate(zip(before, after, strict=False)):
        if old is not new and old != new:
            return index
    return min(len(before), len(after))


def prefix_effect(sizes: Sequence[int], changed_at: int, cached: int) -> CacheReport:
    """The cache effect of changing the context from message ``changed_at`` on.

    ``sizes`` are the counts of the messages before the change; ``cached`` is
    how many of them (from the start) the last request cached, 0 when the
    cache is cold. Kept: the cached messages before ``changed_at``;
    invalidated: the cached messages from it on.
    """
    cached = max(0, min(cached, len(sizes)))
    cut = max(0, min(changed_at, cached))
    return CacheReport(
        kept_tokens=sum(sizes[:cut]),
        invalidated_tokens=sum(sizes[cut:cached]),
        cold=cached == 0,
    )


class PromptCache:
    """What the prompt cache holds: the messages the last request sent, and when.

    ``request(count, at)`` records a request that sent the first ``count``
    messages; ``cached(now)`` is how many are still cached (0 once the TTL
    has passed since the last request, or before any request). A change of
    the context calls ``changed(at)`` so that only the prefix before it stays.
    """

    def __init__(self, ttl_seconds: float) -> None:
        self.ttl_seconds = ttl_seconds
        self.last_request: float | None = None
        self.count = 0
        self.requests = 0

    def request(self, count: int, at: float | None = None) -> None:
        """A request sent the first ``count`` messages at ``at`` (seconds; default now)."""
        self.count = count
        self.last_request = time.time() if at is None else at
        self.requests += 1

    def is_cold(self, now: float | None = None) -> bool:
        """True when nothing is cached: no request yet, or none within the TTL before ``now``."""
        if self.last_request is None or self.count == 0:
            return True
        moment = time.time() if now is None else now
        return moment - self.last_request > self.ttl_seconds

    def cached(self, now: float | None = None) -> int:
        """How many messages, from the start, are cached at ``now``."""
        return 0 if self.is_cold(now) else self.count

    def changed(self, at: int) -> None:
        """The context changed from message ``at`` on: only what precedes it stays cached."""
        self.count = min(self.count, max(0, at))
