"""Benchmark the memory store: recall time as the store grows, and remember throughput.

Prints figures and the ratios they are judged by, measured in one run with
the contenders interleaved, so the ratios compare like with like:

- recall time at 1K, 10K and 100K memories (the same queries, rounds
  interleaved across the three stores); the growth from 1K to 100K must be
  at most linear (ratio <= 100);
- remember throughput (one ``remember`` per memory, each its own durable
  transaction, recall index included) against plain ``sqlite3`` inserts of
  the same texts into a table of the same shape, one transaction each, with
  the same WAL + synchronous=FULL settings (target ratio >= 0.5).

The stores are built once with ``remember_many`` (one transaction each).

Figures (protocol in ``_common.py``; ``python benchmarks/run.py --only memory``):
recall time at the largest store over the smallest, per interleaved round
(at most the size ratio, linear: 100 for 1K -> 100K, 10 for 1K -> 10K with
``--quick``), and plain inserts' time over remembers', per interleaved
chunk of 25 (at least 0.5).

Run alone for the timings too: ``python benchmarks/bench_memory.py [--rounds N] [--remembers N]``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import random
import sqlite3
import statistics
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from _common import Figure, timed

from compactor.core.tokens import TiktokenCounter
from compactor.memory import MemoryDB, open_memory

SIZES = (1_000, 10_000, 100_000)
VOCABULARY = 6_000
COMMON = 40
"""Filler words ranked above the queries' words (a query word is then in a few percent of memories)."""
QUERIES = (
    "retry policy for the billing worker",
    "staging database reset schedule",
    "flaky test in the payments suite",
    "deploy freeze and canary rollout",
    "cache warmup after a cold start",
    "which linter replaced flake8",
)


def _words(rng: random.Random) -> list[str]:
    """A Zipf-ranked vocabulary: filler words on top, the queries' words among the next most common."""
    base = [w for q in QUERIES for w in q.split()]
    filler = [f"w{i:04d}{rng.choice('abcdefgh')}" for i in range(VOCABULARY - len(base))]
    return filler[:COMMON] + base + filler[COMMON:]


