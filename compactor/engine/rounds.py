"""API rounds: the units a conversation is cut into without breaking tool calls.

A round starts at a user prompt (a user message that carries no tool
results) or, when no prompt precedes it, at an assistant answer; it runs until
the next round starts. Tool results therefore always stay in the round of the
assistant answer that asked for them, so cutting between rounds never
separates a ``tool_use`` from its ``tool_result``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from compactor.core.messages import Message, ToolResultBlock

if TYPE_CHECKING:
    from compactor.core.tokens import TokenCounter

__all__ = ["group_rounds", "is_prompt", "split_rounds", "split_tail"]


def is_prompt(message: Message) -> bool:
    """True for a user message that is not (only) carrying tool results."""
    if message.role != "user":
        return False
    if isinstance(message.content, str):
        return True
    return not any(isinstance(b, ToolResultBlock) for b in message.content)


def group_rounds(messages: Sequence[Message]) -> list[list[Message]]:
    """Split ``messages`` into consecutive API rounds (concatenated, they give the input back)."""
    rounds: list[list[Message]] = []
    previous: Message | None = None
    for message in messages:
        starts = (
            previous is None
            or is_prompt(message)
            or (message.role == "assistant" and not is_prompt(previous) and previous.role != "assistant")
        )
        if starts or not rounds:
            rounds.append([message])
        else:
            rounds[-1].append(message)
        previous = message
    return rounds


def split_tail(
    messages: Sequence[Message], tail_tokens: int, counter: TokenCounter
) -> tuple[list[Message], list[Message]]:
    """Split into (head, tail): the tail is the longest run of whole API rounds
    at the end whose tokens stay within ``tail_tokens`` and within half of the
    conversation, so that a compaction always has a head to summarize."""
    sizes = {id(m): counter.count_message(m) for m in messages}
    return split_rounds(messages, tail_tokens, lambda m: sizes[id(m)])


def split_rounds(
    messages: Sequence[Message], tail_tokens: int, size_of: Callable[[Message], int], *, last_round_tokens: int = 0
) -> tuple[list[Message], list[Message]]:
    """(head, tail) as ``split_tail`` says; when no round fits ``tail_tokens``, the last round is
    kept all the same if it is within ``last_round_tokens`` (and half of the conversation)."""
    rounds = group_rounds(messages)
    sizes = [sum(size_of(m) for m in round_) for round_ in rounds]
    limit = min(tail_tokens, sum(sizes) // 2)
    kept = 0
    total = 0
    for size in reversed(sizes[1:]):  # the first round always goes to the head
        if total + size > limit:
            break
        total += size
        kept += 1
    if kept == 0 and len(sizes) > 1 and sizes[-1] <= min(last_round_tokens, sum(sizes) // 2):
        kept = 1
    cut = len(rounds) - kept
    return [m for r in rounds[:cut] for m in r], [m for r in rounds[cut:] for m in r]
