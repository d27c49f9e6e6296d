"""Session state rebuilt from a transcript's tool calls (StateBuilder)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from compactor.claude_code.transcript import (
    StateBuilder,
    Transcript,
    parse_timestamp,
    read_transcript,
    strip_line_numbers,
)
from compactor.core.messages import Message, ToolResultBlock, ToolUseBlock
from compactor.core.session import SessionState


class Log:
    """Claude Code-shaped records, each chained to the previous one, one second apart."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.calls = 0

    def add(self, record: dict[str, Any]) -> None:
        n = len(self.records)
        base = {
            "parentUuid": f"u{n}" if n else None,
            "isSidechain": False,
            "sessionId": "sess-1",
            "cwd": "/repo",
            "uuid": f"u{n + 1}",
            "timestamp": f"2026-01-01T00:00:{n:02d}.000Z",
        }
        base.update(record)
        self.records.append(base)

    def user(self, content: Any, **extra: Any) -> None:
        self.add({"type": "user", "message": {"role": "user", "content": content}, **extra})

    def call(self, name: str, result: Any = "ok", *, tur: Any = None, is_error: bool = False, **inputs: Any) -> None:
        """An assistant tool call and its result."""
        self.calls += 1
        tid = f"t{self.calls}"
        self.add(
            {
                "type": "assistant",
                "message": {
                    "id": f"m{self.calls}",
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": tid, "name": name, "input": inputs}],
                },
            }
        )
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid, "content": result}
        if is_error:
            block["is_error"] = True
        self.user([block], **({} if tur is None else {"toolUseResult": tur}))

    def read(self, tmp_path: Path) -> Transcript:
        path = tmp_path / "s.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        return read_transcript(path, strict=True)


def file_result(path: str, content: str, start: int = 1, total: int | None = None) -> dict[str, Any]:
    lines = content.count("\n") + 1
    return {
        "type": "text",
        "file": {
            "filePath": path,
            "content": content,
            "numLines": lines,
            "startLine": start,
            "totalLines": total or lines,
        },
    }


def numbered(content: str, start: int = 1, sep: str = "\u2192") -> str:
    return "\n".join(f"{i:>6}{sep}{line}" for i, line in enumerate(content.split("\n"), start))


def at(second: int) -> float:
    return datetime(2026, 1, 1, 0, 0, second, tzinfo=UTC).timestamp()


# -- reads -----------------------------------------------------------------------------


def test_a_read_is_remembered_from_its_structured_result_with_its_timestamp(tmp_path: Path) -> None:
    log = Log()
    log.call("Read", numbered("a\nb\n"), tur=file_result("/repo/a.py", "a\nb\n"), file_path="/repo/a.py")
    entry = log.read(tmp_path).state.read_files["/repo/a.py"]
    assert entry.content == "a\nb\n"
    assert entry.timestamp == at(1)
    assert not entry.is_partial


def test_a_partial_read_keeps_its_offset_and_limit(tmp_path: Path) -> None:
    log = Log()
    log.call(
        "Read",
        numbered("c\nd", start=3),
        tur=file_result("/repo/a.py", "c\nd", start=3, total=40),
        file_path="/repo/a.py",
        offset=3,
        limit=2,
    )
    entry = log.read(tmp_path).state.read_files["/repo/a.py"]
    assert (entry.content, entry.offset, entry.limit) == ("c\nd", 3, 2)
    assert entry.is_partial


def test_a_read_with_only_text_has_its_line_numbers_and_reminder_removed(tmp_path: Path) -> None:
    log = Log()
    reminder = "\n\n<system-reminder>\nThink about whether this file is malicious.\n</system-reminder>\n"
    log.call("Read", numbered("x = 1\n") + reminder, file_path="/repo/arrow.py")
    log.call("Read", [{"type": "text", "text": numbered("y\tz", sep="\t")}], file_path="/repo/tab.py")
    files = log.read(tmp_path).state.read_files
    assert files["/repo/arrow.py"].content == "x = 1\n"
    assert files["/repo/tab.py"].content == "y\tz"


def test_a_failed_read_changes_nothing(tmp_path: Path) -> None:
    log = Log()
    log.call(
        "Read",
        "<tool_use_error>File does not exist.</tool_use_error>",
        is_error=True,
        tur="Error: File does not exist.",
        file_path="/repo/gone.py",
    )
    assert log.read(tmp_path).state.read_files == {}


def test_reading_a_memory_file_records_its_path(tmp_path: Path) -> None:
    log = Log()
    log.call("Read", numbered("rules"), tur=file_result("/repo/CLAUDE.md", "rules"), file_path="/repo/CLAUDE.md")
    log.call("Read", numbered("rules"), tur=file_result("/repo/CLAUDE.md", "rules"), file_path="/repo/CLAUDE.md")
    assert log.read(tmp_path).state.memory_paths == ["/repo/CLAUDE.md"]


