"""The frame ``compactor watch`` draws: the live state and a compaction preview as rich renderables.

Pure: every function takes values and returns a renderable or a string; the
loop, the terminal and the files are ``compactor.cli.commands.watch``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from compactor.claude_code.compaction_gauge import Figures
from compactor.claude_code.compaction_preview import CompactionPreview
from compactor.claude_code.live_state import LiveState
from compactor.view.status_line import format_tokens, status_line

__all__ = ["CHART_ROWS", "StoreSample", "WatchFrame", "chart_columns", "frame", "plain_change"]

CHART_ROWS = 8
_RIGHT_LABEL = 20
"""Columns kept right of the chart for the threshold's label."""
SUMMARY_LINES = 14
_BLOCKS = " ▁▂▃▄▅▆▇█"


@dataclass(frozen=True)
class StoreSample:
    """The store as one refresh saw it: records and payload bytes (None: no store file yet)."""

    entries: int
    payload_bytes: int


@dataclass
class WatchFrame:
    """Everything one frame shows."""

    title: str
    state: LiveState
    figures: Figures
    preview: CompactionPreview | None = None
    preview_note: str | None = None
    """Why there is no preview (yet): computing, or what failed."""
    store: list[StoreSample] = field(default_factory=list)
    """The store at each refresh since the view started, oldest first."""
    hint: str = "q quits"
    """What the footer tells the reader to press (nothing for a single frame)."""


def chart_columns(timeline: list[tuple[int, int]], columns: int) -> list[int]:
    """The timeline's context sizes in ``columns`` buckets (each its largest), oldest first."""
    values = [tokens for _, tokens in timeline]
    if not values or columns <= 0:
        return []
    if len(values) <= columns:
        return values
    step = len(values) / columns
    return [max(values[int(i * step) : max(int(i * step) + 1, int((i + 1) * step))]) for i in range(columns)]


def _chart(state: LiveState, figures: Figures, width: int) -> Text:
    """Context over time (a column per answer or bucket) under the threshold's line."""
    columns = chart_columns(state.timeline, max(10, width - 8 - _RIGHT_LABEL))
    top = max([figures.threshold, *columns]) or 1
    threshold_row = min(CHART_ROWS - 1, int(figures.threshold / top * CHART_ROWS))
    text = Text()
    for row in range(CHART_ROWS - 1, -1, -1):
        label = f"{format_tokens(int(top * (row + 1) / CHART_ROWS)):>7} "
        text.append(label, style="dim")
        for value in columns:
            level = value / top * CHART_ROWS - row
            cell = _BLOCKS[max(0, min(8, int(level * 8)))] if level > 0 else " "
            style = "red" if value >= figures.threshold else ("yellow" if value >= figures.limits.warning else "green")
            if cell == " " and row == threshold_row:
                text.append("─", style="red dim")
            else:
                text.append(cell, style=style)
        if row == threshold_row:
            text.append(f" auto-compact {format_tokens(figures.threshold)}", style="red")
        text.append("\n")
    text.append(f"{'':>8}{'answers since start →':<{max(10, len(columns))}}", style="dim")
    return text


def _next_point(figures: Figures) -> str:
    if not figures.limits.auto_enabled:
        return "auto-compaction is off: the context stops at the blocking limit"
    if figures.tokens_left == 0:
        return "the next compaction fires before the next turn"
    pace = f"{format_tokens(figures.per_answer)} per turn" if figures.per_answer else "no pace yet"
    if figures.answers_left is None:
        return f"next compaction in {format_tokens(figures.tokens_left)} tokens ({pace})"
    return f"next compaction in ~{figures.answers_left} turns, {format_tokens(figures.tokens_left)} tokens ({pace})"


def _summary(frame: WatchFrame) -> RenderableType:
    preview = frame.preview
    if preview is None:
        return Text(frame.preview_note or "working out the summary…", style="dim")
    report = preview.report
    if not report.ok:
        return Text(f"a compaction now would fail: {report.error_id}: {report.error}", style="red")
    lines = (report.summary or "").splitlines()
    shown = "\n".join(lines[:SUMMARY_LINES])
    more = f"\n… {len(lines) - SUMMARY_LINES} more lines" if len(lines) > SUMMARY_LINES else ""
    head = (
        f"{format_tokens(report.pre_tokens)} → {format_tokens(report.post_tokens)} tokens; "
        f"summary {format_tokens(report.summary_tokens)} by {report.summarizer}\n"
    )
    return Text(head, style="bold") + Text(shown + more)


def _files(frame: WatchFrame) -> RenderableType:
    preview = frame.preview
    table = Table(box=None, show_header=True, header_style="bold", expand=True, pad_edge=False)
    table.add_column("file", overflow="fold", ratio=3)
    table.add_column("tokens", justify="right")
    table.add_column("why", ratio=2, overflow="fold")
    if preview is None:
        for path in frame.figures.files:
            table.add_row(path, "", f"read at line {frame.state.reads[path]}")
        return table
    for entry in preview.report.attachments:
        if entry.type != "file" or not entry.path:
            continue
        line = frame.state.reads.get(entry.path)
        why = f"read at line {line}" if line else "worked on"
        table.add_row(_short(entry.path), str(entry.tokens), why + (", cut to budget" if entry.truncated else ""))
    for skipped in preview.report.skipped[:3]:
        if skipped.type == "file" and skipped.path:
            reason = skipped.reason.split(":", 1)[0]
            table.add_row(Text(_short(skipped.path), style="dim"), "", Text(reason, style="dim"))
    return table


def _short(path: str) -> str:
    parts = path.split("/")
    return path if len(parts) <= 4 else "…/" + "/".join(parts[-3:])


def _store(frame: WatchFrame) -> Text:
    text = Text()
    text.append(f"{frame.figures.stored} spans of this session stored", style="bold")
    if frame.store:
        last, first = frame.store[-1], frame.store[0]
        grew = last.payload_bytes - first.payload_bytes
        text.append(
            f" · store {last.entries} records, {_bytes(last.payload_bytes)} "
            f"(+{last.entries - first.entries} records, +{_bytes(grew)} since the view started)"
        )
    else:
        text.append(" · no store file yet")
    preview = frame.preview
    if preview is not None and preview.report.ok:
        dropped = [d for d in preview.report.dropped if d.piece_of is None]
        text.append(
            f"\na compaction now would store {len(preview.report.dropped)} spans, "
            f"{_bytes(sum(d.bytes for d in dropped))}"
        )
    return text


def _bytes(count: int) -> str:
    size = float(count)
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{count} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def frame(view: WatchFrame, width: int) -> RenderableType:
    """The whole frame for a terminal ``width`` columns wide."""
    figures = view.figures
    headline = Text.from_ansi(status_line(figures, width=max(20, width - 4), colour=True))
    context = Panel(
        Group(headline, _chart(view.state, figures, width - 4), Text(_next_point(figures), style="bold")),
        title="context",
        title_align="left",
    )
    grid = Table.grid(expand=True)
    grid.add_column(ratio=1)
    grid.add_column(ratio=1)
    grid.add_row(
        Panel(_summary(view), title="the summary it would write now", title_align="left"),
        Panel(_files(view), title="files it would restore", title_align="left"),
    )
    store = Panel(_store(view), title="store", title_align="left")
    footer = Text(" · ".join(part for part in (view.title, f"line {view.state.lines}", view.hint) if part), style="dim")
    return Group(context, grid, store, footer)


def plain_change(view: WatchFrame) -> str:
    """One line for a pipe: the status line, plain, with the transcript line it describes."""
    return f"line {view.state.lines}: " + status_line(view.figures, width=400, colour=False)
