"""The figures a replay is judged by, defined once for ``compactor tune`` and ``replay --json``.

Every figure is computed from a ``ReplayReport`` (and the store the replay
wrote to); ``Metrics.combine`` pools sessions into a trial's totals by
adding counts, so the ratios of a total are ratios of sums, never means of
ratios. Definitions (docs/replay-and-tune.md repeats them):

- ``reread_coverage``: of the files read before a compaction and read again
  after it (before the next one), the share the file attachments restored.
- ``reread_coverage_with_tail``: the same, also counting files whose reads
  the preserved tail still shows.
- ``reread_coverage_beyond_tail``: of the re-read files the tail does not
  hold, the share the file attachments restored.
- ``reattached_unused_tokens``: tokens of restored files the session did not
  read again before the next compaction.
- ``reread_missed_tokens``: tokens the session spent re-reading files that
  were neither restored nor in the tail (the first re-read of each).
- ``post_tokens``: the context size right after compaction (mean per
  compaction), in the model's tokens as the replay calibrates them.
- ``post_vs_next_request``: at Claude Code's recorded compactions, the context
  right after compaction against what Claude Code's next request carried
  there (its recorded usage: input, cache creation and cache reads), as a
  ratio of sums; None where the transcript records no such request.
- ``attachment_tokens``: file attachment tokens (mean per compaction).
- ``compactions``: successful compactions (per session, in a total: the sum).
- ``survival_*``: of the file paths touched, shell commands' first lines and
  user messages in the compacted part, the share the summary holds verbatim
  (``compactor.engine.survival`` counts them; sessions pool by count).
- ``retention_*``: of the whole session's paths, command first lines and
  typed user messages so far, the share the whole compacted context (summary,
  tail, attachments) holds verbatim, at every compaction
  (``compactor.engine.survival.context_retention``; pooled by count).
- ``latest_request_named``: the share of compactions whose summary names the
  latest typed request; ``open_items_named``: of the open to-do, task and
  tracker items at compactions, the share the summary names.
- ``recoverable_share``: of the bytes compactions dropped, the share the CCR
  store returns.
- ``masking_steps``: masking steps between compactions (``compactor.engine.masking``;
  tune it with the ``masking.*`` settings, for example ``"masking.enabled" =
  [true, false]`` or ``"masking.keep_rounds" = [2, 3, 5]``).
- ``cache_invalidated_per_100_requests``: cached-prefix tokens that
  compactions and masking steps invalidated, per 100 requests
  (``compactor.engine.cache``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from ccr import Store
from compactor.claude_code.replay import ReplayReport
from compactor.claude_code.transcript import Transcript

__all__ = ["METRIC_NAMES", "Metrics", "next_requests", "replay_metrics"]

METRIC_NAMES: dict[str, str] = {
    "reread_coverage": "re-read coverage (attachments)",
    "reread_coverage_with_tail": "re-read coverage (with tail)",
    "reread_coverage_beyond_tail": "re-read coverage (beyond tail)",
    "reattached_unused_tokens": "re-attached, unused (tokens)",
    "reread_missed_tokens": "re-read, not restored (tokens)",
    "post_tokens": "post-compaction context (tokens)",
    "post_vs_next_request": "context / Claude Code's next request",
    "attachment_tokens": "file attachments (tokens)",
    "compactions": "compactions",
    "survival_paths": "paths in summary",
    "survival_commands": "commands in summary",
    "survival_user_messages": "user messages in summary",
    "retention_paths": "session paths in context",
    "retention_commands": "session commands in context",
    "retention_user_messages": "session user messages in context",
    "latest_request_named": "latest request in summary",
    "open_items_named": "open items in summary",
    "recoverable_share": "dropped bytes recoverable",
    "masking_steps": "masking steps",
    "cache_invalidated_per_100_requests": "cache invalidated per 100 requests (tokens)",
}
"""Every derived figure, with the label reports show."""

_SURVIVAL = ("paths", "commands", "user_messages")


class Metrics(BaseModel):
    """Counts from one or more replays, and the figures derived from them."""

    model_config = ConfigDict(extra="forbid")

    sessions: int = 1
    compactions: int = 0
    failures: int = 0
    reread_files: int = 0
    reread_restored: int = 0
    reread_in_tail: int = 0
    reattached_unused_tokens: int = 0
    reread_missed_tokens: int = 0
    post_tokens_sum: int = 0
    matched_post_tokens_sum: int = 0
    """``post_tokens`` summed over the compactions whose recorded next request is known."""
    next_request_tokens_sum: int = 0
    """Claude Code's next request after those compactions, summed."""
    attachment_tokens_sum: int = 0
    survival_found: dict[str, int] = {}
    survival_total: dict[str, int] = {}
    retention_found: dict[str, int] = {}
    retention_total: dict[str, int] = {}
    requests_named: int = 0
    requests_asked: int = 0
    open_items_found: int = 0
    open_items_total: int = 0
    dropped_bytes: int = 0
    recoverable_bytes: int = 0
    masking_steps: int = 0
    requests: int = 0
    cache_invalidated_tokens: int = 0

    @property
    def reread_coverage(self) -> float | None:
        return _share(self.reread_restored, self.reread_files)

    @property
    def reread_coverage_with_tail(self) -> float | None:
        return _share(self.reread_restored + self.reread_in_tail, self.reread_files)

    @property
    def reread_coverage_beyond_tail(self) -> float | None:
        return _share(self.reread_restored, self.reread_files - self.reread_in_tail)

    @property
    def post_tokens(self) -> float | None:
        return self.post_tokens_sum / self.compactions if self.compactions else None

    @property
    def post_vs_next_request(self) -> float | None:
        if not self.next_request_tokens_sum:
            return None
        return self.matched_post_tokens_sum / self.next_request_tokens_sum

    @property
    def attachment_tokens(self) -> float | None:
        return self.attachment_tokens_sum / self.compactions if self.compactions else None

    @property
    def survival_paths(self) -> float | None:
        return _share(self.survival_found.get("paths", 0), self.survival_total.get("paths", 0))

    @property
    def survival_commands(self) -> float | None:
        return _share(self.survival_found.get("commands", 0), self.survival_total.get("commands", 0))

    @property
    def survival_user_messages(self) -> float | None:
        return _share(self.survival_found.get("user_messages", 0), self.survival_total.get("user_messages", 0))

    @property
    def retention_paths(self) -> float | None:
        return _share(self.retention_found.get("paths", 0), self.retention_total.get("paths", 0))

    @property
    def retention_commands(self) -> float | None:
        return _share(self.retention_found.get("commands", 0), self.retention_total.get("commands", 0))

    @property
    def retention_user_messages(self) -> float | None:
        return _share(self.retention_found.get("user_messages", 0), self.retention_total.get("user_messages", 0))

    @property
    def latest_request_named(self) -> float | None:
        return _share(self.requests_named, self.requests_asked)

    @property
    def open_items_named(self) -> float | None:
        return _share(self.open_items_found, self.open_items_total)

    @property
    def cache_invalidated_per_100_requests(self) -> float | None:
        return 100 * self.cache_invalidated_tokens / self.requests if self.requests else None

    @property
    def recoverable_share(self) -> float | None:
        return _share(self.recoverable_bytes, self.dropped_bytes)

    def figures(self) -> dict[str, float | int | None]:
        """Every figure of ``METRIC_NAMES`` by name."""
        return {name: getattr(self, name) for name in METRIC_NAMES}

    def as_json(self) -> dict[str, Any]:
        """The counts and the figures, as ``results.json`` and ``replay --json`` print them."""
        return {**self.model_dump(mode="json"), **self.figures()}

    @classmethod
    def combine(cls, parts: Iterable[Metrics]) -> Metrics:
        """The pooled metrics of several sessions (counts added)."""
        total = cls(sessions=0)
        for part in parts:
            for name in cls.model_fields:
                value = getattr(part, name)
                if isinstance(value, dict):
                    merged = dict(getattr(total, name))
                    for key, n in value.items():
                        merged[key] = merged.get(key, 0) + n
                    setattr(total, name, merged)
                else:
                    setattr(total, name, getattr(total, name) + value)
        return total


