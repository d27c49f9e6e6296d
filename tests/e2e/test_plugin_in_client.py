"""The plugin inside the real Claude Code client: compaction stores, the model is told, the tools answer."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_api import Call, Say, request_text
from harness import PLUGIN, RETRIEVE_TOOL, STATS_TOOL, Session

from ccr import open_store
from compactor.claude_code.transcript import read_transcript
from compactor.core.config import DEFAULT_RECOVERY_TOOLS
from compactor.engine.pipeline import without_recovered_content
from compactor.engine.spans import messages_jsonl

MARKER = re.compile(r"<<ccr:(ccr_[0-9a-f]{32})>>")
NOTES = "".join(f"{i:04d} the deploy key rotates on day {i % 28 + 1}\n" for i in range(400))
World = Callable[..., Session]


def busy_session(world: World, **kwargs: Any) -> Session:
    """A session with a large Read, a Bash call and a plain answer, ready to compact."""
    session = world(**kwargs)
    notes = session.project / "notes.txt"
    notes.write_text(NOTES)
    session.run(
        "read the notes, then list the folder",
        script=[
            Call("Read", {"file_path": str(notes)}),
            Call("Bash", {"command": "ls -la", "description": "List"}),
            Say("I read the notes and listed the folder."),
        ],
    )
    return session


@pytest.fixture(scope="module")
def compacted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """One session, shared by the tests that only read it: work, ``/compact``, use the tools, ``/compact`` again.

    1. a Read, a Bash call and an answer;
    2. ``/compact keep the deploy key schedule``;
    3. a turn that loads the tools with ToolSearch and calls them;
    4. ``/compact`` again (which settles the first compaction's record).
    """
    opened: list[Session] = []

    def make(**kwargs: Any) -> Session:
        opened.append(Session(tmp_path_factory.mktemp("compacted"), **kwargs).__enter__())
        return opened[-1]

    session = busy_session(make)
    try:
        session.run("/compact keep the deploy key schedule")
        session.saved["first"] = session.session_record()
        head = session.saved["first"]["head_handle"]
        notes = next(r["handle"] for r in session.saved["first"]["results"] if r["what"].endswith("notes.txt"))
        session.run(
            "check the stored notes",
            script=[
                Call("ToolSearch", {"query": f"select:{RETRIEVE_TOOL},{STATS_TOOL}"}),
                Call(RETRIEVE_TOOL, {"handle": f"<<ccr:{head}>>", "exact": True, "max_tokens": 0}),
                Call(RETRIEVE_TOOL, {"handle": head, "query": "deploy key rotates on day 17"}),
                Call(RETRIEVE_TOOL, {"handle": notes, "lines": [3, 4]}),
                Call(STATS_TOOL, {}),
                Say("Checked."),
            ],
        )
        session.run("/compact")
        yield session
    finally:
        session.__exit__(None, None, None)


def stored(session: Session, handle: str) -> bytes:
    with open_store(session.compactor_home / "ccr.db") as store:
        return store.get(handle)


def summarized_and_dropped(session: Session, compaction: int) -> tuple[list[Any], list[Any]]:
    """From the transcript alone: what compaction number ``compaction`` summarized, and what it dropped.

    Summarized: the messages the previous compaction kept (after its summary),
    then every message up to this compaction's boundary. Dropped: those
    without the messages this boundary says were kept verbatim.
    """
    transcript = read_transcript(session.transcript())
    boundaries = session.boundaries()
    uuids = [m.uuid for m in transcript.messages]

    def kept(boundary: dict[str, Any]) -> set[str]:
        preserved = boundary["compactMetadata"].get("preservedMessages", {})
        return set(preserved.get("uuids", [])) | set(preserved.get("allUuids", []))

    def index_of(boundary: dict[str, Any]) -> int:
        return uuids.index(boundary["logicalParentUuid"]) + 1

    end = index_of(boundaries[compaction])
    if compaction == 0:
        summarized = transcript.messages[:end]
    else:
        start = index_of(boundaries[compaction - 1])
        carried = [m for m in transcript.messages[:start] if m.uuid in kept(boundaries[compaction - 1])]
        after = transcript.messages[start:end]
        summarized = [after[0], *carried, *after[1:]] if after[0].is_compact_summary else [*carried, *after]
    this_kept = kept(boundaries[compaction])
    dropped = list(summarized)
    while dropped and dropped[-1].uuid in this_kept:
        dropped.pop()
    return summarized, dropped


def test_manual_compact_stores_what_it_summarizes_byte_exact_and_records_it(compacted: Session) -> None:
    first = compacted.saved["first"]
    assert compacted.boundaries()[0]["compactMetadata"]["trigger"] == "manual"
    summarized, _ = summarized_and_dropped(compacted, 0)
    assert first["head_handle"] == first["summarized_handle"]
    assert stored(compacted, first["head_handle"]) == messages_jsonl(summarized)
    assert first["trigger"] == "manual" and first["messages"] == len(summarized)
    assert any(r["what"].startswith("Read ") and r["what"].endswith("notes.txt") for r in first["results"])


def test_the_next_compaction_settles_the_last_one_to_exactly_what_it_dropped(compacted: Session) -> None:
    first = compacted.saved["first"]
    record = compacted.session_record()
    summarized, dropped = summarized_and_dropped(compacted, 0)
    assert 0 < len(dropped) < len(summarized), "the client keeps its last messages verbatim; else this means less"
    assert record["earlier_heads"] == [first["head_handle"]], "the earlier head is the one announced"
    (settled,) = record["earlier_dropped"]
    assert settled != first["head_handle"]
    assert stored(compacted, settled) == messages_jsonl(dropped)
    summarized_now, _ = summarized_and_dropped(compacted, 1)
    recovered_replaced = without_recovered_content(summarized_now, tuple(DEFAULT_RECOVERY_TOOLS))
    assert stored(compacted, record["head_handle"]) == messages_jsonl(recovered_replaced)
    now = stored(compacted, record["head_handle"]).decode()
    assert all(m.api_json() in now for m in summarized[len(dropped) :])


def test_the_summarizer_gets_the_instructions_and_the_markers(compacted: Session) -> None:
    request = compacted.api.of_kind("compaction")[0]
    text = request_text(request.body)
    first = compacted.saved["first"]
    assert "keep the deploy key schedule" in text
    assert f"<<ccr:{first['summarized_handle']}>>" in text
    for result in first["results"]:
        assert f"<<ccr:{result['handle']}>>" in text
    assert RETRIEVE_TOOL in text and f"select:{RETRIEVE_TOOL}" in text
    assert "For whoever writes the summary" in text


def test_after_compaction_the_model_is_told_the_real_tool_and_how_to_load_it(compacted: Session) -> None:
    first = compacted.saved["first"]
    text = request_text(compacted.api.of_kind("main")[-1].body)
    reminder = next(part for part in text.split("\n") if "This conversation was just compacted" in part)
    assert f"<<ccr:{first['head_handle']}>>" in reminder
    assert f"`{RETRIEVE_TOOL}`" in reminder
    assert f'ToolSearch with the query "select:{RETRIEVE_TOOL}"' in reminder
    assert "`ccr_retrieve`" not in text


def test_after_manual_compact_the_hook_text_the_model_sees_names_the_loadable_tool(compacted: Session) -> None:
    text = request_text(compacted.api.of_kind("main")[-1].body)
    shown = text[text.index("<local-command-stdout>") :]
    shown = shown[: shown.index("</local-command-stdout>")]
    assert "PreCompact" in shown and f"select:{RETRIEVE_TOOL}" in shown
    assert "For whoever writes the summary of this conversation:" in shown
    assert "When you write the summary" not in shown


def test_tool_search_loads_the_tools_and_they_answer(compacted: Session) -> None:
    first = compacted.saved["first"]
    last = compacted.api.of_kind("main")[-1].body
    loaded = [
        part.get("tool_name")
        for message in last["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
        for part in (block["content"] if isinstance(block["content"], list) else [])
    ]
    assert RETRIEVE_TOOL in loaded and STATS_TOOL in loaded
    assert RETRIEVE_TOOL in [tool["name"] for tool in last["tools"]]
    whole, query, lines = compacted.api.tool_results(RETRIEVE_TOOL)
    assert not any(error for _, _, error in (whole, query, lines)), (whole, query, lines)
    assert whole[1] == stored(compacted, first["head_handle"]).decode()
    assert "day 17" in query[1] and len(query[1]) < len(whole[1])
    notes = next(r["handle"] for r in first["results"] if r["what"].endswith("notes.txt"))
    notes_lines = stored(compacted, notes).decode().splitlines(keepends=True)
    assert lines[1].rstrip("\n") == "".join(notes_lines[2:4]).rstrip("\n")
    ((_, stats, error),) = compacted.api.tool_results(STATS_TOOL)
    assert not error and json.loads(stats)["entries"] >= 2


def test_auto_compactions_store_each_message_in_exactly_one_head(world: World) -> None:
    session = busy_session(world, extra_env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000"})
    for round_ in range(2):
        session.run(
            f"step {round_}",
            script=[
                Call("Bash", {"command": f"echo step {round_}", "description": "Echo"}, usage=190_000),
                Say(f"Step {round_} done."),
            ],
        )
    boundaries = session.boundaries()
    assert [b["compactMetadata"]["trigger"] for b in boundaries] == ["auto", "auto"]
    record = session.session_record()
    first_reminder = next(
        p
        for r in session.api.of_kind("main")
        for p in request_text(r.body).split("\n")
        if "This conversation was just compacted" in p
    )
    announced = MARKER.search(first_reminder)
    assert announced is not None
    assert record["earlier_heads"] == [announced.group(1)], "the record names the head the first reminder announced"
    assert f"<<ccr:{announced.group(1)}>>" in request_text(session.api.of_kind("compaction")[0].body)
    (earlier,) = record["earlier_dropped"]
    _, dropped = summarized_and_dropped(session, 0)
    assert stored(session, earlier) == messages_jsonl(dropped)
    summarized, _ = summarized_and_dropped(session, 1)
    assert stored(session, record["head_handle"]) == messages_jsonl(summarized)
    lines = [line for handle in (earlier, record["head_handle"]) for line in stored(session, handle).splitlines()]
    assert len(lines) == len(set(lines)), "a message sits in two heads"
    assert "This conversation was just compacted" in request_text(session.api.of_kind("main")[-1].body)
    summarizer_requests = [request_text(r.body) for r in session.api.of_kind("compaction")]
    assert len(summarizer_requests) == 2
    assert f"<<ccr:{record['summarized_handle']}>>" in summarizer_requests[1]
    assert all(f"select:{RETRIEVE_TOOL}" in text for text in summarizer_requests)


def test_a_full_store_never_blocks_a_compaction(world: World) -> None:
    session = busy_session(world, extra_env={"COMPACTOR_CCR_MAX_BYTES": "1000"})
    session.run("/compact")
    assert len(session.boundaries()) == 1
    assert not (session.compactor_home / "sessions").exists()
    with open_store(session.compactor_home / "ccr.db") as store:
        assert store.stats().entries == 0
    session.run("go on", script=[Say("Going on.")])
    assert "This conversation was just compacted" not in request_text(session.api.of_kind("main")[-1].body)


def test_a_missing_store_folder_never_blocks_a_compaction(world: World, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where COMPACTOR_HOME should be a folder")
    session = busy_session(world, extra_env={"COMPACTOR_HOME": str(blocker / "home")})
    done = session.run("/compact")
    assert len(session.boundaries()) == 1
    assert "Traceback" not in done.stdout + done.stderr + session.transcript().read_text()
    session.run("go on", script=[Say("Going on.")])
    assert "This conversation was just compacted" not in request_text(session.api.of_kind("main")[-1].body)


def test_a_broken_install_never_blocks_a_compaction_and_says_how_to_install(world: World, tmp_path: Path) -> None:
    plugin = tmp_path / "elsewhere" / "plugin"
    shutil.copytree(PLUGIN, plugin)
    session = busy_session(world, plugin=plugin, python="/nonexistent/python3")
    done = session.run("/compact")
    assert len(session.boundaries()) == 1
    store = session.compactor_home / "ccr.db"
    if store.exists():
        with open_store(store) as opened:
            assert opened.stats().entries == 0
    assert "not found" not in done.stdout + done.stderr
    assert "pip install" in (session.transcript().read_text() + done.stdout + done.stderr)


def test_the_plugin_finds_the_recorded_python_without_it_on_path(world: World, tmp_path: Path) -> None:
    plugin = tmp_path / "elsewhere" / "plugin"
    shutil.copytree(PLUGIN, plugin)
    session = busy_session(world, plugin=plugin, python=None)
    recorded = subprocess.run(
        [sys.executable, "-m", "compactor", "hook", "record-python"],
        env={**session.env(), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert recorded.returncode == 0, recorded.stderr
    session.run("/compact")
    record = session.session_record()
    summarized, _ = summarized_and_dropped(session, 0)
    assert stored(session, record["head_handle"]) == messages_jsonl(summarized)


def test_plugin_validate_passes_without_warnings(world: World) -> None:
    session = world()
    done = session.client("plugin", "validate", str(PLUGIN))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning" not in (done.stdout + done.stderr).lower(), done.stdout + done.stderr


def test_the_ccr_server_is_connected_before_the_first_request(compacted: Session) -> None:
    first = compacted.api.of_kind("main")[0]
    text = request_text(first.body)
    assert RETRIEVE_TOOL in text and STATS_TOOL in text, "the first request went out before ccr mcp was ready"
    assert "plugin:compactor:ccr" in text


def test_a_server_started_on_an_empty_store_answers_after_a_compaction_in_the_same_run(world: World) -> None:
    session = world(extra_env={"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000"})
    notes = session.project / "notes.txt"
    notes.write_text(NOTES)

    def retrieve_the_reminded_head(body: dict[str, Any]) -> Call:
        reminder = next(p for p in request_text(body).split("\n") if "This conversation was just compacted" in p)
        found = MARKER.search(reminder)
        assert found is not None
        return Call(RETRIEVE_TOOL, {"handle": found.group(1), "query": "day 17"})

    session.run("what is in this folder?", script=[Call("Glob", {"pattern": "*"}), Say("A notes file.")])
    store = session.compactor_home / "ccr.db"
    if store.exists():
        with open_store(store) as opened:
            assert opened.stats().entries == 0
    session.run(
        "read the notes",
        script=[
            Call("Read", {"file_path": str(notes)}, usage=190_000),
            Call("ToolSearch", {"query": f"select:{RETRIEVE_TOOL}"}),
            retrieve_the_reminded_head,
            Say("Found it."),
        ],
    )
    assert len(session.boundaries()) == 1
    ((_, text, error),) = session.api.tool_results(RETRIEVE_TOOL)
    assert not error, text
    assert "day 17" in text
