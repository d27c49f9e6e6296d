"""Benchmark: dedup throughput against a plain per-character djb2 loop, and against hashlib.

Builds 1,000 deterministic tool results of 10 to 50 KB, a quarter of them
repeats (equal text, a separate string, as a new tool result is): two thirds
plain ASCII command output, one third Read-style output whose numbered lines
carry an arrow (U+2192), some with CJK, accented, Cyrillic and emoji words,
so the UTF-16 path runs too. Then, chunk by chunk in alternation so that a
busy machine slows both alike:

- dedup: ``Deduper.apply`` on every result (hash, content check, tagging),
  each result met for the first time (the djb2 keys compactor remembers
  for recent results are forgotten before each timed run);
- baseline: djb2 with one Python step per UTF-16 code unit over the same
  results (the hash alone);
- C baseline: ``hashlib.sha1`` over the same results' UTF-16LE bytes (the
  bytes djb2 hashes, encoding included), as a hash in C costs.

Figures (protocol in ``_common.py``; run alone: ``python benchmarks/bench_dedup.py [--quick]``):
the per-character loop's time over dedup's, per chunk, for ASCII and for
UTF-16-heavy text (at least 10 each); and ``hashlib.sha1``'s time over
dedup's (at least 0.2: dedup, which must compute JavaScript's djb2 in
Python and confirm a match by content, within 5x of a C hash of the same
bytes), for the generated results and for the string tool results of the
long fixture and of each real session under ``../shared/transcripts``
(every result in turn through one ``Deduper``, as a replay feeds them; one
line saying the real ones are missing when there are none).
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

from _common import (
    REPO,
    Figure,
    forget_remembered_results,
    interleaved,
    main,
    missing,
    session_name,
    shared_sessions,
    timed,
)

from compactor.claude_code.transcript import read_transcript
from compactor.core.config import DedupSettings
from compactor.core.messages import ToolResultBlock
from compactor.core.session import DedupState
from compactor.engine.dedup import Deduper, djb2

LONG_FIXTURE = REPO / "fixtures" / "sessions" / "long.jsonl"
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
            kind, text = rng.choice(results)
            results.append((kind, "".join([text[:1], text[1:]])))  # equal, but not the same object
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


def session_results(path: Path) -> list[tuple[str, str]]:
    """(tool, text) of every string tool result of a session's main chain, in order."""
    messages = read_transcript(path, subagents=False, state=False).messages
    names = {use.id: use.name for m in messages for use in m.tool_uses()}
    return [
        (names.get(block.tool_use_id, "unknown"), block.content)
        for m in messages
        for block in m.blocks()
        if isinstance(block, ToolResultBlock) and isinstance(block.content, str)
    ]


def session_figure(name: str, path: Path, runs: int) -> Figure:
    """Dedup of a session's tool results (a fresh ``Deduper`` each run) against sha1 of their UTF-16 bytes."""
    results = session_results(path)

    def dedup() -> None:
        forget_remembered_results()  # each run meets the results for the first time
        deduper = Deduper(DedupState(), DedupSettings())
        for tool, text in results:
            deduper.apply(tool, text)

    def sha1() -> None:
        for _, text in results:
            hashlib.sha1(text.encode("utf-16-le", "surrogatepass")).digest()

    size = sum(len(text) for _, text in results)
    return Figure(
        f"dedup / hashlib.sha1 of the same UTF-16 bytes: {name}",
        interleaved(sha1, dedup, runs=runs),
        0.2,
        ">=",
        detail=f"{len(results)} tool results, {size:,} characters",
    )


def session_figures(runs: int) -> list[Figure]:
    """``session_figure`` for the long fixture and each real session (a missing line when there are none)."""
    out = [session_figure("long fixture", LONG_FIXTURE, runs)]
    sessions = shared_sessions()
    if not sessions:
        out.append(
            missing("dedup / hashlib.sha1: real sessions", 0.2, ">=", "no transcript under ../shared/transcripts")
        )
    out.extend(session_figure(session_name(path), path, runs) for path in sessions)
    return out


def figures(quick: bool = False) -> list[Figure]:
    results = make_results()
    sample = [text for _, text in results[:20]]
    assert [djb2(r) for r in sample] == [plain_djb2(r) for r in sample]

    deduper = Deduper(DedupState(), DedupSettings())
    ratios: dict[str, list[float]] = {"ascii": [], "utf16": []}
    against_sha1: list[float] = []
    c_deduper = Deduper(DedupState(), DedupSettings())
    chunks = range(0, RESULTS // 4 if quick else RESULTS, CHUNK)
    for chunk_start in chunks:
        chunk = results[chunk_start : chunk_start + CHUNK]
        for kind in ratios:
            texts = [text for k, text in chunk if k == kind]
            forget_remembered_results()  # the results are met for the first time, as in a session
            fast, _ = timed(lambda: [deduper.apply("Read", text) for text in texts])
            slow, _ = timed(lambda: [plain_djb2(text) for text in texts])
            ratios[kind].append(slow / fast)
        every = [text for _, text in chunk]
        forget_remembered_results()
        ours, _ = timed(lambda: [c_deduper.apply("Read", text) for text in every])
        sha1, _ = timed(lambda: [hashlib.sha1(t.encode("utf-16-le", "surrogatepass")).digest() for t in every])
        against_sha1.append(sha1 / ours)
    hits = sum(deduper.state.hits.values())
    return [
        Figure(
            "dedup / per-character djb2: ASCII",
            ratios["ascii"],
            10.0,
            ">=",
            detail=f"{len(chunks)} chunks of {CHUNK} results, {hits} repeats deduplicated",
        ),
        Figure("dedup / per-character djb2: UTF-16-heavy", ratios["utf16"], 10.0, ">="),
        Figure(
            "dedup / hashlib.sha1 of the same UTF-16 bytes",
            against_sha1,
            0.2,
            ">=",
            detail="sha1's time over dedup's (1.0 would be as fast as a hash in C)",
        ),
        *session_figures(3 if quick else 7),
    ]


if __name__ == "__main__":
    raise SystemExit(main(figures))
