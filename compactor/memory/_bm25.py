"""Recall's terms and BM25 parameters: deterministic, with nothing to install.

A term is a run of letters or digits, lowercased; everything else splits
(``snake_case`` is two terms, so is ``v2.1``). Twenty-six common English
words carry no meaning on their own and are never terms. Scores are the
shared Okapi BM25 core's (``ccr.bm25``) with k1 1.5 and b 0.75, so a memory
that shares no term with the query scores exactly zero and no score is ever
negative.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from ccr import bm25

__all__ = ["B", "K1", "STOP_WORDS", "STOP_WORDS_SIGNATURE", "query_terms", "score", "term_counts", "terms"]

K1 = 1.5
B = 0.75

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "that",
        "the",
        "to",
        "was",
        "were",
        "what",
        "where",
        "will",
        "with",
    ]
)
"""The 26 words that are never terms: "where is the deploy key" is recalled by deploy and key alone."""

STOP_WORDS_SIGNATURE = " ".join(sorted(STOP_WORDS))
"""What the recall index records it was built with; a database built with other stop words is reindexed."""

_TERM = re.compile(r"[^\W_]+")
"""A run of letters or digits (``\\w`` without the underscore)."""


def terms(text: str) -> list[str]:
    """The terms of ``text`` in order, repeats kept, stop words removed."""
    return [t for t in _TERM.findall(text.lower()) if t not in STOP_WORDS]


def term_counts(text: str) -> tuple[Counter[str], int]:
    """Each term's frequency in ``text``, and the text's length in terms."""
    found = terms(text)
    return Counter(found), len(found)


def query_terms(query: str) -> list[str]:
    """The distinct terms of a query, in first-seen order."""
    return list(dict.fromkeys(terms(query)))


def score(
    postings: Mapping[str, Iterable[tuple[str, int, int]]],
    *,
    n: int,
    total_length: int,
) -> dict[str, float]:
    """Recall's BM25 score of every memory that holds at least one query term (``ccr.bm25.score``).

    ``postings`` maps each query term to its ``(id, tf, length)`` rows;
    ``n`` and ``total_length`` describe the whole recall index.
    """
    return bm25.score(postings, n=n, total_length=total_length, k1=K1, b=B)
