"""The plugin's text after Claude Code compacts: what Claude Code's summary lacks, and nothing to unlearn."""

from __future__ import annotations

from compactor.core.ledger import SessionLedger
from compactor.core.messages import Message
from compactor.summarizers.ledger import merge_messages
from compactor.summarizers.session_start import session_start_text
from tests.compactor.summarizers.builders import call, result, say, user

REJECTED = "The user doesn't want to proceed with this tool use. The tool use was rejected."
NOTIFICATION = (
    "<task-notification>\n<task-id>b1</task-id>\n<output-file>/tmp/b1.output</output-file>\n"
    '<status>completed</status>\n<summary>Background command "review" completed</summary>\n</task-notification>'
)


def session() -> list[Message]:
    return [
        user("Add the review page and push it"),
        call("b0", "Bash", command="mix test --slow", run_in_background=True),
        result("b0", "Command running in background with ID: b1. Output is being written to: /tmp/b1.output"),
        user(NOTIFICATION),
        call("r0", "Read", file_path="/repo/.golangci.yml"),
        result("r0", "<tool_use_error>File does not exist.</tool_use_error>", is_error=True),
        call("g0", "Bash", command="git push -u origin review"),
        result("g0", REJECTED, is_error=True),
        call("t0", "Bash", command="mix test"),
        result("t0", "1 test, 1 failure\nerror: undefined function live/2", is_error=True),
        call("e0", "Edit", file_path="/repo/lib/review_live.ex", old_string="a", new_string="b"),
        result("e0", "ok"),
        call("w0", "Write", file_path="/repo/lib/old_page.ex", content="x"),
        result("w0", "ok"),
        call("m0", "Bash", command="git rm lib/old_page.ex"),
        result("m0", "rm 'lib/old_page.ex'"),
        call("t1", "Bash", command="mix test"),
        result("t1", "5 tests, 0 failures"),
        call("b2", "Bash", command="bd update proj-7 --status in_progress"),
        result("b2", "Updated proj-7"),
        say("The page renders; the close button is next."),
    ]


def text_of(ledger: SessionLedger, **kw: object) -> str:
    out = session_start_text(ledger, budget=10_000, cwd="/repo", listing="<<ccr:ccr_" + "a" * 32 + ">>", **kw)  # type: ignore[arg-type]
    assert out is not None
    return str(out)


def test_nothing_misleading_is_said_rejections_stale_errors_finished_tasks_removed_files() -> None:
    text = text_of(merge_messages(SessionLedger(), session()))
    assert "turned down" not in text and "git push -u origin review` -> " not in text
    assert "does not exist" not in text and "undefined function" not in text, "errors a later run answered"
    assert "output not read" not in text and "b1" not in text.split("Commands it ran")[0]
    lead = text.split("This conversation")[0].split("Every fact")[0]
    assert "old_page.ex" not in lead, "a removed file is not needed next"


def test_it_leads_with_where_the_work_stands_the_files_and_the_check() -> None:
    out = session_start_text(
        merge_messages(SessionLedger(), session()),
        budget=10_000,
        cwd="/repo",
        listing="<<ccr:ccr_" + "a" * 32 + ">>",
        read_handles={"/repo/lib/review_live.ex": "ccr_" + "b" * 32},
    )
    assert out is not None
    assert out.lead.startswith("Where the work stands")
    assert '- The current request, verbatim: "Add the review page and push it"' in out.lead
    assert "- Open: proj-7 (in progress)" in out.lead
    assert "- lib/review_live.ex (stored read: <<ccr:ccr_" + "b" * 32 + ">>)" in out.lead
    assert "Check the work with: `mix test`" in out.lead
    assert out.lead.endswith("is in <<ccr:ccr_" + "a" * 32 + ">>.")
    assert "Other paths the session touched" in out.rest and "`git rm lib/old_page.ex`" in out.rest
    assert "commands the session ran (already run" in out.rest


def test_facts_claude_codes_summary_states_are_not_repeated() -> None:
    ledger = merge_messages(SessionLedger(), session())
    told = "The user asked: Add the review page and push it. They ran `mix test` and `bd update proj-7 --status in_progress`."
    text = text_of(ledger, summary=told)
    assert "The current request, verbatim" not in text
    assert "`bd update proj-7 --status in_progress`" not in text
    assert "Add the review page and push it" not in text


def test_finished_work_says_so_and_asks_for_no_check() -> None:
    ledger = merge_messages(
        SessionLedger(),
        [
            user("Fix the typo and push"),
            call("e0", "Edit", file_path="/repo/README.md", old_string="teh", new_string="the"),
            result("e0", "ok"),
            call("g0", "Bash", command="git commit -am typo && git push"),
            result("g0", "main -> main"),
            say("Pushed."),
        ],
    )
    out = session_start_text(ledger, budget=10_000, cwd="/repo", listing=None)
    assert out is not None
    assert "- Done: the work was committed after its last change" in out.lead
    assert "Check the work" not in str(out) and "Files the open work concerns" not in str(out)


def test_the_text_stays_within_its_budget_and_keeps_the_pointer_to_the_listing() -> None:
    messages = [user(f"request {i}: " + "word " * 200) for i in range(30)]
    out = session_start_text(
        merge_messages(SessionLedger(), messages), budget=2_000, cwd=None, listing="<<ccr:ccr_" + "c" * 32 + ">>"
    )
    assert out is not None and len(out) <= 2_000
    assert ("<<ccr:ccr_" + "c" * 32 + ">>") in out.lead
