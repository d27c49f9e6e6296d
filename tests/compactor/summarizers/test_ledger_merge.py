"""Merging messages into the session ledger: facts, outcomes, errors and what resolved them, the user."""

from __future__ import annotations

from compactor.core.ledger import SessionLedger
from compactor.core.messages import Message
from compactor.summarizers.ledger import instruction_sentences, merge_messages, tail_view, useful_last_line
from compactor.summarizers.ledger_text import ledger_digest
from compactor.summarizers.ledger_words import decision_of, plan_of
from tests.compactor.summarizers.builders import call, edited, ran, result, say, user


def test_paths_and_commands_accumulate_across_merges_with_runs_and_last_outcome() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            user("Fix the parser"),
            call("r1", "Read", file_path="/repo/parser.py"),
            result("r1", "1\tdef parse(): ..."),
            call("b1", "Bash", command="pytest -q\necho done"),
            result("b1", "1 failed", is_error=True),
        ],
    )
    merge_messages(
        ledger,
        [
            call("e1", "Edit", file_path="/repo/parser.py", old_string="a", new_string="b"),
            result("e1", "ok"),
            call("b2", "Bash", command="pytest -q\necho done"),
            result("b2", "3 passed\n"),
            call("g1", "Grep", pattern="parse", path="/repo/src"),
            result("g1", "src/a.py"),
        ],
    )
    parser = ledger.paths["/repo/parser.py"]
    assert parser.actions == {"read": 1, "edited": 1} and parser.last_outcome == "ok"
    assert ledger.paths["/repo/src"].actions == {"searched": 1}
    command = ledger.commands["pytest -q"]
    assert (command.runs, command.ok, command.failed, command.more_lines) == (2, 1, 1, 1)
    assert command.last_output == "3 passed"
    assert ledger.seq == 11
    assert parser.seq < command.seq


def test_a_failed_command_is_resolved_by_its_next_successful_run_naming_the_files_edited_between() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            call("b1", "Bash", command="pytest -q tests/test_api.py"),
            result("b1", "FAILED tests/test_api.py::test_create - AssertionError: 500 != 201\n1 failed"),
            call("e1", "Edit", file_path="/repo/app/api.py", old_string="a", new_string="b"),
            result("e1", "ok"),
        ],
    )
    (error,) = ledger.errors
    assert error.resolved is None and error.edited_since == ["/repo/app/api.py"]
    assert "AssertionError: 500 != 201" in error.line
    merge_messages(ledger, [call("b2", "Bash", command="pytest -q tests/test_api.py"), result("b2", "1 passed")])
    assert error.resolved == "after editing api.py, `pytest -q tests/test_api.py` ran ok again"
    assert error.resolved_by == "rerun"


def test_a_failed_edit_is_resolved_by_a_later_successful_edit_of_the_same_file() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            call("e1", "Edit", file_path="/repo/a.py", old_string="x", new_string="y"),
            result("e1", "EACCES: permission denied, open '/repo/a.py'", is_error=True),
            call("e2", "Edit", file_path="/repo/b.py", old_string="x", new_string="y"),
            result("e2", "ok"),
        ],
    )
    assert ledger.errors[0].resolved is None
    merge_messages(
        ledger, [call("e3", "Edit", file_path="/repo/a.py", old_string="x", new_string="z"), result("e3", "ok")]
    )
    assert ledger.errors[0].resolved == "edited successfully afterwards"


def test_an_unrelated_success_resolves_nothing() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            call("b1", "Bash", command="cd /repo && make build"),
            result("b1", "make: *** error 2", is_error=True),
            call("b2", "Bash", command="cd /repo && git status"),
            result("b2", "clean"),
        ],
    )
    assert ledger.errors[0].resolved is None


def test_error_lines_in_what_a_reading_command_prints_are_content_not_failures() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            call("b1", "Bash", command="tail -n 50 /var/log/app.log"),
            result("b1", "12:00 ERROR app: unhandled error on GET /items"),
            call("b2", "Bash", command="git diff"),
            result("b2", "+    raise ValueError: bad"),
            call("b3", "Bash", command="./deploy.sh"),
            result("b3", "error: permission denied"),
        ],
    )
    assert [e.key for e in ledger.errors] == ["./deploy.sh"]


