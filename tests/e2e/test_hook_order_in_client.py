"""In which order the real client runs the hooks around a compaction, and what each can see.

Claude Code 2.1.332 runs PreCompact, then SessionStart (source
``compact``), then PostCompact, one after the other, for manual and auto
compactions alike, and writes the new boundary to the transcript only after
all three. So the session-start hook cannot know this compaction's
``compact_summary`` (the PostCompact hook records it afterwards), and
neither hook can read the boundary. ``compactor/claude_code/hooks.py`` works in either
order; this test says which one the pinned client uses, so that a new
client that changes it is noticed.

The SessionStart text after a compaction reaches the model whole up to
10,000 characters (``compactor.claude_code.hooks.SESSION_START_MAX_CHARS``); one
character more and the client keeps only a 2,000-character preview (the
rest goes to a file the model is pointed at), so the hook must never pass it.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_api import Call, Say, request_text
from harness import PLUGIN, Session

from compactor.claude_code.hooks import SESSION_START_MAX_CHARS

World = Callable[..., Session]

PROBE = """
import json, sys
event, log = sys.argv[1], sys.argv[2]
data = json.load(sys.stdin)
boundaries = 0
try:
    with open(data["transcript_path"], encoding="utf-8") as transcript:
        boundaries = sum('"compact_boundary"' in line for line in transcript)
except OSError:
    boundaries = -1
with open(log, "a", encoding="utf-8") as out:
    out.write(json.dumps({"event": event, "boundaries": boundaries, "trigger": data.get("trigger"),
                          "source": data.get("source"), "summary": data.get("compact_summary")}) + "\\n")
"""


def probed_plugin(root: Path) -> tuple[Path, Path]:
    """A copy of the plugin whose every compaction hook first logs its event; (plugin, log)."""
    plugin = root / "plugin"
    shutil.copytree(PLUGIN, plugin)
    probe, log = root / "probe.py", root / "hooks.log"
    probe.write_text(PROBE)
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())
    for event, groups in hooks["hooks"].items():
        command = f'"{sys.executable}" "{probe}" {event} "{log}"'
        groups[0]["hooks"].insert(0, {"type": "command", "command": command})
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    return plugin, log


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_the_client_runs_pre_compact_then_session_start_then_post_compact_before_writing_the_boundary(
    world: World, tmp_path: Path
) -> None:
    plugin, log = probed_plugin(tmp_path)
    session = world(plugin=plugin, extra_env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000"})
    session.run("hello", script=[Call("Bash", {"command": "echo hi", "description": "Echo"}), Say("Hi.")])
    session.run("/compact")
    session.run(
        "go on", script=[Call("Bash", {"command": "echo 2", "description": "Echo"}, usage=190_000), Say("Done.")]
    )
    events = logged(log)
    assert [e["event"] for e in events] == ["PreCompact", "SessionStart", "PostCompact"] * 2
    assert [e["trigger"] for e in events if e["event"] == "PostCompact"] == ["manual", "auto"]
    assert [e["boundaries"] for e in events] == [0, 0, 0, 1, 1, 1], "no hook sees its own compaction's boundary"
    assert len(session.boundaries()) == 2
    record = session.session_record()
    last_summary = events[-1]["summary"]
    assert isinstance(last_summary, str) and session.api.summary_text in last_summary
    assert record["compact_summary"] == last_summary, "the post-compact hook recorded the client's summary"


@pytest.mark.parametrize("size", [SESSION_START_MAX_CHARS, SESSION_START_MAX_CHARS + 1])
def test_a_session_start_text_reaches_the_model_whole_up_to_the_limit_and_only_as_a_preview_past_it(
    world: World, tmp_path: Path, size: int
) -> None:
    plugin = tmp_path / "plugin"
    shutil.copytree(PLUGIN, plugin)
    text = "x" * (size - len("END-OF-TEXT.")) + "END-OF-TEXT."
    emit = tmp_path / "emit.py"
    answer = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    emit.write_text(f"import sys\nsys.stdin.read()\nprint({json.dumps(json.dumps(answer))})\n")
    command = f'"{sys.executable}" "{emit}"'
    hooks = {"hooks": {"SessionStart": [{"matcher": "compact", "hooks": [{"type": "command", "command": command}]}]}}
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    session = world(plugin=plugin)
    session.run("hello", script=[Say("Hi.")])
    session.run("/compact")
    session.run("go on", script=[Say("Going on.")])
    seen = request_text(session.api.of_kind("main")[-1].body)
    if size <= SESSION_START_MAX_CHARS:
        assert text in seen
    else:
        assert "END-OF-TEXT." not in seen and "x" * 2_000 in seen and "x" * 2_001 not in seen
