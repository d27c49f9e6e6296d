"""The report's chart arithmetic: the Pareto front and the page, without a browser."""

from __future__ import annotations

import pytest

from compactor.tune import SearchSpace, TrialResult, TuneResults, render_report
from compactor.tune.html import bar_chart, pareto_front, scatter
from compactor.tune.metrics import Metrics


def trial(name: str, post: int, restored: int) -> TrialResult:
    metrics = Metrics(compactions=1, post_tokens_sum=post, reread_files=4, reread_restored=restored)
    return TrialResult(
        id=name, params={"attachments.max_files": restored}, settings={}, totals={"recorded": metrics}, complete=True
    )


def test_the_front_keeps_only_trials_no_other_beats_on_both_axes() -> None:
    points = [("small", 10.0, 0.5), ("big", 30.0, 1.0), ("worse", 20.0, 0.5), ("tie", 10.0, 0.5), ("mid", 20.0, 0.75)]
    assert pareto_front(points) == {"small", "tie", "big", "mid"}


def test_the_scatter_places_more_coverage_higher_and_more_tokens_further_right() -> None:
    chart = scatter([trial("a", 1_000, 1), trial("b", 3_000, 4)], "recorded", best="b")
    a, b = sorted(chart.points, key=lambda p: p.trial)
    assert b.px > a.px and b.py < a.py
    assert b.best and b.front and a.front
    assert chart.left <= a.px <= chart.left + chart.plot_width


def test_bars_scale_to_the_largest_value_and_leave_missing_values_empty() -> None:
    empty = TrialResult(id="none", params={}, settings={}, totals={"recorded": Metrics()}, complete=True)
    chart = bar_chart([trial("a", 1_000, 1), trial("b", 3_000, 4), empty], "post_tokens", "recorded", best=None)
    lengths = {bar.trial: bar.length for bar in chart.bars}
    assert lengths["b"] == pytest.approx(3 * lengths["a"], abs=0.5) and lengths["a"] > 0 and lengths["none"] == 0
    assert chart.better == "lower is better"


def test_the_page_is_self_contained_and_escapes_what_it_shows() -> None:
    results = TuneResults(
        version="0",
        space=SearchSpace(),
        corpus=["<script>.jsonl"],
        executor="local",
        trials=[trial("a", 1_000, 1), trial("b", 3_000, 4)],
        best="b",
    )
    page = render_report(results)
    assert "<script" not in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert page.count('<circle class="trial') == 2 and "best trial b" in page


def test_the_wide_tables_scroll_inside_the_page_and_the_page_names_the_best_toml_it_wrote() -> None:
    results = TuneResults(
        version="0",
        space=SearchSpace(),
        corpus=["s.jsonl"],
        executor="local",
        trials=[trial("a", 1_000, 1), trial("b", 3_000, 4)],
        best="b",
    )
    page = render_report(results)
    assert '<div class="wide"><table id="trials">' in page and '<div class="wide"><table id="sessions">' in page
    assert ".wide { overflow-x: auto;" in page
    assert "Save this as" not in page and "written beside this page as <code>best.toml</code>" in page
