"""The recall index: postings and corpus totals for current memories, and ranked search over them.

Only current versions (``valid_until`` unset) are indexed, so only they are
ever recalled. Every change to the index happens inside the caller's write
transaction, together with the change to ``memories`` it follows. Scores
are recall's BM25 (``compactor.memory._bm25``); ranking is best first, ties
to the smaller id.
"""

from __future__ import annotations

import heapq
import itertools
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping

from compactor.memory import _bm25
from compactor.memory._packing import Candidate

__all__ = ["add", "remove", "search"]

_FETCH_CHUNK = 64


def add(conn: sqlite3.Connection, rows: Iterable[tuple[str, str]]) -> None:
    """Index new current memories ``(id, text)`` for recall."""
    postings: list[tuple[str, str, int, int]] = []
    docs = total = 0
    for mid, text in rows:
        counts, length = _bm25.term_counts(text)
        docs += 1
        total += length
        postings.extend((term, mid, tf, length) for term, tf in counts.items())
    postings.sort()
    conn.executemany("INSERT INTO postings (term, id, tf, length) VALUES (?, ?, ?, ?)", postings)
    conn.execute("UPDATE corpus SET docs = docs + ?, total_length = total_length + ? WHERE id = 1", (docs, total))


def remove(conn: sqlite3.Connection, mid: str, text: str | None) -> None:
    """Take the memory ``mid`` holding ``text`` out of the index (it stops being current).

    ``None`` for a text that is damaged: its postings are found by id instead (what was indexed).
    """
    if text is None:
        row = conn.execute("SELECT length FROM postings WHERE id = ? LIMIT 1", (mid,)).fetchone()
        conn.execute("DELETE FROM postings WHERE id = ?", (mid,))
        if row is not None:
            conn.execute("UPDATE corpus SET docs = docs - 1, total_length = total_length - ? WHERE id = 1", row)
        return
    counts, length = _bm25.term_counts(text)
    conn.executemany("DELETE FROM postings WHERE term = ? AND id = ?", [(term, mid) for term in counts])
    conn.execute("UPDATE corpus SET docs = docs - 1, total_length = total_length - ? WHERE id = 1", (length,))


def search(
    conn: sqlite3.Connection, terms: list[str], threshold: float, *, check: Callable[[str, str], bool] | None = None
) -> Iterator[Candidate]:
    """``(id, score, text)`` of the current memories matching ``terms``, best first, at or above ``threshold``.

    Lazy: texts are fetched a chunk at a time, as far as the caller reads
    (packing usually stops early); read it inside one read transaction. A
    memory ``check(id, text)`` refuses (a damaged one) is left out.
    """
    docs, total = conn.execute("SELECT docs, total_length FROM corpus WHERE id = 1").fetchone()
    postings = {t: conn.execute("SELECT id, tf, length FROM postings WHERE term = ?", (t,)) for t in terms}
    scores = _bm25.score(postings, n=int(docs), total_length=int(total))
    return _texts(conn, _ranked(scores, threshold), check)


def _ranked(scores: Mapping[str, float], threshold: float) -> Iterator[tuple[float, str]]:
    """``(score, id)`` from best to worst (ties: smaller id first), at or above ``threshold``.

    A heap, popped only as far as packing asks: ranking costs linear time in
    the number of scored memories, not a full sort.
    """
    heap = [(-score, mid) for mid, score in scores.items() if score >= threshold]
    heapq.heapify(heap)
    while heap:
        negative, mid = heapq.heappop(heap)
        yield -negative, mid


def _texts(
    conn: sqlite3.Connection, ranked: Iterator[tuple[float, str]], check: Callable[[str, str], bool] | None
) -> Iterator[Candidate]:
    """``(id, score, text)`` in rank order, fetched a chunk at a time (packing usually stops early)."""
    while chunk := list(itertools.islice(ranked, _FETCH_CHUNK)):
        marks = ",".join("?" * len(chunk))
        texts = dict(
            conn.execute(
                f"SELECT id, text FROM memories WHERE valid_until IS NULL AND id IN ({marks})",
                [mid for _, mid in chunk],
            ).fetchall()
        )
        for score, mid in chunk:
            if mid in texts and (check is None or check(mid, texts[mid])):
                yield mid, score, texts[mid]
