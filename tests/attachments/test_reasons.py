"""Skip reasons say what happened, with numbers that are true of the compaction that states them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ccr
from attachments import Budgets, DiskFiles, build_file_attachments, reason
from attachments.selection import FileSelection
from compactor.claude_code.replay import replay
from compactor.core.config import load_settings
from compactor.core.session import ReadFileEntry, SessionState
from compactor.core.tokens import TiktokenCounter
from compactor.engine.report import CompactionReport
from tests.conftest import REPO_ROOT

_BEYOND = re.compile(
    r"^beyond_max_files: ranked (\d+) of the (\d+) candidates, .+ first; only the first (\d+) are tried, "
    r"and (\d+) of them were restored$"
)
_OVER_TOTAL = re.compile(
    r"^over_total_budget: it takes ([\d,]+) tokens, and the (\d+) files restored before it took ([\d,]+) "
    r"of the ([\d,]+) file tokens$"
)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def check_file_reasons(report: CompactionReport, budgets: Budgets) -> int:
    """Assert every count a file's skip reason states against the report; the reasons checked."""
    files = [a for a in report.attachments if a.type == "file"]
    skipped = [s for s in report.skipped if s.type == "file"]
    excluded = ("plan_file:", "memory_file:", "read_in_tail:")
    candidates = len(files) + sum(1 for s in skipped if not s.reason.startswith(excluded))
    checked = 0
    for entry in skipped:
        if entry.reason.startswith("beyond_max_files"):
            found = _BEYOND.match(entry.reason)
            assert found, entry.reason
            rank, of, tried, restored = map(int, found.groups())
            assert of == candidates and tried < rank <= of and restored == len(files) <= tried
            checked += 1
        elif entry.reason.startswith("over_total_budget"):
            found = _OVER_TOTAL.match(entry.reason)
            assert found, entry.reason
            tokens, before, used, budget = (_number(g) for g in found.groups())
            assert budget == budgets.files_total and used + tokens > budget
            assert used == sum(a.tokens for a in files[:before]), "the files before it took what it says"
            checked += 1
        elif entry.reason.startswith("over_item_budget"):
            assert f"{budgets.file_tokens:,} tokens" in entry.reason or budgets.selection.file_tokens
            checked += 1
    return checked


def test_a_reason_is_its_id_then_a_sentence() -> None:
    assert reason("unavailable", "deleted") == "unavailable: deleted"


def test_every_count_a_file_reason_states_is_true(tmp_path: Path) -> None:
    counter = TiktokenCounter()
    budgets = Budgets(max_files=4, file_tokens=2_000, files_total=3_000, selection=FileSelection(strategy="recent"))
    snapshot = {}
    for n, size in enumerate([300, 200, 1_500, 1_500, 10, 10, 10]):
        path = tmp_path / f"f{n}.py"
        path.write_text("".join(f"value_{n}_{i} = {i}\n" for i in range(size)))
        snapshot[str(path)] = ReadFileEntry(path=str(path), content=path.read_text(), timestamp=float(-n))
    attached, skipped = build_file_attachments(
        snapshot,
        SessionState(),
        [],
        budgets=budgets,
        counter=counter,
        store=ccr.open_store(":memory:"),
        files=DiskFiles(),
    )
    report = CompactionReport(
        trigger="manual",
        pre_tokens=1,
        post_tokens=1,
        threshold=1,
        summary_tokens=0,
        attachments=[e for a in attached for e in a.entries],
        skipped=skipped,
    )
    kinds = {s.reason.split(":")[0] for s in skipped}
    assert kinds == {"beyond_max_files", "over_total_budget"}, "the case covers both counted reasons"
    assert check_file_reasons(report, budgets) == len(skipped)


def test_every_skip_reason_of_the_readmes_first_command_is_true() -> None:
    settings = load_settings(env={})
    report = replay(
        REPO_ROOT / "fixtures" / "sessions" / "long.jsonl", settings=settings, store=ccr.open_store(":memory:")
    )
    assert report.compactions, "the replay compacts"
    assert all(any(a.type == "file" for a in c.attachments) for c in report.compactions), "files at every compaction"
    for compaction in report.compactions:
        check_file_reasons(compaction, settings.attachments)


def test_every_skip_reason_of_a_real_session_is_true(shared_transcript: Path | None) -> None:
    assert shared_transcript is not None
    settings = load_settings(env={})
    report = replay(shared_transcript, settings=settings, store=ccr.open_store(":memory:"), at="recorded")
    if not report.compactions:
        pytest.skip("this session has no recorded compaction")
    for compaction in report.compactions:
        check_file_reasons(compaction, settings.attachments)
