"""A small Okapi BM25 ranker over already-split units.

Small enough to read in one sitting, so no search dependency is needed:
tokens are lowercase word runs, idf is the non-negative Lucene variant, and a
unit with no query term scores zero (it is never "relevant").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["rank", "tokenize"]

_WORD = re.compile(r"\w+")
K1 = 1.2
B = 0.75


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens; ``snake_case`` also yields its parts."""
    tokens: list[str] = []
    for word in _WORD.findall(text.lower()):
        tokens.append(word)
        if "_" in word:
            tokens.extend(part for part in word.split("_") if part)
    return tokens


def rank(query: str, documents: Sequence[str]) -> list[float]:
    """BM25 score of each document for ``query``; 0.0 where no query term occurs."""
    terms = set(tokenize(query))
    if not terms or not documents:
        return [0.0] * len(documents)
    counts: list[Counter[str]] = []
    lengths: list[int] = []
    for doc in documents:
        tokens = tokenize(doc)
        lengths.append(len(tokens))
        counts.append(Counter(t for t in tokens if t in terms))
    n = len(documents)
    avg = (sum(lengths) / n) or 1.0
    df = Counter(t for c in counts for t in c)
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in df}
    scores: list[float] = []
    for c, length in zip(counts, lengths, strict=True):
        norm = K1 * (1 - B + B * length / avg)
        scores.append(sum(idf[t] * f * (K1 + 1) / (f + norm) for t, f in c.items()))
    return scores
