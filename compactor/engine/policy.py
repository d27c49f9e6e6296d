"""The threshold policy: whether to compact now, separate from how to compact.

The arithmetic is pure (Claude Code's defaults, all configurable through
``PolicySettings``):

- effective window = context window - min(model max output, 20,000);
- auto-compact threshold = effective window - 13,000 (167,000 for 200K),
  lowered (never raised) to ``autocompact_pct`` percent of the effective
  window when that is set;
- warning and error levels 20,000 below the threshold in force (the
  auto-compact threshold, or the effective window when auto-compaction is
  off); blocking at effective window - 3,000.

``CompactionTracker`` is the one piece of state: it counts turns, failures
and compactions, and trips a breaker that stops auto-compaction after 3
consecutive failures, or when compaction thrashes (runs again within 3
turns of the previous one, 3 times in a row). ``should_compact`` reads it and
returns a ``Decision``; acting on it is ``compactor.engine.pipeline``'s job.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from compactor.core.config import PolicySettings, Settings
from compactor.engine.report import Trigger

__all__ = [
    "BreakerReason",
    "CompactionTracker",
    "Decision",
    "DecisionReason",
    "Level",
    "Thresholds",
    "auto_compact_threshold",
    "effective_window",
    "level_for",
    "percent_left",
    "should_compact",
    "thresholds",
]

Level = Literal["ok", "warning", "error", "blocking"]
"""How full the context is: below warning, above warning, above error, at the blocking limit."""

BreakerReason = Literal["too_many_failures", "thrashing"]

DecisionReason = Literal[
    "below_threshold",
    "above_threshold",
    "auto_compact_disabled",
    "compaction_disabled",
    "too_many_failures",
    "thrashing",
]


def _policy(settings: Settings | PolicySettings) -> PolicySettings:
    return settings.policy if isinstance(settings, Settings) else settings


class Thresholds(BaseModel):
    """Every threshold the settings imply, in tokens of the configured counter."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    context_window: int
    summary_reserve: int
    effective_window: int
    auto_compact: int
    warning: int
    error: int
    blocking: int


def effective_window(settings: Settings | PolicySettings) -> int:
    """Context window minus the summary's output reserve, min(model max output, cap)."""
    policy = _policy(settings)
    return policy.context_window - min(policy.max_output_tokens, policy.summary_reserve_cap)


def auto_compact_threshold(settings: Settings | PolicySettings) -> int:
    """Effective window - 13,000, or the configured percentage of it when that is lower."""
    policy = _policy(settings)
    effective = effective_window(policy)
    threshold = effective - policy.autocompact_buffer
    if policy.autocompact_pct is not None:
        threshold = min(threshold, int(effective * policy.autocompact_pct / 100))
    return threshold


def thresholds(settings: Settings | PolicySettings) -> Thresholds:
    """All thresholds at once (warning and error are relative to the threshold in force)."""
    policy = _policy(settings)
    effective = effective_window(policy)
    auto = auto_compact_threshold(policy)
    base = auto if policy.auto_compact else effective
    return Thresholds.model_construct(  # ints computed here: validating them was most of a replay's policy checks
        context_window=policy.context_window,
        summary_reserve=min(policy.max_output_tokens, policy.summary_reserve_cap),
        effective_window=effective,
        auto_compact=auto,
        warning=base - policy.warning_buffer,
        error=base - policy.error_buffer,
        blocking=effective - policy.blocking_buffer,
    )


def percent_left(tokens: int, settings: Settings | PolicySettings) -> int:
    """Percent of the context left before the threshold in force (0 once past it)."""
    policy = _policy(settings)
    return _percent_left(tokens, auto_compact_threshold(policy) if policy.auto_compact else effective_window(policy))


def _percent_left(tokens: int, base: int) -> int:
    if base <= 0:  # only settings built without validation get here
        return 0
    return max(0, int((base - tokens) * 100 / base + 0.5))


def level_for(tokens: int, settings: Settings | PolicySettings) -> Level:
    """The warning level of a context of ``tokens``."""
    return _level(tokens, thresholds(settings))


def _level(tokens: int, limits: Thresholds) -> Level:
    if tokens >= limits.blocking:
        return "blocking"
    if tokens >= limits.error:
        return "error"
    if tokens >= limits.warning:
        return "warning"
    return "ok"


