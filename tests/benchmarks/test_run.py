"""The benchmark protocol: figures judge a median against a target; run.py collects every script."""

from __future__ import annotations

import importlib
from pathlib import Path

import _common as common  # from benchmarks/ (conftest.py)
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_a_figure_passes_on_its_median_in_the_targets_direction() -> None:
    at_most = common.Figure("x", [0.5, 0.9, 3.0], 1.0, "<=")
    at_least = common.Figure("y", [0.4, 0.6, 0.7], 0.5, ">=")
    assert at_most.median == 0.9 and at_most.passed is True
    assert at_least.passed is True
    assert common.Figure("z", [1.1, 1.2, 0.1], 1.0, "<=").passed is False
    assert at_most.shown() == "0.90x (0.50–3.00)"


def test_a_missing_figure_neither_passes_nor_fails() -> None:
    figure = common.missing("ccr stats", 12.0, "<=", "no ccr script")
    assert figure.passed is None and figure.shown() == "missing: no ccr script"


def test_interleaved_gives_one_ratio_per_pair_and_alternates() -> None:
    calls: list[str] = []
    ratios = common.interleaved(lambda: calls.append("a"), lambda: calls.append("b"), runs=3, warmup=1)
    assert len(ratios) == 3 and all(r > 0 for r in ratios)
    assert calls == ["a", "b"] * 4


def test_the_table_names_each_figure_its_target_and_result(capsys: pytest.CaptureFixture[str]) -> None:
    common.print_figures([common.Figure("compact", [2.0], 1.0, "<="), common.missing("mcp", 15, "<=", "absent")])
    out = capsys.readouterr().out
    assert "compact" in out and "<= 1x" in out and "FAIL" in out and "missing" in out


def test_every_benchmark_script_defines_figures_and_does_no_work_when_imported() -> None:
    scripts = sorted(p.stem for p in BENCHMARKS.glob("bench_*.py"))
    assert {"bench_ccr", "bench_attachments", "bench_memory", "bench_dedup", "bench_pipeline"} <= set(scripts)
    for name in scripts:
        assert callable(getattr(importlib.import_module(name), "figures", None)), name


def test_run_collects_only_the_scripts_it_is_asked_for() -> None:
    assert importlib.import_module("run").collect(["no_such_benchmark"], quick=True) == []


def test_a_script_without_figures_is_a_failed_row_not_a_silent_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = importlib.import_module("run")
    (tmp_path / "bench_nothing.py").write_text(
        "def main() -> None:\n    print('figures elsewhere')\n", encoding="utf-8"
    )
    (tmp_path / "bench_empty.py").write_text("def figures(quick=False):\n    return []\n", encoding="utf-8")
    monkeypatch.setattr(run, "HERE", tmp_path)
    rows = run.collect(None, quick=True)
    assert [(r.name, r.passed) for r in rows] == [("bench_empty.py: error", False), ("bench_nothing.py: error", False)]
    assert "no figure" in rows[0].detail and "defines no figures" in rows[1].detail


def test_a_long_session_is_one_session_whose_chain_runs_through_every_copy(tmp_path: Path) -> None:
    from compactor.claude_code.transcript import read_transcript

    corpus = importlib.import_module("make_corpus")
    source = BENCHMARKS.parent / "fixtures" / "sessions" / "small.jsonl"
    target = corpus.long_session(source, tmp_path / "long.jsonl", 3 * source.stat().st_size)
    assert target.stat().st_size >= 3 * source.stat().st_size
    original = read_transcript(source)
    copied = read_transcript(target)
    assert copied.session_id == original.session_id
    assert not [w for w in copied.warnings if w.kind in ("mixed_sessions", "duplicate_uuid")]
    shown = "\n".join(m.text() for m in copied.messages)
    copies = [n for n in range(10) if f"[long session copy {n}]" in shown]
    assert len(copies) >= 3 and copies == list(range(len(copies)))
    assert len(copied.messages) >= 3 * len(original.messages) - 3


def test_a_real_session_is_named_by_its_file_or_its_folder() -> None:
    assert common.session_name(Path("/t/entire-2.1.29.jsonl")) == "entire-2.1.29"
    assert common.session_name(Path("/t/spotter-258c7280/session.jsonl")) == "spotter-258c7280"


def test_only_takes_a_script_by_its_name_with_or_without_bench_and_py() -> None:
    run = importlib.import_module("run")
    assert {run.benchmark_name(n) for n in ("dedup", "bench_dedup", "bench_dedup.py", "benchmarks/bench_dedup.py")} == {
        "dedup"
    }
    assert "dedup" in run.scripts() and "pipeline" in run.scripts()


def test_only_with_an_unknown_name_is_a_usage_error_that_lists_the_benchmarks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = importlib.import_module("run")
    with pytest.raises(SystemExit) as exited:
        run.main(["--only", "dedup", "no_such_benchmark"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "no benchmark no_such_benchmark" in err and "dedup" in err and "pipeline" in err
