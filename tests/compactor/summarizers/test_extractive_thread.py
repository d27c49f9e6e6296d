"""Per session shape, "Pending tasks", "Current work" and "Next step" say what the session shows.

Each test writes a small session of one shape: a todo list, the task tools,
an issue tracker driven from the shell, a background task whose notification
arrives last, slash-command wrappers and their output after the real
request, a request the assistant has not answered yet.
"""

from __future__ import annotations

from compactor.core.messages import Message
from compactor.summarizers.base import Summary
from compactor.summarizers.extractive import ExtractiveSummarizer
from tests.compactor.summarizers.builders import call, edited, ran, result, say, user


def summarize(messages: list[Message]) -> Summary:
    return ExtractiveSummarizer().summarize(messages)


NOTIFICATION = (
    "<task-notification>\n<task-id>b0be39e</task-id>\n<output-file>/tmp/tasks/b0be39e.output</output-file>\n"
    '<status>completed</status>\n<summary>Background command "Run the slow suite" completed (exit code 0)'
    "</summary>\n</task-notification>\nRead the output file to retrieve the result: /tmp/tasks/b0be39e.output"
)


def test_todo_list_session_pends_open_items_and_continues_the_one_in_progress() -> None:
    messages = [
        user("Add pagination to the items endpoint"),
        call(
            "t1",
            "TodoWrite",
            todos=[
                {"content": "Write the failing test", "status": "completed", "activeForm": "Writing"},
                {"content": "Implement limit and offset", "status": "in_progress", "activeForm": "Implementing"},
                {"content": "Document the parameters", "status": "pending", "activeForm": "Documenting"},
            ],
        ),
        result("t1", "Todos have been modified successfully."),
        say("Now I'll implement limit and offset in the query."),
    ]
    sections = summarize(messages).sections
    pending = sections["Pending tasks"]
    assert "(in progress) Implement limit and offset" in pending
    assert "(pending) Document the parameters" in pending
    assert "Write the failing test" not in pending
    step = sections["Next step"]
    assert step.startswith("Finish: Implement limit and offset.")
    assert "Now I'll implement limit and offset" in sections["Current work"]
    assert "Now I'll implement" not in step, "the next step does not repeat the current work"
    assert "Add pagination to the items endpoint" in sections["Primary request and intent"]
    assert "Add pagination" not in step, "the request is not said a third time"


def test_task_tools_session_pends_created_tasks_until_they_are_completed() -> None:
    messages = [
        user("Ship the summarise option"),
        call("c1", "TaskCreate", subject="Add the config option", description="config.go", activeForm="Adding"),
        result("c1", "Task #1 created successfully: Add the config option"),
        call("c2", "TaskCreate", subject="Update the README", description="docs", activeForm="Updating"),
        result("c2", "Task #2 created successfully: Update the README"),
        call("u1", "TaskUpdate", taskId="1", status="in_progress"),
        result("u1", "Updated task #1 status"),
        call("u2", "TaskUpdate", taskId="1", status="completed"),
        result("u2", "Updated task #1 status"),
        call("u3", "TaskUpdate", taskId="2", status="in_progress"),
        result("u3", "Updated task #2 status"),
        say("Config done; updating the README next."),
    ]
    sections = summarize(messages).sections
    assert "task #2 (in progress): Update the README" in sections["Pending tasks"]
    assert "Add the config option" not in sections["Pending tasks"]
    assert "Update the README" in sections["Next step"]


def test_issue_tracker_session_pends_items_updated_but_not_closed() -> None:
    messages = [
        user("Implement spotter-gqc"),
        call("b1", "Bash", command="bd update spotter-gqc.4 --status in_progress 2>&1"),
        result("b1", "Updated issue: spotter-gqc.4"),
        call("b2", "Bash", command="bd close spotter-gqc.4 2>&1"),
        result("b2", "Closed spotter-gqc.4"),
        call("b3", "Bash", command="bd update spotter-gqc.5 --status=in_progress && mix test"),
        result("b3", "Updated issue: spotter-gqc.5\n5 tests, 0 failures"),
        say("The page works; next the close button."),
    ]
    sections = summarize(messages).sections
    assert "spotter-gqc.5 (in progress)" in sections["Pending tasks"]
    assert "spotter-gqc.4" not in sections["Pending tasks"]
    assert "spotter-gqc.5" in sections["Next step"]


