"""Cutting a restored text to a rendered budget, with the cut tail stored in CCR first.

Files and skills share this: the budget applies to the rendered attachment
(wrapper and notes included), so the head is searched for with the real
template and the real handle of the tail that cutting there would leave. The
tail is stored only once the cut is chosen, and the attachment names the
handle the store gave back (``plan_cut`` chooses, ``commit_cut`` stores, so a
candidate that the running total then rejects leaves nothing behind). If the
store refuses, its error propagates: a tail is never dropped without a handle.
The builders store into a ``ccr.StoreBatch``, which names each record by
its content handle at once and writes them all with a single ``put_many``
(one transaction, one sync) when its owner says so: the pipeline's batch
holds everything one compaction stores (``compactor.engine.pipeline``), and
``build_attachments`` makes its own when it is given a plain store.

Only a rendering measured within the budget is ever returned. The stored
tail's token figure is an estimate from the counted lines' rate, not a
count. How the cut is found with each line counted at most once:
docs/ARCHITECTURE.md, "Why it is fast".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from attachments.errors import TailNotStored
from ccr.batch import StoreBatch
from ccr.handles import handle_for, marker
from ccr.records import PutRequest
from ccr.tokens import TextCounter, count_joined
from ccr.truncate import LineCounts, fit_head

__all__ = [
    "Cut",
    "CutInfo",
    "Render",
    "TailStore",
    "commit_cut",
    "count_joined",
    "plan_cut",
    "put_named",
]

_LIKELY_FIT_CHARS_PER_TOKEN = 3
"""Content of at most this many characters per token of room is counted whole before any line:
code and prose run at about 4 characters per token, so such content almost always fits, and
counting its lines as well would tokenize it twice. Only denser text pays one extra count."""

_WHOLE_SLACK = 0.02
"""The whole text is rendered and counted when its lines' counts are within this share over
the limit: the pieces' counts may overstate the whole (the rough counter rounds each piece up)."""


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


def put_named(store: TailStore, request: PutRequest, handle: str) -> str:
    """Store ``request`` under the content ``handle`` computed beforehand (a batch takes it as named;
    a plain store names it itself, and the caller compares); returns the handle the store gave."""
    if isinstance(store, StoreBatch):
        return store.put_named(request, handle)
    return store.put(
        request.data,
        content_type=request.content_type,
        producer=request.producer,
        tokens_before=request.tokens_before,
        tokens_after=request.tokens_after,
        metadata=request.metadata,
    )


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
    tail_tokens: int | None = None
    """The tail's size for the store's record, inferred from the counted lines (None: count it)."""

    @property
    def truncated(self) -> bool:
        return self.handle is not None


Render = Callable[[str, CutInfo | None], str]


def plan_cut(
    content: str,
    render: Render,
    *,
    limit: int,
    counter: TextCounter,
    first_line: int = 1,
    newlines: int | None = None,
    whole_only: bool = False,
) -> Cut | None:
    """Choose where to cut ``content`` so that its rendering fits ``limit`` tokens; store nothing.

    The whole content is kept when it fits. Otherwise the head is the longest
    (whole lines first) whose rendering, naming the content handle of the
    tail it leaves, fits. Returns ``None`` when not even an empty head fits
    (the budget is smaller than the wrapper and notes), or with ``whole_only``
    when the whole does not fit (no head is looked for). ``newlines`` is
    ``content.count("\n")`` when the caller has counted it already (a large
    file's count costs about half of hashing it).
    """
    lines = LineCounts(content, counter)
    room = limit - counter.count_text(render("", None))
    additive = bool(getattr(counter, "additive_at_line_starts", False))
    likely = len(content) <= room * _LIKELY_FIT_CHARS_PER_TOKEN
    if likely or lines.all_within(room + math.ceil(limit * _WHOLE_SLACK)):
        whole = render(content, None)
        composed = _composed_size(whole, content, render, None, lines, counter) if additive else None
        tokens = composed if composed is not None else counter.count_text(whole)
        if tokens <= limit:
            return Cut(head=content, tail="", handle=None, text=whole, tokens=tokens, first_line=first_line)
    if whole_only:
        return None

    if newlines is None:
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

    # Sizes measured during the search, by head length, so that the chosen
    # head's rendering is not counted a second time.
    measured: dict[int, int] = {}
    tail_handle = _TailHandles(content)

    def size(head: str) -> int:
        cut = info(head, tail_handle(len(head)))
        text = render(head, cut)
        tokens = _composed_size(text, head, render, cut, lines, counter) if additive else None
        measured[len(head)] = tokens if tokens is not None else counter.count_text(text)
        return measured[len(head)]

    head, tail = fit_head(content, limit, counter, measure=size, whole=False, lines=lines)
    if not head and measured.get(0, limit + 1) > limit:
        return None
    handle = tail_handle(len(head))
    text = render(head, info(head, handle))
    tokens = measured[len(head)] if len(head) in measured else counter.count_text(text)
    return Cut(
        head=head,
        tail=tail,
        handle=handle,
        text=text,
        tokens=tokens,
        first_line=first_line,
        tail_tokens=_inferred_tokens(lines, len(tail)),
    )


