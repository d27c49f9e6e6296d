"""The extractive summarizer keeps what matters verbatim and cites handles."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ccr import find_handles
from compactor.core.ledger import SessionLedger
from compactor.core.messages import Message
from compactor.summarizers._errors import _ERROR_LINE, _REPORTED_ERROR
from compactor.summarizers._errors import error_lines as _error_lines
from compactor.summarizers.base import SECTION_TITLES
from compactor.summarizers.extractive import ExtractiveSummarizer
from compactor.summarizers.facts import edit_lines
from compactor.summarizers.ledger import merge_messages
from tests.compactor.summarizers.builders import call, result, say, user

LONG_REQUEST = "Please refactor the inventory service. " + "Keep the API stable. " * 80
BIG_LOG = (
    "\n".join(f"test_{i} PASSED" for i in range(400))
    + "\nFAILED tests/test_api.py::test_create - AssertionError: 500 != 201\n"
)


def conversation() -> list[Message]:
    return [
        user("Fix the failing test in tests/test_api.py"),
        call("t1", "Read", file_path="/repo/app/api.py"),
        result("t1", "     1→def create():\n     2→    return 500\n"),
        call("t2", "Bash", command="pytest -q tests/test_api.py"),
        result("t2", BIG_LOG, is_error=True),
        say("The test fails with 500 != 201; 401 tests ran in total."),
        call("t3", "Edit", file_path="/repo/app/api.py", old_string="500", new_string="201"),
        result("t3", "The file /repo/app/api.py has been updated."),
        call("t4", "Read", file_path="/repo/app/models.py", offset=10, limit=20),
        result("t4", "    10→class Item: ..."),
        call(
            "t5",
            "TodoWrite",
            todos=[
                {"content": "Fix create endpoint", "status": "completed", "activeForm": "Fixing"},
                {"content": "Add a regression test", "status": "in_progress", "activeForm": "Adding"},
                {"content": "Update the changelog", "status": "pending", "activeForm": "Updating"},
            ],
        ),
        result("t5", "Todos have been modified successfully."),
        user(LONG_REQUEST),
        say("I will now add the regression test."),
    ]


def test_summary_has_the_nine_sections_in_order() -> None:
    summary = ExtractiveSummarizer().summarize(conversation())
    positions = [summary.text.index(f"{i}. {title}:") for i, title in enumerate(SECTION_TITLES, 1)]
    assert positions == sorted(positions)
    assert list(summary.sections) == list(SECTION_TITLES)


def test_every_user_message_is_kept_verbatim_or_cut_with_a_resolvable_handle() -> None:
    summarizer = ExtractiveSummarizer()
    messages = conversation()
    summary = summarizer.summarize(messages)
    assert "Fix the failing test in tests/test_api.py" in summary.text
    assert LONG_REQUEST not in summary.text
    assert LONG_REQUEST[:200] in summary.text
    by_handle = {s.handle: s.data for s in summarizer.spans(messages)}
    cited = find_handles(summary.sections["All user messages"])
    assert any(by_handle[h] == LONG_REQUEST.encode() for h in cited)


def test_the_index_names_every_path_with_what_was_done_to_it_and_the_briefing_does_not() -> None:
    summary = ExtractiveSummarizer().summarize(conversation())
    assert "/repo/app/api.py: read, edited" in summary.index
    assert "/repo/app/models.py: read lines 10-29" in summary.index
    files = summary.sections["Files and code sections"]
    assert "read lines" not in files and "read, edited" not in files
    assert "`/repo/app/api.py` (changed)" in files


def test_a_changed_file_says_why_in_the_assistants_words_and_shows_a_small_edit() -> None:
    messages = [
        user("Fix the 500 in create"),
        say("The endpoint returns 500 because it never sets the status. I'll return 201 instead."),
        call("t3", "Edit", file_path="/repo/app/api.py", old_string="    return 500", new_string="    return 201"),
        result("t3", "The file /repo/app/api.py has been updated."),
    ]
    sections = ExtractiveSummarizer().summarize(messages).sections
    files = sections["Files and code sections"]
    # The edit the work stopped after, and the words before it, are shown once, where the next step
    # says what is left.
    assert "-    return 500" in sections["Next step"] and "+    return 201" in sections["Next step"]
    assert "The endpoint returns 500 because it never sets the status." in sections["Next step"]
    assert "return 500" not in files and "never sets the status" not in files
    done = [*messages, say("Fixed: create returns 201 now.")]
    files = ExtractiveSummarizer().summarize(done).sections["Files and code sections"]
    assert "`/repo/app/api.py` (changed): why: The endpoint returns 500 because it never sets the status." in files
    assert "-    return 500" in files and "+    return 201" in files


def test_an_edit_shows_only_the_lines_it_changed() -> None:
    old = "def f():\n    # Note: a comment\n    return 1\n"
    edit = call("t1", "Edit", file_path="/r/a.py", old_string=old, new_string="def f():\n    return 1\n")
    assert edit_lines(edit.blocks()[0]) == "-    # Note: a comment"  # type: ignore[arg-type]


def test_errors_keep_their_line_the_assistants_explanation_and_what_resolved_them() -> None:
    messages = [
        *conversation()[:5],
        say("The test fails with 500 != 201 because create returns the wrong status."),
        call("t9", "Bash", command="pytest -q tests/test_api.py"),
        result("t9", "1 passed"),
    ]
    summary = ExtractiveSummarizer().summarize(messages)
    errors = summary.sections["Errors and fixes"]
    assert "AssertionError: 500 != 201" in errors
    assert "because create returns the wrong status" in errors
    assert "Resolved: `pytest -q tests/test_api.py` ran ok again." in errors
    assert "`pytest -q tests/test_api.py` x2 -> ok 1, failed 1: 1 passed" in summary.index


def test_causes_and_decisions_the_assistant_stated_are_the_problem_solving() -> None:
    messages = [
        user("Why is the cache empty?"),
        say("Let me look at the loader."),
        say(
            "The cache is empty because `load()` runs before the config is read. I need to move it after `read_config()`."
        ),
        say("Good."),
    ]
    solving = ExtractiveSummarizer().summarize(messages).sections["Problem solving"]
    assert "The cache is empty because `load()` runs before the config is read." in solving
    assert "I need to move it after `read_config()`." in solving
    assert "Let me look at the loader" not in solving and "Good." not in solving


def test_todo_list_and_next_step_come_from_the_latest_state() -> None:
    summary = ExtractiveSummarizer().summarize(conversation())
    pending = summary.sections["Pending tasks"]
    assert "(in progress) Add a regression test" in pending
    assert "(pending) Update the changelog" in pending
    assert "Fix create endpoint" not in pending
    assert "Please refactor the inventory service" in summary.sections["Primary request and intent"]
    assert "Finish: Add a regression test" in summary.sections["Next step"]
    assert "I will now add the regression test." in summary.sections["Current work"]


def test_the_check_is_the_sessions_test_command_never_one_that_changes_state() -> None:
    messages = [
        user("Fix it and commit"),
        call("t1", "Bash", command="pytest -q tests/test_api.py"),
        result("t1", "1 failed", is_error=True),
        call("t2", "Edit", file_path="/repo/app/api.py", old_string="a", new_string="b"),
        result("t2", "ok"),
        call("t3", "Bash", command="git add -A && git commit -m 'fix'"),
        result("t3", "[main 1234abc] fix"),
        call("t4", "Bash", command="bd update proj-1 --status in_progress"),
        result("t4", "updated"),
    ]
    summary = ExtractiveSummarizer().summarize(messages)
    assert "Check the work with: `pytest -q tests/test_api.py`" in summary.sections["Next step"]
    assert summary.briefing is not None and summary.briefing.check == "pytest -q tests/test_api.py"


def test_finished_work_proposes_nothing_and_says_why() -> None:
    messages = [
        user("Fix the test and push"),
        call("t1", "Edit", file_path="/repo/app/api.py", old_string="a", new_string="b"),
        result("t1", "ok"),
        call("t2", "Bash", command="pytest -q"),
        result("t2", "3 passed"),
        call("t3", "Bash", command="git commit -am fix && git push"),
        result("t3", "To origin\n   1234abc..5678def  main -> main"),
        say("Done: the fix is committed and pushed."),
    ]
    summary = ExtractiveSummarizer().summarize(messages)
    step = summary.sections["Next step"]
    assert step.startswith("Nothing is open: the work was committed after its last change")
    assert "Check the work" not in step and "Resolve" not in step
    assert summary.briefing is not None and summary.briefing.next_step is False and summary.briefing.next_files == []


def test_tool_plumbing_is_neither_an_error_nor_a_next_step() -> None:
    messages = [
        user("Look at the config"),
        call("t1", "Read", file_path="/repo/.golangci.yml"),
        result("t1", "<tool_use_error>File does not exist.</tool_use_error>", is_error=True),
        call("t2", "Bash", command="ls conf"),
        result("t2", "Exit code 2\nls: cannot access 'conf': No such file or directory", is_error=True),
        call("t3", "Read", file_path="/repo/.golangci.yaml"),
        result("t3", "linters: []"),
        say("The config is `.golangci.yaml`, not `.yml`: it enables no linters."),
    ]
    summary = ExtractiveSummarizer().summarize(messages)
    assert "does not exist" not in summary.text and "No such file" not in summary.text
    assert summary.sections["Errors and fixes"] == "No error is open."


def test_a_call_the_user_turned_down_is_no_instruction_but_the_reason_they_typed_is() -> None:
    rejected = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    with_reason = rejected + " To tell you how to proceed, the user said:\nuse the staging database, not prod"
    messages = [
        user("migrate it"),
        call("t1", "Bash", command="git push -u origin main"),
        result("t1", rejected, is_error=True),
        call("t2", "Bash", command="./migrate --db prod"),
        result("t2", with_reason, is_error=True),
    ]
    request = ExtractiveSummarizer().summarize(messages).sections["Primary request and intent"]
    assert "turned down" not in request and "git push" not in request
    assert '"use the staging database, not prod"' in request


def test_pinned_text_stands_word_for_word_in_every_summary() -> None:
    from compactor.core.ledger import SessionLedger
    from compactor.summarizers.ledger import merge_messages

    ledger = SessionLedger(pins=["Never push to main; open a PR."])
    messages = [user("do the thing"), say("ok")]
    merge_messages(ledger, messages)
    summary = ExtractiveSummarizer().summarize(messages, ledger=ledger)
    assert '- "Never push to main; open a PR."' in summary.sections["Primary request and intent"]


def test_every_cited_handle_is_a_span_the_pipeline_stores() -> None:
    summarizer = ExtractiveSummarizer()
    messages = conversation()
    summary = summarizer.summarize(messages)
    spans = {s.handle for s in summarizer.spans(messages)}
    assert set(summary.handles) <= spans
    assert set(find_handles(summary.text)) <= spans


def test_summary_is_deterministic_and_carries_custom_instructions() -> None:
    first = ExtractiveSummarizer().summarize(conversation(), "focus on the API tests")
    second = ExtractiveSummarizer().summarize(conversation(), "focus on the API tests")
    assert first == second
    assert "focus on the API tests" in first.text


def test_summary_is_much_smaller_than_a_large_head() -> None:
    messages = conversation() * 20
    summary = ExtractiveSummarizer().summarize(messages)
    head_chars = sum(len(m.canonical_json()) for m in messages)
    assert len(summary.text) * 10 < head_chars


def test_a_command_outcome_in_the_index_is_its_last_output_line_not_the_dedup_tag() -> None:
    messages = [
        user("run it"),
        call("t1", "Bash", command="pytest -q"),
        result("t1", "." * 300 + "\n12 passed in 0.5s\n[result-id: r4]"),
    ]
    index = ExtractiveSummarizer().summarize(messages).index
    assert "`pytest -q` -> ok: 12 passed in 0.5s" in index


def test_a_second_summary_carries_the_first_ones_user_messages_and_request() -> None:
    summarizer = ExtractiveSummarizer()
    first = summarizer.summarize(conversation())
    earlier = Message(role="user", content=first.text, is_compact_summary=True)
    reminder = Message(role="user", content="<system-reminder>restored file</system-reminder>", is_meta=True)
    head = [earlier, reminder, user("Now add pagination"), say("On it.")]
    second = summarizer.summarize(head)
    messages = second.sections["All user messages"]
    assert "Fix the failing test in tests/test_api.py" in messages
    assert "Now add pagination" in messages
    request = second.sections["Primary request and intent"]
    assert request == 'Current request: "Now add pagination"'
    # The first summary's request is read back as the session's goal.
    assert merge_messages(SessionLedger(), head).original_goal == "Fix the failing test in tests/test_api.py"
    assert "system-reminder" not in messages
    own = {s.handle for s in summarizer.spans(head)}
    assert set(find_handles(messages)) <= own | set(find_handles(first.text))
    assert set(second.handles) <= own


def many_commands(n: int) -> list[Message]:
    messages = [user("Build everything")]
    for i in range(n):
        messages += [call(f"c{i}", "Bash", command=f"make target_{i} --jobs 4"), result(f"c{i}", f"built target_{i}")]
    return messages


def test_every_distinct_command_is_in_the_index_while_the_token_budget_allows() -> None:
    summary = ExtractiveSummarizer().summarize(many_commands(60))
    assert all(f"`make target_{i} --jobs 4` -> ok: built target_{i}" in summary.index for i in range(60))
    assert "older facts" not in summary.index
    assert "make target_" not in summary.sections["Problem solving"]


def test_past_the_budget_the_oldest_commands_spill_to_a_cited_listing_that_holds_them_all() -> None:
    summarizer = ExtractiveSummarizer(facts_tokens=150)
    messages = many_commands(60)
    summary = summarizer.summarize(messages)
    index = summary.index
    assert "`make target_59 --jobs 4`" in index and "`make target_0 --jobs 4`" not in index
    shown = sum(1 for i in range(60) if f"`make target_{i} --jobs 4`" in index)
    note = next(line for line in index.splitlines() if "older facts are only in the stored listing" in line)
    assert note.startswith(f"({60 - shown} older facts")
    listing = {s.handle: s.data.decode() for s in summarizer.spans(messages) if s.kind == "facts"}
    (handle,) = find_handles(note)
    assert all(f"`make target_{i} --jobs 4`" in listing[handle] for i in range(60))
    assert handle in summary.handles


def test_without_the_listing_the_spans_are_the_same_but_for_it() -> None:
    summarizer = ExtractiveSummarizer(facts_tokens=150)
    messages = many_commands(60)
    whole = summarizer.spans(messages)
    assert [s.kind for s in whole].count("facts") == 1
    assert summarizer.spans(messages, listing=False) == [s for s in whole if s.kind != "facts"]


def test_a_repeated_command_is_one_line_of_the_index_with_its_count_and_outcomes() -> None:
    messages = [user("test it")]
    for i in range(12):
        messages += [
            call(f"t{i}", "Bash", command="pytest -q"),
            result(f"t{i}", "1 failed" if i < 3 else "9 passed", is_error=i < 3),
        ]
    index = ExtractiveSummarizer().summarize(messages).index
    assert "- `pytest -q` x12 -> ok 9, failed 3: 9 passed" in index
    assert index.count("pytest -q") == 1


def test_a_very_long_first_line_is_cut_in_the_index_and_whole_in_the_listing() -> None:
    long_command = "python -c " + repr("print(1); " * 60)
    messages = [user("run"), call("t1", "Bash", command=long_command), result("t1", "1")]
    summarizer = ExtractiveSummarizer()
    summary = summarizer.summarize(messages)
    assert long_command not in summary.text and long_command not in summary.index
    listing = next(s for s in summarizer.spans(messages) if s.kind == "facts")
    assert long_command in listing.data.decode()
    assert listing.handle in find_handles(summary.index)


def test_paths_under_the_working_directory_are_shown_relative_and_the_summary_says_so() -> None:
    summary = ExtractiveSummarizer().summarize(conversation(), cwd="/repo")
    files = summary.sections["Files and code sections"]
    assert "`app/api.py` (changed)" in files and "/repo/app/api.py" not in files
    assert "relative to the working directory /repo" in summary.text
    assert "- app/api.py: read, edited" in summary.index and "(relative to /repo)" in summary.index


def test_a_repeated_user_message_is_listed_once_with_its_count() -> None:
    messages = [user("continue"), say("ok"), user("continue"), say("ok"), user("continue")]
    section = ExtractiveSummarizer().summarize(messages).sections["All user messages"]
    assert section == "- continue (sent 3 times)"


def test_many_long_user_messages_are_cut_shorter_each_with_the_handle_of_the_whole() -> None:
    texts = [f"Request {i}: " + "please look at the parser again " * 30 for i in range(20)]
    messages = [m for t in texts for m in (user(t), say("done"))]
    summarizer = ExtractiveSummarizer()
    summary = summarizer.summarize(messages)
    section = summary.sections["All user messages"]
    assert len(section) < 8_000
    stored = {s.handle: s.data.decode() for s in summarizer.spans(messages)}
    for line, text in zip(section.splitlines(), texts, strict=True):
        (handle,) = find_handles(line)
        assert stored[handle] == text
        assert line[2:].startswith(text[:150])


def test_a_multi_line_user_message_is_carried_whole_into_the_next_summary() -> None:
    summarizer = ExtractiveSummarizer()
    text = "can a checkpoint exist with no prompt context?\n\nI'd imagine the log has _some_ additions"
    first = summarizer.summarize([user(text), say("Let me check.")])
    earlier = Message(role="user", content=first.text, is_compact_summary=True)
    second = summarizer.summarize([earlier, user("go on"), say("ok")])
    assert text in second.sections["All user messages"]


def test_a_summary_over_its_character_cap_cuts_older_user_messages_but_keeps_every_one() -> None:
    texts = [f"Request {i}: " + "please look at the parser again " * 20 for i in range(12)]
    messages = [m for t in texts for m in (user(t), say("done"))]
    roomy = ExtractiveSummarizer().summarize(messages)
    capped = ExtractiveSummarizer(max_chars=len(roomy.text) - 1_000).summarize(messages)
    assert len(capped.text) < len(roomy.text)
    section = capped.sections["All user messages"]
    assert all(f"- Request {i}: please look" in section for i in range(12))
    assert set(find_handles(capped.text)) <= set(capped.handles)


def test_an_error_word_in_a_successful_result_is_not_an_error_but_a_reported_failure_is() -> None:
    messages = [
        user("check"),
        call("t1", "Bash", command="git log --oneline -3"),
        result("t1", "67dc57b Fix endpoint error rendering\n29d0b84 fix: handle failure of the cache"),
        call("t2", "Bash", command="mix test"),
        result("t2", "Compiling 3 files\n5 tests, 2 failures"),
        call("t3", "Bash", command="make"),
        result("t3", "src/a.c:3: error: expected ';'"),
        call("t4", "Bash", command="cargo build"),
        result("t4", "Compiling app\nfailed to link app"),
    ]
    errors = ExtractiveSummarizer().summarize(messages).sections["Errors and fixes"]
    assert "67dc57b" not in errors and "29d0b84" not in errors
    assert "5 tests, 2 failures" in errors
    assert "src/a.c:3: error: expected ';'" in errors
    assert "failed to link app" in errors


_PIECES = st.sampled_from(
    [
        "error",
        "Error: ",
        "FAILED",
        "fail",
        "failures",
        "2 failures",
        "0 errors",
        "E   ",
        "** (",
        "traceback",
        "ValueError: x",
        "exception[E1]:",
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\r",
        "\x0b",
        "\x1c",
        "\u2028",
        "ok",
        "x1",
        "\u0130",
        "CANNOT",
        "Denied",
        "PANIC:",
        "3 errors",
        "12 failed",
        "1 error",
        "\u0663 errors",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_error_lines_are_found_as_a_search_of_each_line_finds_them(text: str) -> None:
    for failed, pattern in ((False, _REPORTED_ERROR), (True, _ERROR_LINE)):
        lines = [line for line in text.splitlines() if pattern.search(line)]
        assert _error_lines(text, failed) == (lines[0] if lines else None, len(lines))


_PLAIN_NUMBER = re.compile(r"(?<![\w.])\d[\d,_.]*\d(?![\w])|(?<![\w.])\d(?![\w.])")
