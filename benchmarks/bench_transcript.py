"""Benchmark: reading a transcript and counting it, against tokenizing its text once.

Figure (protocol in ``_common.py``; run alone: ``python benchmarks/bench_transcript.py [--quick]``):
on the largest real transcript under ``../shared/transcripts`` (missing when
there is none), reading it (chain, merged answers, rebuilt state) and
counting every message with tiktoken, against tokenizing the text of its
messages once, interleaved. Target: at most 2.0.
"""

from __future__ import annotations

from _common import Figure, interleaved, largest_transcript, main, missing
from compactor.core.tokens import TiktokenCounter, block_texts
from compactor.claude_code.transcript import read_transcript

NAME = "read + count / tokenize"


def figures(quick: bool = False) -> list[Figure]:
    path = largest_transcript()
    if path is None:
        return [missing(f"{NAME}: largest real transcript", 2.0, "<=", "no transcript under ../shared/transcripts")]
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

    ratios = interleaved(read_and_count, tokenize, runs=3 if quick else 5)
    return [Figure(f"{NAME}: {path.stem}", ratios, 2.0, "<=",
                   detail=f"{path.stat().st_size / 1e6:.1f} MB, {len(transcript.messages)} messages")]


if __name__ == "__main__":
    raise SystemExit(main(figures))
