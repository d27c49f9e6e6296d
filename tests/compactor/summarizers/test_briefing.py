"""The briefing's judgements: the current request, whether the work is done, what is open."""

from __future__ import annotations

from compactor.core.ledger import SessionLedger
from compactor.core.messages import Message
from compactor.summarizers.briefing_text import excerpt, headline, listing_share
from compactor.summarizers.extractive import ExtractiveSummarizer
from compactor.summarizers.ledger import merge_messages
from compactor.summarizers.work_state import is_follow_up, work_state
from tests.compactor.summarizers.builders import call, edited, ran, result, say, user


def state_of(messages: list[Message]):  # type: ignore[no-untyped-def]
    return work_state(merge_messages(SessionLedger(), messages))


def test_a_bare_follow_up_is_not_the_request() -> None:
    state = state_of([user("Port the importer to the new API"), say("Started."), user("continue"), say("ok")])
    assert state.request is not None and state.request.text == "Port the importer to the new API"
    assert state.follow_up is not None and state.follow_up.text == "continue"
    assert is_follow_up("check again") and is_follow_up("Go on.") and not is_follow_up("go on with the parser")


def test_an_error_before_the_latest_request_is_not_open_and_one_after_it_is() -> None:
    messages = [
        user("build it"),
        call("b1", "Bash", command="go build ./..."),
        result("b1", "main.go:3: undefined: Handler", is_error=True),
        user("now the tests"),
        call("b2", "Bash", command="go test ./..."),
        result("b2", "FAIL\tpkg/api 0.01s\n--- FAIL: TestCreate", is_error=True),
    ]
    state = state_of(messages)
    assert [e.key for e in state.open_errors] == ["go test ./..."]
    assert state.finished is None and state.check == "go test ./..."


def test_work_is_done_when_committed_after_its_last_change_or_checked_clean_after_it() -> None:
    base = [user("fix it"), call("e1", "Edit", file_path="/r/a.py", old_string="a", new_string="b"), result("e1", "ok")]
    committed = state_of([*base, call("g1", "Bash", command="git commit -am fix"), result("g1", "[main 1] fix")])
    assert committed.finished is not None and "committed" in committed.finished
    checked = state_of([*base, call("t1", "Bash", command="pytest -q"), result("t1", "3 passed")])
    assert checked.finished == "`pytest -q` ran clean after the last change"
    edited_after = state_of(
        [
            *base,
            call("t1", "Bash", command="pytest -q"),
            result("t1", "3 passed"),
            call("e2", "Edit", file_path="/r/a.py", old_string="b", new_string="c"),
            result("e2", "ok"),
        ]
    )
    assert edited_after.finished is None, "a change after the last clean check is not yet checked"


def test_open_items_or_an_unanswered_request_keep_the_work_open() -> None:
    todo = call("t0", "TodoWrite", todos=[{"content": "Write docs", "status": "pending", "activeForm": "Writing"}])
    state = state_of(
        [user("ship it"), todo, result("t0", "ok"), call("g", "Bash", command="git push"), result("g", "ok")]
    )
    assert state.finished is None and [i.text for i in state.open_items] == ["Write docs"]
    unanswered = state_of([user("a"), say("Done: all tests pass."), user("and the README?")])
    assert unanswered.unanswered and unanswered.finished is None


def test_the_listing_share_counts_bookkeeping_lines_not_prose() -> None:
    log = "- app/api.py: read lines 1-50, edited x3\n- `pytest -q` -> ok\n"
    prose = "The endpoint returned 500 because the status was never set, so the handler now sets it first.\n"
    assert listing_share(log) == 1.0
    assert listing_share(prose) == 0.0
    assert 0 < listing_share(log + prose) < 1


def test_a_list_left_showing_the_checking_in_progress_is_done_once_the_check_ran_clean() -> None:
    todo = call(
        "t0",
        "TodoWrite",
        todos=[
            {"content": "Fix the resolver", "status": "completed", "activeForm": "Fixing"},
            {"content": "Run fmt, lint, and tests", "status": "in_progress", "activeForm": "Running"},
        ],
    )
    messages = [
        user("fix the resolver"),
        call("e1", "Edit", file_path="/r/a.go", old_string="a", new_string="b"),
        result("e1", "ok"),
        todo,
        result("t0", "ok"),
        call("c1", "Bash", command="mise run test:integration 2>&1"),
        result("c1", "ok  \tentire/cli 67.7s"),
    ]
    state = state_of(messages)
    assert [i.text for i in state.stale_items] == ["Run fmt, lint, and tests"]
    assert (
        state.in_progress == [] and state.finished == "`mise run test:integration 2>&1` ran clean after the last change"
    )


