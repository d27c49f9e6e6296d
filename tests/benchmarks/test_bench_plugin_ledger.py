"""The plugin-ledger benchmark's replay of the client's hook sequence, on the long fixture session."""

from __future__ import annotations

import json
import re
from pathlib import Path

import bench_plugin_ledger as bench  # from benchmarks/ (conftest.py)

from compactor.claude_code.hooks import SESSION_START_MAX_CHARS

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "fixtures" / "sessions" / "long.jsonl"
MARKER = re.compile(r"word for word, under <<ccr:(ccr_[0-9a-f]{32})>>")
"""The reminder's marker of the stored head (the text's lead, before it, names stored reads)."""


def test_the_replay_runs_every_compaction_hook_the_plugin_registers() -> None:
    for event, value in (("PreCompact", "auto"), ("PostCompact", "manual"), ("SessionStart", "compact")):
        assert bench.hook_commands(bench.PLUGIN, event, value), event
    assert bench.hook_commands(bench.PLUGIN, "SessionStart", "startup") == []


def test_the_hook_sequence_on_a_fixture_session_announces_each_stored_head_and_records_the_summary(
    tmp_path: Path,
) -> None:
    points = bench.replay_hooks(SESSION, tmp_path)
    assert [p.compaction for p in points] == [1, 2]
    assert all(p.stderr == [] for p in points), [p.stderr for p in points]
    session_id = next(
        json.loads(line)["sessionId"] for line in SESSION.read_text().splitlines() if '"sessionId"' in line
    )
    record = json.loads((tmp_path / "compactor-home" / "sessions" / f"{session_id}.json").read_text())
    first, second = (MARKER.search(p.session_start) for p in points)
    assert first is not None and second is not None
    assert second.group(1) == record["head_handle"] and record["earlier_heads"] == [first.group(1)]
    assert record["compact_summary"] == points[-1].summary, "PostCompact recorded Claude Code's summary"
    for point in points:
        assert 0 < len(point.session_start) <= SESSION_START_MAX_CHARS
        assert point.summary.strip() and sum(point.total.values()) > 0
        for kind in bench.KINDS:
            assert point.alone[kind] <= point.with_plugin[kind] <= point.total[kind]
    assert "with plugin / Claude Code alone / total" in bench.table(points)


def test_harmful_lines_are_counted_by_kind() -> None:
    text = (
        "- The user turned down this call: Bash `git push`\n"
        "- Read .golangci.yml: File does not exist -> not resolved yet\n"
        "- background task b1 (completed, output not read yet)\n"
        "- lib/a.ex (stored read: <<ccr:ccr_0>>)\n"
    )
    assert bench.harmful_lines(text) == {
        "rejected calls filed as instructions": 1,
        "tool errors shown as open": 1,
        "finished tasks shown as unread": 1,
    }
    assert set(bench.harmful_lines("- lib/a.ex\n").values()) == {0}
