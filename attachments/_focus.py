"""Cutting a long file around where the agent worked last, with line numbers; the whole in CCR.

``plan_focus`` chooses the lines to show: the sites ``attachments.worksites``
located (the last edits first, each with a few lines around it, then the
last partial reads), each added while the rendering fits the budget (the
last one added trimmed to fit), then a short outline of the rest (the
definitions the shown parts are in, the file's other definitions, then its
imports) if it fits too. Every shown line carries its number in the
file, and a marker stands for each run of lines not shown. The whole
content is stored under its content handle (``commit_focus``), so that any
line range the text names can be fetched from it. Only a rendering
measured within the budget is returned; with no site that fits, ``None``
(the caller keeps the head instead).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from attachments._cut import TailStore, put_named
from attachments.errors import TailNotStored
from attachments.worksites import LineRange
from ccr.handles import handle_for, marker
from ccr.records import PutRequest
from ccr.tokens import TextCounter, count_joined

__all__ = ["Focus", "FocusInfo", "FocusRender", "commit_focus", "plan_focus"]

EDIT_CONTEXT = 6
"""Lines shown on each side of an edit's new text."""
MAX_SITES = 8
"""The newest this many sites are considered; older work is in the stored copy."""
_LOOK_BACK = 2_000
"""How far above a site its enclosing definition is looked for, and how far down the outline is."""
_WRAPPER_SLACK = 8
"""Tokens the estimate adds for the counts in the wrapper's sentences, which it counts with zeros."""
OUTLINE_LINES = 8
"""At most this many outline lines of the lines not otherwise shown: the definition each shown part is
in first, then definitions from the top, then imports. Each costs a line and a gap marker: at 40, the
outline took about 2,000 tokens of the median context after compaction on real sessions."""
_OUTLINE = re.compile(
    r"^\s*(?:(?:export\s+|pub(?:\([^)]*\))?\s+|async\s+|public\s+|private\s+|protected\s+|static\s+)*"
    r"(?:def|class|func|fn|function|interface|struct|enum|trait|impl|type|module|defmodule|defp?|package|import|from\s+\S+\s+import)\b)"
)


_IMPORT = re.compile(r"^\s*(?:import|from\s+\S+\s+import|package)\b")


class FocusInfo(BaseModel):
    """What the template says about a focused cut."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    handle: str
    marker: str
    total_lines: int
    shown: list[str]
    hidden_lines: int
    edits: int
    reads: int
    outline: int


class Focus(BaseModel):
    """A chosen focused cut: the rendered text, its size, and the content to store under ``handle``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    tokens: int
    content: str
    handle: str
    info: FocusInfo
    shown_lines: tuple[int, ...]
    """The content lines shown (1-based, in the content's numbering)."""


FocusRender = Callable[[str, FocusInfo], str]


def plan_focus(
    content: str,
    sites: Sequence[LineRange],
    render: FocusRender,
    *,
    limit: int,
    counter: TextCounter,
    first_line: int = 1,
) -> Focus | None:
    """The lines of ``content`` to show around ``sites`` within ``limit`` rendered tokens; store nothing.

    ``first_line`` is the file's line number of the content's first line (a partial read).
    """
    lines = content.splitlines()
    if not lines or not sites:
        return None
    handle = handle_for(content.encode("utf-8"))

    def exact(ranges: Sequence[LineRange], outline: Sequence[int] = ()) -> Focus:
        return _render(lines, ranges, outline, render, handle, counter, first_line, content)

    # Choose from the lines' counts first (each line counted once), then measure the one rendering;
    # only if that does not fit is every step measured (the budget promise: a measured rendering).
    estimate = _Estimate(lines, render, handle, counter, first_line)
    picked = _choose(sites, lines, lambda r, o=(): estimate.within(r, o, limit))
    if picked is not None:
        focus = exact(*picked)
        if focus.tokens <= limit:
            return focus
    picked = _choose(sites, lines, lambda r, o=(): exact(r, o).tokens <= limit)
    return exact(*picked) if picked is not None else None


Fits = Callable[..., bool]