def test_words_before_a_call_are_no_intent_but_words_after_the_last_call_are() -> None:
    acted = state_of(
        [user("fix it"), say("Let me fix the parser."), call("e", "Edit", file_path="/r/p.py"), result("e", "ok")]
    )
    assert acted.intent is None, "it did what it said"
    waiting = state_of(
        [user("fix it"), call("r", "Read", file_path="/r/p.py"), result("r", "x"), say("I'll fix the parser next.")]
    )
    assert waiting.intent == "I'll fix the parser next."


def sections_of(messages: list[Message]) -> dict[str, str]:
    return ExtractiveSummarizer().summarize(messages, cwd="/r").sections


def test_one_failing_test_seen_through_several_commands_is_one_error() -> None:
    why = "The test fails because it checks the prompts, but the scoped transcript in the test data is empty."
    fix = "The test gives no `Transcript` field, so the scoped prompts are empty; I will add one to the test."
    messages = [
        user("Scope the prompts to the checkpoint"),
        *edited(1, "/r/explain.go"),
        call("b1", "Bash", command="go test ./... 2>&1 | tail -50"),
        result(
            "b1", "--- FAIL: TestVerbose (0.00s)\nexplain_test.go:10: verbose output should show prompts", is_error=True
        ),
        say(why),
        call("b2", "Bash", command="go test ./... -run TestVerbose -v"),
        result("b2", "explain_test.go:10: verbose output should show prompts\nExit code 1", is_error=True),
        say(fix),
        *edited(2, "/r/explain_test.go"),
        *ran(3, "go test ./... -run TestVerbose -v", "ok"),
        *ran(4, "go test ./...", "ok"),
    ]
    errors = sections_of(messages)["Errors and fixes"]
    assert errors.count("\n- ") + errors.startswith("- ") == 1, errors
    assert "go test ./... -run TestVerbose -v" in errors and "Resolved:" in errors


def test_a_test_written_before_its_code_is_no_error_once_the_code_exists() -> None:
    messages = [
        user("Add SliceFromLine, test first"),
        call("w1", "Write", file_path="/r/parse_test.go", content="func TestSlice(t *testing.T) { SliceFromLine() }"),
        result("w1", "ok"),
        call("b1", "Bash", command="go test ./transcript/..."),
        result("b1", "parse_test.go:3:2: undefined: SliceFromLine\nFAIL [build failed]", is_error=True),
        say("Now I will write the function so that the test compiles and passes."),
        call(
            "e1",
            "Edit",
            file_path="/r/parse.go",
            old_string="package t\n",
            new_string="package t\n\nfunc SliceFromLine() {}\n",
        ),
        result("e1", "ok"),
        *ran(2, "go test ./transcript/...", "ok"),
    ]
    assert sections_of(messages)["Errors and fixes"] == "No error is open."


def test_a_name_the_work_turns_on_is_explained_in_the_assistants_words_not_listed_bare() -> None:
    messages = [
        user("Where does the checkpoint store its transcript?"),
        call("r1", "Read", file_path="/r/committed.go"),
        result("r1", "func writeTranscript() {}"),
        say("`writeTranscript` stores the whole cumulative transcript in `full.jsonl` on every checkpoint."),
        say("So `writeTranscript` is where the slicing would go, and `full.jsonl` keeps everything."),
        call("r2", "Read", file_path="/r/explain.go"),
        result("r2", "func explain() { writeTranscript() }"),
        say("`writeTranscript` is called from `explain` too, with the full bytes."),
    ]
    concepts = sections_of(messages)["Key technical concepts"]
    assert concepts.startswith("- `writeTranscript`: ")
    assert "The names the work turns on" not in concepts


