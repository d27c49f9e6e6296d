"""Memory files, plan files and tail reads are recognized however the path is written."""

from __future__ import annotations

import pytest

from attachments import is_memory_file, is_plan_file, normalize_path, read_paths
from compactor.core.messages import Message, TextBlock, ToolUseBlock


@pytest.mark.parametrize(
    "path",
    [
        "/repo/CLAUDE.md",
        "/repo/CLAUDE.local.md",
        "/repo/.claude/CLAUDE.md",
        "/home/u/.claude/CLAUDE.md",
        "/repo/.claude/rules/testing.md",
        "/home/u/.claude/rules/nested/style.md",
        "/repo/packages/api/CLAUDE.md",
        "/etc/claude-code/CLAUDE.md",
        "C:\\repo\\CLAUDE.md",
        "CLAUDE.md",
    ],
)
def test_memory_files_are_recognized(path: str) -> None:
    assert is_memory_file(path)


@pytest.mark.parametrize(
    "path",
    [
        "/repo/README.md",
        "/repo/claude.md.bak",
        "/repo/docs/CLAUDE.md.txt",
        "/repo/rules/x.md",
        "/repo/.claude/settings.json",
    ],
)
def test_other_files_are_not_memory_files(path: str) -> None:
    assert not is_memory_file(path)


def test_plan_files_are_the_session_plan_or_under_claude_plans() -> None:
    assert is_plan_file("/r/notes/plan.md", "/r/notes/plan.md")
    assert is_plan_file("notes/../notes/plan.md", "/r/notes/plan.md", cwd="/r")
    assert is_plan_file("/home/u/.claude/plans/brave-fox.md")
    assert not is_plan_file("/r/notes/other.md", "/r/notes/plan.md")
    assert not is_plan_file("/r/.claude/plans")


def test_paths_are_normalized_against_the_working_folder() -> None:
    assert normalize_path("src/../src/a.py", "/repo") == "/repo/src/a.py"
    assert normalize_path("/abs//a.py", "/repo") == "/abs/a.py"
    assert normalize_path("C:\\r\\a.py", "/repo") == "C:/r/a.py"


def test_read_paths_collects_only_read_tool_calls() -> None:
    messages = [
        Message(role="user", content="please read"),
        Message(
            role="assistant",
            content=[
                TextBlock(text="ok"),
                ToolUseBlock(id="1", name="Read", input={"file_path": "a.py"}),
                ToolUseBlock(id="2", name="Edit", input={"file_path": "/repo/b.py"}),
                ToolUseBlock(id="3", name="Read", input={"file_path": "/repo/c.py", "offset": 5}),
            ],
        ),
    ]
    assert read_paths(messages, "/repo") == {"/repo/a.py", "/repo/c.py"}


def test_a_partial_read_does_not_show_the_whole_file() -> None:
    messages = [
        Message(role="assistant", content=[ToolUseBlock(id="a", name="Read", input={"file_path": "/repo/a.py"})]),
        Message(
            role="assistant",
            content=[ToolUseBlock(id="b", name="Read", input={"file_path": "/repo/b.go", "offset": 530, "limit": 20})],
        ),
    ]
    assert read_paths(messages, "/repo") == {"/repo/a.py", "/repo/b.go"}
    assert read_paths(messages, "/repo", whole=True) == {"/repo/a.py"}