def test_notification_last_is_never_the_request_and_pends_the_unread_output() -> None:
    messages = [
        user("Run the slow suite in the background and fix what fails"),
        call("b1", "Bash", command="mix test --slow", run_in_background=True),
        result(
            "b1",
            "Command running in background with ID: b0be39e. Output is being written to: /tmp/tasks/b0be39e.output",
        ),
        say("The suite is running in the background; I'll look at the results when it finishes."),
        user(NOTIFICATION),
    ]
    sections = summarize(messages).sections
    for title in ("Next step", "Current work", "Primary request and intent", "All user messages"):
        assert "task-notification" not in sections[title], title
    assert "Run the slow suite in the background and fix what fails" in sections["Current work"]
    assert "b0be39e has just completed; its output is not read yet" in sections["Pending tasks"]
    assert "Read the output of background task b0be39e (/tmp/tasks/b0be39e.output)" in sections["Next step"]


def test_background_output_that_was_read_is_not_pending() -> None:
    messages = [
        user("Run the slow suite in the background"),
        call("b1", "Bash", command="mix test --slow", run_in_background=True),
        result(
            "b1",
            "Command running in background with ID: b0be39e. Output is being written to: /tmp/tasks/b0be39e.output",
        ),
        user(NOTIFICATION),
        call("r1", "Bash", command="tail -20 /tmp/tasks/b0be39e.output"),
        result("r1", "68 tests, 0 failures"),
        call("b2", "Bash", command="mix credo", run_in_background=True),
        result("b2", "Command running in background with ID: c1. Output is being written to: /tmp/tasks/c1.output"),
        call("o1", "TaskOutput", task_id="c1", block=True),
        result("o1", "<retrieval_status>success</retrieval_status><task_id>c1</task_id><status>completed</status>"),
        say("Both are green."),
    ]
    sections = summarize(messages).sections
    assert sections["Pending tasks"] == "(no open tasks)"
    assert "background task" not in sections["Next step"]


def test_a_running_background_agent_is_pending_as_still_running() -> None:
    messages = [
        user("Have someone review pricing.py while you run the suite"),
        call(
            "a1",
            "Task",
            description="Review pricing.py",
            prompt="Check rounding",
            subagent_type="general",
            run_in_background=True,
        ),
        result("a1", "Async agent launched successfully.\nagentId: a881341 (use it to check on progress)"),
        say("The reviewer is on it."),
    ]
    sections = summarize(messages).sections
    assert "background task a881341 is still running: Review pricing.py" in sections["Pending tasks"]
    assert "a881341 when it finishes" in sections["Next step"]


def test_command_wrappers_and_their_output_are_not_user_intent() -> None:
    messages = [
        user("Fix the flaky checkpoint test"),
        say("I'll start with the checkpoint store."),
        user("<local-command-caveat>Caveat: generated by local commands.</local-command-caveat>", is_meta=True),
        user(
            "<command-name>/mcp</command-name>\n<command-message>mcp</command-message>\n<command-args></command-args>"
        ),
        user("<local-command-stdout>Reconnected to tidewave.</local-command-stdout>"),
        user("<bash-input>pwd</bash-input>"),
        user("<bash-stdout>/home/u/repo</bash-stdout><bash-stderr></bash-stderr>"),
        user("[Request interrupted by user]"),
    ]
    sections = summarize(messages).sections
    step = sections["Next step"]
    assert "Fix the flaky checkpoint test" in sections["Current work"]
    for noise in ("mcp", "Reconnected", "pwd", "local-command", "interrupted"):
        assert noise not in step, noise
    messages_section = sections["All user messages"]
    assert "- /mcp" in messages_section and "- !pwd" in messages_section
    assert "Reconnected" not in messages_section and "bash-stdout" not in messages_section
    assert "interrupted" not in messages_section


