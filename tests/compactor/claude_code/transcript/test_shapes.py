"""Every shape of real transcript, as the project's generator writes it, read and replayed.

The files in ``fixtures/sessions/shapes/`` are made by ``fixtures/generate.py``
from the project's own sessions: a boundary whose logical parent was never
written, a file that starts mid-session, records appended twice, two
sessions in one file, a 1.0.x compaction without a boundary, and progress
records inside the chain.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import get_args

import pytest

from ccr import open_store
from compactor.claude_code.replay import ReplayAt, ReplayReport, replay
from compactor.claude_code.transcript import read_sessions, read_transcript
from compactor.core.config import load_settings
from compactor.core.errors import TranscriptError
from compactor.engine.report import AttachmentType

SESSIONS = Path(__file__).resolve().parents[4] / "fixtures" / "sessions"
SHAPES = SESSIONS / "shapes"

# Windows small enough that the short sessions compact (the long ones compact at the real threshold).
SMALL_WINDOW = {"policy.context_window": 40_000, "pipeline.tail_tokens": 2_000}
MEDIUM_WINDOW = {"policy.context_window": 60_000, "pipeline.tail_tokens": 2_000}


def _replay(path: Path, tmp_path: Path, at: ReplayAt = "auto", window: dict[str, object] | None = None) -> ReplayReport:
    settings = load_settings(env={}, overrides=window or {})
    store = open_store(tmp_path / "ccr.db")
    try:
        return replay(path, settings=settings, store=store, at=at)
    finally:
        store.close()


def _compacts_cleanly(report: ReplayReport) -> None:
    assert report.compactions, "the replay never compacted"
    assert not report.failures, [f.error for f in report.failures]


# -- a boundary whose logical parent was never written ---------------------------------


def test_a_dangling_boundary_links_to_the_record_before_it_and_says_so(tmp_path: Path) -> None:
    path = SHAPES / "dangling_boundary.jsonl"
    t = read_transcript(path, strict=True)
    assert [w.kind for w in t.warnings] == ["dangling_logical_parent"]
    assert t.fragment is None
    (compaction,) = t.compactions
    assert compaction.pre_tokens is not None and compaction.message_index > 100
    assert t.messages[0].text().startswith("I'm new to this repo")
    report = _replay(path, tmp_path, at="recorded")
    _compacts_cleanly(report)
    assert [c.at_line for c in report.compactions] == [compaction.line]


def test_a_dangling_boundary_reads_like_the_session_it_was_made_from() -> None:
    dangling = read_transcript(SHAPES / "dangling_boundary.jsonl")
    long = read_transcript(SESSIONS / "long.jsonl")
    assert [m.content for m in dangling.messages] == [m.content for m in long.messages[: len(dangling.messages)]]


# -- a file that starts mid-session -----------------------------------------------------


def test_a_fragment_is_read_and_reported_with_the_context_it_started_with(tmp_path: Path) -> None:
    path = SHAPES / "fragment.jsonl"
    t = read_transcript(path, strict=True)
    assert [w.kind for w in t.warnings] == ["fragment"]
    assert t.fragment is not None and t.fragment.line == 1
    first = next(m for m in t.messages if m.usage is not None)
    assert t.fragment.first_usage_tokens == first.usage.total if first.usage else False
    assert t.fragment.first_usage_tokens is not None and t.fragment.first_usage_tokens > 50_000


def test_a_fragments_unseen_context_goes_with_the_first_head_and_is_not_recoverable(tmp_path: Path) -> None:
    report = _replay(SHAPES / "fragment.jsonl", tmp_path, at="recorded")
    _compacts_cleanly(report)
    assert report.calibration is not None
    assert report.calibration.overhead <= 45_000 and report.calibration.unseen > 0
    unseen = [d for d in report.compactions[0].dropped if not d.recoverable]
    assert [(d.kind, d.handle, d.tokens) for d in unseen] == [("unseen", "", report.calibration.unseen)]
    assert report.compactions[0].post_tokens < 0.6 * report.compactions[0].threshold


# -- records appended twice ---------------------------------------------------------------


def test_duplicated_records_are_read_once_with_a_warning(tmp_path: Path) -> None:
    path = SHAPES / "duplicated.jsonl"
    t = read_transcript(path)
    assert [w.kind for w in t.warnings] == ["duplicate_uuid"] * 3
    small = read_transcript(SESSIONS / "small.jsonl")
    assert len(t.tool_uses()) == len(small.tool_uses())
    assert [m.content for m in t.messages] == [m.content for m in small.messages]
    _compacts_cleanly(_replay(path, tmp_path, window=SMALL_WINDOW))


def test_duplicated_records_fail_a_strict_read() -> None:
    with pytest.raises(TranscriptError, match="already read at line"):
        read_transcript(SHAPES / "duplicated.jsonl", strict=True)


# -- two sessions in one file ---------------------------------------------------------------


def test_a_file_of_two_sessions_reads_its_last_one_and_says_so(tmp_path: Path) -> None:
    path = SHAPES / "two_sessions.jsonl"
    t = read_transcript(path)
    assert [w.kind for w in t.warnings] == ["mixed_sessions"]
    small = read_transcript(SESSIONS / "small.jsonl")
    assert t.session_id == small.session_id
    assert [m.content for m in t.messages] == [m.content for m in small.messages]
    _compacts_cleanly(_replay(path, tmp_path, window=SMALL_WINDOW))


def test_read_sessions_reads_each_session_of_a_file_on_its_own() -> None:
    first, second = read_sessions(SHAPES / "two_sessions.jsonl", strict=True)
    background = read_transcript(SESSIONS / "background.jsonl")
    small = read_transcript(SESSIONS / "small.jsonl")
    assert (first.session_id, second.session_id) == (background.session_id, small.session_id)
    assert [m.content for m in first.messages] == [m.content for m in background.messages]
    assert [m.content for m in second.messages] == [m.content for m in small.messages]
    assert first.warnings == second.warnings == []


def test_a_strict_read_refuses_a_file_of_two_sessions_and_names_them() -> None:
    with pytest.raises(TranscriptError, match=r"holds 2 sessions .*read_sessions"):
        read_transcript(SHAPES / "two_sessions.jsonl", strict=True)


# -- a 1.0.x compaction --------------------------------------------------------------------


def test_a_legacy_compaction_without_a_boundary_is_found_and_replayed_where_it_happened(tmp_path: Path) -> None:
    path = SHAPES / "legacy.jsonl"
    t = read_transcript(path, strict=True)
    assert [w.kind for w in t.warnings] == ["legacy_compaction"]
    (compaction,) = t.compactions
    assert compaction.legacy and compaction.summary and compaction.pre_tokens is None
    assert compaction.line == compaction.summary_line
    dangling = read_transcript(SHAPES / "dangling_boundary.jsonl")
    assert [m.content for m in t.messages] == [m.content for m in dangling.messages]
    report = _replay(path, tmp_path, at="recorded")
    _compacts_cleanly(report)
    assert [c.at_line for c in report.compactions] == [compaction.line]


# -- progress records in the chain -------------------------------------------------------------


def test_progress_records_inside_the_chain_are_events_not_messages(tmp_path: Path) -> None:
    path = SHAPES / "progress.jsonl"
    t = read_transcript(path, strict=True)
    assert t.warnings == []
    kinds = Counter(e.kind for e in t.entries)
    assert kinds["progress"] >= 3
    small = read_transcript(SESSIONS / "small.jsonl")
    assert [m.content for m in t.messages] == [m.content for m in small.messages]
    _compacts_cleanly(_replay(path, tmp_path, window=SMALL_WINDOW))


# -- every attachment type, between all the fixtures --------------------------------------------


def test_between_the_fixtures_every_attachment_type_is_re_attached(tmp_path: Path) -> None:
    seen: Counter[str] = Counter()
    for name, window in (("long.jsonl", None), ("background.jsonl", MEDIUM_WINDOW)):
        report = _replay(SESSIONS / name, tmp_path / name, window=window)
        _compacts_cleanly(report)
        seen.update(a.type for c in report.compactions for a in c.attachments)
    # A memory attachment comes from the memory store, not from anything a transcript records.
    assert set(seen) == set(get_args(AttachmentType)) - {"memory"}


def test_a_background_task_still_running_at_the_compaction_is_re_attached(tmp_path: Path) -> None:
    report = _replay(SESSIONS / "background.jsonl", tmp_path, window=MEDIUM_WINDOW)
    _compacts_cleanly(report)
    first = report.compactions[0]
    assert {a.type for a in first.attachments} >= {"task_status", "plan_mode", "deferred_tools_delta"}
