"""What the assistant said that a briefing keeps: causes, decisions, results; never narration."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from compactor.summarizers import statements as statements_module
from compactor.summarizers.statements import identifiers, is_narration, sentences, statements


def test_sentences_keep_code_spans_whole_and_leave_code_blocks_and_tables_out() -> None:
    text = "Use `a. b` here. Then **this** one!\n```\nx = 1. y = 2.\n```\n| a | b |\n- a bullet. Two"
    assert sentences(text) == ["Use `a. b` here.", "Then this one!", "a bullet.", "Two"]


def test_narration_of_the_next_call_is_passed_over() -> None:
    for line in ("Let me check the router.", "Now let me run the tests.", "Good. Now add the route.", "I'll read it."):
        assert is_narration(line), line
        assert statements(line) == [], line
    assert not is_narration("The migration fails because SQLite cannot alter a column.")


def test_a_lead_in_that_only_announces_the_answer_is_narration() -> None:
    for line in ("Here are the answers based on the code analysis:", "Now I can give you the complete answer."):
        assert is_narration(line), line
    assert not is_narration("Here the index is rewritten by `worktree.Status()`.")


def test_a_cause_is_kept_with_the_decision_that_follows_it() -> None:
    (said,) = statements(
        "The LiveView runs in a separate process that can't access the test sandbox. I need to use `:auto` mode."
    )
    assert said.kind == "cause"
    assert said.text == (
        "The LiveView runs in a separate process that can't access the test sandbox. I need to use `:auto` mode."
    )


def test_results_and_decisions_are_told_apart_and_thinking_weighs_less() -> None:
    (result,) = statements("All 43 tests pass, 0 failures.")
    assert result.kind == "result"
    (decision,) = statements("Use `rows.Scan` instead of reading the columns by hand.")
    assert decision.kind == "decision"
    (thought,) = statements("Use `rows.Scan` instead of reading the columns by hand.", thinking=True)
    assert thought.score < decision.score


def test_a_finding_without_a_name_of_the_code_is_not_kept() -> None:
    assert statements("The page looks nice and the colours are fine now overall.") == []
    (kept,) = statements("The handler in `session_live.ex` returns the assigns the page reads.")
    assert kept.kind == "finding"


def test_identifiers_are_code_spans_and_bare_names_shaped_like_code() -> None:
    text = "`load_config()` calls getStagedFiles() and BuildTreeFromEntries, not plain words or e_mail."
    assert identifiers(text) == ["load_config()", "getStagedFiles()", "BuildTreeFromEntries"]


@given(st.text(alphabet="aZ_b() .\n\t`/xY1-é:É\ud800中\u2028", max_size=60))
def test_bare_names_are_found_by_their_marks_as_the_pattern_finds_them_in_the_whole_text(text: str) -> None:
    bare, pattern = statements_module._bare_names, statements_module._BARE_NAME
    assert bare(" " + text) == pattern.findall(" " + text)
