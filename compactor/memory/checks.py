"""What a memory's text, id and token budget must be, checked before anything is stored or read."""

from __future__ import annotations

import re

from compactor.memory.errors import InvalidRequest, InvalidText, TextTooLarge

__all__ = ["MAX_TEXT_BYTES", "check_id", "check_text", "check_token_budget"]

MAX_TEXT_BYTES = 256 * 1024
"""The largest memory, in bytes of UTF-8: 256 KiB."""

_ID = re.compile(r"mem_[0-9a-f]{16}")


def check_text(text: object) -> str:
    """The text, if it may be remembered.

    Raises:
        InvalidRequest: it is not a string.
        InvalidText: it is empty, whitespace only, or not valid UTF-8 (a lone surrogate).
        TextTooLarge: it is over ``MAX_TEXT_BYTES`` of UTF-8.
    """
    if not isinstance(text, str):
        raise InvalidRequest(f"a memory's text must be a string, not {type(text).__name__}")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidText(f"the text is not valid UTF-8: {exc.reason} at character {exc.start}") from exc
    if size > MAX_TEXT_BYTES:
        raise TextTooLarge(f"the text is {size:,} bytes; a memory holds at most {MAX_TEXT_BYTES:,} (256 KiB)")
    if not text.strip():
        raise InvalidText("the text is empty or only whitespace: there is nothing to remember")
    return text


def check_id(value: object) -> str:
    """The id, if it has the shape of one (``mem_`` + 16 lowercase hex).

    Raises:
        InvalidRequest: it does not.
    """
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise InvalidRequest(f"not a memory id (mem_ + 16 hex digits): {value!r}")
    return value


def check_token_budget(value: object) -> int | None:
    """A public surface's budget: 0 means unlimited (None), a positive number is a cap.

    Raises:
        InvalidRequest: negative, or not an integer.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(f"token_budget must be an integer (0 for unlimited), not {value!r}")
    if value < 0:
        raise InvalidRequest(f"token_budget must be 0 (unlimited) or positive, not {value}")
    return value or None