class CompactionTracker(BaseModel):
    """Turns, failures and recent compactions of one session: the breakers' memory.

    A turn is one model request. Call ``next_turn`` before each one, and
    ``record_success``/``record_failure`` after each compaction attempt.
    """

    model_config = ConfigDict(extra="forbid")

    turn: int = 0
    consecutive_failures: int = 0
    last_compaction_turn: int | None = None
    rapid_repeats: int = 0
    stopped: BreakerReason | None = None

    def next_turn(self) -> None:
        self.turn += 1

    def record_success(self, settings: Settings | PolicySettings, trigger: Trigger = "auto") -> None:
        """A compaction worked. A quick repeat of an automatic one counts toward thrashing.

        A manual success also re-arms auto-compaction stopped by failures
        (compaction works again); a thrashing stop stays until ``reset``.
        """
        policy = _policy(settings)
        self.consecutive_failures = 0
        if trigger == "manual":
            if self.stopped == "too_many_failures":
                self.stopped = None
            self.last_compaction_turn = self.turn
            self.rapid_repeats = 0
            return
        last = self.last_compaction_turn
        if last is not None and self.turn - last <= policy.thrash_turns:
            self.rapid_repeats += 1
        else:
            self.rapid_repeats = 0
        self.last_compaction_turn = self.turn
        if self.rapid_repeats >= policy.thrash_limit:
            self.stopped = "thrashing"

    def record_failure(self, settings: Settings | PolicySettings) -> None:
        """A compaction attempt failed; enough of them in a row stop auto-compaction."""
        self.consecutive_failures += 1
        if self.consecutive_failures >= _policy(settings).max_consecutive_failures and self.stopped is None:
            self.stopped = "too_many_failures"

    def reset(self) -> None:
        """Forget failures and repeats and re-arm auto-compaction (a new start)."""
        self.consecutive_failures = 0
        self.last_compaction_turn = None
        self.rapid_repeats = 0
        self.stopped = None


class Decision(BaseModel):
    """What the policy says about a context of ``tokens``, and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    compact: bool
    reason: DecisionReason
    level: Level
    tokens: int
    threshold: int
    percent_left: int
    message: str | None = None


def _breaker_message(reason: BreakerReason, policy: PolicySettings) -> str:
    if reason == "too_many_failures":
        return (
            f"auto-compaction is off for this session: it failed {policy.max_consecutive_failures} "
            "times in a row. Compact manually, or fix the cause (see the last report's error)."
        )
    return (
        f"auto-compaction is off for this session: it ran again within {policy.thrash_turns} turns "
        f"of the previous one {policy.thrash_limit} times in a row, so the context refills as fast "
        "as compaction empties it. Shrink what each turn brings in (large tool results, "
        "attachments) or the preserved tail, then compact manually or start a new session."
    )


def should_compact(
    tokens: int, settings: Settings | PolicySettings, tracker: CompactionTracker | None = None
) -> Decision:
    """Whether to auto-compact a context of ``tokens`` now. Pure: reads, never acts.

    Compacts when compaction and auto-compaction are enabled, ``tokens`` has
    reached the auto-compact threshold, and no breaker in ``tracker`` has
    tripped. Otherwise ``reason`` says which of these stopped it.
    """
    policy = _policy(settings)
    limits = thresholds(policy)  # asked after every message: each number is worked out once
    threshold = limits.auto_compact
    level = _level(tokens, limits)
    left = _percent_left(tokens, threshold if policy.auto_compact else limits.effective_window)

    def decide(compact: bool, reason: DecisionReason, message: str | None = None) -> Decision:
        return Decision.model_construct(  # asked after every message; its fields are right by construction
            compact=compact,
            reason=reason,
            level=level,
            tokens=tokens,
            threshold=threshold,
            percent_left=left,
            message=message,
        )

    if not policy.compact:
        return decide(False, "compaction_disabled")
    if not policy.auto_compact:
        return decide(False, "auto_compact_disabled")
    if tokens < threshold:
        return decide(False, "below_threshold")
    if tracker is not None and tracker.stopped is not None:
        return decide(False, tracker.stopped, _breaker_message(tracker.stopped, policy))
    return decide(True, "above_threshold")