def test_work_done_shows_the_assistants_closing_answer_as_it_wrote_it() -> None:
    answer = (
        "All tests pass.\n\n## Changes\n- `parse.go`: added `SliceFromLine` to skip the first N lines\n"
        "- `explain.go`: the prompts come from the scoped transcript now"
    )
    messages = [user("Scope the prompts"), *edited(1, "/r/parse.go"), *ran(2, "go test ./...", "ok"), say(answer)]
    work = sections_of(messages)["Current work"]
    assert "Its last answer, in its own words:\n  All tests pass.\n  ## Changes\n  - `parse.go`: added" in work


def test_a_plan_step_whose_file_was_edited_since_says_so() -> None:
    messages = [
        user("merge the parent branch"),
        *ran(1, "git merge parent", "CONFLICT (content): Merge conflict in state.go"),
        say(
            "Let me resolve each one:\n1. `state.go`: keep HEAD's `Phase` field.\n2. `auto_commit.go`: keep HEAD's `StepCount`."
        ),
        *edited(2, "/r/state.go"),
    ]
    step = sections_of(messages)["Next step"]
    assert "1. `state.go`: keep HEAD's `Phase` field. (its file was edited since)" in step
    assert "2. `auto_commit.go`: keep HEAD's `StepCount`.\n" in step + "\n"


def test_a_standing_instruction_is_not_repeated_beside_the_request_it_came_in() -> None:
    request = "we need to add a unit test that checks the version we save. Which test would you implement?"
    request_section = sections_of([user(request), say("I would test the writer.")])["Primary request and intent"]
    assert request_section.count("we need to add a unit test") == 1


def test_what_it_looked_at_listed_after_let_me_look_is_no_plan() -> None:
    messages = [
        user("why are the shadow branches still there?"),
        say(
            "Let me look at the ephemeral branches again:\n1. Session 0eb2: entire/82b4027\n2. Session 3415: entire/288a28a"
        ),
        call("b1", "Bash", command="git branch --list 'entire/*'"),
        result("b1", "entire/82b4027"),
    ]
    step = sections_of(messages)["Next step"]
    assert "Its plan" not in step  # its words before the cut are still quoted, as words


def test_a_task_in_progress_is_named_once_with_its_state() -> None:
    messages = [
        user("Fix the checkpoint reuse"),
        call(
            "t1",
            "TodoWrite",
            todos=[{"content": "Implement the fix", "status": "in_progress", "activeForm": "Implementing"}],
        ),
        result("t1", "Todos have been modified successfully."),
    ]
    sections = sections_of(messages)
    assert "In progress: Implement the fix." in sections["Current work"]
    assert sections["Next step"].startswith("Finish: Implement the fix.")


def test_the_closing_answers_sentences_are_not_repeated_in_problem_solving() -> None:
    finding = "The checkpoint is reused because `LastCheckpointID` survives the user's own commit."
    messages = [
        user("why is the checkpoint reused?"),
        call("r1", "Read", file_path="/r/hooks.go"),
        result("r1", "func PostCommit() {}"),
        say(f"{finding}\n\nSo a commit made while Claude works gets the old checkpoint and its stale transcript."),
    ]
    sections = sections_of(messages)
    assert finding in sections["Current work"]
    assert finding not in sections["Problem solving"]


def test_a_heading_is_not_a_cause_it_found() -> None:
    messages = [
        user("why do the session files stay?"),
        call("r1", "Read", file_path="/r/cleanup.go"),
        result("r1", "func cleanup() {}"),
        say(
            "Root Cause: Why session state files and shadow branches aren't cleaned up\n\n"
            "The files stay because `git reset` never runs the hook that removes them."
        ),
        user("ok, and the branches?"),
    ]
    errors = sections_of(messages)["Errors and fixes"]
    assert "Root Cause: Why" not in errors
    assert "The files stay because `git reset` never runs the hook" in errors