def test_the_users_messages_and_instructions_are_kept_verbatim_with_goal_and_current_request() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            user("Add pagination to the items endpoint. Don't touch the public schema."),
            say("On it."),
            user("Use pytest instead of unittest for the new tests."),
            user("Use pytest instead of unittest for the new tests."),
        ],
    )
    assert ledger.original_goal == "Add pagination to the items endpoint. Don't touch the public schema."
    assert ledger.current_request == "Use pytest instead of unittest for the new tests."
    assert ledger.instructions == [
        "Don't touch the public schema.",
        "Use pytest instead of unittest for the new tests.",
    ]
    assert [m.count for m in ledger.user_messages] == [1, 2]


def test_instructions_are_imperatives_not_statements_that_happen_to_say_never() -> None:
    assert instruction_sentences("Stock never comes back after expiry. Always run the linter first.") == [
        "Always run the linter first."
    ]
    assert instruction_sentences("please keep the old flag, and avoid new dependencies") == [
        "please keep the old flag, and avoid new dependencies"
    ]


def test_the_last_useful_line_skips_the_clients_notes_braces_and_result_tags() -> None:
    assert (
        useful_last_line("12 passed in 0.4s\n}\n\nShell cwd was reset to /repo\n[result-id: r3]") == "12 passed in 0.4s"
    )
    assert useful_last_line("  \n ] \n") == ""


def test_the_task_list_is_kept_as_of_its_latest_update_and_the_view_sees_the_tail() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            call(
                "t1",
                "TodoWrite",
                todos=[
                    {"content": "Add X", "status": "in_progress"},
                    {"content": "Document X", "status": "pending"},
                ],
            ),
            result("t1", "Todos have been modified successfully."),
        ],
    )
    assert [t.status for t in ledger.todos] == ["in_progress", "pending"]
    view = tail_view(
        ledger,
        [
            call(
                "t2",
                "TodoWrite",
                todos=[
                    {"content": "Add X", "status": "completed"},
                    {"content": "Document X", "status": "in_progress"},
                ],
            ),
            result("t2", "Todos have been modified successfully."),
        ],
    )
    assert [t.text for t in view.open_items()] == ["Document X"]
    assert [t.status for t in ledger.todos] == ["in_progress", "pending"], "the view is a copy"


def test_a_summary_the_ledger_wrote_is_skipped_and_one_it_did_not_lends_its_user_messages() -> None:
    foreign = Message(
        role="user",
        is_compact_summary=True,
        content=(
            "1. Primary request and intent:\nShip the release\n\n6. All user messages:\n- Ship the release\n"
            "- and tag it\n\n7. Pending tasks:\n- [pending] Tag v2\n"
        ),
    )
    fresh = merge_messages(SessionLedger(), [foreign, user("go on")])
    assert fresh.carried == ["Ship the release", "and tag it"]
    assert fresh.carried_pending == ["[pending] Tag v2"]
    assert fresh.original_goal == "Ship the release"
    ours = merge_messages(SessionLedger(), [user("Ship it")])
    merge_messages(ours, [foreign, user("go on")])
    assert ours.carried == [] and ours.original_goal == "Ship it"


def test_a_program_is_not_answered_by_another_subcommand_of_it_but_is_through_its_runner() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            call("b1", "Bash", command="uv run ruff check ."),
            result("b1", "Found 6 errors (3 fixed, 3 remaining)."),
            call("b2", "Bash", command="uv run ruff format ."),
            result("b2", "6 files reformatted"),
        ],
    )
    assert ledger.errors[0].resolved is None
    merge_messages(ledger, [call("b3", "Bash", command="ruff check src"), result("b3", "All checks passed!")])
    assert ledger.errors[0].resolved == "a later `ruff check src` ran ok"
    assert ledger.errors[0].resolved_by == "rerun"


def test_a_call_the_user_turned_down_is_neither_an_error_nor_alone_an_instruction() -> None:
    rejected = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    ledger = merge_messages(
        SessionLedger(),
        [
            call("w1", "Write", file_path="/repo/notes.md", content="x"),
            result("w1", rejected, is_error=True),
            call("w2", "Bash", command="git push -u origin main"),
            result(
                "w2",
                rejected + " To tell you how to proceed, the user said:\npush to a branch, never main",
                is_error=True,
            ),
        ],
    )
    assert ledger.errors == []
    assert ledger.instructions == [], "neither a refusal nor a one-off reason is a standing instruction"
    assert [m.text for m in ledger.user_messages] == ["push to a branch, never main"], "the reason is the user's"


