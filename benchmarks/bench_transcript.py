"""Benchmark: reading a transcript and counting it, against tokenizing its text once.

Figures (protocol in ``_common.py``; run alone: ``python benchmarks/bench_transcript.py [--quick]``):
for the long fixture session and each real session under
``../shared/transcripts`` (one line saying they are missing when there are
none), reading it (chain, merged answers, rebuilt state) and counting
every message with a fresh tiktoken counter, against tokenizing the text of
its messages once (one call per text, parsed beforehand), interleaved.
Target: at most 2.0.
"""

from __future__ import annotations

from pathlib import Path

from _common import REPO, Figure, interleaved, main, missing, session_name, shared_sessions

from compactor.claude_code.transcript import read_transcript
from compactor.core.tokens import TiktokenCounter, block_texts

NAME = "read + count / tokenize"
LONG_FIXTURE = REPO / "fixtures" / "sessions" / "long.jsonl"


def read_figure(name: str, path: Path, runs: int) -> Figure:
    """Reading and counting ``path`` against tokenizing its messages' texts once."""
    counter = TiktokenCounter()
    transcript = read_transcript(path)
    texts = [t for m in transcript.messages for t in block_texts(m)[0]]

    def read_and_count() -> None:
        fresh = TiktokenCounter()
        for message in read_transcript(path).messages:
            fresh.count_message(message)

    def tokenize() -> None:
        for text in texts:
            counter.count_text(text)

    ratios = interleaved(read_and_count, tokenize, runs=runs)
    return Figure(
        f"{NAME}: {name}",
        ratios,
        2.0,
        "<=",
        detail=f"{path.stat().st_size / 1e6:.1f} MB, {len(transcript.messages)} messages",
    )


def figures(quick: bool = False) -> list[Figure]:
    runs = 3 if quick else 5
    out = [read_figure("long fixture", LONG_FIXTURE, runs)]
    sessions = shared_sessions()
    if not sessions:
        out.append(missing(f"{NAME}: real sessions", 2.0, "<=", "no transcript under ../shared/transcripts"))
    out.extend(read_figure(session_name(path), path, runs) for path in sessions)
    return out


if __name__ == "__main__":
    raise SystemExit(main(figures))
