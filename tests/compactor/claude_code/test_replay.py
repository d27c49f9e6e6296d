"""Replaying recorded sessions: the real ones in ../shared and the project's own."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ccr import find_handles, open_store
from compactor.claude_code.replay import replay
from compactor.claude_code.restore import read_lines, restored_bytes
from compactor.claude_code.transcript import read_transcript
from compactor.core.config import load_settings
from compactor.core.messages import Message
from compactor.engine.pipeline import CompactionResult
from compactor.engine.policy import auto_compact_threshold


def _replay_collecting(path: Path, tmp_path: Path, **kw: object) -> tuple[object, list[CompactionResult], object]:
    settings = load_settings(env={})
    store = open_store(tmp_path / "ccr.db")
    results: list[CompactionResult] = []
    report = replay(
        path,
        settings=settings,
        store=store,
        on_compaction=lambda r, _line: results.append(r),
        **kw,  # type: ignore[arg-type]
    )
    return report, results, store


Replayed = tuple[object, list[CompactionResult], object]


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path, str], Replayed]:
    """``replayed(path, at)``: the replay of a real session in that mode, with what it compacted and
    its store, made once for the tests that only read it (each mode is checked by two of them)."""
    done: dict[tuple[Path, str], Replayed] = {}

    def get(path: Path, at: str) -> Replayed:
        if (path, at) not in done:
            done[(path, at)] = _replay_collecting(path, tmp_path_factory.mktemp("replay"), at=at)
        return done[(path, at)]

    return get


def _head(store: object, result: CompactionResult) -> list[Message]:
    data = store.get(result.report.dropped[0].handle)  # type: ignore[attr-defined]
    return [Message.model_validate(json.loads(line)) for line in data.decode().split("\n")[:-1]]


def _touched_paths(messages: list[Message]) -> set[str]:
    return {
        str(use.input[key])
        for m in messages
        for use in m.tool_uses()
        for key in ("file_path", "notebook_path")
        if isinstance(use.input.get(key), str)
    }


def test_replays_of_the_real_sessions_compact_and_keep_what_matters(
    shared_transcript: Path, replayed: Callable[[Path, str], Replayed]
) -> None:
    transcript = read_transcript(shared_transcript)
    peak = max((m.usage.total for m in transcript.messages if m.usage), default=0)
    report, results, store = replayed(shared_transcript, "auto")
    threshold = auto_compact_threshold(load_settings(env={}))
    assert not report.failures  # type: ignore[attr-defined]
    if peak > 150_000:
        assert report.compactions, f"recorded context reached {peak:,} tokens but nothing compacted"  # type: ignore[attr-defined]
    for result in results:
        assert result.report.post_tokens < threshold
        summary = result.messages[0].text()
        assert find_handles(summary), "the summary names the stored head"
        head = _head(store, result)
        # Fact survival (compactor.engine.survival): every typed user message and at least 90% of the
        # touched paths, verbatim (paths also relative to the session's directory) or in a cited span.
        survival = result.report.survival
        assert survival is not None
        assert survival.counts.paths.total == len(_touched_paths(head))
        assert survival.user_messages in (None, 1.0), survival
        assert survival.paths is None or survival.paths >= 0.9, survival
        coverage, with_tail = result.report.reread_coverage, result.report.reread_coverage_with_tail
        assert (coverage is None) == (with_tail is None)
        if coverage is not None and with_tail is not None:
            assert 0.0 <= coverage <= with_tail <= 1.0


def test_recorded_mode_compacts_exactly_where_claude_code_did(
    shared_transcript: Path, replayed: Callable[[Path, str], Replayed]
) -> None:
    transcript = read_transcript(shared_transcript)
    report, _, _ = replayed(shared_transcript, "recorded")
    assert [c.at_line for c in report.compactions] == [c.line for c in transcript.compactions]  # type: ignore[attr-defined]


def test_recorded_mode_on_every_real_session_compacts_where_it_did_without_a_failure(
    shared_transcript: Path, replayed: Callable[[Path, str], Replayed]
) -> None:
    transcript = read_transcript(shared_transcript)
    report, _, _ = replayed(shared_transcript, "recorded")
    assert not report.failures  # type: ignore[attr-defined]
    assert [c.at_line for c in report.compactions] == [c.line for c in transcript.compactions]  # type: ignore[attr-defined]
    threshold = auto_compact_threshold(load_settings(env={}))
    assert all(c.post_tokens < 0.6 * threshold for c in report.compactions)  # type: ignore[attr-defined]


def test_auto_mode_compacts_every_real_session_whose_recorded_context_passed_the_threshold(
    shared_transcript: Path, replayed: Callable[[Path, str], Replayed]
) -> None:
    transcript = read_transcript(shared_transcript)
    threshold = auto_compact_threshold(load_settings(env={}))
    recorded = [m.usage.total for m in transcript.messages if m.usage is not None]
    recorded += [c.pre_tokens for c in transcript.compactions if c.pre_tokens is not None]
    report, _, _ = replayed(shared_transcript, "auto")
    assert not report.failures  # type: ignore[attr-defined]
    if max(recorded, default=0) >= threshold:
        assert report.compactions, f"the recording reached {max(recorded):,} tokens but the replay never compacted"  # type: ignore[attr-defined]
    assert all(c.post_tokens < 0.6 * threshold for c in report.compactions)  # type: ignore[attr-defined]


def test_a_fragment_drops_its_unseen_context_with_the_first_head_and_never_calibrates_it_in(
    shared_transcripts: Path, tmp_path: Path
) -> None:
    path = shared_transcripts / "entire-2.1.14-0cf3db51.jsonl"
    transcript = read_transcript(path)
    assert transcript.fragment is not None and transcript.fragment.first_usage_tokens == 114_895
    report, _, _ = _replay_collecting(path, tmp_path, at="recorded")
    calibration = report.calibration  # type: ignore[attr-defined]
    assert calibration.overhead <= 45_000 and calibration.unseen > 50_000
    first, *rest = report.compactions  # type: ignore[attr-defined]
    unseen = [d for d in first.dropped if not d.recoverable]
    assert [(d.kind, d.handle, d.tokens) for d in unseen] == [("unseen", "", calibration.unseen)]
    assert all(d.recoverable for c in rest for d in c.dropped)


def test_the_output_is_the_compacted_session_and_reads_back_as_the_context_the_report_describes(
    shared_transcript: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.jsonl"
    _, results, _ = _replay_collecting(shared_transcript, tmp_path, output=out)
    written = read_transcript(out, strict=True)
    assert written.warnings == []
    done = [r for r in results if r.ok]
    assert len(written.compactions) == len(done)
    for recorded, result in zip(written.compactions, done, strict=True):
        boundary = written.entries[recorded.entry_index].record
        assert {"timestamp", "version", "cwd", "sessionId", "gitBranch"} <= set(boundary)
        context = written.messages[recorded.message_index : recorded.message_index + len(result.messages)]
        assert [m.content for m in context] == [m.content for m in result.messages]
        assert [m.is_meta for m in context] == [m.is_meta for m in result.messages]
        assert context[0].is_compact_summary and recorded.summary == result.messages[0].text()


def test_a_replay_that_thrashes_says_when_and_why_auto_compaction_stopped(tmp_path: Path) -> None:
    long = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "long.jsonl"
    settings = load_settings(env={}, overrides={"policy.context_window": 45_000, "pipeline.tail_tokens": 2_000})
    report = replay(long, settings=settings, store=open_store(tmp_path / "ccr.db"))
    assert len(report.compactions) >= 3
    assert report.totals.stopped is not None and "ran again within 3 turns" in report.totals.stopped
    assert report.totals.stopped_at_line is not None
    assert report.totals.stopped_at_line > max(c.at_line or 0 for c in report.compactions)


LONG = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "long.jsonl"
SMALL_WINDOW = {"policy.context_window": 60_000, "pipeline.tail_tokens": 2_000}


def test_each_compaction_of_a_replay_stores_its_transcript_segment_with_it_in_one_transaction(
    tmp_path: Path, counting_store: Callable[..., Any]
) -> None:
    store = counting_store("ccr.db")
    settings = load_settings(env={}, overrides=SMALL_WINDOW)
    report = replay(LONG, settings=settings, store=store, output=tmp_path / "compacted.jsonl")
    assert len(report.compactions) >= 2 and not report.masking
    assert store.commits == len(report.compactions)  # and a compaction that failed committed nothing
    segments = [c.transcript for c in report.compactions]
    assert all(s is not None for s in segments)
    for n, segment in enumerate(segments, start=1):
        assert segment is not None
        expected, _ = read_lines(LONG, 1, segment.last_line)
        assert restored_bytes([s for s in segments if s is not None], store, before=n) == expected


def test_a_replay_that_writes_no_compacted_session_stores_no_copy_of_the_transcript(tmp_path: Path) -> None:
    store = open_store(tmp_path / "ccr.db")
    report = replay(LONG, settings=load_settings(env={}, overrides=SMALL_WINDOW), store=store)
    assert report.compactions and all(c.transcript is None for c in report.compactions)
    kinds = {(r.metadata or {}).get("kind") for r in store.records()}
    assert "transcript" not in kinds and "head" in kinds


def test_a_replay_whose_store_refuses_stores_no_segment_and_no_span(
    tmp_path: Path, counting_store: Callable[..., Any]
) -> None:
    store = counting_store("ccr.db", max_bytes=1_000)
    report = replay(
        LONG, settings=load_settings(env={}, overrides=SMALL_WINDOW), store=store, output=tmp_path / "compacted.jsonl"
    )
    assert report.failures and not report.compactions
    assert all(f.error_id == "ccr_budget_exceeded" for f in report.failures)
    assert store.stats().entries == 0 and store.commits == 0


def test_the_output_shows_the_stubs_masking_left_in_the_context(tmp_path: Path) -> None:
    overrides = {"masking.enabled": True, "masking.cache_policy": "eager", **SMALL_WINDOW}
    out = tmp_path / "out.jsonl"
    with open_store(tmp_path / "ccr.db") as store:
        report = replay(LONG, settings=load_settings(env={}, overrides=overrides), store=store, output=out)
        handles = [h for step in report.masking if step.ok for h in step.handles]
        assert handles and report.compactions  # masked both before and after a compaction
        written = read_transcript(out, strict=True)
        assert written.warnings == []
        shown = {b.tool_use_id: b.text() for m in written.messages for b in m.tool_results()}
        for handle in handles:
            tool_use_id = (store.record(handle).metadata or {})["tool_use_id"]
            assert f"<<ccr:{handle}>>" in shown[tool_use_id]  # the stub, not the result it stands for
