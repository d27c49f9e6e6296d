"""``report.html``: a self-contained page of a tuning run, charts as inline SVG.

The arithmetic (scales, the Pareto front, bar lengths) is done here as pure
values; the template ``compactor/tune/templates/tune_report.html.j2`` only
places what it is given. No script, no external file, no network.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from compactor.core.templating import render_html
from compactor.tune.jobs import SessionResult
from compactor.tune.metrics import METRIC_NAMES
from compactor.tune.output import best_toml, format_figure
from compactor.tune.runner import LOWER_IS_BETTER, TrialResult, TuneResults

__all__ = ["Bar", "BarChart", "Point", "Scatter", "bar_chart", "pareto_front", "render_report", "scatter"]

_WIDTH, _HEIGHT, _LEFT, _RIGHT, _TOP, _BOTTOM = 640.0, 360.0, 70.0, 20.0, 20.0, 50.0


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Point(_Model):
    trial: str
    x: float
    y: float
    px: float
    py: float
    front: bool
    best: bool
    label: str


class Scatter(_Model):
    """Trials as points (x: mean post-compaction tokens, y: re-read coverage) and the front's polyline."""

    width: float
    height: float
    left: float
    top: float
    plot_width: float
    plot_height: float
    points: list[Point]
    front_line: str
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    x_label: str
    y_label: str


class Bar(_Model):
    trial: str
    value: str
    length: float
    best: bool


class BarChart(_Model):
    metric: str
    label: str
    better: str
    bars: list[Bar]
    width: float
    height: float


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]: steps of 1, 2 or 5 times a power of ten."""
    high = max(high, low + 1)
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    return [round(i * step, 10) for i in range(math.floor(low / step), math.ceil(high / step) + 1)]


def pareto_front(points: Sequence[tuple[str, float, float]]) -> set[str]:
    """Ids of the points no other point beats: fewer tokens (x) and at least the coverage (y), or vice versa."""
    front: set[str] = set()
    for name, x, y in points:
        dominated = any((ox <= x and oy >= y) and (ox < x or oy > y) for other, ox, oy in points if other != name)
        if not dominated:
            front.add(name)
    return front


def scatter(trials: Sequence[TrialResult], at: str, best: str | None) -> Scatter:
    """Post-compaction tokens against re-read coverage (with the tail), one point per complete trial."""
    data: list[tuple[str, float, float]] = []
    for trial in trials:
        metrics = trial.totals.get(at)  # type: ignore[call-overload]
        if metrics is None or metrics.post_tokens is None or metrics.reread_coverage_with_tail is None:
            continue
        data.append((trial.id, float(metrics.post_tokens), float(metrics.reread_coverage_with_tail)))
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM
    xs = [x for _, x, _ in data] or [0.0, 1.0]
    low, high = min(xs), max(xs)
    pad = max((high - low) * 0.1, 1.0)
    x_ticks_raw = _ticks(max(low - pad, 0.0), high + pad)
    x0, x1 = x_ticks_raw[0], x_ticks_raw[-1] if x_ticks_raw[-1] > x_ticks_raw[0] else x_ticks_raw[0] + 1

    def px(x: float) -> float:
        return round(_LEFT + (x - x0) / (x1 - x0) * plot_w, 1)

    def py(y: float) -> float:
        return round(_TOP + (1.0 - y) * plot_h, 1)

    front = pareto_front(data)
    points = [
        Point(
            trial=n,
            x=x,
            y=y,
            px=px(x),
            py=py(y),
            front=n in front,
            best=n == best,
            label=f"{n}: {x:,.0f} tokens, {y:.0%}",
        )
        for n, x, y in data
    ]
    line = " ".join(f"{p.px},{p.py}" for p in sorted((p for p in points if p.front), key=lambda p: p.x))
    return Scatter(
        width=_WIDTH,
        height=_HEIGHT,
        left=_LEFT,
        top=_TOP,
        plot_width=plot_w,
        plot_height=plot_h,
        points=points,
        front_line=line,
        x_ticks=[(px(t), f"{t:,.0f}") for t in x_ticks_raw if x0 <= t <= x1],
        y_ticks=[(py(t / 4), f"{t / 4:.0%}") for t in range(5)],
        x_label="post-compaction context (tokens, mean per compaction)",
        y_label="re-read coverage (with tail)",
    )


def bar_chart(trials: Sequence[TrialResult], metric: str, at: str, best: str | None) -> BarChart:
    """One bar per trial for ``metric`` (empty bars where a trial has no value)."""
    values: list[tuple[str, float | None]] = []
    for trial in trials:
        metrics = trial.totals.get(at)  # type: ignore[call-overload]
        figure = metrics.figures().get(metric) if metrics is not None else None
        values.append((trial.id, None if figure is None else float(figure)))
    top = max((v for _, v in values if v is not None), default=0.0) or 1.0
    span = 320.0
    bars = [
        Bar(
            trial=n,
            value=format_figure(metric, v),
            length=round(0.0 if v is None else v / top * span, 1),
            best=n == best,
        )
        for n, v in values
    ]
    return BarChart(
        metric=metric,
        label=METRIC_NAMES[metric],
        better="lower is better" if metric in LOWER_IS_BETTER else "higher is better",
        bars=bars,
        width=500.0,
        height=22.0 * len(bars) + 10,
    )


def render_report(results: TuneResults, sessions: Iterable[SessionResult] | None = None) -> str:
    """The whole page as one HTML string.

    ``sessions`` are the per-session results when the trials do not hold
    them (a run that streamed them to ``sessions.jsonl``); by default, the trials' own.
    """
    at = results.space.search.objective_at
    trials = [t for t in results.trials if t.complete]
    kinds = sorted({k for t in trials for k in t.totals})
    rows: list[dict[str, Any]] = []
    for trial in trials:
        for kind in kinds:
            figures = trial.totals[kind].figures()
            rows.append(
                {
                    "trial": trial.id,
                    "at": kind,
                    "best": trial.id == results.best,
                    "params": trial.params,
                    "figures": [format_figure(m, figures[m]) for m in METRIC_NAMES],
                }
            )
    complete = {t.id for t in trials}
    per_session = sessions if sessions is not None else (r for t in trials for r in t.sessions)
    session_rows: list[dict[str, Any]] = []
    for result in per_session:
        if result.trial_id not in complete:
            continue
        for kind, metrics in result.metrics.items():
            figures = metrics.figures()
            session_rows.append(
                {
                    "trial": result.trial_id,
                    "best": result.trial_id == results.best,
                    "session": result.session,
                    "at": kind,
                    "figures": [format_figure(m, figures[m]) for m in METRIC_NAMES],
                }
            )
    trial_order = {t.id: n for n, t in enumerate(trials)}
    session_order = {s: n for n, s in enumerate(results.corpus)}
    session_rows.sort(key=lambda row: (trial_order[str(row["trial"])], session_order.get(str(row["session"]), 0)))
    return render_html(
        "tune_report.html.j2",
        package="compactor.tune",
        results=results,
        trials=trials,
        at=at,
        scatter=scatter(trials, at, results.best),
        bars=[bar_chart(trials, m, at, results.best) for m in METRIC_NAMES],
        metric_labels=list(METRIC_NAMES.values()),
        rows=rows,
        sessions=session_rows,
        best=results.trial(results.best) if results.best else None,
        best_toml=best_toml(results),
    )
