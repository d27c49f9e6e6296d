"""The largest number any setting may hold, shared by every settings model.

A budget, a window or a time beyond it is a typo (``context_window =
99999999999999999999999``), and refusing it names the setting, where
accepting it would overflow arithmetic or SQLite far from the cause.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_SETTING_NUMBER", "within_bound"]

MAX_SETTING_NUMBER = 1_000_000_000
"""Every number a setting holds (tokens, files, buffers, weights, seconds) is at most this."""


def within_bound(value: Any) -> Any:
    """``value`` unchanged when it is not a number over ``MAX_SETTING_NUMBER`` (a dict's values are checked too).

    Raises:
        ValueError: a number (or a dict value) is above the bound; pydantic names the setting.
    """
    numbers = value.values() if isinstance(value, dict) else [value]
    for number in numbers:
        if isinstance(number, int | float) and not isinstance(number, bool) and abs(number) > MAX_SETTING_NUMBER:
            shown = f"{number:,}" if isinstance(number, int) and number < 10**30 else f"{number:.3g}"
            raise ValueError(f"{shown} is over the largest value a setting accepts ({MAX_SETTING_NUMBER:,})")
    return value