def test_tool_plumbing_is_no_error() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            call("r1", "Read", file_path="/repo/.golangci.yml"),
            result("r1", "<tool_use_error>File does not exist.</tool_use_error>", is_error=True),
            call("r2", "Read", file_path="/repo/b.py"),
            result("r2", "<tool_use_error>Sibling tool call errored</tool_use_error>", is_error=True),
            call("e1", "Edit", file_path="/repo/a.py", old_string="x", new_string="y"),
            result("e1", "<tool_use_error>String to replace not found in file.</tool_use_error>", is_error=True),
            call("b1", "Bash", command="ls missing"),
            result("b1", "Exit code 2", is_error=True),
            call("b2", "Bash", command="gh pr diff 2"),
            result("b2", "+  // Error message should indicate 2 failures\n+  assert.Equal(t, 2, n)"),
        ],
    )
    assert ledger.errors == []


def test_an_error_is_resolved_when_the_user_moves_on_or_the_work_is_committed() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            call("b1", "Bash", command="make lint"),
            result("b1", "error: unused import os", is_error=True),
            user("never mind the linter, add the endpoint"),
            call("b2", "Bash", command="go build ./..."),
            result("b2", "cmd/main.go:3: undefined: Handler", is_error=True),
            call("b3", "Bash", command="git commit -am wip"),
            result("b3", "[main abc123] wip"),
        ],
    )
    assert [e.resolved for e in ledger.errors] == [
        "the user moved on to a new request",
        "the work was committed afterwards (`git commit -am wip`)",
    ]
    assert [e.resolved_by for e in ledger.errors] == ["moved_on", "commit"]


def test_only_a_failed_call_of_another_tool_is_an_error_and_its_next_success_resolves_it() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            call("p1", "ExitPlanMode", plan="try:\n    run()\nexcept Exception:\n    raise"),
            result("p1", "except Exception:"),
            call("k1", "Task", prompt="x"),
            result("k1", "Agent failed: the model refused the request", is_error=True),
            call("k2", "Task", prompt="review pricing.py", subagent_type="reviewer"),
            result("k2", "done"),
        ],
    )
    assert [(e.tool, e.resolved) for e in ledger.errors] == [("Task", "a later Task call went through")]


def test_a_task_runners_other_task_does_not_answer_a_failed_one() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            call("b1", "Bash", command="mise run test 2>&1"),
            result("b1", "FAIL TestResume", is_error=True),
            call("b2", "Bash", command="mise run fmt && mise run lint 2>&1"),
            result("b2", "ok"),
        ],
    )
    assert ledger.errors[0].resolved is None
    merge_messages(ledger, [call("b3", "Bash", command="mise run test"), result("b3", "ok")])
    assert ledger.errors[0].resolved == "a later `mise run test` ran ok"


def test_the_assistants_last_words_of_a_turn_are_kept_as_its_answer_to_that_request() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            user("Why does the checkpoint log stay empty?"),
            say("Let me look."),
            call("t1", "Read", file_path="/r/log.go"),
            result("t1", "package log"),
            say("The log is cleared on every prompt, so a resume finds it empty. Want me to keep it?"),
            user("yes, keep it"),
            say("Keeping it."),
            call("t2", "Edit", file_path="/r/log.go", old_string="a", new_string="b"),
            result("t2", "ok"),
            user("and the docs?"),
        ],
    )
    assert [(r.asked, r.text) for r in ledger.reports] == [
        (
            "Why does the checkpoint log stay empty?",
            "The log is cleared on every prompt, so a resume finds it empty. Want me to keep it?",
        )
    ], "a turn that ended on a tool call has no answer"


def test_a_rule_is_kept_whole_and_a_word_for_the_moment_is_no_standing_rule() -> None:
    assert instruction_sentences("you need to uv tool install . --reinstall after changes") == [
        "you need to uv tool install . --reinstall after changes"
    ]
    assert instruction_sentences("don't check this in") == []
    assert instruction_sentences("we should do a commit as well") == []
    assert instruction_sentences("prefer subagents to save on the main context") == [
        "prefer subagents to save on the main context"
    ]


def test_a_plan_is_steps_the_assistant_lays_out_not_a_list_of_what_it_did() -> None:
    assert plan_of("Let me add it. I'll need to:\n1. Add a flag\n2. Check timestamps\n\nStarting now.") == (
        "I'll need to:\n1. Add a flag\n2. Check timestamps"
    )
    assert plan_of("## Summary\n### Changes made:\n1. Added a flag\n2. Checked timestamps") == ""
    assert plan_of("Next I need to:\n- only one step") == ""