def test_a_slash_command_with_arguments_is_the_request() -> None:
    messages = [
        user(
            "<command-message>orchestrator is running…</command-message>\n<command-name>/orchestrator</command-name>"
            "\n<command-args>create TODO app by Next.js</command-args>"
        ),
        user("Split complex tasks into subtasks.", is_meta=True),
        say("Planning the subtasks."),
    ]
    sections = summarize(messages).sections
    assert sections["Primary request and intent"] == ('Current request: "/orchestrator create TODO app by Next.js"')
    assert "/orchestrator create TODO app by Next.js" in sections["Next step"]


def test_an_unanswered_last_request_comes_first_and_is_not_the_first_request() -> None:
    messages = [
        user("Explain how reservations expire"),
        say("Reservations expire after 15 minutes."),
        user("Now make the expiry configurable"),
    ]
    sections = summarize(messages).sections
    step = sections["Next step"]
    assert step.startswith('Answer the user\'s latest message: "Now make the expiry configurable"')
    assert "Explain how reservations expire" not in step
    assert sections["Primary request and intent"] == (
        "Earlier requests, oldest first:\n"
        '- "Explain how reservations expire"\n'
        'Current request: "Now make the expiry configurable"'
    )


def test_a_session_with_nothing_open_says_so() -> None:
    sections = summarize([user("hi"), say("Hello.")]).sections
    assert sections["Pending tasks"] == "(no open tasks)"
    assert 'Its last words: "Hello."' in sections["Current work"]
    assert sections["Next step"] == 'Carry on with the current request: "hi"'


def test_a_task_list_result_corrects_statuses_changed_where_the_session_could_not_see() -> None:
    messages = [
        user("Ship it"),
        call("c1", "TaskCreate", subject="Add the config option", description="config.go"),
        result("c1", "Task #1 created successfully: Add the config option"),
        call("c2", "TaskCreate", subject="Update the README", description="docs"),
        result("c2", "Task #2 created successfully: Update the README"),
        call("u1", "TaskUpdate", taskId="1", status="in_progress"),
        result("u1", "Updated task #1 status"),
        # A subagent completed task 1; only the list shows it.
        call("l1", "TaskList"),
        result("l1", "#1 [completed] Add the config option\n#2 [pending] Update the README"),
        say("Task 1 is done; on to the README."),
    ]
    pending = summarize(messages).sections["Pending tasks"]
    assert pending == "- task #2 (pending): Update the README"


def test_a_later_part_that_never_touches_the_list_carries_the_earlier_summarys_pending_items() -> None:
    first = summarize(
        [
            user("Add pagination"),
            call(
                "t1",
                "TodoWrite",
                todos=[
                    {"content": "Implement limit and offset", "status": "in_progress", "activeForm": "Implementing"},
                    {"content": "Document the parameters", "status": "pending", "activeForm": "Documenting"},
                ],
            ),
            result("t1", "Todos have been modified successfully."),
        ]
    )
    earlier = Message(role="user", content=first.text, is_compact_summary=True)
    second = summarize([earlier, call("b1", "Bash", command="pytest -q"), result("b1", "3 passed"), say("Green.")])
    pending = second.sections["Pending tasks"]
    assert "(pending) Document the parameters (from the earlier summary)" in pending
    third = summarize(
        [
            earlier,
            call(
                "t2",
                "TodoWrite",
                todos=[
                    {"content": "Document the parameters", "status": "completed", "activeForm": "Documenting"},
                ],
            ),
            result("t2", "ok"),
        ]
    )
    assert third.sections["Pending tasks"] == "(no open tasks)"


def test_a_short_remark_after_a_task_is_shown_after_the_task_it_steers() -> None:
    messages = [
        user("Find out why the checkpoint log is empty after a resume"),
        say("Looking at the resume path."),
        user("that was a little while back :|"),
        say("Noted."),
    ]
    request = summarize(messages).sections["Primary request and intent"]
    assert request.splitlines() == [
        'Current request: "Find out why the checkpoint log is empty after a resume"',
        "Then the user wrote:",
        '- "that was a little while back :|"',
    ]


