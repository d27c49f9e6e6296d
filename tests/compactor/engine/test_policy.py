"""Threshold policy: the arithmetic, the decision and the two breakers."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compactor.claude_code.transcript import Transcript, read_transcript
from compactor.core.config import DedupSettings, PolicySettings, Settings, load_settings
from compactor.core.messages import Message
from compactor.core.session import DedupState
from compactor.core.tokens import RoughCounter, usage_anchored_estimate
from compactor.engine.dedup import Deduper, reset_after_compaction, tool_name_map
from compactor.engine.policy import (
    CompactionTracker,
    auto_compact_threshold,
    effective_window,
    level_for,
    percent_left,
    should_compact,
    thresholds,
)

DEFAULT = PolicySettings()


def test_default_thresholds_match_claude_code() -> None:
    limits = thresholds(Settings())
    assert limits.effective_window == 180_000
    assert limits.auto_compact == 167_000
    assert limits.warning == limits.error == 147_000
    assert limits.blocking == 177_000


def test_the_summary_reserve_is_the_smaller_of_max_output_and_the_cap() -> None:
    assert effective_window(PolicySettings(max_output_tokens=8_000)) == 192_000
    assert effective_window(PolicySettings(summary_reserve_cap=32_000)) == 168_000
    assert auto_compact_threshold(PolicySettings(summary_reserve_cap=32_000)) == 155_000


def test_a_context_window_override_moves_every_threshold() -> None:
    settings = load_settings(env={"COMPACTOR_CONTEXT_WINDOW": "1000000"})
    assert auto_compact_threshold(settings) == 967_000


def test_a_percentage_can_lower_the_threshold() -> None:
    assert auto_compact_threshold(PolicySettings(autocompact_pct=50)) == 90_000


def test_a_percentage_can_never_raise_the_threshold() -> None:
    assert auto_compact_threshold(PolicySettings(autocompact_pct=100)) == 167_000
    assert auto_compact_threshold(PolicySettings(autocompact_pct=99)) == 167_000


@given(pct=st.floats(min_value=0.01, max_value=100))
def test_any_percentage_gives_at_most_the_default_threshold(pct: float) -> None:
    assert auto_compact_threshold(PolicySettings(autocompact_pct=pct)) <= 167_000


def test_percent_left_counts_down_to_zero() -> None:
    assert percent_left(0, DEFAULT) == 100
    assert percent_left(83_500, DEFAULT) == 50
    assert percent_left(167_000, DEFAULT) == 0
    assert percent_left(190_000, DEFAULT) == 0


def test_without_auto_compaction_percent_left_is_of_the_effective_window() -> None:
    assert percent_left(90_000, PolicySettings(auto_compact=False)) == 50


def test_levels_rise_with_the_context() -> None:
    assert level_for(146_999, DEFAULT) == "ok"
    assert level_for(147_000, DEFAULT) == "error"
    assert level_for(177_000, DEFAULT) == "blocking"
    assert level_for(150_000, PolicySettings(error_buffer=10_000)) == "warning"


def test_below_the_threshold_nothing_happens() -> None:
    decision = should_compact(166_999, Settings())
    assert not decision.compact and decision.reason == "below_threshold"
    assert decision.threshold == 167_000


def test_at_the_threshold_it_compacts() -> None:
    decision = should_compact(167_000, Settings(), CompactionTracker())
    assert decision.compact and decision.reason == "above_threshold"
    assert decision.level == "error" and decision.percent_left == 0


def test_disabled_auto_compaction_never_fires() -> None:
    settings = load_settings(env={"COMPACTOR_DISABLE_AUTO_COMPACT": "1"})
    decision = should_compact(179_000, settings)
    assert not decision.compact and decision.reason == "auto_compact_disabled"
    assert decision.level == "blocking"


def test_disabled_compaction_never_fires() -> None:
    settings = load_settings(env={"COMPACTOR_DISABLE_COMPACT": "1"})
    assert should_compact(500_000, settings).reason == "compaction_disabled"


def test_three_consecutive_failures_stop_auto_compaction() -> None:
    tracker = CompactionTracker()
    for _ in range(2):
        tracker.record_failure(DEFAULT)
        assert should_compact(170_000, DEFAULT, tracker).compact
    tracker.record_failure(DEFAULT)
    decision = should_compact(170_000, DEFAULT, tracker)
    assert not decision.compact and decision.reason == "too_many_failures"
    assert decision.message is not None and "failed 3 times in a row" in decision.message


def test_a_success_resets_the_failure_count() -> None:
    tracker = CompactionTracker()
    tracker.record_failure(DEFAULT)
    tracker.record_failure(DEFAULT)
    tracker.record_success(DEFAULT)
    tracker.record_failure(DEFAULT)
    assert tracker.stopped is None


def test_a_manual_success_re_arms_after_failures() -> None:
    tracker = CompactionTracker()
    for _ in range(3):
        tracker.record_failure(DEFAULT)
    tracker.record_success(DEFAULT, trigger="manual")
    assert should_compact(170_000, DEFAULT, tracker).compact


def compact_at(tracker: CompactionTracker, turns: list[int]) -> None:
    for turn in turns:
        while tracker.turn < turn:
            tracker.next_turn()
        tracker.record_success(DEFAULT)


def test_compacting_again_within_three_turns_three_times_in_a_row_is_thrashing() -> None:
    tracker = CompactionTracker()
    compact_at(tracker, [10, 12, 15])
    assert tracker.stopped is None
    compact_at(tracker, [17])
    decision = should_compact(170_000, DEFAULT, tracker)
    assert not decision.compact and decision.reason == "thrashing"
    assert decision.message is not None and "within 3 turns" in decision.message


def test_a_slow_compaction_breaks_the_thrashing_streak() -> None:
    tracker = CompactionTracker()
    compact_at(tracker, [10, 12, 14, 30, 32, 34])
    assert tracker.stopped is None


def test_a_manual_compaction_does_not_count_toward_thrashing() -> None:
    tracker = CompactionTracker()
    compact_at(tracker, [10, 11, 12])
    tracker.next_turn()
    tracker.record_success(DEFAULT, trigger="manual")
    compact_at(tracker, [14])
    assert tracker.stopped is None


def test_a_tripped_breaker_still_reports_below_threshold_contexts_as_such() -> None:
    tracker = CompactionTracker(stopped="thrashing")
    assert should_compact(1_000, DEFAULT, tracker).reason == "below_threshold"


def test_reset_re_arms_auto_compaction() -> None:
    tracker = CompactionTracker(stopped="thrashing", rapid_repeats=3, consecutive_failures=2)
    tracker.reset()
    assert should_compact(170_000, DEFAULT, tracker).compact


def test_settings_leaving_no_room_are_rejected() -> None:
    with pytest.raises(ValueError, match="leaves no room"):
        PolicySettings(context_window=25_000)


# -- real sessions -------------------------------------------------------------


def _reserve_cap(transcript: Transcript) -> int:
    """Builds before 2.1 reserved 32,000 tokens for the summary; later ones 20,000."""
    version = next((e.record.get("version") for e in transcript.entries if e.record.get("version")), "")
    return 32_000 if str(version).startswith(("1.", "2.0.")) else 20_000


def _first_firing(
    messages: list[Message], start: int, end: int, policy: PolicySettings, saved: list[int] | None = None
) -> tuple[int, int] | None:
    """(message index, estimate) where the policy first fires before a request in [start, end].

    The end is always a check point: where a boundary's last record was never written (its
    logical parent is missing), the user-side message that made Claude Code check is not in
    the file, and the boundary itself is where it checked.
    """
    rough = RoughCounter()
    cumulative = 0
    for k in range(start + 1, end + 1):
        cumulative += saved[k - 1] if saved else 0
        if messages[k - 1].role != "user" and k != end:
            continue
        estimate = usage_anchored_estimate(messages[start:k], rough) - cumulative
        if should_compact(estimate, policy, CompactionTracker()).compact:
            return k, estimate
    return None


def test_the_policy_fires_where_claude_code_compacted(shared_transcripts: Path) -> None:
    checked = 0
    for path in sorted(shared_transcripts.rglob("*.jsonl")):
        if "subagents" in path.parts:
            continue
        transcript = read_transcript(path)
        policy = PolicySettings(summary_reserve_cap=_reserve_cap(transcript))
        start = 0
        for compaction in transcript.compactions:
            if compaction.trigger == "auto" and compaction.pre_tokens:
                fired = _first_firing(transcript.messages, start, compaction.message_index, policy)
                assert fired is not None, f"{path.name}: never reached the threshold"
                index, estimate = fired
                assert abs(estimate - compaction.pre_tokens) <= 0.02 * compaction.pre_tokens, path.name
                assert index == compaction.message_index, path.name
                checked += 1
            start = compaction.message_index
    assert checked >= 2


def test_dedup_savings_and_when_compaction_would_have_fired(shared_transcripts: Path) -> None:
    """Prints, per session, what dedup saved and how it moves the compaction point."""
    rough = RoughCounter()
    compactions_seen = 0
    for path in sorted(shared_transcripts.rglob("*.jsonl")):
        if "subagents" in path.parts:
            continue
        transcript = read_transcript(path)
        messages = transcript.messages
        names = tool_name_map(messages)
        deduper = Deduper(DedupState())
        boundaries = {c.message_index for c in transcript.compactions}
        saved: list[int] = []
        for index, message in enumerate(messages):
            if index in boundaries:
                reset_after_compaction(deduper.state)
            saved.append(rough.count_message(message) - rough.count_message(deduper.apply_to_message(message, names)))
        hits = sum(deduper.state.hits.values())
        assert hits == _repeats(messages, names, boundaries), path.name
        print(
            f"\n{path.relative_to(shared_transcripts)}: dedup hits {hits}, "
            f"saved {sum(deduper.state.saved_bytes.values())} bytes, "
            f"net {sum(saved)} rough tokens (result-id tags included)"
        )
        policy = PolicySettings(summary_reserve_cap=_reserve_cap(transcript))
        start = 0
        for compaction in transcript.compactions:
            if compaction.trigger == "auto" and compaction.pre_tokens:
                plain = _first_firing(messages, start, compaction.message_index, policy)
                with_dedup = _first_firing(messages, start, len(messages), policy, saved)
                assert plain is not None
                segment_saved = sum(saved[start : plain[0]])
                moved = (
                    "does not fire within the recorded session"
                    if with_dedup is None
                    else f"fires at message {with_dedup[0]} ({with_dedup[0] - plain[0]:+d} messages)"
                )
                print(
                    f"  compaction at message {compaction.message_index} (preTokens {compaction.pre_tokens}): "
                    f"dedup saved {segment_saved:+d} tokens by then; with dedup the policy {moved}"
                )
                compactions_seen += 1
            start = compaction.message_index
    assert compactions_seen >= 2


def _repeats(messages: list[Message], names: dict[str, str], boundaries: set[int]) -> int:
    """A plain count of eligible results repeated within one compaction segment."""
    seen: set[str] = set()
    repeats = 0
    dedup = DedupSettings()
    for index, message in enumerate(messages):
        if index in boundaries:
            seen.clear()
        for block in message.tool_results():
            tool = names.get(block.tool_use_id, "unknown")
            if not isinstance(block.content, str) or block.is_error or dedup.is_recovery_tool(tool):
                continue
            limit = dedup.threshold_for(tool)
            size = len(block.content.encode("utf-16-le", "surrogatepass")) // 2
            if size <= 256 or (limit is not None and size + 26 > limit):
                continue
            repeats += block.content in seen
            seen.add(block.content)
    return repeats


def test_percent_left_of_a_threshold_at_zero_is_zero_not_a_division_error() -> None:
    unchecked = PolicySettings.model_construct(autocompact_pct=0.0001)
    assert auto_compact_threshold(unchecked) == 0
    assert percent_left(0, unchecked) == 0
    assert should_compact(0, unchecked).compact
