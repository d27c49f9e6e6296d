"""Okapi BM25: one ranker for ccr's query retrieval and memory's recall, with nothing to install.

The caller brings what differs between them: the tokenizer (what a term
is) and the parameters ``k1`` and ``b``. The IDF is the non-negative
``log(1 + (n - df + 0.5) / (df + 0.5))``, so a document that shares no term
with the query scores exactly zero and no score is ever negative.

``score`` works from postings (each term's ``(doc, tf, length)`` rows), so
an index kept in a database is scored without loading the documents;
``rank`` builds those postings for documents held in memory.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

__all__ = ["Tokenizer", "idf", "rank", "score"]

Doc = TypeVar("Doc", bound=Hashable)

Tokenizer = Callable[[str], Iterable[str]]
"""Splits a text into its terms, in order, repeats kept."""


def idf(n: int, df: int) -> float:
    """Inverse document frequency of a term in ``df`` of ``n`` documents; never negative."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def score(
    postings: Mapping[str, Iterable[tuple[Doc, int, int]]],
    *,
    n: int,
    total_length: int,
    k1: float,
    b: float,
) -> dict[Doc, float]:
    """BM25 score of every document that holds at least one query term.

    ``postings`` maps each query term to its ``(doc, tf, doc_length)`` rows
    (read once, so a database cursor will do); ``n`` and ``total_length``
    describe the whole collection. Terms are added in the mapping's order,
    so equal inputs give bit-equal scores.
    """
    avg = (total_length / n) if n and total_length else 1.0
    flat = k1 * (1 - b)
    per_term = k1 * b / avg
    scores: dict[Doc, float] = {}
    for rows in postings.values():
        saturation = {doc: tf / (tf + flat + per_term * length) for doc, tf, length in rows}
        if not saturation:
            continue
        weight = idf(n, len(saturation)) * (k1 + 1)
        if not scores:
            scores = {doc: weight * part for doc, part in saturation.items()}
            continue
        for doc, part in saturation.items():
            scores[doc] = scores.get(doc, 0.0) + weight * part
    return scores


def rank(query: str, documents: Sequence[str], *, tokenize: Tokenizer, k1: float, b: float) -> list[float]:
    """BM25 score of each document for ``query``, in the documents' order; 0.0 where no query term occurs.

    The query's distinct terms count once each, in first-seen order.
    """
    terms = dict.fromkeys(tokenize(query))
    if not terms or not documents:
        return [0.0] * len(documents)
    postings: dict[str, list[tuple[int, int, int]]] = {term: [] for term in terms}
    total = 0
    for index, doc in enumerate(documents):
        tokens = list(tokenize(doc))
        total += len(tokens)
        for term, tf in Counter(t for t in tokens if t in terms).items():
            postings[term].append((index, tf, len(tokens)))
    scores = score(postings, n=len(documents), total_length=total, k1=k1, b=b)
    return [scores.get(index, 0.0) for index in range(len(documents))]