def next_requests(transcript: Transcript) -> dict[int, int]:
    """What Claude Code's first request after each recorded compaction carried, by the boundary's line:
    the first later assistant answer's usage (input, cache creation and cache reads; not its output)."""
    found: dict[int, int] = {}
    for compaction in transcript.compactions:
        for entry in transcript.entries[compaction.entry_index + 1 :]:
            usage = entry.message.usage if entry.message is not None and entry.message.role == "assistant" else None
            if usage is not None:
                found[compaction.line] = (
                    usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
                )
                break
    return found


def replay_metrics(
    report: ReplayReport, store: Store | None = None, *, recorded_next: dict[int, int] | None = None
) -> Metrics:
    """The metrics of one replay; ``store`` is the store it wrote to (for ``recoverable_share``);
    ``recorded_next`` is ``next_requests`` of its transcript when it was replayed at recorded points."""
    totals = report.totals
    metrics = Metrics(
        compactions=totals.compactions,
        failures=totals.failures,
        reread_files=totals.reread_files,
        reread_restored=totals.reread_restored,
        reread_in_tail=totals.reread_in_tail,
        reattached_unused_tokens=totals.reattached_unused_tokens,
        reread_missed_tokens=totals.reread_missed_tokens,
        masking_steps=totals.masking_steps,
        requests=totals.requests,
        cache_invalidated_tokens=totals.cache_invalidated_tokens,
    )
    found: dict[str, int] = {}
    total: dict[str, int] = {}
    for compaction in report.compactions:
        metrics.post_tokens_sum += compaction.post_tokens
        theirs = (recorded_next or {}).get(compaction.at_line) if compaction.at_line is not None else None
        if theirs:
            metrics.matched_post_tokens_sum += compaction.post_tokens
            metrics.next_request_tokens_sum += theirs
        metrics.attachment_tokens_sum += sum(a.tokens for a in compaction.attachments if a.type == "file")
        for kind, (hit, of) in _survival_counts(compaction).items():
            found[kind] = found.get(kind, 0) + hit
            total[kind] = total.get(kind, 0) + of
        retention = compaction.retention
        if retention is not None:
            for kind in _SURVIVAL:
                part = getattr(retention, kind)
                metrics.retention_found[kind] = metrics.retention_found.get(kind, 0) + part.kept
                metrics.retention_total[kind] = metrics.retention_total.get(kind, 0) + part.total
        if compaction.continuation is not None:
            named = compaction.continuation.latest_request
            if named is not None:
                metrics.requests_asked += 1
                metrics.requests_named += int(named)
            metrics.open_items_found += compaction.continuation.open_items.kept
            metrics.open_items_total += compaction.continuation.open_items.total
        for span in compaction.dropped:
            if span.piece_of is not None:
                continue  # a piece of a span counted whole
            metrics.dropped_bytes += span.bytes
            if span.recoverable and span.handle and store is not None and store.contains(span.handle):
                metrics.recoverable_bytes += span.bytes
    metrics.survival_found, metrics.survival_total = found, total
    return metrics


def _survival_counts(compaction: Any) -> dict[str, tuple[int, int]]:
    """(verbatim, total) per fact kind from a compaction report's ``survival`` (``compactor.engine.survival``)."""
    counts = getattr(getattr(compaction, "survival", None), "counts", None)
    if counts is None:
        return {}
    found: dict[str, tuple[int, int]] = {}
    for kind in _SURVIVAL:
        part = getattr(counts, kind, None)
        if part is not None:
            found[kind] = (part.verbatim, part.total)
    return found


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole > 0 else None
