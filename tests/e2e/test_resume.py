"""Sessions that compactor writes open in the real client with ``--resume``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fake_api import Call, Say, request_text
from harness import REPO_ROOT, Session

from ccr import open_store

LONG = REPO_ROOT / "fixtures" / "sessions" / "long.jsonl"
MARKER = re.compile(r"<<ccr:(ccr_[0-9a-f]{32})>>")
World = Callable[..., Session]


def after_last_boundary(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    last = max(i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary")
    return records[last + 1 :]


def test_a_session_written_by_replay_output_opens_with_resume(world: World, tmp_path: Path) -> None:
    session = world()
    output = tmp_path / "replayed.jsonl"
    done = session.compactor("replay", str(LONG), "--counter", "rough", "--output", str(output))
    assert done.returncode == 0, done.stderr
    tail = after_last_boundary(output)
    (session_id,) = {r["sessionId"] for r in tail if "sessionId" in r}
    session.install_transcript(output, session_id)

    session.run("what is next?", resume=session_id, script=[Say("Next.")])

    (request,) = session.api.of_kind("main")
    messages = request.body["messages"]
    at = next(i for i, r in enumerate(tail) if r.get("isCompactSummary"))
    summary = tail[at]
    # The summary, then the attachments written after it (meta user records): the client sends
    # them as one user message, a text block each in the order they were written, joined by
    # newlines; the summary alone it sends as it is.
    opening = [summary["message"]["content"]]
    for record in tail[at + 1 :]:
        if record.get("type") != "user" or not record.get("isMeta"):
            break
        opening.append(record["message"]["content"])
    first = messages[0]
    assert first["role"] == "user"
    if isinstance(first["content"], str):
        assert [first["content"]] == opening
    else:
        assert [b["type"] for b in first["content"]] == ["text"] * len(opening)
        assert "".join(b["text"] for b in first["content"]) == "\n".join(opening)
    sent = json.dumps(messages)
    calls = [
        b["id"]
        for r in tail
        if r.get("type") == "assistant"
        for b in r["message"]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    assert calls and all(call in sent for call in calls)
    assert "what is next?" in request_text(request.body)
    handles = MARKER.findall(summary["message"]["content"])
    assert handles
    with open_store(session.compactor_home / "ccr.db") as store:
        assert all(store.contains(h) for h in handles)


def test_a_session_written_by_restore_opens_with_resume_as_it_stood_before_the_compaction(
    world: World, tmp_path: Path
) -> None:
    notes = "".join(f"{i:03d} restore me exactly\n" for i in range(120))
    session = world()
    (session.project / "notes.txt").write_text(notes)
    session.run(
        "read the notes",
        script=[
            Call("Read", {"file_path": str(session.project / "notes.txt")}),
            Say("I read them."),
        ],
    )
    before = session.transcript().read_bytes()
    session.run("/compact")
    assert session.boundaries()
    output = tmp_path / "restored.jsonl"
    done = session.compactor("restore", session.session_id(), "--output", str(output))
    assert done.returncode == 0, done.stderr
    restored = output.read_bytes()
    assert restored.startswith(before), "restore must give back the file as the first run left it, byte for byte"
    added = [json.loads(line) for line in restored[len(before) :].splitlines()]
    assert not [r for r in added if r.get("type") in ("user", "assistant")], added
    assert session.transcript().read_bytes().startswith(restored)

    fresh = world(project_dir=session.project)
    fresh.install_transcript(output, session.session_id())
    fresh.run("what did the notes say?", resume=session.session_id(), script=[Say("They said restore me.")])

    (request,) = fresh.api.of_kind("main")
    text = request_text(request.body)
    assert "119 restore me exactly" in text
    assert "read the notes" in text and "I read them." in text
    assert "This session is being continued" not in text