def test_the_answers_of_the_last_turns_are_problem_solving_and_an_open_offer_is_the_next_step() -> None:
    messages = [
        user("our git status has broken, why?"),
        call("t1", "Bash", command="git fsck --full"),
        result("t1", "error: invalid sha1 pointer in cache-tree", is_error=True),
        say("Now let me check the go-git code that creates objects."),
        call("t2", "Read", file_path="/r/hooks.go"),
        result("t2", "func getStagedFiles() {}"),
        say(
            "**Two hits.** GC prunes the tree objects, then `worktree.Status()` rewrites the index with a "
            "stale cache-tree.\n\nThe fix: replace `getStagedFiles` with a git CLI call. Want me to do that?"
        ),
        user("which commit added it?"),
        say("Commit `6d61daaa` added the PostCommit path that calls `getStagedFiles`."),
        user("that was a little while back :|"),
    ]
    sections = summarize(messages).sections
    solving = sections["Problem solving"]
    assert solving.startswith("The work so far, turn by turn (oldest first;")
    assert '- To "our git status has broken, why?": ' in solving
    assert "GC prunes the tree objects, then `worktree.Status()` rewrites the index" in solving
    assert 'Its latest answer, to "which commit added it?":\n' in solving and "`6d61daaa`" in solving
    step = sections["Next step"]
    assert step.startswith(
        'What it last offered to do, not taken up yet: "The fix: replace `getStagedFiles` with a git CLI call. '
        'Want me to do that?"\nAnswer the user\'s latest message: "that was a little while back :|"'
    )
    # The probe's failure and the unrelated sentence after it are not paired as an error and its fix.
    assert "go-git code that creates objects" not in sections["Errors and fixes"]
    assert sections["Primary request and intent"].endswith(
        'Current request: "which commit added it?"\nThen the user wrote:\n- "that was a little while back :|"'
    )


def test_an_offer_taken_up_is_no_next_step() -> None:
    messages = [
        user("Why is the log empty?"),
        say("It is cleared on every prompt. Want me to keep it across prompts?"),
        user("yes"),
        call("t1", "Edit", file_path="/r/log.go", old_string="clear()", new_string=""),
        result("t1", "The file /r/log.go has been updated successfully."),
        say("Removed the clear."),
    ]
    assert "offered" not in summarize(messages).sections["Next step"]


def test_files_a_merge_left_in_conflict_are_the_next_steps_files_until_edited() -> None:
    conflict = (
        "Auto-merging a.go\nCONFLICT (content): Merge conflict in cmd/a.go\n"
        "CONFLICT (content): Merge conflict in cmd/b.go\nAutomatic merge failed; fix conflicts and then commit the result."
    )
    messages = [
        user("merge with the parent branch"),
        call("t1", "Bash", command="git merge origin/parent --no-edit"),
        result("t1", conflict, is_error=True),
        call("t2", "Edit", file_path="/r/cmd/a.go", old_string="<<<<<<< HEAD", new_string=""),
        result("t2", "The file /r/cmd/a.go has been updated successfully."),
        say("Resolved a.go; keeping HEAD's version."),
    ]
    summary = ExtractiveSummarizer().summarize(messages, cwd="/r")
    step = summary.sections["Next step"]
    assert "Files it concerns: `cmd/b.go`" in step, step
    assert "cmd/a.go`" not in step.split("Files it concerns:")[1]


def test_a_short_message_with_a_request_in_it_is_no_remark() -> None:
    messages = [
        user("Implement the review epic"),
        say("Working on it."),
        user("new beads for the epic were added. tackle them"),
    ]
    request = summarize(messages).sections["Primary request and intent"]
    assert "what follows steers it" not in request


def test_a_failed_probe_is_evidence_not_an_error_and_a_check_that_failed_is_one() -> None:
    messages = [
        user("Why is the index corrupt?"),
        call("t1", "Bash", command="git fsck --full"),
        result("t1", "error: invalid sha1 pointer in cache-tree of .git/index", is_error=True),
        say("The invalid sha1 pointer in the cache-tree means a pruned tree object."),
        call("t2", "Bash", command="go test ./..."),
        result("t2", "--- FAIL: TestIndex\nFAIL", is_error=True),
        say("TestIndex fails because the index is rewritten by `worktree.Status()`."),
        call("t3", "Edit", file_path="/r/hooks.go", old_string="Status()", new_string="diffCached()"),
        result("t3", "The file /r/hooks.go has been updated successfully."),
        call("t4", "Bash", command="go test ./..."),
        result("t4", "ok"),
    ]
    errors = summarize(messages).sections["Errors and fixes"]
    assert "fsck" not in errors
    assert "`go test ./...`" in errors and "TestIndex fails because" in errors


