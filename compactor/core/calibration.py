"""Calibration: from the configured counter's tokens to the model's context tokens.

The counter (tiktoken's cl100k_base, or the rough estimate) does not count
what the model's own tokenizer counts, and the messages are not the whole
context: a system prompt and tool definitions come first. A recorded session
says what the model saw (each answer's ``usage``), so the two can be related
by a straight line, ``context = overhead + scale * counted``, fitted by least
squares over the answers that recorded usage. Without recorded usage the
calibration is the identity plus any overhead the caller knows.

A transcript that starts mid-session carries context it does not show: its
first request already held the earlier part of the session. That part sits
in the fitted intercept with the real overhead and cannot be told apart from
it by the fit, so the caller bounds the overhead (``max_overhead``, at most
``MAX_PLAUSIBLE_OVERHEAD``: what a system prompt and tool definitions can
plausibly take) and the rest of the intercept is reported as ``unseen``.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Calibration", "MAX_PLAUSIBLE_OVERHEAD", "fit_calibration"]

_MIN_SCALE, _MAX_SCALE = 0.25, 4.0

MAX_PLAUSIBLE_OVERHEAD = 45_000
"""The most a request's system prompt and tool definitions plausibly take (in recorded Claude Code sessions: 21-41K)."""


class Calibration(BaseModel):
    """``context = overhead + scale * counted``: a pure value."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    overhead: int = Field(default=0, ge=0)
    scale: float = Field(default=1.0, gt=0)
    points: int = 0
    """How many recorded (counted, usage) pairs the fit used (0: not fitted)."""
    unseen: int = Field(default=0, ge=0)
    """Context the recording never showed (its intercept above ``max_overhead``); not part of ``tokens``."""

    def tokens(self, counted: int) -> int:
        """The context size in model tokens for ``counted`` counter tokens of messages."""
        return self.overhead + round(self.scale * counted)


def fit_calibration(pairs: Sequence[tuple[int, int]], *, max_overhead: int | None = None) -> Calibration:
    """Fit ``usage = overhead + scale * counted`` to (counted, usage) pairs.

    With one pair, or pairs whose counts do not vary, the scale stays 1 and
    the overhead takes the mean difference. The scale is kept within
    [0.25, 4] and the overhead non-negative, refitting through the origin
    when the free fit would make it negative. With ``max_overhead`` (a
    recording that starts mid-session) the overhead is cut to it and the
    rest of the intercept becomes ``unseen``.
    """
    if not pairs:
        return Calibration()
    fitted = _fit(pairs)
    if max_overhead is None or fitted.overhead <= max_overhead:
        return fitted
    return fitted.model_copy(update={"overhead": max_overhead, "unseen": fitted.overhead - max_overhead})


def _fit(pairs: Sequence[tuple[int, int]]) -> Calibration:
    n = len(pairs)
    mean_x = sum(x for x, _ in pairs) / n
    mean_y = sum(y for _, y in pairs) / n
    var_x = sum((x - mean_x) ** 2 for x, _ in pairs)
    if n < 2 or var_x == 0:
        return Calibration(overhead=max(0, round(mean_y - mean_x)), points=n)
    scale = sum((x - mean_x) * (y - mean_y) for x, y in pairs) / var_x
    scale = min(max(scale, _MIN_SCALE), _MAX_SCALE)
    overhead = mean_y - scale * mean_x
    if overhead < 0:
        sum_xx = sum(x * x for x, _ in pairs)
        scale = min(max(sum(x * y for x, y in pairs) / sum_xx, _MIN_SCALE), _MAX_SCALE)
        overhead = 0
    return Calibration(overhead=round(overhead), scale=scale, points=n)
