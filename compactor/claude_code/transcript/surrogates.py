"""Lone surrogates: the ``\\ud800``-``\\udfff`` escapes JSON allows alone, which no UTF-8 text can hold.

``json`` reads ``"\\ud800"`` into a Python string that cannot be encoded, so
storing, counting or printing it later fails. The edges that read JSON (the
transcript reader, the hooks' stdin) replace each by U+FFFD and count them.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["replace_lone_surrogates"]

_REPLACEMENT = "\ufffd"
"""What a lone surrogate becomes: the Unicode replacement character."""

_LONE = re.compile("[\ud800-\udfff]")


def _clean(text: str) -> tuple[str, int]:
    if text.isascii():
        return text, 0
    return _LONE.subn(_REPLACEMENT, text)


def replace_lone_surrogates(value: Any) -> tuple[Any, int]:
    """``value`` (as ``json`` reads it) with every lone surrogate in its strings and keys replaced; the count.

    A surrogate pair escape (``"\\ud83d\\ude00"``) is one character once read, so
    only lone ones are left to replace. Values without any come back as the
    same objects.
    """
    if isinstance(value, str):
        return _clean(value)
    if not isinstance(value, dict | list):
        return value, 0
    total = 0
    stack: list[dict[Any, Any] | list[Any]] = [value]
    while stack:  # no recursion: a line may nest as deep as json reads
        node = stack.pop()
        if isinstance(node, list):
            for index, item in enumerate(node):
                if isinstance(item, str):
                    clean, count = _clean(item)
                    if count:
                        node[index] = clean
                        total += count
                elif isinstance(item, dict | list):
                    stack.append(item)
            continue
        for key in list(node):
            item = node[key]
            if isinstance(item, str):
                clean, count = _clean(item)
                if count:
                    node[key] = clean
                    total += count
            elif isinstance(item, dict | list):
                stack.append(item)
            if isinstance(key, str):
                clean_key, count = _clean(key)
                if count:
                    node[clean_key] = node.pop(key)
                    total += count
    return value, total
