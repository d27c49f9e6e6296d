"""Sessions recorded from the current client (``fixtures/recorded``) read cleanly with the transcript reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compactor.claude_code.transcript import read_transcript

RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "recorded"
SESSIONS = sorted(RECORDED.glob("scripted-*.jsonl"))


def test_there_is_a_recorded_session() -> None:
    assert SESSIONS, "fixtures/recorded is empty: python tests/e2e/record_session.py"


@pytest.mark.parametrize("path", SESSIONS, ids=[p.name for p in SESSIONS])
def test_recorded_session_reads_without_warnings(path: Path) -> None:
    transcript = read_transcript(path)
    assert transcript.warnings == []
    assert transcript.unknown == []


@pytest.mark.parametrize("path", SESSIONS, ids=[p.name for p in SESSIONS])
def test_recorded_session_holds_what_the_script_did(path: Path) -> None:
    transcript = read_transcript(path)
    calls = transcript.tool_uses()
    names = {call.name for call in calls}
    assert {"Read", "Edit", "Write", "Bash", "Grep", "Glob", "Skill"} <= names
    assert any(call.name == "Bash" and call.input.get("run_in_background") for call in calls)
    assert [c.trigger for c in transcript.compactions] == ["manual"]
    assert transcript.compactions[0].summary and "<summary>" not in transcript.compactions[0].summary
    state = transcript.state
    assert [skill.name for skills in state.skills.values() for skill in skills] == ["release-notes"]
    assert state.plan is not None and state.plan.content.startswith("# Plan: add a per-item price")
    assert any(p.endswith("/project/app.py") for p in state.read_files)


@pytest.mark.parametrize("path", SESSIONS, ids=[p.name for p in SESSIONS])
def test_recorded_session_names_no_machine(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "/home/user/project" in text
    for record in map(json.loads, text.splitlines()):
        cwd = record.get("cwd")
        assert cwd is None or cwd == "/home/user/project"