def test_words_quoted_where_the_work_stopped_are_not_repeated_with_the_file() -> None:
    why = "In `view.go` the lanes are wrong because **start and end are swapped** for the newest-first order:"
    messages = [
        user("can you explain this line rendering?"),
        call("r1", "Read", file_path="/r/view.go"),
        result("r1", "func lanes() {}"),
        say(why),
        call("e1", "Edit", file_path="/r/view.go", old_string="Start", new_string="End"),
        result("e1", "ok"),
    ]
    sections = sections_of(messages)
    assert "start and end are swapped" in sections["Next step"]
    assert "start and end are swapped" not in sections["Files and code sections"]
    assert "start and end are swapped" not in sections["Problem solving"]


def test_an_answer_is_shown_without_the_line_that_only_announces_it() -> None:
    answer = "Now I can give you the complete answer.\n**The `AtStart` fields are stored but never read.**"
    assert excerpt(answer, 1_000) == "**The `AtStart` fields are stored but never read.**"
    assert excerpt("Now I can give you the complete answer.", 1_000) == "Now I can give you the complete answer."


def test_a_merge_conflict_in_a_file_edited_since_is_not_listed_as_open() -> None:
    conflicts = "\n".join(f"CONFLICT (content): Merge conflict in {f}" for f in ("state.go", "auto_commit.go"))
    messages = [
        user("merge with the parent branch"),
        call("m1", "Bash", command="git merge parent"),
        result("m1", f"{conflicts}\nAutomatic merge failed; fix conflicts and then commit the result.", is_error=True),
        *edited(1, "/r/state.go"),
    ]
    errors = sections_of(messages)["Errors and fixes"]
    assert "Merge conflict in auto_commit.go" in errors
    assert "Merge conflict in state.go" not in errors
    assert "Edited since, their conflicts resolved it seems: `state.go`." in errors
    assert "- resolve the merge conflicts left in `auto_commit.go` (1 of 2)" in sections_of(messages)["Pending tasks"]
    everything = [*messages, *edited(2, "/r/auto_commit.go")]
    sections = sections_of(everything)
    assert (
        "Its conflicts (`state.go`, `auto_commit.go`) were edited since; not committed yet."
        in sections["Errors and fixes"]
    )
    assert (
        "Then finish `git merge parent`: its conflicts (`state.go`, `auto_commit.go`) were edited"
        in sections["Next step"]
    )


def test_resolved_errors_are_the_latest_five() -> None:
    messages: list[Message] = [user("make the suite pass")]
    for n in range(7):
        messages += [
            call(f"b{n}", "Bash", command=f"pytest tests/test_{n}.py"),
            result(f"b{n}", f"FAILED tests/test_{n}.py::test_x - AssertionError", is_error=True),
            say(f"The test_{n} check fails because the fixture number {n} is missing its default value."),
            *edited(10 + n, f"/r/fixture_{n}.py"),
            *ran(20 + n, f"pytest tests/test_{n}.py", "1 passed"),
        ]
    errors = sections_of(messages)["Errors and fixes"]
    assert [f"test_{n}.py" in errors for n in range(7)] == [False, False, True, True, True, True, True]


def test_an_error_edited_away_before_the_user_moved_on_is_shown_fixed() -> None:
    messages = [
        user("lint it"),
        call("l1", "Bash", command="make lint"),
        result("l1", "view.go:922:4: missing cases in switch of type LanePosition (exhaustive)", is_error=True),
        say("The lint fails because the switch has no case for `LanePositionNone`, so I will add it."),
        *edited(2, "/r/view.go"),
        user("now show the lanes newest first"),
    ]
    errors = sections_of(messages)["Errors and fixes"]
    assert "missing cases in switch" in errors and "no case for `LanePositionNone`" in errors
    assert "Resolved, it seems: it edited `view.go` after it, and the user moved on." in errors
    left = [*messages[:4], user("never mind, show the lanes newest first")]
    assert "missing cases" not in sections_of(left)["Errors and fixes"], "not edited: the user only moved on"


def test_an_older_files_small_last_edit_is_shown_with_it_unless_committed_since() -> None:
    edit = [
        user("Add the CLI version to the session state"),
        call("e1", "Edit", file_path="/r/state.go", old_string="ID string", new_string="ID string\nCLIVersion string"),
        result("e1", "ok"),
    ]
    later = [
        user("now a test for it"),
        call("w1", "Write", file_path="/r/state_test.go", content="func TestVersion(t *testing.T) {}"),
        result("w1", "ok"),
    ]
    files = sections_of([*edit, *later])["Files and code sections"]
    assert "- `state.go` (changed" in files and "Its last edit: `+CLIVersion string`" in files
    # Committed since: work of another piece (maybe on another branch), not read as the current one's.
    files = sections_of([*edit, *ran(1, "git commit -am version"), *later])["Files and code sections"]
    assert "- `state.go` (changed" in files and "CLIVersion" not in files


