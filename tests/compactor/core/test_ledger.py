"""The session ledger across compactions: facts never dropped, where the work stands, carried on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ccr import find_handles, open_store
from compactor.claude_code.transcript import read_transcript
from compactor.core.config import Settings, load_settings
from compactor.core.ledger import LEDGER_KEY
from compactor.core.messages import Message, TextBlock, ToolUseBlock
from compactor.core.tokens import RoughCounter
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.pipeline import CompactionResult

REPO = Path(__file__).resolve().parents[3]
LONG = REPO / "fixtures" / "sessions" / "long.jsonl"


def make(tmp_path: Path, **overrides: object) -> Orchestrator:
    settings = load_settings(
        env={},
        overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 2_000, **overrides},
    )
    return Orchestrator(settings=settings, store=open_store(tmp_path / "ccr.db"), counter=RoughCounter())


def work(orch: Orchestrator, i: int, size: int = 3_000) -> None:
    """One turn: a request, a read of its own file, a build command and its output, a statement."""
    orch.add_message(Message(role="user", content=f"Step {i}: fix module_{i}"))
    orch.add_message(
        Message(
            role="assistant",
            content=[
                ToolUseBlock(id=f"r{i}", name="Read", input={"file_path": f"/repo/src/module_{i}.py"}),
            ],
        )
    )
    orch.add_tool_result(f"r{i}", f"1\tdef f_{i}(): ...\n" + "#" * size)
    orch.add_message(
        Message(
            role="assistant",
            content=[
                ToolUseBlock(id=f"b{i}", name="Bash", input={"command": f"make check-{i}"}),
            ],
        )
    )
    orch.add_tool_result(f"b{i}", f"check {i} ok\n" + "." * size)
    orch.add_message(Message(role="assistant", content=[TextBlock(text=f"Module {i} is fixed.")]))


def compact_often(orch: Orchestrator, turns: int, every: int = 3) -> list[CompactionResult]:
    results = []
    for i in range(turns):
        work(orch, i)
        if i % every == every - 1:
            result = orch.compact("auto")
            assert result.ok, result.report.error
            results.append(result)
    return results


def test_after_many_compactions_the_context_still_names_every_path_command_and_message(tmp_path: Path) -> None:
    orch = make(tmp_path)
    results = compact_often(orch, 24)
    assert len(results) == 8
    last = results[-1].report
    summary = last.summary or ""
    index = results[-1].messages[-1].text()
    assert last.context[-1].part == "index"
    for i in range(24):
        assert f"src/module_{i}.py" in index, "every path is in the index after the briefing"
        assert f"make check-{i}" in index
        assert f"Step {i}: fix module_{i}" in summary, "every typed message is in the briefing itself"
    assert last.retention is not None
    counts = last.retention
    assert (
        (counts.paths.kept, counts.commands.kept, counts.user_messages.kept)
        == (counts.paths.total, counts.commands.total, counts.user_messages.total)
        == (24, 24, 24)
    )
    assert "compacted 7 times before" in summary
    assert results[-1].state.ledger.compactions == 8


def test_the_listing_stored_with_each_compaction_holds_every_fact_the_summary_compresses(tmp_path: Path) -> None:
    # A shared ceiling keeps the tail to the last turn's statement, so every turn's facts are in the head.
    orch = make(tmp_path, **{"pipeline.summary_facts_tokens": 60, "pipeline.context_tokens": 2_000})
    results = compact_often(orch, 12)
    report = results[-1].report
    index = results[-1].messages[-1].text()
    assert "older facts are only in the stored listing" in index
    (listing,) = [d for d in report.dropped if d.kind == "facts"]
    assert listing.handle in find_handles(index)
    text = orch.store.get(listing.handle).decode()
    for i in range(12):
        assert f"/repo/src/module_{i}.py" in text and f"`make check-{i}`" in text
    assert report.ledger_facts == 12 + 12 + 12


def test_the_next_step_never_contradicts_the_tail(tmp_path: Path) -> None:
    orch = make(tmp_path, **{"pipeline.tail_tokens": 20_000})
    orch.add_message(Message(role="user", content="Add the export command"))
    orch.add_message(
        Message(
            role="assistant",
            content=[
                ToolUseBlock(
                    id="t1",
                    name="TodoWrite",
                    input={
                        "todos": [
                            {"content": "Add X", "status": "in_progress"},
                            {"content": "Document X", "status": "pending"},
                        ]
                    },
                )
            ],
        )
    )
    orch.add_tool_result("t1", "Todos have been modified successfully.")
    for i in range(3):
        work(orch, i)
    orch.add_message(Message(role="user", content="Carry on"))
    orch.add_message(
        Message(
            role="assistant",
            content=[
                ToolUseBlock(
                    id="t2",
                    name="TodoWrite",
                    input={
                        "todos": [
                            {"content": "Add X", "status": "completed"},
                            {"content": "Document X", "status": "in_progress"},
                        ]
                    },
                )
            ],
        )
    )
    orch.add_tool_result("t2", "Todos have been modified successfully.")
    orch.add_message(Message(role="assistant", content=[TextBlock(text="X is added; now the docs.")]))
    result = orch.compact("manual")
    assert result.ok
    tail = [m for m, e in zip(result.messages, result.report.context, strict=True) if e.part == "tail"]
    assert any(u.name == "TodoWrite" for m in tail for u in m.tool_uses()), "the second list update is in the tail"
    summary = result.report.summary or ""
    step = summary[summary.index("9. Next step:") :]
    assert "Finish: Document X." in step
    assert "Add X" not in step
    assert "(in progress) Document X" in summary and "(in progress) Add X" not in summary
    assert result.report.continuation is not None
    assert result.report.continuation.latest_request is True
    assert result.report.continuation.open_items.kept == result.report.continuation.open_items.total == 1


def test_summary_tail_and_attachments_stay_within_an_opted_in_shared_budget(tmp_path: Path) -> None:
    orch = make(tmp_path, **{"pipeline.context_tokens": 4_000, "pipeline.tail_tokens": 12_000})
    for i in range(12):
        work(orch, i, size=600)
    result = orch.compact("manual")
    assert result.ok
    parts = {"summary": 0, "tail": 0, "attachment": 0, "index": 0}
    for entry in result.report.context:
        parts[entry.part] += entry.tokens
    assert 0 < parts["tail"] <= 0.35 * 4_000
    # attachments may take their floor past a full budget; the index has its own (the facts budget)
    assert parts["summary"] + parts["tail"] + parts["attachment"] <= 4_000 + 1_000
    assert 0 < parts["index"] <= Settings().pipeline.summary_facts_tokens + 200


def test_a_compacted_session_written_out_carries_its_ledger_and_reads_back_with_it(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "compactor",
            "replay",
            str(LONG),
            "--json",
            "--store",
            str(tmp_path / "ccr.db"),
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    boundaries = [json.loads(line) for line in out.read_text().splitlines() if '"compact_boundary"' in line]
    assert len(boundaries) == len(report["compactions"]) >= 2
    assert all(LEDGER_KEY in b["compactMetadata"] for b in boundaries)
    state = read_transcript(out, strict=True).state
    assert state.ledger.compactions == len(report["compactions"])
    assert any(p.endswith("inventory/store.py") for p in state.ledger.paths)
    assert state.ledger.original_goal is not None and state.ledger.original_goal.startswith("I'm new to this repo")
