"""Terms and BM25 scores for recall: deterministic, with nothing to install.

A term is a run of letters or digits, lowercased; everything else splits
(``snake_case`` is two terms, so is ``v2.1``). Twenty-six common English
words carry no meaning on their own and are never terms. Scores are Okapi
BM25 with k1 1.5 and b 0.75 and the non-negative IDF
``log(1 + (n - df + 0.5) / (df + 0.5))``, so a memory that shares no term
with the query scores exactly zero and no score is ever negative.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping

__all__ = ["B", "K1", "STOP_WORDS", "STOP_WORDS_SIGNATURE", "idf", "query_terms", "score", "term_counts", "terms"]

K1 = 1.5
B = 0.75

STOP_WORDS = frozenset(
    "a an and are as at be by for from has in is it of on or that the to was were what where will with".split()
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


def idf(n: int, df: int) -> float:
    """Inverse document frequency of a term in ``df`` of ``n`` documents; never negative."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def score(
    postings: Mapping[str, Iterable[tuple[str, int, int]]],
    *,
    n: int,
    total_length: int,
) -> dict[str, float]:
    """BM25 score of every document that holds at least one query term.

    ``postings`` maps each query term to its ``(doc_id, tf, doc_length)``
    rows (read once, so a database cursor will do); ``n`` and
    ``total_length`` describe the whole collection. Terms are added in the
    mapping's order, so equal inputs give bit-equal scores.
    """
    avg = (total_length / n) if n and total_length else 1.0
    flat = K1 * (1 - B)
    per_term = K1 * B / avg
    scores: dict[str, float] = {}
    for rows in postings.values():
        saturation = {doc: tf / (tf + flat + per_term * length) for doc, tf, length in rows}
        if not saturation:
            continue
        weight = idf(n, len(saturation)) * (K1 + 1)
        if not scores:
            scores = {doc: weight * part for doc, part in saturation.items()}
            continue
        for doc, part in saturation.items():
            scores[doc] = scores.get(doc, 0.0) + weight * part
    return scores
