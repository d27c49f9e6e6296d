"""Benchmark: reading a transcript and counting it, against tokenizing its text once.

Usage: ``python benchmarks/bench_transcript.py [SESSION.jsonl]`` (default: the
largest transcript under ``../shared/transcripts`` next to the repository).
Prints the time to read the session (chain, merged answers, rebuilt state),
the time to read and count it with tiktoken, the time to tokenize the text
of its messages once, and the ratio of the last two (target: at most 2.0).
"""

from __future__ import annotations

import sys
from pathlib import Path

from _common import SHARED_TRANSCRIPTS, best, largest_transcript
from compactor.tokens import TiktokenCounter, block_texts
from compactor.transcript import read_transcript


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else largest_transcript()
    if path is None:
        raise SystemExit(f"no transcript given and none under {SHARED_TRANSCRIPTS}")
    counter = TiktokenCounter()
    transcript = read_transcript(path)
    texts = [t for m in transcript.messages for t in block_texts(m)[0]]
    counter.count_texts(texts)  # warm the encoder

    read = best(3, lambda: read_transcript(path))
    read_count = best(3, lambda: sum(TiktokenCounter().count_message(m) for m in read_transcript(path).messages))
    tokenize = best(3, lambda: sum(counter.count_text(t) for t in texts))

    size = path.stat().st_size
    print(f"transcript        {path.name}  {size / 1e6:.1f} MB, {len(transcript.messages)} messages")
    print(f"read              {read * 1000:8.1f} ms  ({size / 1e6 / read:.1f} MB/s)")
    print(f"read + count      {read_count * 1000:8.1f} ms")
    print(f"tokenize once     {tokenize * 1000:8.1f} ms")
    print(f"ratio             {read_count / tokenize:8.2f}  (target <= 2.0)")


if __name__ == "__main__":
    main()