def test_a_plan_may_part_its_items_with_blank_lines_and_say_which_it_will_do() -> None:
    text = (
        "Good feedback. Let me analyze the threads:\n\n"
        "1. **Copilot #1** — `discardSession` lost idempotency.\n\n"
        "2. **Copilot #2** — Stale docstring on `DeleteShadowBranches`.\n\n"
        "3. **cursor[bot] #3** — Duplication. Low priority.\n\n"
        "Let me fix the actionable ones (1, 2).\n\nMore words."
    )
    assert plan_of(text) == (
        "Let me analyze the threads:\n"
        "1. **Copilot #1** — `discardSession` lost idempotency.\n"
        "2. **Copilot #2** — Stale docstring on `DeleteShadowBranches`.\n"
        "3. **cursor[bot] #3** — Duplication. Low priority.\n"
        "Let me fix the actionable ones (1, 2)."
    )


def test_a_plan_drops_the_narration_after_its_items() -> None:
    text = (
        "Here is what I found. Let me summarize the state:\n\n"
        "1. The parser drops `sessionId` on resume.\n\n"
        "2. The cache key ignores the cwd.\n\n"
        "Let me present this clearly to the user.\n"
    )
    assert plan_of(text) == (
        "Let me summarize the state:\n1. The parser drops `sessionId` on resume.\n2. The cache key ignores the cwd."
    )


def test_the_routine_is_how_the_latest_commit_was_wrapped_up_after_the_last_edit() -> None:
    messages = [
        user("tackle the beads"),
        *ran(1, "mix test 2>&1 | tail -5"),  # before the last edit: not part of wrapping up
        *edited(1, "/r/a.ex"),
        *ran(2, "mix compile --warnings-as-errors"),
        *ran(3, "mix test 2>&1 | tail -5"),
        *ran(4, "git status"),
        *ran(5, "bd close spotter-gqc.5"),
        *ran(6, 'git add -A && git commit -m "close the session"'),
        *ran(7, "git push"),
        *edited(2, "/r/a.ex"),
        *ran(8, "mix test"),
    ]
    ledger = merge_messages(SessionLedger(), messages)
    assert ledger.routine == [
        "mix compile --warnings-as-errors",
        "mix test",
        "bd close spotter-gqc.5",
        "git commit",
        "git push",
    ]
    assert ledger.wrap_up == ["mix test"], "what ran since the last edit starts again at it"


def test_the_calls_since_the_assistants_last_words_are_counted() -> None:
    messages = [
        user("fix it"),
        say("Two comments left: line 312 and line 342. Let me fix these."),
        call("e1", "Edit", file_path="/r/a.py", old_string="a", new_string="b"),
        result("e1", "ok"),
        call("r1", "Read", file_path="/r/a.py"),
        result("r1", "x"),
    ]
    ledger = merge_messages(SessionLedger(), messages)
    assert ledger.calls_since_words == 2
    assert merge_messages(ledger, [say("Done.")]).calls_since_words == 0


def test_a_plan_is_a_list_led_by_words_of_intent_not_any_list() -> None:
    listing = "I checked it. Let me look at explain.go. The `explain` command can:\n1. Show the transcript\n2. Generate a summary"
    assert plan_of(listing) == ""
    assert plan_of("I'll need to:\n1. Add a flag\n2. Check timestamps").startswith("I'll need to:\n1. Add a flag")


OFFERED = (
    "Two ways to scope it:\n\n| Option | What |\n|---|---|\n"
    "| **A. Manual-commit only (Recommended)** | Summaries at condensation. |\n"
    "| **B. Both strategies** | Auto-commit at each `SaveChanges()`. |\n\nWhich scope do you prefer?"
)


def test_a_reply_picking_an_offered_option_is_a_decision_with_the_question_and_the_reply() -> None:
    assert decision_of(OFFERED, "A. just manual commit for now") == (
        'To "Which scope do you prefer?" the user chose A. Manual-commit only (Recommended) — Summaries at '
        'condensation. Their reply: "A. just manual commit for now"'
    )
    assert decision_of(OFFERED, "I think B, it leaves us space").startswith(
        'To "Which scope do you prefer?" the user chose B.'
    )
    listed = "**1. Subagent-Driven** - a subagent per task\n**2. Parallel Session** - a new session\nWhich approach?"
    assert "chose 1. Subagent-Driven — a subagent per task." in decision_of(listed, "1")


def test_choosing_something_else_is_the_users_own_answer() -> None:
    offered = "Do you want to:\n- A) Tackle #10 now\n- B) Close out the PR\n- C) Something else?"
    assert decision_of(offered, "C) update this branch first, then #10") == (
        'offered A. Tackle #10 now; B. Close out the PR, the user answered: "C) update this branch first, then #10"'
    )


