"""Benchmark: the non-LLM cost of compacting, and replay throughput, against tiktoken.

Usage: ``python benchmarks/bench_pipeline.py [SESSION.jsonl]`` (default: the
largest transcript under ``../shared/transcripts``, else the project's long
fixture session).

Prints, from one run:

- one compaction (extractive summary, CCR puts into a store file, file and
  skill attachments, rendering) of the conversation as it stood when the
  replay first compacted, with every message already counted (as an agent
  loop's ``Orchestrator`` has them), against the time to tokenize that
  context once with tiktoken (target ratio at most 1.0);
- a whole replay (read, dedup, count, compact, report) in tokens per second,
  against tiktoken's raw throughput over the same messages' text (target
  ratio at least 0.5).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from _common import best, largest_transcript
from attachments import RecordedFiles
from ccr import open_store
from compactor.config import load_settings
from compactor.pipeline import CompactOptions, compact
from compactor.replay import replay
from compactor.summarizers import ExtractiveSummarizer
from compactor.tokens import CachedCounter, TiktokenCounter, block_texts
from compactor.transcript import read_transcript

FALLBACK = Path(__file__).resolve().parent.parent / "fixtures" / "sessions" / "long.jsonl"


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else largest_transcript() or FALLBACK
    settings = load_settings(env={})
    tiktoken = TiktokenCounter()
    transcript = read_transcript(path)
    all_texts = [t for m in transcript.messages for t in block_texts(m)[0]]
    tiktoken.count_texts(all_texts[:10])  # load the encoding before timing

    with tempfile.TemporaryDirectory() as tmp:
        # Where does the replay first compact? Take the conversation up to there.
        at: list[int] = []
        replay(path, settings=settings, store=open_store(Path(tmp) / "probe.db"),
               on_compaction=lambda _r, line: at.append(line))
        cut = next((i for i, e in enumerate(transcript.entries) if at and e.line >= at[0]), len(transcript.entries))
        context = [e.message for e in transcript.entries[:cut + 1] if e.message and not e.message.is_compact_summary]
        texts = [t for m in context for t in block_texts(m)[0]]
        tokenize = best(3, lambda: sum(tiktoken.count_text(t) for t in texts))

        counter = CachedCounter(tiktoken)
        for m in context:
            counter.count_message(m)  # the Orchestrator counted each message as it arrived
        runs = iter(range(100))

        def one_compaction() -> None:
            store = open_store(Path(tmp) / f"bench{next(runs)}.db")
            result = compact(context, transcript.state, store=store, counter=counter,
                             summarizer=ExtractiveSummarizer(), files=RecordedFiles(),
                             trigger="auto", options=CompactOptions())
            assert result.ok, result.report.error
            store.close()

        compaction = best(3, one_compaction)
        replay_time = best(2, lambda: replay(path, settings=settings,
                                                store=open_store(Path(tmp) / f"replay{next(runs)}.db")))
        raw_time = best(3, lambda: sum(tiktoken.count_text(t) for t in all_texts))

    total_tokens = sum(tiktoken.count_text(t) for t in all_texts)
    print(f"session              {path.name}: {len(transcript.messages)} messages, {total_tokens:,} tokens")
    print(f"context compacted    {len(context)} messages, {sum(tiktoken.count_text(t) for t in texts):,} tokens")
    print(f"tokenize it once     {tokenize * 1000:8.1f} ms")
    print(f"one compaction       {compaction * 1000:8.1f} ms (non-LLM: extractive summary, CCR, attachments)")
    print(f"ratio                {compaction / tokenize:8.2f}  (target <= 1.0)")
    print(f"replay               {replay_time * 1000:8.1f} ms = {total_tokens / replay_time:,.0f} tokens/s")
    print(f"tiktoken raw         {raw_time * 1000:8.1f} ms = {total_tokens / raw_time:,.0f} tokens/s")
    print(f"ratio                {raw_time / replay_time:8.2f}  (target >= 0.5)")


if __name__ == "__main__":
    main()
