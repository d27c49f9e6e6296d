"""Cutting a restored text to a rendered budget, with the cut tail stored in CCR first.

Files and skills share this: the budget applies to the rendered attachment
(wrapper and notes included), so the head is searched for with the real
template and the real handle of the tail that cutting there would leave. The
tail is stored only once the cut is chosen, and the attachment names the
handle the store gave back (``plan_cut`` chooses, ``commit_cut`` stores, so a
candidate that the running total then rejects leaves nothing behind). If the
store refuses, its error propagates: a tail is never dropped without a handle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from attachments.errors import TailNotStored
from ccr.handles import handle_for, marker
from compactor.tokens import TokenCounter
from skills.truncate import fit_head

__all__ = ["Cut", "CutInfo", "Render", "TailStore", "commit_cut", "plan_cut"]

_CHARS_PER_TOKEN_PROBE = 8
"""First window, in characters per budget token, searched for the cut (grows x4 if it fits)."""


_EXACT_TAIL_CHARS = 400_000
"""Tails up to this many characters are counted exactly for the store's record."""

_TAIL_SAMPLES = 8

_STAND_IN = handle_for(b"")
"""A handle of the right shape, named while searching for the cut."""


class TailStore(Protocol):
    """The part of the CCR store attachments use: storing a cut tail."""

    def put(
        self,
        data: bytes,
        *,
        content_type: str = "text/plain",
        producer: str = "",
        tokens_before: int | None = None,
        tokens_after: int | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str: ...


class CutInfo(BaseModel):
    """What a template says about a cut: the tail's marker and where it starts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    handle: str
    marker: str
    head_lines: int
    tail_lines: int
    from_line: int
    mid_line: bool


class Cut(BaseModel):
    """A chosen cut: the head shown, the tail to store, and the rendered text naming it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    head: str
    tail: str
    handle: str | None
    text: str
    tokens: int
    first_line: int = 1

    @property
    def truncated(self) -> bool:
        return self.handle is not None


Render = Callable[[str, CutInfo | None], str]


def plan_cut(
    content: str,
    render: Render,
    *,
    limit: int,
    counter: TokenCounter,
    first_line: int = 1,
) -> Cut | None:
    """Choose where to cut ``content`` so that its rendering fits ``limit`` tokens; store nothing.

    The whole content is kept when it fits. Otherwise the head is the longest
    (whole lines first) whose rendering, naming the content handle of the
    tail it leaves, fits. Returns ``None`` when not even an empty head fits
    (the budget is smaller than the wrapper and notes).
    """
    if not _prefix_overflows(content, render, counter, limit):
        whole = render(content, None)
        tokens = counter.count_text(whole)
        if tokens <= limit:
            return Cut(head=content, tail="", handle=None, text=whole, tokens=tokens, first_line=first_line)

    newlines = content.count("\n")
    ends_with_newline = content.endswith("\n")

    def info(head: str, handle: str) -> CutInfo:
        head_newlines = head.count("\n")
        return CutInfo(
            handle=handle,
            marker=marker(handle),
            head_lines=head_newlines + (0 if not head or head.endswith("\n") else 1),
            tail_lines=newlines - head_newlines + (0 if ends_with_newline else 1),
            from_line=first_line + head_newlines,
            mid_line=bool(head) and not head.endswith("\n"),
        )

    def search(handle_of: Callable[[str], str]) -> Cut | None:
        def fits(head: str) -> bool:
            if len(head) >= len(content):
                return False
            return counter.count_text(render(head, info(head, handle_of(head)))) <= limit

        head, _ = fit_head(_search_region(content, fits, limit), fits)
        if not head and not fits(""):
            return None
        tail = content[len(head) :]
        handle = handle_for(tail.encode("utf-8"))
        text = render(head, info(head, handle))
        return Cut(
            head=head, tail=tail, handle=handle, text=text, tokens=counter.count_text(text), first_line=first_line
        )

    # Hashing a long tail at every probe is the slow part, so search with a
    # stand-in handle of the same shape first; only if the real handle happens
    # to tokenize longer and overshoots, search again naming the real one.
    cut = search(lambda head: _STAND_IN)
    if cut is not None and cut.tokens <= limit:
        return cut
    return search(lambda head: handle_for(content[len(head) :].encode("utf-8")))


def commit_cut(
    cut: Cut,
    render: Render,
    *,
    limit: int,
    counter: TokenCounter,
    store: TailStore,
    producer: str,
    metadata: dict[str, Any] | None = None,
) -> Cut:
    """Store ``cut``'s tail (if any) and return the cut naming the handle the store gave.

    Raises:
        TailNotStored: the store's handle differs from the tail's content
            handle and the text naming it no longer fits ``limit``.
        Whatever ``store.put`` raises (``ccr.BudgetExceeded``, store errors),
            unchanged: the caller fails closed.
    """
    if cut.handle is None:
        return cut
    data = cut.tail.encode("utf-8")
    from_line = cut.first_line + cut.head.count("\n")
    handle = store.put(
        data,
        content_type="text/plain",
        producer=producer,
        tokens_before=_tail_tokens(cut.tail, counter),
        tokens_after=counter.count_text(marker(cut.handle)),
        metadata={**(metadata or {}), "from_line": from_line},
    )
    if handle == cut.handle:
        return cut
    text = render(cut.head, _info(cut.head, cut.tail, handle, cut.first_line))
    tokens = counter.count_text(text)
    if tokens > limit:
        raise TailNotStored(
            f"the store named the cut tail {handle}, not its content handle {cut.handle}, "
            f"and the attachment naming it no longer fits {limit} tokens"
        )
    return cut.model_copy(update={"handle": handle, "text": text, "tokens": tokens})


def _info(head: str, tail: str, handle: str, first_line: int) -> CutInfo:
    return CutInfo(
        handle=handle,
        marker=marker(handle),
        head_lines=head.count("\n") + (0 if not head or head.endswith("\n") else 1),
        tail_lines=tail.count("\n") + (0 if tail.endswith("\n") else 1),
        from_line=first_line + head.count("\n"),
        mid_line=bool(head) and not head.endswith("\n"),
    )


def _prefix_overflows(content: str, render: Render, counter: TokenCounter, limit: int) -> bool:
    """Whether a prefix of a long ``content`` already renders over ``limit`` (so the whole cannot fit).

    Saves counting a huge text whole only to learn that it must be cut.
    """
    window = max(limit * _CHARS_PER_TOKEN_PROBE, 1_024)
    if len(content) <= 2 * window:
        return False
    return counter.count_text(render(content[:window], None)) > limit


def _tail_tokens(tail: str, counter: TokenCounter) -> int:
    """The tail's token count for the store's record: exact up to a size, else scaled from samples.

    The figure only feeds the store's statistics (whose basis is "inferred");
    counting tens of megabytes exactly would cost seconds for nothing.
    """
    if len(tail) <= _EXACT_TAIL_CHARS:
        return counter.count_text(tail)
    step = len(tail) // _TAIL_SAMPLES
    size = _EXACT_TAIL_CHARS // _TAIL_SAMPLES
    sampled = sum(counter.count_text(tail[i * step : i * step + size]) for i in range(_TAIL_SAMPLES))
    return round(sampled * len(tail) / (size * _TAIL_SAMPLES))


def _search_region(content: str, fits: Callable[[str], bool], limit: int) -> str:
    """A prefix of ``content`` that holds the cut, so a huge text is not re-rendered whole each probe."""
    window = max(limit * _CHARS_PER_TOKEN_PROBE, 1_024)
    while window < len(content):
        end = content.find("\n", window)
        if end < 0 or end + 1 >= len(content):
            break
        if not fits(content[: end + 1]):
            return content[: end + 1]
        window *= 4
    return content
