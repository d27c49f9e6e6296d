"""Chart geometry: the numbers the SVG is drawn from."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from compactor.view.chart import line_chart, nice_ticks


def test_nice_ticks_are_round_and_cover_the_range() -> None:
    assert nice_ticks(0, 167_000) == [0, 50_000, 100_000, 150_000, 200_000]
    assert nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]


def test_an_empty_or_flat_range_still_has_ticks() -> None:
    assert nice_ticks(5, 5)
    chart = line_chart([])
    assert chart.points == "" and chart.y_axis.ticks


@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 2_000_000)), min_size=1, max_size=50))
def test_every_point_and_mark_lies_inside_the_plot(points: list[tuple[int, int]]) -> None:
    chart = line_chart(
        [(float(x), float(y)) for x, y in points],
        horizontal=[(167_000.0, "threshold")],
        vertical=[(float(points[0][0]), "#1")],
    )
    for pair in chart.points.split():
        x, y = (float(v) for v in pair.split(","))
        assert chart.left - 0.1 <= x <= chart.width - chart.right + 0.1
        assert chart.top - 0.1 <= y <= chart.height - chart.bottom + 0.1
    for mark in chart.horizontal:
        assert chart.top - 0.1 <= mark.position <= chart.height - chart.bottom + 0.1


def test_larger_values_are_drawn_higher() -> None:
    chart = line_chart([(0.0, 10.0), (1.0, 100.0)])
    (_, y0), (_, y1) = (tuple(map(float, p.split(","))) for p in chart.points.split())
    assert y1 < y0
