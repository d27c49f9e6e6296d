"""The small BM25 ranker."""

from __future__ import annotations

from ccr._bm25 import rank, tokenize


def test_tokens_are_lowercase_words_and_snake_case_parts() -> None:
    assert tokenize("Read tool_use FAILED: x2") == ["read", "tool_use", "tool", "use", "failed", "x2"]


def test_documents_without_a_query_term_score_zero() -> None:
    assert rank("parser", ["lunch menu", "the parser broke"])[0] == 0.0


def test_rarer_terms_and_more_occurrences_score_higher() -> None:
    docs = ["common rare", "common", "common", "common common", "rare rare common"]
    scores = rank("rare common", docs)
    assert scores[4] > scores[0] > scores[3] > 0
    assert scores[1] == scores[2]


def test_shorter_documents_win_at_equal_counts() -> None:
    scores = rank("needle", ["needle", "needle hay hay hay hay hay hay"])
    assert scores[0] > scores[1]


def test_an_empty_query_scores_nothing() -> None:
    assert rank("  ,. ", ["a", "b"]) == [0.0, 0.0]
