"""The BM25 core (``ccr.bm25``), and retrieval's terms and parameters on it."""

from __future__ import annotations

import math

import pytest

from ccr import bm25
from ccr.retrieval import K1, B, select_query
from ccr.retrieval import rank_units as rank
from ccr.retrieval import unit_words as tokenize


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


# Orderings recorded from the ranker before ccr and memory shared one BM25 core
# (k1 1.2, b 0.75, words with their snake_case parts): sharing must not move them.
PINNED_DOCS = [
    "def parse_config(path): raise ParserError('bad config')",
    "the parser broke on line 12 of config.toml",
    "tool_use failed: Read timed out after 30s",
    "retry the connection: timeout, timeout, timeout",
    "lunch menu: soup, bread, parser-free salad",
    "ParserError: unexpected token in config at line 3 (config parser)",
    "connection refused; retry in 5s",
    "tool use ok",
    "Read tool_use succeeded",
    "",
    "the parser broke on line 12 of config.toml",
]
PINNED = [
    ("parser config", [5, 1, 10, 0, 4], [1.981, 1.7007, 1.7007, 1.22, 0.9537]),
    ("tool_use timeout", [8, 2, 3, 7], [4.4641, 3.4965, 3.3271, 3.1658]),
    ("retry connection", [6, 3], [3.4727, 3.248]),
    ("read", [8, 2], [1.7363, 1.36]),
    ("Config PARSER line", [5, 1, 10, 0, 4], [2.9943, 2.769, 2.769, 1.22, 0.9537]),
    ("soup nothing", [4], [2.022]),
    ("parser line", [1, 10, 5, 4], [1.9186, 1.9186, 1.82, 0.9537]),
]


@pytest.mark.parametrize(("query", "order", "scores"), PINNED)
def test_rankings_stay_as_recorded(query: str, order: list[int], scores: list[float]) -> None:
    got = rank(query, PINNED_DOCS)
    hits = sorted((i for i, s in enumerate(got) if s > 0), key=lambda i: -got[i])
    assert hits == order
    assert [round(got[i], 4) for i in hits] == scores


def test_a_query_returns_the_recorded_units_and_scores() -> None:
    data = "".join(f"{i + 1:6}\t{doc}\n" for i, doc in enumerate(PINNED_DOCS[:9])).encode()
    found = select_query(data, "parser config timeout")
    assert found.unit_lines == ((1, 1), (2, 2), (4, 4), (5, 5), (6, 6))
    assert found.unit_scores is not None
    assert [round(s, 6) for s in found.unit_scores] == [1.348677, 1.904832, 3.06324, 1.049822, 2.215976]


def test_retrieval_ranks_with_k1_1_2_and_b_0_75() -> None:
    assert (K1, B) == (1.2, 0.75)
    docs = ["needle hay", "needle needle", "hay"]
    assert rank("needle", docs) == bm25.rank("needle", docs, tokenize=tokenize, k1=1.2, b=0.75)
    assert rank("needle", docs) != bm25.rank("needle", docs, tokenize=tokenize, k1=1.5, b=0.75)


def test_the_core_ranks_with_the_tokenizer_it_is_given() -> None:
    docs = ["Alpha,beta", "gamma"]
    assert bm25.rank("alpha", docs, tokenize=str.split, k1=1.2, b=0.75) == [0.0, 0.0]
    by_comma = bm25.rank("alpha", docs, tokenize=lambda t: t.lower().replace(",", " ").split(), k1=1.2, b=0.75)
    assert by_comma[0] > 0 and by_comma[1] == 0.0


def test_the_core_scores_postings_with_the_okapi_formula() -> None:
    got = bm25.score({"t": [("a", 2, 3), ("b", 1, 1)]}, n=4, total_length=8, k1=1.2, b=0.5)
    weight = math.log(1 + (4 - 2 + 0.5) / (2 + 0.5))
    assert math.isclose(got["a"], weight * 2 * 2.2 / (2 + 1.2 * (1 - 0.5 + 0.5 * 3 / 2)))
    assert math.isclose(got["b"], weight * 1 * 2.2 / (1 + 1.2 * (1 - 0.5 + 0.5 * 1 / 2)))
