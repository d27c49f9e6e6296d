"""A compaction of a session as it stands, previewed in memory: the summary it would write, the files it
would restore, and nothing stored."""

from __future__ import annotations

from pathlib import Path

from compactor.claude_code.compaction_preview import preview_compaction
from compactor.claude_code.transcript import read_transcript
from compactor.core.config import Settings
from tests.conftest import FIXTURES


def test_the_preview_summarizes_the_head_and_stores_nothing(compactor_home: Path) -> None:
    # The long session: a small one no longer shrinks once the files come back at the card's budgets.
    preview = preview_compaction(FIXTURES / "sessions" / "long.jsonl", Settings())
    report = preview.report
    assert report.ok, report.error
    assert report.summary and "1. Primary request and intent" in report.summary
    assert report.dropped and report.pre_tokens == preview.context_tokens > report.post_tokens
    assert list(compactor_home.iterdir()) == []  # an in-memory store: no ccr.db, nothing written


def test_the_preview_starts_from_claude_codes_last_summary_and_borrows_its_request() -> None:
    path = FIXTURES / "sessions" / "long.jsonl"
    transcript = read_transcript(path, subagents=False, state=False)
    last = transcript.compactions[-1].entry_index
    after = [e.message for e in transcript.entries[last + 1 :] if e.message is not None]
    assert after[0].is_compact_summary  # Claude Code's summary opens the context
    preview = preview_compaction(path, Settings())
    assert preview.report.ok, preview.report.error
    assert preview.messages == len(after) > 1
    assert preview.report.summary and "(no user request recorded)" not in preview.report.summary
