"""Dedup throughput against a plain per-character djb2 loop, in one run.

Builds 1,000 deterministic tool results of 10 to 50 KB, a quarter of them
repeats: two thirds plain ASCII command output, one third Read-style output
whose numbered lines carry an arrow (U+2192), so the UTF-16 path runs too.
Then times, in alternating chunks so that a busy machine slows both alike:

- dedup: ``Deduper.apply`` on every result (hash, content check, tagging);
- baseline: djb2 with one Python step per UTF-16 code unit over the same
  results (the hash alone).

Prints both throughputs and their ratio (target: at least 10x), overall and
for each kind of text.

Run: python benchmarks/bench_dedup.py
"""

from __future__ import annotations

import random
import sys
import time

from compactor.config import DedupSettings
from compactor.dedup import Deduper, djb2
from compactor.session import DedupState

RESULTS = 1_000
CHUNK = 50
SEED = 20_240_601
WORDS = ["def", "return", "self", "import", "value", "error", "status", "path", "=", "(", ")", ":", "42", "tests"]
WIDE = ["\u65e5\u672c", "\u00e9t\u00e9", "\u2192", "\U0001f600", "\u0434\u0430"]


def make_results(seed: int = SEED) -> list[tuple[str, str]]:
    """(kind, text) pairs: kind is "ascii" or "utf16" (Read-style numbered lines)."""
    rng = random.Random(seed)
    results: list[tuple[str, str]] = []
    while len(results) < RESULTS:
        if results and rng.random() < 0.25:
            results.append(rng.choice(results))
            continue
        size = rng.randint(10_000, 50_000)
        kind = "utf16" if rng.random() < 1 / 3 else "ascii"
        vocabulary = WORDS + WIDE if kind == "utf16" and rng.random() < 0.3 else WORDS
        lines: list[str] = []
        length = 0
        while length < size:
            words = " ".join(rng.choices(vocabulary, k=rng.randint(3, 12)))
            line = f"{len(lines) + 1:>6}\u2192{words}" if kind == "utf16" else words
            lines.append(line)
            length += len(line) + 1
        results.append((kind, "\n".join(lines)[:size]))
    return results


def plain_djb2(text: str) -> int:
    """One JavaScript step per UTF-16 code unit, in Python."""
    h = 5381
    for unit in memoryview(text.encode("utf-16-le", "surrogatepass")).cast("H"):
        h = (h * 33 + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def main() -> int:
    results = make_results()
    sample = [text for _, text in results[:20]]
    assert [djb2(r) for r in sample] == [plain_djb2(r) for r in sample]

    deduper = Deduper(DedupState(), DedupSettings())
    fast: dict[str, float] = {"ascii": 0.0, "utf16": 0.0}
    slow: dict[str, float] = {"ascii": 0.0, "utf16": 0.0}
    size: dict[str, float] = {"ascii": 0.0, "utf16": 0.0}
    for chunk_start in range(0, RESULTS, CHUNK):
        chunk = results[chunk_start : chunk_start + CHUNK]
        for kind, text in chunk:
            start = time.perf_counter()
            deduper.apply("Read", text)
            fast[kind] += time.perf_counter() - start
        for kind, text in chunk:
            start = time.perf_counter()
            plain_djb2(text)
            slow[kind] += time.perf_counter() - start
            size[kind] += len(text.encode("utf-8")) / 1e6

    hits = sum(deduper.state.hits.values())
    total_mb, total_fast, total_slow = sum(size.values()), sum(fast.values()), sum(slow.values())
    print(f"{RESULTS} results, {total_mb:.1f} MB, {hits} repeats deduplicated")
    print(f"dedup (fast djb2 + content check): {total_fast * 1e3:8.1f} ms  {total_mb / total_fast:7.1f} MB/s")
    print(f"plain per-character djb2 loop:     {total_slow * 1e3:8.1f} ms  {total_mb / total_slow:7.1f} MB/s")
    for kind in ("ascii", "utf16"):
        print(f"  {kind:5} text ({size[kind]:.1f} MB): speed-up {slow[kind] / fast[kind]:.1f}x")
    print(f"speed-up: {total_slow / total_fast:.1f}x (target >= 10x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
