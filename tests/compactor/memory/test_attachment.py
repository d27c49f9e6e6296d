"""The memory attachment: recalled for the work in progress, one reminder within its own budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccr import open_store
from compactor.claude_code.replay import replay
from compactor.core.config import load_settings
from compactor.core.messages import Message, TextBlock, ToolResultBlock
from compactor.core.tokens import TiktokenCounter
from compactor.engine.pipeline import CompactionResult
from compactor.memory import open_memory
from compactor.memory.attachment import build_memory_attachment, memory_query, recall_attachment

COUNTER = TiktokenCounter()
LONG_SESSION = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "long.jsonl"

ON_TOPIC = [
    "Expired stock reservations are released by the sweeper job in inventory/service.py, every minute",
    "Reservation expiry uses UTC timestamps; staging once ran with a local clock and held stock forever",
    "Tests for reservation expiry live in tests/test_service.py and use a frozen clock fixture",
]
OFF_TOPIC = [
    "The marketing site is deployed from the web-landing repository by Netlify",
    "Quarterly payroll spreadsheets belong to Helga in accounting",
]


def test_the_query_is_the_last_typed_request_and_the_current_work() -> None:
    history = [
        Message(role="user", content="first ask: list the modules"),
        Message(role="assistant", content=[TextBlock(text="done")]),
        Message(role="user", content="why do expired reservations keep stock held?"),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="tool output, not typed")]),
        Message(role="user", content="<system-reminder>a note</system-reminder>", is_meta=True),
    ]
    query = memory_query(history, "Fixing the reservation sweeper")
    assert query == "why do expired reservations keep stock held?\nFixing the reservation sweeper"
    assert memory_query([], None) == ""


def test_recalled_memories_are_one_system_reminder_within_the_budget(tmp_path: Path) -> None:
    with open_memory(tmp_path / "memory.db", recovery=tmp_path / "ccr.db") as db:
        db.remember_many(ON_TOPIC + OFF_TOPIC)
        attachment = recall_attachment(db, "reservation expiry stock held", budget=2_000, counter=COUNTER)
    assert attachment is not None and attachment.type == "memory"
    text = attachment.message.text()
    assert attachment.message.is_meta and attachment.message.role == "user"
    assert text.startswith("<system-reminder>") and text.rstrip().endswith("</system-reminder>")
    assert attachment.tokens == COUNTER.count_text(text) <= 2_000
    assert all(fact in text for fact in ON_TOPIC) and not any(fact in text for fact in OFF_TOPIC)
    assert [e.type for e in attachment.entries] == ["memory"] * 3
    assert all(e.name and e.name.startswith("mem_") and not e.truncated for e in attachment.entries)


def test_an_off_topic_query_attaches_nothing(tmp_path: Path) -> None:
    with open_memory(tmp_path / "memory.db", recovery=tmp_path / "ccr.db") as db:
        db.remember_many(ON_TOPIC)
        assert recall_attachment(db, "gpu driver firmware", budget=2_000, counter=COUNTER) is None


@pytest.mark.parametrize("budget", [200, 300, 700, 2_000])
def test_a_memory_larger_than_the_budget_is_cut_to_fit_and_names_its_whole_text(tmp_path: Path, budget: int) -> None:
    big = "".join(f"reservation expiry note {i}: the sweeper released {i} units ✓\n" for i in range(4_000))
    store = open_store(tmp_path / "ccr.db")
    with open_memory(tmp_path / "memory.db", recovery=store) as db:
        db.remember_many([big[:200_000], *OFF_TOPIC])
        attachment = recall_attachment(db, "reservation expiry sweeper", budget=budget, counter=COUNTER)
    assert attachment is not None
    assert attachment.tokens == COUNTER.count_text(attachment.message.text()) <= budget
    (entry,) = attachment.entries
    assert entry.truncated and entry.handle is not None
    assert f"<<ccr:{entry.handle}>>" in attachment.message.text()
    assert store.get(entry.handle) == big[:200_000].encode()


def test_a_missing_or_foreign_store_is_skipped_with_the_reason_and_nothing_is_created(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "memory.db"
    store = open_store(":memory:")
    got = build_memory_attachment(missing, history=[], current_work="x", budget=2_000, counter=COUNTER, store=store)
    assert got.attachments == [] and [s.type for s in got.skipped] == ["memory"]
    assert got.skipped[0].reason.startswith("unavailable: ")
    assert not missing.parent.exists()
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not a database")
    got = build_memory_attachment(foreign, history=[], current_work="x", budget=2_000, counter=COUNTER, store=store)
    assert "not_a_store" in got.skipped[0].reason and foreign.read_text() == "not a database"


def test_a_replay_with_a_seeded_memory_store_shows_a_memory_attachment_within_its_budget(tmp_path: Path) -> None:
    db_path = tmp_path / "memory.db"
    big = "".join(f"reservation expiry incident {i}: held stock on staging\n" for i in range(5_000))[:150_000]
    with open_memory(db_path, recovery=tmp_path / "ccr.db") as db:
        db.remember_many([*ON_TOPIC, *OFF_TOPIC, big])
    settings = load_settings(
        env={},
        overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 2_000, "pipeline.memory_db": str(db_path)},
    )
    results: list[CompactionResult] = []
    store = open_store(tmp_path / "ccr.db")
    report = replay(LONG_SESSION, settings=settings, store=store, on_compaction=lambda r, _line: results.append(r))
    assert report.compactions and results
    budget = settings.attachments.memory_tokens
    assert budget == 2_000
    seen = 0
    for result in results:
        if not result.ok:  # failed closed (in a 60,000 window, a late one would not shrink): nothing restored
            assert result.report.attachments == []
            continue
        attached = [m for m, e in zip(result.messages, result.report.context, strict=True) if e.part == "attachment"]
        memories = [m for m in attached if "<memory id=" in m.text()]
        entries = [a for a in result.report.attachments if a.type == "memory"]
        if not entries:
            assert memories == []
            continue
        seen += 1
        (message,) = memories
        assert COUNTER.count_text(message.text()) <= budget
        assert not any(fact in message.text() for fact in OFF_TOPIC)
        for entry in entries:
            assert entry.name is not None and f'<memory id="{entry.name}">' in message.text()
            if entry.handle:
                assert store.get(entry.handle) == big.encode()
    assert seen > 0


def test_replay_memory_db_attaches_memories_in_the_json_report(tmp_path: Path) -> None:
    db_path = tmp_path / "memory.db"
    with open_memory(db_path, recovery=tmp_path / "ccr.db") as db:
        db.remember_many([*ON_TOPIC, *OFF_TOPIC])
    config = tmp_path / "settings.toml"
    config.write_text("[policy]\ncontext_window = 80000\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "compactor",
            "replay",
            str(LONG_SESSION),
            "--json",
            "--config",
            str(config),
            "--store",
            str(tmp_path / "ccr.db"),
            "--memory-db",
            str(db_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COMPACTOR_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    memories = [a for c in report["compactions"] for a in c["attachments"] if a["type"] == "memory"]
    assert memories and all(a["name"].startswith("mem_") and a["tokens"] <= 2_000 for a in memories)
    assert not [s for c in report["compactions"] for s in c["skipped"] if s["type"] == "memory"]


def test_the_session_start_hook_adds_the_memories_recalled_for_the_last_request(tmp_path: Path) -> None:
    db_path = tmp_path / "memory.db"
    with open_memory(db_path, recovery=tmp_path / "home" / "ccr.db") as db:
        db.remember_many([*ON_TOPIC, *OFF_TOPIC])
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": "s1",
            "timestamp": "2026-03-02T09:00:00Z",
            "message": {"role": "user", "content": "Why does reservation expiry leave stock held on staging?"},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": "s1",
            "timestamp": "2026-03-02T09:00:05Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "x",
                "content": [{"type": "text", "text": "Looking."}],
            },
        },
    ]
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    hook = {
        "session_id": "s1",
        "transcript_path": str(transcript),
        "hook_event_name": "SessionStart",
        "source": "compact",
    }
    env = {**os.environ, "COMPACTOR_HOME": str(tmp_path / "home"), "COMPACTOR_MEMORY_DB": str(db_path)}
    done = subprocess.run(
        [sys.executable, "-m", "compactor", "hook", "session-start"],
        input=json.dumps(hook),
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "<memory id=" in context and ON_TOPIC[1] in context
    assert not any(fact in context for fact in OFF_TOPIC)
    assert COUNTER.count_text(context) <= 2_000
    without = subprocess.run(
        [sys.executable, "-m", "compactor", "hook", "session-start"],
        input=json.dumps(hook),
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in env.items() if k != "COMPACTOR_MEMORY_DB"},
    )
    assert without.returncode == 0 and without.stdout == ""


def test_a_budget_smaller_than_the_wrapper_attaches_nothing(tmp_path: Path) -> None:
    with open_memory(tmp_path / "memory.db", recovery=tmp_path / "ccr.db") as db:
        db.remember_many(ON_TOPIC)
        assert recall_attachment(db, "reservation expiry", budget=30, counter=COUNTER) is None