def test_a_fragment_under_a_label_is_not_a_concept() -> None:
    messages = [
        user("how does auto-commit store metadata?"),
        call("r1", "Read", file_path="/r/auto_commit.go"),
        result("r1", "func SaveChanges() {}"),
        say("Result: `SaveChanges` creates duplicate metadata commits on the sessions branch for every hook."),
        user("ok"),
    ]
    assert "Result:" not in sections_of(messages)["Key technical concepts"]


def test_problem_solving_tells_the_work_turn_by_turn_with_the_files_each_turn_changed() -> None:
    messages = [
        user("why is the shadow branch not created?"),
        call("r1", "Read", file_path="/r/types.go"),
        result("r1", "var FileModificationTools = []string{}"),
        say("The `replace` tool is missing from `FileModificationTools`, so no change is ever seen. Added it."),
        *edited(1, "/r/types.go"),
        say("Fixed: the list now has `replace`, and the checkpoint is created for every edit it makes."),
        user("why did one prompt make three commits?"),
        *edited(2, "/r/temporary.go"),
        say("Both `AfterAgent` and `SessionEnd` write a checkpoint; now a tree equal to the last one is skipped."),
        user("how does this work with auto-commit?"),
        say("Auto-commit does not use `WriteTemporary` at all: code goes to the active branch, metadata apart."),
        user("ok"),
    ]
    solving = sections_of(messages)["Problem solving"].splitlines()
    assert solving[0].startswith("The work so far, turn by turn")
    assert (
        solving[1].startswith('- To "why is the shadow branch not created?": ')
        and "It changed `types.go`." in solving[1]
    )
    assert solving[2].startswith('- To "why did one prompt make three commits?": ') and "`temporary.go`" in solving[2]
    assert solving[3] == 'Its latest answer, to "how does this work with auto-commit?":'
    earlier_edit = [user("add replace"), *edited(9, "/r/types.go"), say("Done."), *messages[7:]]
    assert "types.go" not in sections_of(earlier_edit)["Problem solving"], "edited in a turn not shown"


def test_names_no_sentence_explains_are_named_on_one_line() -> None:
    messages = [
        user("rename the field"),
        *edited(1, "/r/state.go"),
        say("I went through the whole package and renamed every `LastInteractionAt` to `LastInteractionTime`."),
        say("I also checked the old tests, and they no longer use `LastInteractionAt` or `LastInteractionTime`."),
    ]
    concepts = sections_of(messages)["Key technical concepts"]
    assert concepts.startswith("Other names the work turns on: ") and "`LastInteractionTime`" in concepts


def test_an_earlier_answer_in_brief_is_what_it_stressed_not_a_label_or_a_lead_in() -> None:
    answer = (
        "Good question! Let me trace through what would have happened:\n\n"
        "**Before commit `803390c`**, the session states would have been:\n\n"
        '1. **2 old sessions** (from before reset): `BaseCommit = "288a28a"`\n'
        '2. **2 new sessions**: `BaseCommit = "82b4027"`\n\n'
        "## Why Option 1 Works\n\n"
        "The check asks whether the session's `BaseCommit` is an ancestor of the current HEAD.\n\n"
        "**So yes, Option 1 would have prevented this issue!** The old sessions would not have been included.\n\n"
        "Should I implement Option 1?"
    )
    brief = headline(answer, 360)
    assert brief.startswith("So yes, Option 1 would have prevented this issue!"), brief
    assert "would have been:" not in brief and "2 old sessions" not in brief, "a lead-in and its list item"
    assert "Why Option 1 Works" not in brief and "Should I" not in brief, "a heading; an offer"
    assert "The check asks whether" in brief, "then the first whole sentence, in its order"
    assert headline("Fixed it: the loop now **stops at the first match**, as the caller expects.", 360) == (
        "Fixed it: the loop now stops at the first match, as the caller expects."
    ), "a sentence with a bold phrase in it is no stressed sentence, and it is kept when it is all there is"
    steps = "1. **You did `git reset` to `82b4027`**\n\nThe reset left the old session files in place, so the hook found them."
    assert headline(steps, 360).startswith("The reset left"), "a step's bold title is no sentence it stressed"
    result = (
        "The test `TestVersion` passes for both strategies, verifying that `cli_version` is set in:\n- the state file"
    )
    assert headline(result, 360).startswith("The test `TestVersion` passes"), "a long lead-in says something itself"
    done = "Done.\n\n**Draft PR created:** https://example.com/pull/121\n\nThe PR includes:\n- Plus earlier commits on this branch"
    assert headline(done, 360).startswith("Done. Draft PR created: https://example.com/pull/121"), "no whole sentence"


