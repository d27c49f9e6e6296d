"""Fact survival: the share of a head's paths, commands and typed user messages a summary keeps."""

from __future__ import annotations

from ccr import handle_for, marker
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.engine.survival import fact_survival, head_facts, missing_facts


def user(text: str, **kw: object) -> Message:
    return Message(role="user", content=text, **kw)  # type: ignore[arg-type]


def call(tool_id: str, name: str, **inputs: object) -> Message:
    return Message(role="assistant", content=[ToolUseBlock(id=tool_id, name=name, input=dict(inputs))])


def result(tool_id: str, text: str) -> Message:
    return Message(role="user", content=[ToolResultBlock(tool_use_id=tool_id, content=text)])


CWD = "/home/u/repo"


def head() -> list[Message]:
    return [
        user("Fix the build"),
        call("t1", "Read", file_path="/home/u/repo/src/app.py"),
        result("t1", "code"),
        call("t2", "Edit", file_path="/etc/hosts", old_string="a", new_string="b"),
        result("t2", "ok"),
        call("t3", "Bash", command="make test\n# and more"),
        result("t3", "ok"),
        call("t4", "Bash", command="make test"),
        result("t4", "ok"),
        call("t5", "Bash", command="git status"),
        result("t5", "clean"),
        user("<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>"),
        user("<system-reminder>restored file</system-reminder>", is_meta=True),
        user("<command-name>/review</command-name>\n<command-args>the parser</command-args>"),
        user("Fix the build"),
    ]


def test_facts_are_distinct_typed_and_in_order_of_first_appearance() -> None:
    facts = head_facts(head())
    assert facts["paths"] == ["/home/u/repo/src/app.py", "/etc/hosts"]
    assert facts["commands"] == ["make test", "git status"]
    assert facts["user_messages"] == ["Fix the build", "/review the parser"]


def test_a_summary_with_every_fact_verbatim_keeps_all_and_relative_paths_count() -> None:
    text = "Fix the build\n/review the parser\n- src/app.py: read\n- /etc/hosts: edited\n`make test` x2\n`git status`"
    survival = fact_survival(head(), text, cwd=CWD)
    assert (survival.paths, survival.commands, survival.user_messages) == (1.0, 1.0, 1.0)
    assert survival.counts.paths.verbatim == survival.counts.paths.total == 2


def test_a_relative_path_does_not_count_without_the_cwd_it_is_relative_to() -> None:
    survival = fact_survival(head(), "src/app.py and /etc/hosts", cwd=None)
    assert survival.paths == 0.5


def test_a_fact_inside_a_longer_word_or_path_is_not_kept() -> None:
    text = "/home/u/repo/src/app.pyc /etc/hostsfile `make tests` `git statuses`"
    survival = fact_survival(head(), text, cwd=CWD)
    assert survival.paths == 0.0 and survival.commands == 0.0


def test_a_fact_counts_by_handle_only_when_the_cited_stored_span_holds_it() -> None:
    listing = "Files touched:\n- /etc/hosts: edited\nCommands run:\n- `git status` -> ok\n"
    other = "unrelated text /home/u/repo/src/app.py"
    stored = {handle_for(listing.encode()): listing.encode(), handle_for(other.encode()): other.encode()}
    text = f"Fix the build /review the parser; the rest is in {marker(handle_for(listing.encode()))}"
    survival = fact_survival(head(), text, cwd=CWD, stored=stored)
    assert survival.counts.paths.kept == 1 and survival.counts.paths.verbatim == 0
    assert survival.counts.commands.kept == 1
    assert missing_facts(head(), text, cwd=CWD, stored=stored) == {
        "paths": ["/home/u/repo/src/app.py"],
        "commands": ["make test"],
        "user_messages": [],
    }


def test_a_cited_handle_that_was_not_stored_with_the_summary_counts_for_nothing() -> None:
    listing = "- /etc/hosts: edited"
    text = f"see {marker(handle_for(listing.encode()))}"
    assert fact_survival(head(), text, cwd=CWD, stored={}).paths == 0.0


def test_whitespace_differences_do_not_lose_a_user_message() -> None:
    messages = [user("Please   fix\n\nthe  parser")]
    assert fact_survival(messages, "- Please fix the parser").user_messages == 1.0


def test_a_head_without_facts_of_a_kind_has_no_share_for_it() -> None:
    survival = fact_survival([Message(role="assistant", content=[TextBlock(text="hello")])], "summary")
    assert (survival.paths, survival.commands, survival.user_messages) == (None, None, None)
    assert survival.counts.commands.total == 0
