"""API rounds: the units a conversation is cut into without breaking tool calls.

A round starts at a user prompt (a user message that carries no tool
results) or, when no prompt precedes it, at an assistant answer; it runs until
the next round starts. Tool results therefore always stay in the round of the
assistant answer that asked for them, so cutting between rounds never
separates a ``tool_use`` from its ``tool_result``.
"""

from __future__ import annotations

from collections.abc import Sequence

from compactor.core.messages import Message, ToolResultBlock

__all__ = ["group_rounds", "is_prompt"]


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
        starts = previous is None or is_prompt(message) or (
            message.role == "assistant" and not is_prompt(previous)
            and previous.role != "assistant"
        )
        if starts or not rounds:
            rounds.append([message])
        else:
            rounds[-1].append(message)
        previous = message
    return rounds
