"""How far the next compaction is: Claude Code's thresholds (the policy's arithmetic) and the figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attachments.exclusions import is_memory_file, is_plan_file
from compactor.claude_code.compaction_gauge import figures, limits_for, restored_otherwise, stored_spans
from compactor.claude_code.live_state import LiveState
from compactor.core.config import PolicySettings
from compactor.engine.policy import thresholds


@pytest.mark.parametrize("window", [100_000, 200_000, 1_000_000])
@pytest.mark.parametrize("pct", [None, 50, 100])
@pytest.mark.parametrize("client", ["2.1.39", "2.0.65"])
def test_thresholds_are_the_policys_for_the_window_and_client(window: int, pct: int | None, client: str) -> None:
    env = {} if pct is None else {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": str(pct)}
    cap = 32_000 if client.startswith("2.0") else 20_000
    expected = thresholds(PolicySettings(context_window=window, autocompact_pct=pct, summary_reserve_cap=cap))
    got = limits_for(window, client=client, environ=env)
    assert (got.effective_window, got.auto_compact, got.warning, got.blocking) == (
        expected.effective_window,
        expected.auto_compact,
        expected.warning,
        expected.blocking,
    )


def test_disabled_auto_compaction_measures_against_the_effective_window() -> None:
    limits = limits_for(200_000, environ={"DISABLE_AUTO_COMPACT": "1"})
    assert not limits.auto_enabled
    state = LiveState()
    assert figures(state, limits).threshold == limits.effective_window == 180_000


def test_the_pace_gives_the_turns_left() -> None:
    state = LiveState(usage=100_000, pace=[90_000, 95_000, 100_000])
    shown = figures(state, limits_for(200_000, environ={}))
    assert (shown.tokens_left, shown.per_answer, shown.answers_left) == (67_000, 5_000, 14)


def test_stored_spans_count_the_handles_a_session_record_names(compactor_home: Path) -> None:
    sessions = compactor_home / "sessions"
    sessions.mkdir()
    record = {
        "head_handle": "ccr_a",
        "dropped_handle": "ccr_b",
        "earlier_heads": ["ccr_c", "ccr_a"],
        "results": [{"handle": "ccr_d"}, {"handle": "ccr_b"}],
    }
    (sessions / "s-1.json").write_text(json.dumps(record), encoding="utf-8")
    (sessions / "s-2.json").write_text("not json", encoding="utf-8")
    assert [stored_spans(s) for s in ("s-1", "s-2", "s-3", "../s-1")] == [4, 0, 0, 0]


@pytest.mark.parametrize(
    "path",
    [
        "/p/CLAUDE.md",
        "/p/sub/CLAUDE.local.md",
        "/home/u/.claude/rules/style.md",
        "/home/u/.claude/plans/plan-1.md",
        "/home/u/.claude/plans",
        "/p/src/app.py",
        "/p/.claude/settings.json",
        "notes/CLAUDE.txt",
    ],
)
def test_files_restored_otherwise_are_the_attachments_exclusions(path: str) -> None:
    assert restored_otherwise(path) == (is_memory_file(path) or is_plan_file(path))


def test_the_files_to_restore_are_the_latest_reads_but_memory_and_plans() -> None:
    reads = {f"/p/f{n}.py": n for n in range(8)} | {"/p/CLAUDE.md": 99, "/u/.claude/plans/a.md": 98}
    shown = figures(LiveState(reads=reads), limits_for(200_000, environ={}))
    assert shown.files == ["/p/f7.py", "/p/f6.py", "/p/f5.py", "/p/f4.py", "/p/f3.py"]