def test_in_plan_mode_the_next_step_is_the_plan_for_approval_not_a_change() -> None:
    messages = [
        user("we need unit tests for the CLI version. Which test would you implement?"),
        call("p0", "EnterPlanMode"),
        result("p0", "Entered plan mode."),
        *edited(1, "/r/notes.go"),
        say("The version is set in `writeCheckpointSummary`, so a test of `WriteCommitted` reads it back."),
        call("t1", "Task", description="Explore checkpoint unit tests", prompt="find the test patterns"),
    ]
    sections = sections_of(messages)
    step = sections["Next step"]
    assert step.startswith("In plan mode: "), step
    assert "ExitPlanMode" in step and "Check the work with" not in step
    assert sections["Current work"].startswith("In plan mode")
    approved = [*messages, call("x1", "ExitPlanMode", plan="1. test WriteCommitted"), result("x1", "User approved.")]
    assert "plan mode" not in sections_of(approved)["Next step"], "the plan was approved: plan mode is over"
    refused = [
        *messages,
        call("x1", "ExitPlanMode", plan="1. test"),
        result("x1", "The user doesn't want to proceed", is_error=True),
    ]
    assert sections_of(refused)["Next step"].startswith("In plan mode: "), "a refused plan stays in plan mode"


def test_why_a_file_was_changed_is_its_reason_without_reactions_or_the_words_leading_into_a_step() -> None:
    why = (
        "I can see the pattern. In every case, HEAD has the correct version because the parent branch still "
        "has the older field names in `state.go`. Let me resolve all conflicts to keep the HEAD version."
    )
    messages = [
        user("resolve the conflicts"),
        say(why),
        *edited(1, "/r/state.go"),
        say("All three conflicts are resolved now, and the package builds again."),
    ]
    files = sections_of(messages)["Files and code sections"]
    line = next(line for line in files.splitlines() if "`state.go`" in line)
    assert line.endswith(
        "why: In every case, HEAD has the correct version because the parent branch still has "
        "the older field names in `state.go`. Resolve all conflicts to keep the HEAD version."
    ), line
    assert "I can see the pattern" not in files


def test_an_investigation_leads_with_the_files_it_read_and_a_git_hook_is_not_the_work() -> None:
    hook = [
        user("log the index before and after each hook"),
        call("w1", "Write", file_path="/r/.git/hooks/post-commit", content="#!/bin/sh\necho index >> /tmp/log\n"),
        result("w1", "ok"),
        say("Added the logging to the post-commit hook, which writes the index hash before and after."),
    ]
    reads = [call(f"r{n}", "Read", file_path=f"/r/cmd/{name}.go") for n, name in enumerate(("hooks", "temporary"))]
    messages = [
        *hook,
        user("why does the post-commit hook rewrite the index?"),
        *[m for r in reads for m in (r, result(r.tool_uses()[0].id, "package cmd"))],
        say("`worktree.Status()` rewrites the index because go-git writes its stat cache back on every status."),
    ]
    files = sections_of(messages)["Files and code sections"].splitlines()
    assert files[0] == "Files it read last (newest first): `cmd/temporary.go`, `cmd/hooks.go`.", files
    assert not any("echo index" in line for line in files), "a .git hook's edit is tooling, not the work"


