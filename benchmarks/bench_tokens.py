"""Benchmark: what counting costs an agent loop, through the Orchestrator's own path.

Figure (protocol in ``_common.py``; run alone: ``python benchmarks/bench_tokens.py [--quick]``):

- ``Orchestrator per message, 8,000 / 1,000 messages``: two Orchestrators
  with a 1M-token window, one holding 1,000 messages and one 8,000 (the
  long fixture's messages, and then the largest real session's under
  ``../shared/transcripts`` when there is one, repeated with fresh ids and
  text so that no count or dedup is reused); the next chunk of messages is added to each in turn
  (dedup, session state, counting) and ``should_compact()`` asked after each
  user message, as a loop does, without compacting. The ratio of the time
  per message at 8,000 to that at 1,000: at most 1.5.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

from _common import REPO, Figure, interleaved, largest_transcript, main, missing, session_name

from ccr import open_store
from compactor.claude_code.transcript import read_transcript
from compactor.core.config import load_settings
from compactor.core.messages import ContentBlock, Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from compactor.core.tokens import TiktokenCounter
from compactor.engine.orchestrator import Orchestrator

LONG_FIXTURE = REPO / "fixtures" / "sessions" / "long.jsonl"
SMALL, LARGE = 1_000, 8_000
CHUNK = 100
"""Messages added to each Orchestrator per timed turn."""


def fresh(message: Message, tag: str) -> Message:
    """``message`` with new tool ids and ``tag`` in every text it is counted from (text, thinking,
    tool inputs and results), so no count, cache or dedup entry of another copy matches it."""
    if isinstance(message.content, str):
        return Message(role=message.role, content=f"{tag} {message.content}")
    blocks: list[ContentBlock] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            blocks.append(TextBlock(text=f"{tag} {block.text}"))
        elif isinstance(block, ThinkingBlock):
            blocks.append(block.model_copy(update={"thinking": f"{tag} {block.thinking}"}))
        elif isinstance(block, ToolUseBlock):  # its input is counted too: tagged, so no count is reused
            blocks.append(block.model_copy(update={"id": f"{block.id}-{tag}", "input": {**block.input, "copy": tag}}))
        elif isinstance(block, ToolResultBlock):
            content = f"{tag}\n{block.content}" if isinstance(block.content, str) else block.content
            blocks.append(block.model_copy(update={"tool_use_id": f"{block.tool_use_id}-{tag}", "content": content}))
        else:
            blocks.append(block)
    return Message(role=message.role, content=blocks)


def stream(pool: list[Message], name: str) -> Iterator[Message]:
    """The pool's messages, round after round, each made fresh."""
    round_ = 0
    while True:
        for message in pool:
            yield fresh(message, f"[{name}{round_}]")
        round_ += 1


def orchestrator_figure(name: str, session: Path, folder: Path, runs: int) -> Figure:
    """Time per message added at 8,000 messages over that at 1,000, the messages drawn from ``session``."""
    pool = [m for m in read_transcript(session).messages if not m.is_compact_summary]
    settings = load_settings(env={}, overrides={"policy.context_window": 1_000_000})
    counter = TiktokenCounter()

    def loaded(size: int, name: str) -> tuple[Orchestrator, Iterator[Message]]:
        orch = Orchestrator(settings=settings, store=open_store(folder / f"{session.stem}-{name}.db"), counter=counter)
        messages = stream(pool, name)
        for _ in range(size):
            orch.add_message(next(messages))
        return orch, messages

    def add_chunk(orch: Orchestrator, messages: Iterator[Message]) -> None:
        for _ in range(CHUNK):
            message = next(messages)
            orch.add_message(message)
            if message.role == "user":
                orch.should_compact()

    small, small_messages = loaded(SMALL, "small")
    large, large_messages = loaded(LARGE, "large")
    ratios = interleaved(lambda: add_chunk(large, large_messages), lambda: add_chunk(small, small_messages), runs=runs)
    return Figure(
        f"Orchestrator per message, {LARGE:,} / {SMALL:,} messages: {name}",
        ratios,
        1.5,
        "<=",
        detail=f"1M-token window, no compaction, {CHUNK} messages per timed chunk, "
        f"context {large.tokens_of_messages():,} vs {small.tokens_of_messages():,} tokens",
    )


def figures(quick: bool = False) -> list[Figure]:
    runs = 8 if quick else 30
    name = f"Orchestrator per message, {LARGE:,} / {SMALL:,} messages: largest real session"
    real = largest_transcript()
    with tempfile.TemporaryDirectory() as tmp:
        out = [orchestrator_figure("long fixture", LONG_FIXTURE, Path(tmp), runs)]
        if real is None:
            out.append(missing(name, 1.5, "<=", "no transcript under ../shared/transcripts"))
        else:
            out.append(orchestrator_figure(session_name(real), real, Path(tmp), runs))
        return out


if __name__ == "__main__":
    raise SystemExit(main(figures))
