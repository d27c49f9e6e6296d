"""One reading of what a file tool call did, shared by the session state and the replay."""

from __future__ import annotations

from compactor.claude_code.transcript import FileEdit, FileRead, FileWrite, Replacement, file_effect
from compactor.core.messages import ToolResultBlock, ToolUseBlock


def call(name: str, **inputs: object) -> ToolUseBlock:
    return ToolUseBlock(id="t", name=name, input=dict(inputs))


def result(text: str = "") -> ToolResultBlock:
    return ToolResultBlock(tool_use_id="t", content=text)


def test_a_whole_read_from_structured_output_has_no_range() -> None:
    structured = {
        "type": "text",
        "file": {"filePath": "/r/a.py", "content": "a\nb\n", "numLines": 3, "startLine": 1, "totalLines": 3},
    }
    effect = file_effect(call("Read", file_path="/r/a.py"), result("ignored"), structured)
    assert effect == FileRead(path="/r/a.py", content="a\nb\n", total_lines=3)


def test_a_partial_read_keeps_its_range_and_the_text_loses_its_line_numbers() -> None:
    effect = file_effect(call("Read", file_path="/r/a.py", offset=10, limit=2), result("    10→x\n    11→y"))
    assert effect == FileRead(path="/r/a.py", content="x\ny", offset=10, limit=2)


def test_the_file_unchanged_stub_is_a_read_without_content() -> None:
    effect = file_effect(
        call("Read", file_path="/r/a.py"),
        result("File unchanged since last read."),
        {"type": "file_unchanged", "file": {"filePath": "/r/a.py"}},
    )
    assert effect == FileRead(path="/r/a.py", content=None)


def test_images_and_other_tools_have_no_file_effect() -> None:
    assert file_effect(call("Read", file_path="/r/p.png"), result(), {"type": "image"}) is None
    assert file_effect(call("Bash", command="ls"), result("a")) is None
    assert file_effect(call("Write", content="x"), result()) is None


def test_writes_and_edits_carry_their_content_and_replacements() -> None:
    assert file_effect(call("Write", file_path="/r/b", content="new"), result()) == FileWrite(
        path="/r/b", content="new"
    )
    edit = file_effect(
        call("Edit", file_path="/r/b", old_string="a", new_string="b"), result(), {"originalFile": "a a"}
    )
    assert edit == FileEdit(path="/r/b", replacements=[Replacement(old="a", new="b")], original="a a")
    multi = file_effect(
        call("MultiEdit", file_path="/r/b", edits=[{"old_string": "x", "new_string": "y", "replace_all": True}]),
        result(),
    )
    assert multi == FileEdit(path="/r/b", replacements=[Replacement(old="x", new="y", replace_all=True)])


def test_a_malformed_multi_edit_has_no_replacements_and_a_non_list_no_effect() -> None:
    bad = file_effect(call("MultiEdit", file_path="/r/b", edits=["not an edit"]), result())
    assert bad == FileEdit(path="/r/b", replacements=None)
    assert file_effect(call("MultiEdit", file_path="/r/b", edits="nope"), result()) is None