def test_a_failed_checks_explanation_is_its_cause_though_it_names_no_word_of_the_output() -> None:
    explanation = (
        "My code now tries to look up the agent by type, and when the agent type is empty, "
        '`GetByAgentType("")` fails. I need to fall back to the default agent.'
    )
    messages = [
        user("restore the logs with the agent's own path"),
        call("b1", "Bash", command="mise run test"),
        result("b1", "Error: context deadline exceeded\n--- FAIL: TestResumeFromCurrentBranch (0.06s)", is_error=True),
        say(explanation),
        *edited(1, "/r/rewind.go"),
        *ran(2, "mise run test", "ok"),
    ]
    errors = sections_of(messages)["Errors and fixes"]
    assert "Cause: My code now tries to look up the agent by type" in errors, errors
    probe = [
        user("look at the config"),
        call("r1", "Bash", command="cat conf.yml"),
        result("r1", "No such file", is_error=True),
    ]
    said = [*probe, say("The agent type is empty because the test never sets it, so the lookup fails.")]
    assert "Cause:" not in sections_of(said)["Errors and fixes"], "not a check: its next words may be about anything"


def test_a_name_the_work_changed_is_named_with_its_file() -> None:
    messages = [
        user("skip the metadata commit when no code was committed"),
        call(
            "e1",
            "Edit",
            file_path="/r/strategy/auto_commit.go",
            old_string="func commitCodeToActive() string {",
            new_string="func commitCodeToActive() commitResult {",
        ),
        result("e1", "ok"),
        say("The tests pass again with the new result type of `commitCodeToActive` and with `SaveChanges`."),
        say("The whole package builds, and nothing else calls `commitCodeToActive` or `SaveChanges` now."),
    ]
    concepts = sections_of(messages)["Key technical concepts"]
    assert "`commitCodeToActive` (in `auto_commit.go`)" in concepts, concepts
    assert "`SaveChanges`," in concepts or "`SaveChanges`." in concepts, "a name of no changed file stands bare"


def test_an_error_the_user_pasted_is_an_error_of_the_session() -> None:
    messages = [
        user("our git status has broken, why?"),
        say("The worktree's index points at a tree object that gc pruned."),
        user("> git gc\nfatal: bad tree object 082c2c4495629bd5\nfatal: failed to run repack\n\nHALP"),
        say("Run `git read-tree HEAD` in the worktree first, then gc again."),
    ]
    errors = sections_of(messages)["Errors and fixes"]
    assert "Errors the user met, from their messages:\n- `fatal: bad tree object 082c2c4495629bd5`" in errors, errors
    assert "our git status" not in errors, "a question is no error"
    plan = "Implement the plan:\n```python\ntry:\n    run()\nexcept Exception:\n    raise\n```"
    assert "Errors the user met" not in sections_of([user(plan), say("Done.")])["Errors and fixes"], "pasted code"


def test_what_was_committed_is_told_by_its_commit_messages() -> None:
    heredoc = (
        "git add -A && git commit -m \"$(cat <<'EOF'\nfeat(explain): add --generate for AI summaries\n\nBody.\nEOF\n)\""
    )
    messages = [
        user("add the summaries and commit"),
        *edited(1, "/r/explain.go"),
        *ran(2, heredoc, "[main 1a2b3c4] feat(explain): add --generate for AI summaries"),
        user("now scope the prompts to the checkpoint"),
        *edited(3, "/r/explain.go"),
        *ran(4, 'git commit -am "fix(explain): scope the prompts to the checkpoint"', "[main 5d6e7f8] fix"),
        say("Committed: the prompts are scoped to the checkpoint now, and the summary too."),
    ]
    solving = sections_of(messages)["Problem solving"]
    assert solving.startswith(
        'Committed so far, oldest first:\n- "feat(explain): add --generate for AI summaries"\n'
        '- "fix(explain): scope the prompts to the checkpoint"'
    ), solving


def test_a_check_run_twice_with_other_spacing_is_named_once() -> None:
    messages = [
        user("make the tests pass"),
        *ran(1, "go test  ./...", "ok"),
        *ran(2, "go test ./... 2>&1 | tail -5", "ok"),
    ]
    concepts = sections_of(messages)["Key technical concepts"]
    assert concepts.count("`go test ./...`") == 1, concepts
