"""Recall's terms and scores: the documented tokenizer, stop words and BM25 constants."""

from __future__ import annotations

import math

import pytest

from ccr.bm25 import idf
from compactor.memory import MemoryDB
from compactor.memory._bm25 import K1, STOP_WORDS, B, query_terms, score, term_counts, terms


def test_terms_are_lowercased_runs_of_letters_or_digits() -> None:
    assert terms("Retry_Count=3 in v2.1; Café-Größe") == ["retry", "count", "3", "v2", "1", "café", "größe"]


def test_twenty_six_common_words_are_never_terms() -> None:
    assert len(STOP_WORDS) == 26
    assert terms("The cache is in the build folder and it was stale") == ["cache", "build", "folder", "stale"]


def test_where_and_what_are_stop_words_so_a_question_is_matched_by_its_content_words() -> None:
    assert {"where", "what"} <= STOP_WORDS
    assert query_terms("Where is the deploy key? What was it?") == ["deploy", "key"]


def test_a_query_counts_each_term_once_in_first_seen_order() -> None:
    assert query_terms("Cache cache BUILD cache") == ["cache", "build"]


def test_idf_is_never_negative_even_for_a_term_in_every_document() -> None:
    assert idf(10, 10) > 0
    assert idf(1, 1) == math.log(1 + 0.5 / 1.5)
    assert idf(100, 1) > idf(100, 50) > idf(100, 100) > 0


def test_score_is_okapi_bm25_with_k1_1_5_and_b_0_75() -> None:
    assert (K1, B) == (1.5, 0.75)
    counts, length = term_counts("cache cache build")
    assert counts == {"cache": 2, "build": 1} and length == 3
    postings = {"cache": [("a", 2, 3), ("b", 1, 1)]}
    got = score(postings, n=4, total_length=8)
    avg = 2.0
    weight = math.log(1 + (4 - 2 + 0.5) / (2 + 0.5))
    expected_a = weight * 2 * (K1 + 1) / (2 + K1 * (1 - B + B * 3 / avg))
    expected_b = weight * 1 * (K1 + 1) / (1 + K1 * (1 - B + B * 1 / avg))
    assert math.isclose(got["a"], expected_a) and math.isclose(got["b"], expected_b)


def test_a_document_without_any_query_term_gets_no_score() -> None:
    assert score({"cache": [], "build": [("a", 1, 2)]}, n=3, total_length=6).keys() == {"a"}


# Orderings recorded from recall before memory and ccr shared one BM25 core
# (k1 1.5, b 0.75, letter-or-digit runs less the stop words): sharing must not move them.
PINNED_MEMORIES = [
    "The payments service retries failed charges three times, then marks the invoice unpaid",
    "Deploys go through the staging cluster first; production needs a green canary",
    "The linter config lives in pyproject.toml; ruff replaced flake8 in March",
    "Staging deploys are frozen on Fridays; production deploys need two approvals",
    "The cache lives in the build folder; a stale cache breaks the build",
    "Payments retries use exponential backoff with a cap of 60 seconds",
    "ruff config: line length 100, target py311",
    "The deploy key is in the vault under infra/deploy",
    "alpha release notes beta",
    "beta release notes alpha",
]
PINNED_RECALLS = [
    ("where is the deploy key", [7], [5.253857]),
    ("payments retries", [5, 0], [2.894652, 2.466636]),
    ("ruff config", [6, 2], [3.072359, 2.736378]),
    ("staging production deploys", [3, 1], [4.734638, 3.891772]),
    ("build cache stale", [4], [7.544288]),
    ("canary", [1], [1.744524]),
    ("unrelated words only", [], []),
    ("alpha beta", [9, 8], [3.765951, 3.765951]),  # a tie: the smaller id first
    ("release", [9, 8], [1.882976, 1.882976]),
]


@pytest.mark.parametrize(("query", "order", "scores"), PINNED_RECALLS)
def test_recall_rankings_stay_as_recorded(db: MemoryDB, query: str, order: list[int], scores: list[float]) -> None:
    ids = [db.remember(text).id for text in PINNED_MEMORIES]
    hits = db.recall(query, limit=10, token_budget=0)
    assert [ids.index(hit.id) for hit in hits] == order
    assert [round(hit.score, 6) for hit in hits] == scores