def test_replies_that_pick_no_offered_option_are_no_decision() -> None:
    assert decision_of(OFFERED, "hmm, what about C?") == ""
    assert decision_of(OFFERED, "Actually let's wait") == ""
    assert decision_of("Nothing offered here.", "A.") == ""
    questions = "1. Are these fields right?\n2. Should the lanes go left?\nTell me."
    assert decision_of(questions, "1. yes") == "", "numbered questions are not options"
    assert decision_of(OFFERED, "A. i like it, B. is wrong though") == "", "answers to several items are not one choice"
    assert decision_of(OFFERED, "A. " + "the user goes on about something else entirely " * 5) == ""


def test_the_ledger_keeps_the_users_decisions_in_order() -> None:
    messages = [user("plan the summaries"), say(OFFERED), user("A."), say("Done, scoped to manual-commit."), user("B")]
    ledger = merge_messages(SessionLedger(), messages)
    assert len(ledger.decisions) == 1 and 'Their reply: "A."' in ledger.decisions[0]


def test_a_models_input_carries_the_users_decisions_and_the_sessions_routine() -> None:
    messages = [
        user("plan the summaries"),
        say(OFFERED),
        user("A."),
        call("e1", "Edit", file_path="/r/a.go", old_string="a", new_string="b"),
        result("e1", "ok"),
        call("b1", "Bash", command="go test ./..."),
        result("b1", "ok"),
        call("b2", "Bash", command="git commit -am scope"),
        result("b2", "[main 1] scope"),
    ]
    ledger = merge_messages(SessionLedger(), messages)
    digest = ledger_digest(ledger, ledger, cwd="/r", count=len, budget_tokens=4_000)
    assert (
        'The user\'s choices among the options offered:\n- To "Which scope do you prefer?" the user chose A.' in digest
    )
    assert "How the session finished its last piece of work:\n- `go test ./...`\n- `git commit`" in digest


def test_an_approach_the_next_edit_did_not_follow_is_superseded() -> None:
    chose = "The LiveView runs in a separate process that can't reach the sandbox. I need to use `:auto` mode."
    messages = [
        user("fix the live tests"),
        say(chose),
        call("r1", "Read", file_path="/r/live_test.exs"),
        result("r1", "setup do"),
        call(
            "e1",
            "Edit",
            file_path="/r/live_test.exs",
            old_string="setup do",
            new_string="Sandbox.mode(Repo, {:shared, self()})",
        ),
        result("e1", "ok"),
    ]
    assert chose not in [s.text for s in merge_messages(SessionLedger(), messages).statements]
    followed = [
        *messages[:4],
        call("e1", "Edit", file_path="/r/live_test.exs", old_string="a", new_string="mode: :auto"),
        result("e1", "ok"),
    ]
    assert chose in [s.text for s in merge_messages(SessionLedger(), followed).statements]


def test_the_ledger_knows_plan_mode_from_its_calls_and_a_models_input_says_so() -> None:
    entered = [user("plan the tests"), call("p0", "EnterPlanMode"), result("p0", "Entered plan mode.")]
    ledger = merge_messages(SessionLedger(), entered)
    assert ledger.plan_mode
    digest = ledger_digest(ledger, ledger, cwd="/r", count=len, budget_tokens=4_000)
    assert "The session is in plan mode: the user wants a plan before any change is made." in digest
    refused = [
        call("x1", "ExitPlanMode", plan="1. test"),
        result("x1", "The user doesn't want to proceed", is_error=True),
    ]
    assert merge_messages(SessionLedger(), [*entered, *refused]).plan_mode, "a plan turned down: still planning"
    approved = [call("x1", "ExitPlanMode", plan="1. test"), result("x1", "User has approved your plan.")]
    left = merge_messages(SessionLedger(), [*entered, *approved])
    assert not left.plan_mode
    assert "plan mode" not in ledger_digest(left, left, cwd="/r", count=len, budget_tokens=4_000)


def test_a_plan_step_keeps_its_decision_to_the_end() -> None:
    step = (
        "**`manual_commit.go`** (lines 58-160): HEAD removed the conversion functions since SessionState is now "
        "an alias, while incoming still has them. We want HEAD's version."
    )
    plan = plan_of(f"Let me resolve each one:\n1. {step}\n2. **`auto_commit.go`**: HEAD uses `StepCount`.")
    assert plan.splitlines()[1].endswith("We want HEAD's version."), plan