def _choose(sites: Sequence[LineRange], lines: Sequence[str], fits: Fits) -> tuple[list[LineRange], list[int]] | None:
    """The ranges (each site widened, alone, or trimmed, while it fits) and the outline lines to show."""
    chosen: list[LineRange] = []
    for site in sites[:MAX_SITES]:
        wide = _widen(site, len(lines))
        ok = fits([*chosen, wide])
        if not ok and wide != site:
            wide = site  # an edit without the lines around it
            ok = fits([*chosen, wide])
        if not ok:
            trimmed = _trimmed(wide, chosen, fits)
            if trimmed is None:
                continue
            wide = trimmed
        chosen.append(wide)
    if not chosen:
        return None
    shown = {n for r in chosen for n in range(r.start, r.end + 1)}
    enclosing = [_definition_before(lines, r.start, shown) for r in chosen]
    outline = list(dict.fromkeys([n for n in enclosing if n is not None] + _definitions(lines, shown)))
    outline = outline[:OUTLINE_LINES]
    while outline and not fits(chosen, outline):
        outline = outline[: len(outline) // 2]
    return chosen, outline


class _Estimate:
    """A rendering's size from its parts: the wrapper counted once, each shown line once, the gaps."""

    def __init__(
        self, lines: Sequence[str], render: FocusRender, handle: str, counter: TextCounter, first_line: int
    ) -> None:
        self.lines, self.counter, self.first_line = lines, counter, first_line
        self.width = len(str(first_line + len(lines) - 1))
        empty = FocusInfo(
            handle=handle,
            marker=marker(handle),
            total_lines=len(lines),
            shown=[],
            hidden_lines=len(lines),
            edits=0,
            reads=0,
            outline=0,
        )
        self.wrapper = counter.count_text(render("", empty)) + _WRAPPER_SLACK
        self.gap = counter.count_text(f"{'':>{self.width}}\t[lines {len(lines)}-{len(lines)} not shown]\n")
        self.known: dict[int, int] = {}

    def within(self, ranges: Sequence[LineRange], outline: Sequence[int], limit: int) -> bool:
        """Whether the estimate of showing ``ranges`` and ``outline`` is at most ``limit``.

        The lines counted before are added first, and new ones are counted only while the total is
        within ``limit``: a line past it cannot change the answer (no count is negative).
        """
        shown = set(outline)
        for r in ranges:
            shown.update(range(r.start, r.end + 1))
        runs = len(shown.difference([n + 1 for n in shown]))  # the lines that start a run
        known = self.known
        total = self.wrapper + self.gap * (runs + 1) + sum(map(known.__getitem__, shown.intersection(known)))
        if total > limit:
            return False
        for n in sorted(shown.difference(known)):
            line = f"{self.first_line + n - 1:>{self.width}}\t{self.lines[n - 1]}\n"
            known[n] = count = self.counter.count_text(line)
            total += count
            if total > limit:
                return False
        return True


def commit_focus(
    focus: Focus,
    *,
    store: TailStore,
    producer: str,
    counter: TextCounter,
    metadata: dict[str, Any] | None = None,
) -> Focus:
    """Store ``focus``'s whole content under its content handle.

    Raises:
        TailNotStored: the store named the content with another handle than the text names.
        Whatever ``store.put`` raises, unchanged: the caller fails closed.
    """
    request = PutRequest(
        data=focus.content.encode("utf-8"),
        content_type="text/plain",
        producer=producer,
        tokens_before=None,
        tokens_after=counter.count_text(focus.info.marker),
        metadata={**(metadata or {}), "from_line": 1, "shown": focus.info.shown},
    )
    handle = put_named(store, request, focus.handle)
    if handle != focus.handle:
        raise TailNotStored(f"the store named a focused file {handle}, not its content handle {focus.handle}")
    return focus


def _definition_before(lines: Sequence[str], line: int, shown: set[int]) -> int | None:
    """The definition (an outline line) a site starting at ``line`` is in, looked for upwards."""
    for n in range(line - 1, max(0, line - 1 - _LOOK_BACK), -1):
        if n not in shown and _OUTLINE.match(lines[n - 1]):
            return n
    return None


def _definitions(lines: Sequence[str], shown: set[int]) -> list[int]:
    """The first ``OUTLINE_LINES`` outline lines not shown, within the first ``_LOOK_BACK`` lines:
    definitions first, then imports (a long import block would take the whole outline)."""
    found: list[int] = []
    imports: list[int] = []
    for n, text in enumerate(lines[:_LOOK_BACK], 1):
        if n not in shown and _OUTLINE.match(text):
            (imports if _IMPORT.match(text) else found).append(n)
            if len(found) == OUTLINE_LINES:
                break
    return (found + imports)[:OUTLINE_LINES]


def _widen(site: LineRange, total: int) -> LineRange:
    if site.kind != "edit":
        return site
    return site.model_copy(
        update={"start": max(1, site.start - EDIT_CONTEXT), "end": min(total, site.end + EDIT_CONTEXT)}
    )


def _trimmed(site: LineRange, chosen: Sequence[LineRange], fits: Fits) -> LineRange | None:
    """The longest start of ``site`` that still fits beside ``chosen`` (None: not one line)."""
    low, high = 1, site.end - site.start  # lengths: the whole ``site`` did not fit
    found: LineRange | None = None
    while low <= high:
        length = (low + high) // 2
        part = site.model_copy(update={"end": site.start + length - 1})
        if fits([*chosen, part]):
            found, low = part, length + 1
        else:
            high = length - 1
    return found


def _render(
    lines: Sequence[str],
    ranges: Sequence[LineRange],
    outline: Sequence[int],
    render: FocusRender,
    handle: str,
    counter: TextCounter,
    first_line: int,
    content: str,
) -> Focus:
    shown = sorted({n for r in ranges for n in range(r.start, r.end + 1)} | set(outline))
    runs = _runs(shown)
    body_lines = _body_lines(lines, runs, len(str(first_line + len(lines) - 1)), first_line)
    body = "".join(body_lines)
    info = FocusInfo(
        handle=handle,
        marker=marker(handle),
        total_lines=len(lines),
        shown=[_span(a, b, first_line) for a, b in runs],
        hidden_lines=len(lines) - len(shown),
        edits=sum(1 for r in ranges if r.kind == "edit"),
        reads=sum(1 for r in ranges if r.kind == "read"),
        outline=len(outline),
    )
    text = render(body, info)
    return Focus(
        text=text,
        tokens=_tokens(text, body, body_lines, counter),
        content=content,
        handle=handle,
        info=info,
        shown_lines=tuple(shown),
    )


def _body_lines(lines: Sequence[str], runs: Sequence[tuple[int, int]], width: int, first_line: int) -> list[str]:
    """The focused body's lines: each shown line with its number in the file, right-aligned to ``width``
    (as the estimate counts it), each run of lines not shown as a marker; the last without its newline.

    Built here rather than in a template: a body has a line for each shown line, and rendering them
    through the template took about as long as choosing them.
    """
    out: list[str] = []
    previous = 0
    for start, end in runs:
        if start > previous + 1:
            out.append(_gap(first_line + previous, first_line + start - 2, width))
        out.extend(f"{first_line + n - 1:>{width}}\t{lines[n - 1]}\n" for n in range(start, end + 1))
        previous = end
    if previous < len(lines):
        out.append(_gap(first_line + previous, first_line + len(lines) - 1, width))
    if out:
        out[-1] = out[-1].removesuffix("\n")
    return out


def _gap(a: int, b: int, width: int) -> str:
    """The marker of lines ``a``-``b`` (file numbering) not shown."""
    return f"{'':>{width}}\t[{'line' if a == b else 'lines'} {a}{'' if a == b else f'-{b}'} not shown]\n"


def _tokens(text: str, body: str, body_lines: Sequence[str], counter: TextCounter) -> int:
    """The count of ``text``, ``body`` (``body_lines`` joined) rendered in its wrapper, from the counts of its lines.

    Each line starts with content (its number, or a gap marker's indent and bracket), so with a counter
    additive at line starts the body counts the sum of its lines, which choosing them counted already
    (a counter that caches texts keeps them), and ``count_joined`` counts the wrapper around it. Any
    other counter counts ``text`` whole.
    """
    if not getattr(counter, "additive_at_line_starts", False):
        return counter.count_text(text)
    return count_joined(text, [(body, sum(counter.count_text(line) for line in body_lines))], counter)


def _runs(numbers: Sequence[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def _span(start: int, end: int, first_line: int) -> str:
    a, b = first_line + start - 1, first_line + end - 1
    return str(a) if a == b else f"{a}-{b}"