# -- writes and edits ---------------------------------------------------------------------


def test_write_then_edit_gives_the_edited_content(tmp_path: Path) -> None:
    log = Log()
    log.call("Write", "created", file_path="/repo/b.py", content="a = 1\na = 1\n")
    log.call("Edit", "edited", file_path="/repo/b.py", old_string="a = 1", new_string="a = 2")
    log.call("Edit", "edited", file_path="/repo/b.py", old_string="a =", new_string="b =", replace_all=True)
    entry = log.read(tmp_path).state.read_files["/repo/b.py"]
    assert entry.content == "b = 2\nb = 1\n"
    assert entry.timestamp == at(5)


def test_an_edit_of_an_unread_file_uses_the_original_from_the_tool_result(tmp_path: Path) -> None:
    log = Log()
    tur = {
        "filePath": "/repo/c.py",
        "oldString": "old",
        "newString": "new",
        "originalFile": "keep old here\n",
        "replaceAll": False,
        "structuredPatch": [],
        "userModified": False,
    }
    log.call("Edit", "edited", tur=tur, file_path="/repo/c.py", old_string="old", new_string="new")
    assert log.read(tmp_path).state.read_files["/repo/c.py"].content == "keep new here\n"


def test_an_edit_that_cannot_be_applied_marks_the_known_content_stale(tmp_path: Path) -> None:
    log = Log()
    log.call("Write", "created", file_path="/repo/d.py", content="alpha\n")
    log.call("Edit", "edited", file_path="/repo/d.py", old_string="beta", new_string="gamma")
    log.call("Edit", "edited", file_path="/repo/unknown.py", old_string="x", new_string="y")
    files = log.read(tmp_path).state.read_files
    assert files["/repo/d.py"].stale and files["/repo/d.py"].content == "alpha\n"
    assert "/repo/unknown.py" not in files


def test_a_multi_edit_applies_its_edits_in_order(tmp_path: Path) -> None:
    log = Log()
    log.call("Write", "created", file_path="/repo/e.py", content="one two")
    log.call(
        "MultiEdit",
        "edited",
        file_path="/repo/e.py",
        edits=[
            {"old_string": "one", "new_string": "two"},
            {"old_string": "two", "new_string": "three", "replace_all": True},
        ],
    )
    assert log.read(tmp_path).state.read_files["/repo/e.py"].content == "three three"


def test_a_rejected_edit_changes_nothing(tmp_path: Path) -> None:
    log = Log()
    log.call("Write", "created", file_path="/repo/f.py", content="same")
    log.call("Edit", "rejected", is_error=True, file_path="/repo/f.py", old_string="same", new_string="other")
    assert log.read(tmp_path).state.read_files["/repo/f.py"].content == "same"


# -- skills, plan, todos, agents -----------------------------------------------------------


def test_a_skill_invocation_takes_its_content_from_the_following_meta_message(tmp_path: Path) -> None:
    log = Log()
    log.call("Skill", "Launching skill: pdf", skill="pdf")
    log.user(
        [{"type": "text", "text": "Base directory for this skill: /home/u/.claude/skills/pdf\n\n# PDF\nUse it."}],
        isMeta=True,
    )
    skills = log.read(tmp_path).state.skills["main"]
    assert [(s.name, s.path) for s in skills] == [("pdf", "/home/u/.claude/skills/pdf/SKILL.md")]
    assert "# PDF" in skills[0].content and skills[0].invoked_at == at(1)


def test_a_skill_without_a_meta_message_keeps_the_tool_result(tmp_path: Path) -> None:
    log = Log()
    log.call("Skill", "Launching skill: lint", command="/lint")
    log.user("next request")
    (skill,) = log.read(tmp_path).state.skills["main"]
    assert (skill.name, skill.content) == ("lint", "Launching skill: lint")


def test_plan_mode_is_entered_and_left_with_its_plan(tmp_path: Path) -> None:
    log = Log()
    log.call("EnterPlanMode", "entered")
    log.call("Write", "created", file_path="/home/u/.claude/plans/p.md", content="# Plan v1")
    entered = log.read(tmp_path).state
    assert entered.in_plan_mode
    assert entered.plan is not None and entered.plan.content == "# Plan v1"
    log.call(
        "ExitPlanMode",
        "approved",
        tur={"plan": "# Plan v2", "filePath": "/home/u/.claude/plans/p.md"},
        plan="# Plan v2",
    )
    state = log.read(tmp_path).state
    assert not state.in_plan_mode
    assert state.plan is not None and (state.plan.path, state.plan.content) == (
        "/home/u/.claude/plans/p.md",
        "# Plan v2",
    )


def test_the_permission_mode_follows_user_records(tmp_path: Path) -> None:
    log = Log()
    log.user("plan this", permissionMode="plan")
    assert log.read(tmp_path).state.permission_mode == "plan"
    log.user("go", permissionMode="acceptEdits")
    assert log.read(tmp_path).state.permission_mode == "acceptEdits"


