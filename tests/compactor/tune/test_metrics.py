"""Metrics: defined once, pooled by counts, and the same in replay --json as in tune."""

from __future__ import annotations

from pathlib import Path

import ccr
from compactor.claude_code.replay import replay
from compactor.core.config import load_settings
from compactor.summarizers import make_summarizer
from compactor.tune import METRIC_NAMES, Metrics, replay_metrics

LONG = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "long.jsonl"


def test_totals_pool_counts_so_ratios_are_ratios_of_sums() -> None:
    a = Metrics(compactions=1, reread_files=1, reread_restored=1, post_tokens_sum=100)
    b = Metrics(compactions=3, reread_files=9, reread_restored=0, reread_in_tail=3, post_tokens_sum=500)
    total = Metrics.combine([a, b])
    assert total.sessions == 2 and total.compactions == 4
    assert total.reread_coverage == 1 / 10  # not the mean of 1.0 and 0.0
    assert total.reread_coverage_with_tail == 4 / 10
    assert total.reread_coverage_beyond_tail == 1 / 7
    assert total.post_tokens == 150


def test_a_session_without_compactions_has_no_ratios() -> None:
    figures = Metrics().figures()
    assert set(figures) == set(METRIC_NAMES)
    assert figures["reread_coverage"] is None and figures["post_tokens"] is None and figures["compactions"] == 0


def test_survival_pools_by_fact_counts() -> None:
    a = Metrics(survival_found={"paths": 1}, survival_total={"paths": 1})
    b = Metrics(survival_found={"paths": 1, "commands": 2}, survival_total={"paths": 3, "commands": 2})
    total = Metrics.combine([a, b])
    assert total.survival_paths == 2 / 4 and total.survival_commands == 1.0 and total.survival_user_messages is None


def test_a_real_replay_measures_coverage_tokens_survival_and_recovery() -> None:
    settings = load_settings(None, env={})
    store = ccr.open_store(":memory:")
    report = replay(LONG, settings=settings, store=store, at="recorded", summarizer=make_summarizer(settings))
    metrics = replay_metrics(report, store)
    assert metrics.compactions == len(report.compactions) >= 2
    assert metrics.reread_files > 0
    assert metrics.reread_coverage == report.totals.reread_coverage
    assert metrics.reread_coverage_with_tail == report.totals.reread_coverage_with_tail
    assert metrics.post_tokens == sum(c.post_tokens for c in report.compactions) / len(report.compactions)
    assert metrics.dropped_bytes > 0 and metrics.recoverable_share == 1.0
    assert metrics.survival_total.get("paths", 0) > 0
    empty = ccr.open_store(":memory:")
    assert replay_metrics(report, empty).recoverable_share == 0.0  # the check asks the store, not the report


def test_retention_and_continuation_pool_by_counts_and_come_from_every_compaction_report() -> None:
    a = Metrics(retention_found={"paths": 2}, retention_total={"paths": 2}, requests_named=1, requests_asked=1)
    b = Metrics(
        retention_found={"paths": 1},
        retention_total={"paths": 2},
        requests_named=0,
        requests_asked=3,
        open_items_found=1,
        open_items_total=2,
    )
    total = Metrics.combine([a, b])
    assert total.retention_paths == 3 / 4 and total.retention_commands is None
    assert total.latest_request_named == 1 / 4 and total.open_items_named == 1 / 2
    settings = load_settings(None, env={})
    report = replay(
        LONG, settings=settings, store=ccr.open_store(":memory:"), at="recorded", summarizer=make_summarizer(settings)
    )
    metrics = replay_metrics(report)
    kept = sum(c.retention.paths.kept for c in report.compactions if c.retention)
    assert metrics.retention_found["paths"] == kept > 0
    assert metrics.requests_asked == len(report.compactions)