def _memories(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    words = _words(random.Random(1))
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    return [f"note {seed}-{i}: " + " ".join(rng.choices(words, weights, k=rng.randint(8, 20))) for i in range(count)]


def build(path: Path, count: int) -> MemoryDB:
    db = open_memory(path / f"memory-{count}.db", recovery=path / "ccr.db")
    db.remember_many(_memories(count, seed=count))
    return db


def recall_rounds(dbs: dict[int, MemoryDB], rounds: int) -> dict[int, list[float]]:
    """Seconds to answer all the queries once, per store size, one entry per interleaved round."""
    counter = TiktokenCounter()
    times: dict[int, list[float]] = {size: [] for size in dbs}
    for _ in range(rounds):
        for size, db in dbs.items():
            elapsed, _ = timed(lambda db=db: [db.recall(q, counter=counter) for q in QUERIES])  # type: ignore[misc]
            times[size].append(elapsed)
    return times


def bench_recall(dbs: dict[int, MemoryDB], rounds: int) -> dict[int, float]:
    """Median seconds to answer all the queries once, per store size, rounds interleaved."""
    return {size: statistics.median(t) for size, t in recall_rounds(dbs, rounds).items()}


def _plain(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute(
        "CREATE TABLE memories (id TEXT PRIMARY KEY, text TEXT NOT NULL, created_at TEXT NOT NULL,"
        " valid_from TEXT NOT NULL, valid_until TEXT, supersedes TEXT, superseded_by TEXT)"
    )
    return conn


def _plain_insert(conn: sqlite3.Connection, text: str) -> None:
    stamp = datetime.now(UTC).isoformat()
    mid = "mem_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(
        "INSERT OR IGNORE INTO memories (id, text, created_at, valid_from) VALUES (?, ?, ?, ?)",
        (mid, text, stamp, stamp),
    )
    conn.execute("COMMIT")


def bench_remember(path: Path, count: int, chunk: int = 25) -> tuple[float, float]:
    """Seconds for ``count`` remembers and for ``count`` plain inserts, in interleaved chunks."""
    ratios = remember_ratios(path, count, chunk)
    return sum(ours for ours, _ in ratios), sum(theirs for _, theirs in ratios)


def remember_ratios(path: Path, count: int, chunk: int = 25) -> list[tuple[float, float]]:
    """(remembers' seconds, plain inserts' seconds) per interleaved chunk of ``chunk`` texts."""
    texts = _memories(count, seed=-1)
    db = open_memory(path / "remember.db", recovery=path / "ccr.db")
    db.remember("warm up the connection and the schema")
    plain = _plain(path / "plain.db")
    _plain_insert(plain, "warm up the connection")
    chunks: list[tuple[float, float]] = []
    for start in range(0, count, chunk):
        part = texts[start : start + chunk]

        def remember_part(part: list[str] = part) -> None:
            for text in part:
                db.remember(text)

        def insert_part(part: list[str] = part) -> None:
            for text in part:
                _plain_insert(plain, text)

        chunks.append((timed(remember_part)[0], timed(insert_part)[0]))
    db.close()
    plain.close()
    return chunks


def figures(quick: bool = False) -> list[Figure]:
    sizes = SIZES[:2] if quick else SIZES
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        dbs = {size: build(folder, size) for size in sizes}
        times = recall_rounds(dbs, 3 if quick else 5)
        for db in dbs.values():
            db.close()
        small, large = sizes[0], sizes[-1]
        growth = [big / little for big, little in zip(times[large], times[small], strict=True)]
        chunks = remember_ratios(folder, 100 if quick else 300)
    return [
        Figure(
            f"memory recall at {large:,} / at {small:,} memories",
            growth,
            float(large // small),
            "<=",
            detail=f"{len(QUERIES)} queries a round; linear growth is {large // small}x",
        ),
        Figure(
            "memory plain sqlite3 insert / remember",
            [theirs / ours for ours, theirs in chunks],
            0.5,
            ">=",
            detail=f"{len(chunks)} chunks of 25, one durable transaction each",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="recall rounds per store (default 5)")
    parser.add_argument("--remembers", type=int, default=300, help="remembers timed (default 300)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        dbs: dict[int, MemoryDB] = {}
        for size in SIZES:
            seconds, dbs[size] = timed(lambda size=size: build(folder, size))  # type: ignore[misc]
            print(f"built {size:>7,} memories with remember_many in {seconds:6.2f} s")
        recall = bench_recall(dbs, args.rounds)
        for db in dbs.values():
            db.close()
        per_query = {size: t / len(QUERIES) for size, t in recall.items()}
        for size in SIZES:
            print(f"recall at {size:>7,} memories: {per_query[size] * 1000:8.2f} ms per query (median)")
        for small, large in itertools.pairwise(SIZES):
            step = per_query[large] / per_query[small]
            print(f"recall growth {small:,} -> {large:,}: x{step:.2f} (linear: x{large // small})")
        growth = per_query[SIZES[-1]] / per_query[SIZES[0]]
        linear = SIZES[-1] // SIZES[0]
        verdict = "ok" if growth <= linear else "WORSE THAN LINEAR"
        print(f"judged: recall growth 1K -> 100K = x{growth:.2f}, at most x{linear} allowed: {verdict}")

        ours, theirs = bench_remember(folder, args.remembers)
        ratio = theirs / ours
        print(f"remember: {args.remembers / ours:8.0f}/s   plain sqlite3 insert: {args.remembers / theirs:8.0f}/s")
        verdict = "ok" if ratio >= 0.5 else "BELOW TARGET"
        print(f"judged: remember throughput / plain sqlite3 = {ratio:.2f} (target >= 0.5): {verdict}")


if __name__ == "__main__":
    main()
