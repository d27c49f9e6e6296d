"""Where the agent worked in a file: its edits found in the current content, its partial reads."""

from __future__ import annotations

from attachments import LineRange, WorkSite, locate, work_sites
from compactor.core.messages import Message, ToolUseBlock


def use(tool_id: str, name: str, **inputs: object) -> Message:
    return Message(role="assistant", content=[ToolUseBlock(id=tool_id, name=name, input=dict(inputs))])


CONTENT = "".join(f"line {n}\n" for n in range(1, 101))


def test_edits_and_partial_reads_are_listed_newest_first_and_whole_reads_name_no_place() -> None:
    history = [
        use("a", "Read", file_path="/r/m.py"),
        use("b", "Read", file_path="/r/m.py", offset=40, limit=10),
        use("c", "Edit", file_path="/r/m.py", old_string="line 7\n", new_string="line 7 fixed\n"),
        use("d", "MultiEdit", file_path="m.py", edits=[{"old_string": "x", "new_string": "line 90 too"}]),
        use("e", "Write", file_path="/r/m.py", content="whole"),
    ]
    sites = work_sites(history, cwd="/r")
    assert sites == {
        "/r/m.py": [
            WorkSite(kind="edit", text="line 90 too"),
            WorkSite(kind="edit", text="line 7 fixed\n"),
            WorkSite(kind="read", offset=40, limit=10),
        ]
    }


def test_an_edit_is_placed_where_its_new_text_stands_now_and_an_undone_one_nowhere() -> None:
    sites = [
        WorkSite(kind="read", offset=40, limit=10),
        WorkSite(kind="edit", text="line 12\nline 13\n"),
        WorkSite(kind="edit", text="text a later edit replaced"),
    ]
    assert locate(sites, CONTENT) == [
        LineRange(start=12, end=13, kind="edit"),
        LineRange(start=40, end=49, kind="read"),
    ]


def test_a_partial_reads_range_is_taken_in_the_contents_own_lines() -> None:
    sites = [WorkSite(kind="read", offset=130, limit=500)]
    assert locate(sites, CONTENT, first_line=101) == [LineRange(start=30, end=100, kind="read")]
    assert locate([WorkSite(kind="read", offset=1, limit=5)], CONTENT, first_line=101) == []
