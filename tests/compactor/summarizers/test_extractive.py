"""The extractive summarizer keeps what matters verbatim and cites handles."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ccr import find_handles
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.summarizers._errors import _ERROR_LINE, _REPORTED_ERROR
from compactor.summarizers._errors import error_lines as _error_lines
from compactor.summarizers.base import SECTION_TITLES
from compactor.summarizers.extractive import _NUMBER, ExtractiveSummarizer


def user(text: str, **kw: object) -> Message:
    return Message(role="user", content=text, **kw)  # type: ignore[arg-type]


def call(tool_id: str, name: str, **inputs: object) -> Message:
    return Message(role="assistant", content=[ToolUseBlock(id=tool_id, name=name, input=dict(inputs))])


def result(tool_id: str, text: str, *, is_error: bool = False) -> Message:
    return Message(role="user", content=[ToolResultBlock(tool_use_id=tool_id, content=text, is_error=is_error)])


def say(text: str) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)])


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


def test_file_paths_are_named_with_what_was_done_to_them() -> None:
    section = ExtractiveSummarizer().summarize(conversation()).sections["Files and code sections"]
    assert "/repo/app/api.py: read, edited" in section
    assert "/repo/app/models.py: read lines 10-29" in section


def test_commands_errors_and_cited_numbers_are_kept() -> None:
    summary = ExtractiveSummarizer().summarize(conversation())
    solving = summary.sections["Problem solving"]
    assert "`pytest -q tests/test_api.py` -> failed" in solving
    assert "401 tests ran in total" in solving
    errors = summary.sections["Errors and fixes"]
    assert "AssertionError: 500 != 201" in errors
    assert find_handles(errors), "the error line cites the stored tool result"


def test_the_newest_sentences_citing_a_result_number_are_kept_oldest_first() -> None:
    messages = [user("count them")]
    for i in range(10):
        messages += [call(f"t{i}", "Bash", command=f"wc -l part{i}"), result(f"t{i}", f"{100 + i} part{i}")]
        messages.append(say(f"Part {i} has {100 + i} lines. Nothing else to say."))
    messages.append(say(f"Part 2 has {102} lines."))  # said again: it counts as the newest
    solving = ExtractiveSummarizer(max_numbers=3).summarize(messages).sections["Problem solving"]
    cited = [line for line in solving.splitlines() if " lines." in line]
    assert [line.split("Part ")[1][0] for line in cited] == ["8", "9", "2"]


def test_todo_list_and_next_step_come_from_the_latest_state() -> None:
    summary = ExtractiveSummarizer().summarize(conversation())
    pending = summary.sections["Pending tasks"]
    assert "[in_progress] Add a regression test" in pending
    assert "[pending] Update the changelog" in pending
    assert "Fix create endpoint" not in pending
    assert "Please refactor the inventory service" in summary.sections["Primary request and intent"]
    assert "Finish the item in progress: Add a regression test" in summary.sections["Next step"]
    assert "I will now add the regression test." in summary.sections["Current work"]


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


def test_a_number_is_cited_only_when_a_result_shows_it_on_its_own() -> None:
    messages = [
        user("How many items?"),
        call("t1", "Bash", command="wc -l items.csv"),
        result("t1", "14236 items.csv\nversion 3.42.1\n"),
        say("There are 14236 items."),
        say("Roughly 42 of them are new."),
        say("Also 236 were removed."),
    ]
    solving = ExtractiveSummarizer().summarize(messages).sections["Problem solving"]
    assert "There are 14236 items." in solving
    assert "42 of them" not in solving and "236 were removed" not in solving


def test_a_command_outcome_is_its_last_output_line_not_the_dedup_tag() -> None:
    messages = [
        user("run it"),
        call("t1", "Bash", command="pytest -q"),
        result("t1", "." * 300 + "\n12 passed in 0.5s\n[result-id: r4]"),
    ]
    solving = ExtractiveSummarizer().summarize(messages).sections["Problem solving"]
    assert "`pytest -q` -> ok: 12 passed in 0.5s" in solving


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
    assert second.sections["Primary request and intent"].startswith("- Original goal: Fix the failing test")
    assert "system-reminder" not in messages
    own = {s.handle for s in summarizer.spans(head)}
    assert set(find_handles(messages)) <= own | set(find_handles(first.text))
    assert set(second.handles) <= own


def many_commands(n: int) -> list[Message]:
    messages = [user("Build everything")]
    for i in range(n):
        messages += [call(f"c{i}", "Bash", command=f"make target_{i} --jobs 4"), result(f"c{i}", f"built target_{i}")]
    return messages


def test_every_distinct_command_is_shown_while_the_token_budget_allows() -> None:
    summary = ExtractiveSummarizer().summarize(many_commands(60))
    solving = summary.sections["Problem solving"]
    assert all(f"`make target_{i} --jobs 4` -> ok: built target_{i}" in solving for i in range(60))
    assert "earlier commands" not in solving


def test_past_the_budget_the_oldest_commands_spill_to_a_cited_listing_that_holds_them_all() -> None:
    summarizer = ExtractiveSummarizer(facts_tokens=150)
    messages = many_commands(60)
    summary = summarizer.summarize(messages)
    solving = summary.sections["Problem solving"]
    assert "`make target_59 --jobs 4`" in solving and "`make target_0 --jobs 4`" not in solving
    note = next(line for line in solving.splitlines() if "earlier commands of 60" in line)
    shown = sum(1 for i in range(60) if f"`make target_{i} --jobs 4`" in solving)
    assert note.startswith(f"- ({60 - shown} earlier commands of 60 are in the full listing <<ccr:")
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


def test_a_repeated_command_is_one_line_with_its_count_and_outcomes() -> None:
    messages = [user("test it")]
    for i in range(12):
        messages += [
            call(f"t{i}", "Bash", command="pytest -q"),
            result(f"t{i}", "1 failed" if i < 3 else "9 passed", is_error=i < 3),
        ]
    solving = ExtractiveSummarizer().summarize(messages).sections["Problem solving"]
    assert "- `pytest -q` x12 -> ok 9, failed 3: 9 passed" in solving
    assert solving.count("pytest -q") == 1


def test_a_very_long_first_line_is_cut_here_and_whole_in_the_listing() -> None:
    long_command = "python -c " + repr("print(1); " * 60)
    messages = [user("run"), call("t1", "Bash", command=long_command), result("t1", "1")]
    summarizer = ExtractiveSummarizer()
    summary = summarizer.summarize(messages)
    assert long_command not in summary.text
    assert "1 long first lines are cut here" in summary.sections["Problem solving"]
    listing = next(s for s in summarizer.spans(messages) if s.kind == "facts")
    assert long_command in listing.data.decode()
    assert listing.handle in find_handles(summary.sections["Problem solving"])


def test_paths_under_the_working_directory_are_shown_relative_and_the_summary_says_so() -> None:
    summary = ExtractiveSummarizer().summarize(conversation(), cwd="/repo")
    files = summary.sections["Files and code sections"]
    assert "- app/api.py: read, edited" in files and "/repo/app/api.py" not in files
    assert "relative to the working directory /repo" in summary.text


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


def test_a_summary_over_its_character_cap_lists_fewer_commands_but_every_user_message() -> None:
    messages = [*many_commands(60), user("and then deploy it")]
    roomy = ExtractiveSummarizer().summarize(messages)
    capped = ExtractiveSummarizer(max_chars=len(roomy.text) - 1_000).summarize(messages)
    assert len(capped.text) <= len(roomy.text) - 1_000
    solving = capped.sections["Problem solving"]
    assert "earlier commands of 60 are in the full listing <<ccr:" in solving
    assert "`make target_59 --jobs 4`" in solving
    assert "- Build everything" in capped.sections["All user messages"]
    assert "- and then deploy it" in capped.sections["All user messages"]
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


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789.,_ -aZ\n\u0663", max_size=60))
def test_numbers_are_found_as_the_plain_definition_finds_them(text: str) -> None:
    assert _NUMBER.findall(text) == _PLAIN_NUMBER.findall(text)
