"""Token counting speed: a whole transcript, and one more message at 10 vs 1,000.

Prints, for the largest transcript in ../shared/transcripts (skips when the
folder is absent):

- the time to read it and count every message with a fresh cached tiktoken
  counter, the time to tokenize the same text once with tiktoken in the same
  run, and their ratio (target: at most 2.0);
- the cost of counting a conversation after one more message was appended,
  with the cache, at 10 and at 1,000 messages, and their ratio (target: at
  most 1.5).

Run: python benchmarks/bench_tokens.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from _common import SHARED_TRANSCRIPTS, largest_transcript, timed
from compactor.messages import Message
from compactor.tokens import CachedCounter, TiktokenCounter, block_texts
from compactor.transcript import read_transcript

APPENDED = 200
"""Messages appended one at a time at each conversation size."""

def read_and_count(path: Path) -> int:
    counter = CachedCounter(TiktokenCounter())
    return counter.count_messages(read_transcript(path, subagents=False).messages)


def growth_cost(base: list[Message], appended: list[Message]) -> float:
    """Median seconds to count the conversation after each appended message."""
    counter = CachedCounter(TiktokenCounter())
    conversation = list(base)
    counter.count_messages(conversation)
    costs = []
    for message in appended:
        conversation.append(message)
        start = time.perf_counter()
        counter.count_messages(conversation)
        costs.append(time.perf_counter() - start)
    return statistics.median(costs)


def main() -> int:
    largest = largest_transcript()
    if largest is None:
        print(f"skipped: no transcript under {SHARED_TRANSCRIPTS}")
        return 0
    encoding = TiktokenCounter()._encoding
    encoding.encode_ordinary("warm up")

    messages = read_transcript(largest, subagents=False).messages
    text = "\n".join(t for m in messages for t in block_texts(m)[0])
    read_count, tokenize = float("inf"), float("inf")
    total = once = 0
    for _ in range(5):  # alternate, so that a busy machine slows both alike
        seconds, total = timed(lambda: read_and_count(largest))
        read_count = min(read_count, seconds)
        seconds, once = timed(lambda: len(encoding.encode_ordinary(text)))
        tokenize = min(tokenize, seconds)
    print(f"transcript: {largest.name} ({largest.stat().st_size / 1e6:.1f} MB, {len(messages)} messages)")
    print(f"read + count (cached counter): {read_count * 1e3:8.1f} ms  -> {total} tokens")
    print(f"tokenize text once (tiktoken): {tokenize * 1e3:8.1f} ms  -> {once} tokens")
    print(f"ratio: {read_count / tokenize:.2f} (target <= 2.0)")

    pool = [Message(role=m.role, content=m.content) for m in messages]
    appended = [m for m in pool if m.role == "user"][:APPENDED]
    filler = [m for m in pool if m not in appended]
    small = filler[:10]
    large = [filler[i % len(filler)].model_copy() for i in range(1_000)]
    at_10 = growth_cost(small, appended)
    at_1000 = growth_cost(large, appended)
    print(f"count after one more message, 10 messages:    {at_10 * 1e6:8.1f} us")
    print(f"count after one more message, 1,000 messages: {at_1000 * 1e6:8.1f} us")
    print(f"ratio: {at_1000 / at_10:.2f} (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