def test_current_work_says_where_the_assistant_stopped_and_whether_it_answered() -> None:
    working = [
        user("Remove the orphan comments"),
        say("Now check the analyzer:"),
        call("t1", "Read", file_path="/r/analyzer.py", offset=310, limit=50),
        result("t1", "# Type usage percentages"),
    ]
    sections = ExtractiveSummarizer().summarize(working, cwd="/r").sections
    step = sections["Next step"]
    assert 'Its last words before the cut: "Now check the analyzer:"' in step
    assert "Its last calls, made already: Read analyzer.py lines 310-359." in step  # not "-> ok"
    assert "Now check the analyzer" not in sections["Current work"]  # said once, where it says what is left
    answered = [
        user("which commit added it?"),
        say("Commit `6d61daaa` added the PostCommit path that calls `getStagedFiles`."),
        user("that was a little while back :|"),
    ]
    current = summarize(answered).sections["Current work"]
    assert current.startswith(
        'It answered the current request ("which commit added it?"); the user then wrote: "that was a little while back :|"'
    )


def test_a_files_note_is_the_reason_for_the_edit_not_narration() -> None:
    messages = [
        user("Fix the migration"),
        say("Migration ran cleanly. Now let me implement Task 2."),
        call("t1", "Edit", file_path="/r/a.ex", old_string="a", new_string="b"),
        result("t1", "The file /r/a.ex has been updated successfully."),
        say("The migration uses ALTER TABLE ... ADD without a default, which fails on SQLite because rows exist."),
        call("t2", "Edit", file_path="/r/migration.exs", old_string="a", new_string="b"),
        result("t2", "The file /r/migration.exs has been updated successfully."),
        say("Fixed."),  # the work did not stop at the edit (there, the next step quotes the words)
    ]
    files = ExtractiveSummarizer().summarize(messages, cwd="/r").sections["Files and code sections"]
    assert "Migration ran cleanly" not in files
    assert "fails on SQLite because rows exist" in files


def test_the_assistants_plan_and_its_last_thought_say_what_is_left() -> None:
    messages = [
        user("can we add a safety check before overwriting a newer log?"),
        Message(
            role="assistant",
            content=[
                {
                    "type": "text",
                    "text": "Let me add the safety check. I'll need to:\n1. Add a `--force` flag\n"
                    "2. Create a helper for the last timestamp\n3. Check timestamps before overwriting",
                }
            ],
        ),
        call("t1", "Edit", file_path="/r/resume.go", old_string="a", new_string="b"),
        result("t1", "The file /r/resume.go has been updated successfully."),
        Message(
            role="assistant",
            content=[
                {
                    "type": "thinking",
                    "thinking": "Compiles? No. I need to fix `getLastTimestampFromBytes` - there's junk code in there.",
                    "signature": "",
                }
            ],
        ),
        say("I need to fix the helper function:"),
        call("t2", "Read", file_path="/r/resume.go", offset=530, limit=20),
        result("t2", "func getLastTimestampFromBytes() {}"),
    ]
    sections = ExtractiveSummarizer().summarize(messages, cwd="/r").sections
    step = sections["Next step"]
    assert 'Its plan ("I\'ll need to:"):' in step
    assert "  1. Add a `--force` flag\n  2. Create a helper for the last timestamp" in step
    assert (
        'Its last thought before the cut: "Compiles? No. I need to fix `getLastTimestampFromBytes` - there\'s junk code in there."'
        ' Then it wrote: "I need to fix the helper function:"' in step
    )
    assert "junk code" not in sections["Current work"]


