"""Chart geometry: data points to SVG coordinates, as pure values.

The HTML reports draw their charts as inline SVG from a jinja2 template; this
module does the arithmetic (scales, ticks, polyline points) so that the
template only places what it is given, and so that the numbers can be tested
without a browser.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

__all__ = ["Axis", "LineChart", "Mark", "line_chart", "nice_ticks"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Axis(_Model):
    """One axis: its ticks as (position in pixels, label)."""

    ticks: list[tuple[float, str]]


class Mark(_Model):
    """A vertical marker (a compaction) or a horizontal rule (a threshold) with its label."""

    position: float
    label: str


class LineChart(_Model):
    """Everything a template needs to draw one line chart."""

    width: int
    height: int
    left: int
    top: int
    right: int
    bottom: int
    points: str
    """The polyline's ``points`` attribute: ``"x,y x,y ..."``."""
    x_axis: Axis
    y_axis: Axis
    vertical: list[Mark]
    horizontal: list[Mark]


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]: steps of 1, 2 or 5 times a power of ten."""
    if high <= low:
        high = low + 1
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first, last = math.floor(low / step), math.ceil(high / step)
    return [round(i * step, 10) for i in range(first, last + 1)]


def _label(value: float) -> str:
    if abs(value) >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if abs(value) >= 1_000:
        return f"{value / 1_000:g}K"
    return f"{value:g}"


def line_chart(
    points: Sequence[tuple[float, float]],
    *,
    vertical: Sequence[tuple[float, str]] = (),
    horizontal: Sequence[tuple[float, str]] = (),
    width: int = 900,
    height: int = 300,
) -> LineChart:
    """Lay out a line through ``points`` with vertical and horizontal marks.

    The y axis starts at zero and covers the points and the horizontal marks;
    the x axis covers the points and the vertical marks.
    """
    left, top, right, bottom = 64, 16, 16, 36
    xs = [p[0] for p in points] + [v for v, _ in vertical]
    ys = [p[1] for p in points] + [v for v, _ in horizontal] + [0.0]
    x_low, x_high = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x_high <= x_low:
        x_high = x_low + 1
    y_ticks = nice_ticks(0.0, max(ys) * 1.05 if ys else 1.0)
    y_high = y_ticks[-1] if y_ticks[-1] > 0 else 1.0
    plot_w, plot_h = width - left - right, height - top - bottom

    def x_of(value: float) -> float:
        return round(left + (value - x_low) / (x_high - x_low) * plot_w, 1)

    def y_of(value: float) -> float:
        return round(top + plot_h - value / y_high * plot_h, 1)

    x_ticks = [t for t in nice_ticks(x_low, x_high, 8) if x_low <= t <= x_high]
    return LineChart(
        width=width,
        height=height,
        left=left,
        top=top,
        right=right,
        bottom=bottom,
        points=" ".join(f"{x_of(x)},{y_of(y)}" for x, y in points),
        x_axis=Axis(ticks=[(x_of(t), _label(t)) for t in x_ticks]),
        y_axis=Axis(ticks=[(y_of(t), _label(t)) for t in y_ticks]),
        vertical=[Mark(position=x_of(v), label=label) for v, label in vertical],
        horizontal=[Mark(position=y_of(v), label=label) for v, label in horizontal],
    )