def commit_cut(
    cut: Cut,
    render: Render,
    *,
    limit: int,
    counter: TextCounter,
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
    request = PutRequest(
        data=cut.tail.encode("utf-8"),
        content_type="text/plain",
        producer=producer,
        tokens_before=cut.tail_tokens if cut.tail_tokens is not None else counter.count_text(cut.tail),
        tokens_after=counter.count_text(marker(cut.handle)),
        metadata={**(metadata or {}), "from_line": cut.first_line + cut.head.count("\n")},
    )
    handle = put_named(store, request, cut.handle)  # the tail's handle was computed when the cut was planned
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


_SENTINEL = "\x00head\x00\n"
"""Rendered in the head's place to find the wrapper around it (a head of whole lines ends in a newline too)."""
_STARTS_WITH_CONTENT = re.compile(r"[ \t]*\S")


def _composed_size(
    text: str, head: str, render: Render, cut: CutInfo | None, lines: LineCounts, counter: TextCounter
) -> int | None:
    """The count of ``text`` (``head`` rendered with ``cut``) from its parts, or None when it cannot be had so.

    A cut file's head (or a whole file whose lines were counted to see
    that it fits) is most of its rendering, and its lines are already
    counted: counting it again would tokenize the file twice.
    With a counter that is additive at line starts (``TiktokenCounter``),
    ``text`` counts exactly ``before + total(k) + after`` when it is
    ``before + head + after`` with ``before`` ending in a newline, ``head``
    the first ``k`` pieces of whole lines starting with content, and
    ``after`` starting with content. Anything else (an empty or mid-line
    head, a template that changes the head) is counted whole.
    The whole content whose lines were not counted is counted as one text
    (the sum of its pieces, by the same rule): a counter that caches texts
    (``CachedCounter``) already holds a skill's body counted as the tool
    result that loaded it, so the skill is not tokenized again.
    """
    if not head.endswith("\n") or not _STARTS_WITH_CONTENT.match(head):
        return None
    whole = len(head) == len(lines.text)
    k = lines.pieces_in(len(head))
    parts = render(_SENTINEL, cut).split(_SENTINEL)
    if (k is None and not whole) or len(parts) != 2:
        return None
    before, after = parts
    if not before.endswith("\n") or not _STARTS_WITH_CONTENT.match(after) or text != before + head + after:
        return None
    head_tokens = lines.total(k) if k is not None and (k <= lines.counted or not whole) else counter.count_text(head)
    return counter.count_text(before) + head_tokens + counter.count_text(after)


class _TailHandles:
    """The content handles of the tails that cuts of one text leave: ``handles(at)`` is that of ``content[at:]``.

    The text is encoded once and each tail hashed from a view of its bytes,
    and a cut point already hashed (the chosen head was measured during the
    search) is not hashed again: a large file's tail is most of the file,
    and encoding and hashing it for each measurement took over half of
    restoring the attachments.
    """

    def __init__(self, content: str) -> None:
        self._content = content
        self._data: bytes | None = None
        self._known: dict[int, str] = {}

    def __call__(self, at: int) -> str:
        known = self._known.get(at)
        if known is not None:
            return known
        if self._data is None:
            self._data = self._content.encode("utf-8")
        head = self._content[:at]
        start = at if head.isascii() else len(head.encode("utf-8"))
        handle = self._known[at] = handle_for(memoryview(self._data)[start:])
        return handle


def _inferred_tokens(lines: LineCounts, characters: int) -> int:
    """``characters`` of the text at the rate of the lines counted so far (at least one is)."""
    counted = max(lines.counted, 1)
    return round(characters * lines.total(counted) / max(lines.end(counted), 1))