def test_an_investigation_without_errors_names_the_causes_it_found_and_the_names_it_turns_on() -> None:
    messages = [
        user("why does the index break?"),
        call("t1", "Read", file_path="/r/hooks.go"),
        result("t1", "func getStagedFiles() {}"),
        say(
            "The index breaks because `worktree.Status()` rewrites it from the post-commit hook. Maybe GC is involved?"
        ),
        user("which commit added that path?"),
        say(
            "Commit `6d61daaa` added the PostCommit path that calls `getStagedFiles`.\n\n"
            "`getStagedFiles` runs `worktree.Status()`, which writes the whole index back."
        ),
        user("ok"),
    ]
    sections = summarize(messages).sections
    errors = sections["Errors and fixes"]
    assert errors.startswith("Causes it found, oldest first (no tool error is open):")
    assert "- The index breaks because `worktree.Status()` rewrites it from the post-commit hook." in errors
    assert "Maybe GC" not in errors
    # A name with the sentence about it (not one that only mentions it late: "Commit ... calls `getStagedFiles`").
    concepts = sections["Key technical concepts"]
    assert (
        "- `getStagedFiles`: `getStagedFiles` runs `worktree.Status()`, which writes the whole index back." in concepts
    )
    assert "6d61daaa" not in concepts


def test_the_request_names_the_task_the_latest_follow_ups_belong_to() -> None:
    messages = [
        user("our git status has broken, why?"),
        say("The index has a stale cache-tree entry."),
        user("is it problematic?"),
        say("No."),
        user("/compact we are debugging an index corruption in the worktree"),
        user("which commit?"),
        say("Commit 6d61daaa."),
        user("that was a while back"),
        say("Then it is older."),
        user("hmm ok"),
    ]
    request = summarize(messages).sections["Primary request and intent"]
    assert 'The session began with: "our git status has broken, why?"' in request
    assert (
        'When the user last compacted, they described the work as: "we are debugging an index corruption in the worktree"'
        in request
    )
    resumed = summarize([user("yeah let's do it"), say("ok"), *messages[1:]]).sections["Primary request and intent"]
    assert "yeah let's do it" not in resumed, "a reply after a resume is not the task"


def test_problem_solving_leaves_out_reactions_and_older_files_keep_no_stale_note() -> None:
    messages = [
        user("add the annotations"),
        say("Now also replace `build_conn()` because the helper is missing from the import."),
        *edited(1, "/r/old_test.exs"),
        *ran(2, "git commit -am wip"),
        say("Expected — the `AnnotationMessageRef` module doesn't exist yet at this point."),
        say("The migration fails on SQLite because the column is NOT NULL without a default value."),
        *edited(3, "/r/migration.exs"),
        say("Fixed."),  # the work did not stop at the edit (there, the next step quotes the words)
    ]
    sections = ExtractiveSummarizer().summarize(messages, cwd="/r").sections
    assert "AnnotationMessageRef" not in sections["Problem solving"]
    assert "fails on SQLite because the column is NOT NULL" in sections["Problem solving"]
    files = sections["Files and code sections"]
    assert "`old_test.exs` (changed)" in files and "build_conn" not in files


def test_a_resolved_error_that_says_nothing_shows_what_failed() -> None:
    messages = [
        user("lint it"),
        call("b1", "Bash", command="mise run lint"),
        result(
            "b1", "[lint] ERROR task failed\nview.go:12:3: ineffectual assignment to err (ineffassign)", is_error=True
        ),
        *edited(2, "/r/view.go"),
        *ran(3, "mise run lint"),
    ]
    errors = summarize(messages).sections["Errors and fixes"]
    assert "ineffectual assignment to err" in errors


def test_the_clients_no_response_requested_is_not_the_assistants_last_words() -> None:
    messages = [
        user("has the filtering been applied to explain too?"),
        say("Let me check explain.go for it."),
        say("No response requested."),
    ]
    current = summarize(messages).sections["Current work"]
    assert "No response requested" not in current and "Let me check explain.go" in current


def test_where_it_stopped_says_which_of_the_things_it_named_its_edit_left() -> None:
    old = "        x = 1\n        # Note: ValueError handles empty files\n        y = 2\n"
    messages = [
        user("remove the orphan comments"),
        say("Two left: `# Note: ValueError handles empty files` and `# Type usage percentages`. Let me fix these."),
        call("e1", "Edit", file_path="/r/an.py", old_string=old, new_string="        x = 1\n        y = 2\n"),
        result("e1", "ok"),
    ]
    step = ExtractiveSummarizer().summarize(messages, cwd="/r").sections["Next step"]
    assert "After that it edited `an.py`:\n  ```\n  -        # Note: ValueError handles empty files\n  ```" in step
    assert (
        "Of what it named, that edit touched `# Note: ValueError handles empty files`; not yet: `# Type usage percentages`."
        in step
    )
    assert "-> ok" not in step
    two_edits = [*messages, call("e2", "Edit", file_path="/r/b.py", old_string="a", new_string="b"), result("e2", "ok")]
    assert "not yet" not in summarize(two_edits).sections["Next step"], "which edit did what is not known"


