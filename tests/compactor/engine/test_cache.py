"""Prompt-cache accounting: the prefix up to the first change is kept, the rest invalidated."""

from __future__ import annotations

from attachments import RecordedFiles
from ccr import open_store
from compactor.core.config import load_settings
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.core.tokens import RoughCounter
from compactor.engine.cache import PromptCache, first_change, message_time, prefix_effect
from compactor.engine.orchestrator import Orchestrator
from compactor.summarizers.extractive import ExtractiveSummarizer


def test_a_change_keeps_the_cached_prefix_before_it_and_invalidates_the_rest() -> None:
    effect = prefix_effect([10, 20, 30, 40], changed_at=2, cached=4)
    assert (effect.kept_tokens, effect.invalidated_tokens, effect.cold) == (30, 70, False)


def test_only_what_the_last_request_cached_can_be_invalidated() -> None:
    effect = prefix_effect([10, 20, 30, 40], changed_at=1, cached=3)
    assert (effect.kept_tokens, effect.invalidated_tokens) == (10, 50)


def test_a_change_after_the_cached_prefix_invalidates_nothing() -> None:
    effect = prefix_effect([10, 20, 30, 40], changed_at=3, cached=2)
    assert (effect.kept_tokens, effect.invalidated_tokens) == (30, 0)


def test_a_cold_cache_has_nothing_to_keep_or_invalidate() -> None:
    effect = prefix_effect([10, 20, 30], changed_at=0, cached=0)
    assert (effect.kept_tokens, effect.invalidated_tokens, effect.cold) == (0, 0, True)


def test_the_cache_goes_cold_once_the_ttl_has_passed_since_the_last_request() -> None:
    cache = PromptCache(ttl_seconds=300)
    assert cache.is_cold(0.0)  # no request yet
    cache.request(5, at=1000.0)
    assert cache.cached(1000.0 + 300) == 5
    assert cache.is_cold(1000.0 + 301)
    assert cache.cached(1000.0 + 301) == 0
    cache.changed(2)
    assert cache.cached(1001.0) == 2
    assert cache.requests == 1


def test_first_change_finds_the_first_differing_message() -> None:
    a = [Message(role="user", content=str(n)) for n in range(4)]
    b = [*a[:2], Message(role="user", content="other"), a[3]]
    assert first_change(a, b) == 2
    assert first_change(a, list(a)) == 4
    assert first_change(a, a[:3]) == 3


def test_message_time_reads_recorded_timestamps_and_ignores_bad_ones() -> None:
    assert message_time(Message(role="user", content="x", timestamp="2025-01-01T00:00:00.000Z")) == 1735689600.0
    assert message_time(Message(role="user", content="x")) is None
    assert message_time(Message(role="user", content="x", timestamp="yesterday")) is None


def _stamp(seconds: int) -> str:
    return f"2025-01-01T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000Z"


def _orchestrator(store_path: str) -> Orchestrator:
    settings = load_settings(env={}, overrides={"pipeline.tail_tokens": 50, "counter": "rough"})
    return Orchestrator(
        settings=settings,
        store=open_store(store_path),
        counter=RoughCounter(),
        summarizer=ExtractiveSummarizer(),
        files=RecordedFiles(),
    )


def _feed(orch: Orchestrator, rounds: int, *, start: int, gap: int) -> None:
    t = start
    orch.add_message(Message(role="user", content="Please look at the files", timestamp=_stamp(t)))
    for n in range(rounds):
        t += gap
        orch.add_message(
            Message(
                role="assistant",
                timestamp=_stamp(t),
                content=[
                    TextBlock(text=f"Reading part {n}"),
                    ToolUseBlock(id=f"t{start}-{n}", name="Bash", input={"command": f"cat part{n}.txt"}),
                ],
            )
        )
        orch.add_message(
            Message(
                role="user",
                timestamp=_stamp(t + 1),
                content=[
                    ToolResultBlock(tool_use_id=f"t{start}-{n}", content=f"line {n}\n" * 200),
                ],
            )
        )


def test_a_compaction_while_the_cache_is_warm_invalidates_every_cached_message(tmp_path) -> None:
    orch = _orchestrator(str(tmp_path / "ccr.db"))
    _feed(orch, 6, start=0, gap=10)
    cached = orch.messages[: orch.cache.count]  # what the last request sent
    assert cached
    result = orch.compact("manual")
    assert result.ok and result.report.cache is not None
    assert result.report.cache.kept_tokens == 0  # the summary comes first
    assert result.report.cache.invalidated_tokens == sum(RoughCounter().count_message(m) for m in cached)
    assert not result.report.cache.cold
    assert orch.cache.count == 0


def test_a_compaction_after_a_long_pause_finds_the_cache_cold(tmp_path) -> None:
    orch = _orchestrator(str(tmp_path / "ccr.db"))
    _feed(orch, 6, start=0, gap=10)
    orch.add_message(Message(role="user", content="Back after lunch: go on", timestamp=_stamp(3600)))
    result = orch.compact("manual")
    assert result.ok and result.report.cache is not None
    assert result.report.cache.cold
    assert (result.report.cache.kept_tokens, result.report.cache.invalidated_tokens) == (0, 0)
