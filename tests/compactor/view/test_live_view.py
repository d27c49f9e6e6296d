"""The frame of ``compactor watch``: the chart's buckets and a frame that fits its terminal."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from compactor.claude_code.compaction_gauge import figures, limits_for
from compactor.claude_code.compaction_preview import preview_compaction
from compactor.claude_code.live_state import advance
from compactor.core.config import Settings
from compactor.view.live_view import StoreSample, WatchFrame, chart_columns, frame, plain_change
from tests.conftest import FIXTURES


def test_chart_columns_keep_each_buckets_largest_value() -> None:
    timeline = [(n, n * 10) for n in range(1, 11)]
    assert chart_columns(timeline, 5) == [20, 40, 60, 80, 100]
    assert chart_columns(timeline, 20) == [n * 10 for n in range(1, 11)]
    assert chart_columns([], 5) == []


@pytest.mark.parametrize("width", [80, 150])
def test_a_frame_fits_its_width_and_shows_every_panel(width: int) -> None:
    path = FIXTURES / "sessions" / "small.jsonl"
    state = advance(None, path)
    view = WatchFrame(
        title=path.name,
        state=state,
        figures=figures(state, limits_for(200_000, environ={})),
        preview=preview_compaction(path, Settings()),
        store=[StoreSample(entries=1, payload_bytes=10), StoreSample(entries=3, payload_bytes=4096)],
    )
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(frame(view, width))
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= width
    for title in ("context", "the summary it would write now", "files it would restore", "store"):
        assert title in text
    assert "+2 records" in text and "of auto-compact" in text
    assert plain_change(view).startswith(f"line {state.lines}: ")
