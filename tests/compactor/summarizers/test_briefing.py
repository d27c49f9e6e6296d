"""The briefing's judgements: the current request, whether the work is done, what is open."""

from __future__ import annotations

from compactor.core.ledger import SessionLedger
from compactor.core.messages import Message
from compactor.summarizers.briefing_text import listing_share
from compactor.summarizers.ledger import merge_messages
from compactor.summarizers.work_state import is_follow_up, work_state
from tests.compactor.summarizers.builders import call, result, say, user


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