def test_the_request_carries_the_users_choices_among_the_offered_options() -> None:
    offered = "**1. Subagent-Driven** - a subagent per task\n**2. Parallel Session** - a new session\n\nWhich approach?"
    messages = [user("write the plan and run it"), say(offered), user("1"), say("Dispatching the first subagent.")]
    request = summarize(messages).sections["Primary request and intent"]
    assert (
        "The user's choices among the options it offered, oldest first:\n"
        '- To "Which approach?" the user chose 1. Subagent-Driven — a subagent per task. Their reply: "1"' in request
    )


def test_the_latest_answer_is_shown_with_what_the_user_replied_to_it() -> None:
    messages = [
        user("should a commit reuse the checkpoint id?"),
        say("No reuse: every commit of the work should get its own new checkpoint and its own snapshot."),
        user("I think the reuse is for when the user made the commit and the agent is dormant"),
        call("r1", "Read", file_path="/r/hooks.go"),
        result("r1", "func PrepareCommitMsg() {}"),
    ]
    solving = summarize(messages).sections["Problem solving"]
    assert solving.index("No reuse: every commit") < solving.index(
        '  The user replied: "I think the reuse is for when the user made the commit and the agent is dormant"'
    )


def test_files_changed_before_the_latest_are_named_on_one_line() -> None:
    messages = [user("refactor the package")]
    for n in range(12):
        messages += edited(n, f"/r/module_{n:02d}.py")
    files = ExtractiveSummarizer().summarize(messages, cwd="/r").sections["Files and code sections"]
    assert "- `module_11.py` (changed)" in files and "- `module_03.py`" not in files
    assert "Changed earlier: `module_03.py`, `module_02.py`, `module_01.py`, `module_00.py`." in files


def test_an_investigation_steered_by_a_new_message_names_the_files_it_read_last() -> None:
    messages = [
        user("why is the checkpoint id reused?"),
        call("r1", "Read", file_path="/r/hooks.go"),
        result("r1", "func PrepareCommitMsg() {}"),
        call("r2", "Read", file_path="/r/state.go"),
        result("r2", "type State struct{}"),
        call("r3", "Read", file_path="/r/old.go"),
        result("r3", "package old"),
        say("The id is reused because the clearing falls back to every session."),
        user("I think the reuse is for when the agent is dormant and the user commits"),
    ]
    step = ExtractiveSummarizer().summarize(messages, cwd="/r").sections["Next step"]
    assert "Files it concerns: `old.go`, `state.go`." in step


def test_an_answer_the_user_pushed_back_on_is_shown_in_brief_beside_the_reply() -> None:
    answer = (
        "**Every commit of the work should get a new checkpoint of its own.** The reuse design assumed nothing "
        "changed between the commits of a split. So reuse was the wrong approach entirely, as far as I can see now. "
        "The transcript is read again at each commit, which costs about a second on the long sessions."
    )
    messages = [
        user("how does a reused checkpoint look?"),
        say(answer),
        user("no, the reuse is for when the agent is dormant"),
    ]
    solving = summarize(messages).sections["Problem solving"]
    assert "Every commit of the work should get a new checkpoint" in solving
    assert "costs about a second" not in solving, "in brief: the sentences it stressed"
    assert 'The user replied: "no, the reuse is for when the agent is dormant"' in solving


def test_unchecked_changes_are_pending_and_the_files_read_are_the_last_few() -> None:
    messages = [
        user("fix the parser"),
        *[m for n in range(7) for m in (call(f"r{n}", "Read", file_path=f"/r/f{n}.py"), result(f"r{n}", "x"))],
    ]
    messages += [*edited(9, "/r/parser.py"), *ran(10, "pytest -q", "1 failed"), *edited(11, "/r/parser.py")]
    sections = ExtractiveSummarizer().summarize(messages, cwd="/r").sections
    assert "Check the work with: `pytest -q`" in sections["Next step"]
    assert "the changes to `parser.py` are not checked yet (`pytest -q`)" in sections["Pending tasks"]
    assert (
        "Files it read last (newest first): `f6.py`, `f5.py`, `f4.py`, `f3.py`, `f2.py`."
        in sections["Files and code sections"]
    )


