"""Recall's terms and scores: the documented tokenizer, stop words and BM25 constants."""

from __future__ import annotations

import math

from compactor.memory._bm25 import B, K1, STOP_WORDS, idf, query_terms, score, term_counts, terms


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