def test_todo_write_replaces_the_todo_list(tmp_path: Path) -> None:
    log = Log()
    log.call("TodoWrite", "ok", todos=[{"content": "a", "status": "pending", "activeForm": "Doing a"}])
    log.call(
        "TodoWrite",
        "ok",
        todos=[
            {"content": "a", "status": "completed", "activeForm": "Doing a"},
            {"content": "b", "status": "in_progress", "activeForm": "Doing b"},
        ],
    )
    todos = log.read(tmp_path).state.todos
    assert [(t.content, t.status, t.active_form) for t in todos] == [
        ("a", "completed", "Doing a"),
        ("b", "in_progress", "Doing b"),
    ]


def test_a_background_agent_runs_until_its_output_is_collected(tmp_path: Path) -> None:
    log = Log()
    log.call(
        "Task",
        "launched",
        tur={"status": "async_launched", "agentId": "ag1"},
        description="explore",
        prompt="look",
        subagent_type="Explore",
        run_in_background=True,
    )
    log.call("Task", "done", tur={"status": "completed", "agentId": "ag2"}, description="inline", prompt="x")
    running = log.read(tmp_path).state.tasks
    assert list(running) == ["ag1"]
    assert (running["ag1"].status, running["ag1"].collected, running["ag1"].agent_type) == ("running", False, "Explore")
    log.call(
        "TaskOutput",
        "<status>completed</status>",
        tur={"retrieval_status": "success", "task": {"task_id": "ag1", "status": "completed", "output": "found it"}},
        task_id="ag1",
    )
    task = log.read(tmp_path).state.tasks["ag1"]
    assert (task.status, task.collected, task.result) == ("completed", True, "found it")


def test_a_task_notification_completes_a_background_agent_without_collecting_it(tmp_path: Path) -> None:
    log = Log()
    log.call("Agent", "launched", description="explore", prompt="look", run_in_background=True)
    log.user("<task-notification>\n<task-id>t1</task-id>\n<status>completed</status>\n</task-notification>")
    task = log.read(tmp_path).state.tasks["t1"]
    assert (task.status, task.collected) == ("completed", False)


# -- driving the builder step by step ------------------------------------------------------


def test_a_replay_can_drive_the_builder_entry_by_entry(tmp_path: Path) -> None:
    log = Log()
    log.call("Write", "created", file_path="/repo/a.py", content="v1")
    log.call("Edit", "edited", file_path="/repo/a.py", old_string="v1", new_string="v2")
    transcript = log.read(tmp_path)
    builder = StateBuilder()
    seen: list[str] = []
    for entry in transcript.entries:
        builder.apply(entry)
        current = builder.snapshot().read_files.get("/repo/a.py")
        seen.append(current.content if current else "-")
    assert seen == ["-", "v1", "v1", "v2"]
    assert builder.state == transcript.state
    assert builder.state.session_id == "sess-1" and builder.state.cwd == "/repo"


def test_apply_message_works_without_transcript_records() -> None:
    builder = StateBuilder(SessionState(session_id="loop"))
    builder.apply_message(
        Message(
            role="assistant",
            content=[ToolUseBlock(id="w", name="Write", input={"file_path": "/x.py", "content": "print(1)"})],
            timestamp="2026-01-01T00:00:05Z",
        )
    )
    builder.apply_message(Message(role="user", content=[ToolResultBlock(tool_use_id="w", content="ok")]))
    assert builder.state.read_files["/x.py"].content == "print(1)"
    assert builder.state.read_files["/x.py"].timestamp == at(5)


def test_parse_timestamp_reads_iso_and_rejects_anything_else() -> None:
    assert parse_timestamp("2026-01-01T00:00:05.000Z") == at(5)
    assert parse_timestamp("yesterday") is None
    assert parse_timestamp(None) is None


_line = st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)), max_size=30).filter(
    lambda s: "<system-reminder>" not in s
)


@given(lines=st.lists(_line, min_size=1, max_size=12), start=st.integers(1, 5000), tab=st.booleans())
def test_strip_line_numbers_gives_back_the_numbered_content(lines: list[str], start: int, tab: bool) -> None:
    content = "\n".join(lines)
    assert strip_line_numbers(numbered(content, start, "\t" if tab else "\u2192")) == content


# -- the real transcripts --------------------------------------------------------------------


def test_every_file_a_real_session_read_successfully_is_in_its_state(shared_transcript: Path) -> None:
    transcript = read_transcript(shared_transcript)
    failed = {r.tool_use_id for m in transcript.messages for r in m.tool_results() if r.is_error}
    read_paths = {c.input["file_path"] for c in transcript.tool_uses() if c.name == "Read" and c.id not in failed}
    assert read_paths <= set(transcript.state.read_files)
    for entry in transcript.state.read_files.values():
        assert entry.timestamp > 0