def test_work_stopped_mid_way_without_a_list_is_not_no_open_tasks() -> None:
    messages = [
        user("why does the lane render upside down?"),
        say("Let me look at the lane code."),
        call("r1", "Read", file_path="/r/view.go"),
        result("r1", "func renderLanes() {}"),
    ]
    pending = summarize(messages).sections["Pending tasks"]
    assert pending == "No task list is open; the current request is not done yet (see Current work and Next step)."


def test_the_session_began_with_a_plan_whatever_was_committed_since() -> None:
    plan = "Implement the following plan:\n\n# Use ComputeTranscriptPath in Log Restoration\n\n" + "## Context\n" * 80
    messages = [
        user(plan),
        *ran(1, "git commit -m 'restore logs with the agent's path'"),
        say("Committed."),
        user("now build it with a custom version"),
        say("Built."),
        user("add an integration test for the version"),
        say("Added."),
        user("and a unit test"),
        say("Which test would you like?"),
    ]
    request = summarize(messages).sections["Primary request and intent"]
    began = request[request.index("The session began with:") : request.index("Earlier requests")]
    assert "# Use ComputeTranscriptPath in Log Restoration" in began and "[...]" in began, began


def test_an_own_answer_to_the_options_offered_is_the_request_once() -> None:
    offered = "Do you want to:\n- A) Tackle #10 now\n- B) Close out the PR\n- C) Something else?"
    messages = [user("keep going"), say(offered), user("C) update this branch first, then #10")]
    request = summarize(messages).sections["Primary request and intent"]
    assert request.count("C) update this branch first, then #10") == 1, request
    assert (
        'Current request: "C) update this branch first, then #10" (its answer to what it offered: A. Tackle #10 now; B. Close out the PR)'
        in request
    )


def test_a_bug_report_that_began_the_session_is_named_after_a_resume_and_commits() -> None:
    report = (
        "ok, so I am noting some weirdness. In one of our commits 09ea3c1 (we did this just now), it is "
        "referencing checkpoint e6d2bbd73e25. That checkpoint seems unrelated, can you look into why?"
    )
    short = "can we group the changes into meaningful commits?"
    for first, shown in ((report, True), (short, False)):
        messages = [
            user("yeah let's do it"),
            user(first),
            *ran(1, "git commit -m 'wip'"),
            say("Committed."),
            user("is this a timing problem?"),
            say("No."),
            user("how big is the fix?"),
            say("Small."),
            user("what was the commit that introduced it?"),
            say("Commit 6d61daaa."),
        ]
        request = summarize(messages).sections["Primary request and intent"]
        assert ("The session began with: " in request) is shown, request
        assert "yeah let's do it" not in request, "a reply after a resume is not the task"


def test_where_the_user_corrected_the_assistant_stands_with_the_request() -> None:
    messages = [
        user("why is the checkpoint reused?"),
        say("The root cause is the stop hook: it rewrites the index."),
        user("I mean, we see it on the stop hook; it doesn't mean the stop hook caused it"),
        say("Right, the post-commit hook rewrites it too."),
        user("yeaaah? (I also think you've called root cause prematurely a couple of times now)"),
        say("Fair. The clearing in UserPromptSubmit is what resets it."),
        user("what was the commit that introduced this behaviour?"),
        say("Commit 6d61daaa."),
        user("and a new one gets generated on the pre-commit hook yeah?"),
        say("Yes."),
        user("and this isn't a problem in auto I'm assuming?"),
        say("No."),
    ]
    request = summarize(messages).sections["Primary request and intent"]
    assert "Where the user corrected it, verbatim:" in request, request
    assert '- "I mean, we see it on the stop hook; it doesn\'t mean the stop hook caused it"' in request
    assert "called root cause prematurely" in request
    assert 'yeah?"' not in request.split("Where the user corrected it")[1], "a question is no correction"
