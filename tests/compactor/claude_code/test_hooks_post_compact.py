"""The PostCompact hook, the order of the hooks after a compaction, and room for a ledger in the SessionStart text.

Claude Code 2.1.332 runs PreCompact, then SessionStart (source ``compact``),
then PostCompact (``tests/e2e/test_hook_order_in_client.py``); other builds
may run PostCompact first, and older ones have no PostCompact at all.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compactor.claude_code.hooks import (
    SESSION_START_MAX_CHARS,
    HookInput,
    SessionRecord,
    load_session_record,
    record_compact_summary,
    save_session_record,
    session_record_path,
    session_start,
    session_start_output,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "sessions"
SUMMARY = "1. Primary Request and Intent: the user asked to rotate the deploy key."
TIMEOUT_S = 120


def hook(event: str, payload: Any) -> subprocess.CompletedProcess[str]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sys.executable, "-m", "compactor", "hook", event],
        input=data,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=dict(os.environ),
        check=False,
    )


@pytest.fixture
def before_second_compaction(tmp_path: Path) -> Path:
    """The long fixture session cut just before its last recorded boundary."""
    lines = (FIXTURES / "long.jsonl").read_text().splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if '"compact_boundary"' in line)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(lines[:last]))
    return path


def pre_compact(path: Path, session_id: str = "s1") -> None:
    done = hook(
        "pre-compact",
        {"session_id": session_id, "transcript_path": str(path), "hook_event_name": "PreCompact", "trigger": "auto"},
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr


def post_compact_input(session_id: str = "s1", summary: Any = SUMMARY) -> dict[str, Any]:
    return {"session_id": session_id, "hook_event_name": "PostCompact", "trigger": "auto", "compact_summary": summary}


class Ledger:
    """Stands in for the session ledger: records what it was given, answers a fixed text."""

    def __init__(self, text: str | None = "LEDGER") -> None:
        self.text = text
        self.calls: list[tuple[SessionRecord | None, int]] = []

    def __call__(self, hook: HookInput, record: SessionRecord | None, *, budget: int) -> str | None:
        self.calls.append((record, budget))
        return None if self.text is None else self.text[:budget]


def context_of(output: str | None) -> str:
    assert output is not None
    return str(json.loads(output)["hookSpecificOutput"]["additionalContext"])


def test_post_compact_records_claude_codes_summary_and_prints_nothing(
    before_second_compaction: Path, compactor_home: Path
) -> None:
    pre_compact(before_second_compaction)
    stored = load_session_record("s1")
    done = hook("post-compact", post_compact_input())
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    record = load_session_record("s1")
    assert stored is not None and record is not None
    assert record.compact_summary == SUMMARY and record.trigger == "auto"
    assert record.model_copy(update={"compact_summary": None}) == stored, "nothing else in the record changes"


@pytest.mark.parametrize(
    "payload",
    [
        "not json",
        "[]",
        json.dumps({"session_id": "../escape", "compact_summary": "x"}),
        json.dumps(post_compact_input(summary=42)),
        "",
    ],
)
def test_post_compact_exits_zero_on_any_input_and_says_why_on_stderr(payload: str, compactor_home: Path) -> None:
    done = hook("post-compact", payload)
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.startswith("compactor: ") and "the summary is not recorded" in done.stderr


def test_post_compact_of_a_session_that_stored_nothing_keeps_no_record(compactor_home: Path) -> None:
    done = hook("post-compact", post_compact_input("never-stored"))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert not session_record_path("never-stored").exists()


def test_post_compact_with_a_damaged_record_exits_zero_and_leaves_it(compactor_home: Path) -> None:
    path = session_record_path("s1")
    path.parent.mkdir(parents=True)
    path.write_text("{ damaged")
    done = hook("post-compact", post_compact_input())
    assert done.returncode == 0 and done.stdout == "" and "damaged" in done.stderr
    assert path.read_text() == "{ damaged"


def test_session_start_before_post_compact_announces_the_stored_head_and_the_summary_comes_after(
    before_second_compaction: Path, compactor_home: Path
) -> None:
    """Claude Code 2.1.332's order: the ledger gets the record without this compaction's summary."""
    pre_compact(before_second_compaction)
    ledger = Ledger()
    text = context_of(session_start(HookInput(session_id="s1", source="compact"), ledger=ledger))
    ((seen, _),) = ledger.calls
    assert seen is not None and seen.compact_summary is None
    assert seen.head_handle is not None and f"<<ccr:{seen.head_handle}>>" in text and text.endswith("LEDGER")
    assert record_compact_summary(HookInput.model_validate(post_compact_input())) is not None
    record = load_session_record("s1")
    assert record is not None and record.compact_summary == SUMMARY and record.head_handle == seen.head_handle


def test_post_compact_before_session_start_gives_the_ledger_this_compactions_summary(
    before_second_compaction: Path, compactor_home: Path
) -> None:
    pre_compact(before_second_compaction)
    assert hook("post-compact", post_compact_input()).returncode == 0
    ledger = Ledger()
    session_start(HookInput(session_id="s1", source="compact"), ledger=ledger)
    ((seen, _),) = ledger.calls
    assert seen is not None and seen.compact_summary == SUMMARY


def test_a_new_compaction_forgets_the_summary_of_the_last_one(tmp_path: Path, compactor_home: Path) -> None:
    whole = tmp_path / "long.jsonl"
    shutil.copyfile(FIXTURES / "long.jsonl", whole)
    lines = whole.read_text().splitlines(keepends=True)
    first = tmp_path / "first.jsonl"
    first.write_text("".join(lines[: next(i for i, line in enumerate(lines) if '"compact_boundary"' in line)]))
    pre_compact(first)
    record_compact_summary(HookInput.model_validate(post_compact_input()))
    pre_compact(whole)
    record = load_session_record("s1")
    assert record is not None and record.compact_summary is None
    ledger = Ledger()
    session_start(HookInput(session_id="s1", source="compact"), ledger=ledger)
    ((seen, _),) = ledger.calls
    assert seen is not None and seen.compact_summary is None, "an older compaction's summary is never passed on"


def test_without_post_compact_each_session_start_names_the_head_the_summarizer_saw(
    tmp_path: Path, compactor_home: Path
) -> None:
    """A client without PostCompact: the hooks work from the transcript alone."""
    lines = (FIXTURES / "long.jsonl").read_text().splitlines(keepends=True)
    cuts = [i for i, line in enumerate(lines) if '"compact_boundary"' in line]
    assert len(cuts) == 2
    announced = []
    for n, cut in enumerate(cuts):
        path = tmp_path / f"cut-{n}.jsonl"
        path.write_text("".join(lines[:cut]))
        done = hook("pre-compact", {"session_id": "s1", "transcript_path": str(path), "trigger": "auto"})
        told = json.loads(done.stdout) if done.stdout.startswith("{") else done.stdout
        start = hook("session-start", {"session_id": "s1", "source": "compact", "transcript_path": str(path)})
        assert start.returncode == 0, start.stderr
        record = load_session_record("s1")
        assert record is not None and record.head_handle is not None
        assert f"<<ccr:{record.head_handle}>>" in str(told), "the summarizer is told the head the record names"
        text = context_of(start.stdout)
        assert f"under <<ccr:{record.head_handle}>>" in text
        announced.append(record.head_handle)
    assert record.earlier_heads == announced[:1]
    assert f"earlier compactions of this session: <<ccr:{announced[0]}>>" in text


def test_the_session_start_text_never_passes_its_limit(before_second_compaction: Path, compactor_home: Path) -> None:
    pre_compact(before_second_compaction)
    record = load_session_record("s1")
    start = HookInput(session_id="s1", source="compact")
    ledger = Ledger("x" * 50_000)
    text = context_of(session_start_output(start, record, "MEMORIES", ledger=ledger))
    ((_, budget),) = ledger.calls
    reminder = context_of(session_start_output(start, record, ledger=Ledger(None)))
    assert len(text) == SESSION_START_MAX_CHARS
    assert text == f"{reminder}\n\n{'x' * budget}\n\nMEMORIES", "the reminder, the ledger within its room, the memories"
    huge = context_of(session_start_output(start, record, "m\n" * 20_000, ledger=Ledger(None)))
    assert len(huge) <= SESSION_START_MAX_CHARS and "more characters left out" in huge
    assert huge.startswith("This conversation was just compacted")


def test_a_ledger_with_nothing_to_say_leaves_the_text_as_it_was(
    before_second_compaction: Path, compactor_home: Path
) -> None:
    pre_compact(before_second_compaction)
    record = load_session_record("s1")
    start = HookInput(session_id="s1", source="compact")
    assert record is not None and record.ledger is not None
    plain = session_start_output(start, record.model_copy(update={"ledger": None}))  # nothing for the default
    assert plain is not None and "Where the work stands" not in plain
    assert session_start_output(start, record, ledger=Ledger(None)) == plain
    assert "Where the work stands (compactor's ledger" in context_of(session_start_output(start, record))
    assert "LEDGER" in context_of(session_start_output(start, record, ledger=Ledger()))
    assert session_start_output(HookInput(session_id="s1", source="startup"), record, ledger=Ledger()) is None


def test_a_record_settled_by_an_older_version_passes_on_the_head_it_announced(compactor_home: Path) -> None:
    """Older versions replaced ``head_handle`` by what was dropped and kept the announced one in ``summarized_handle``."""
    announced, dropped, older, new = (f"ccr_{c * 32}" for c in "abcd")
    path = session_record_path("s1")
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "session_id": "s1",
                "head_handle": dropped,
                "summarized_handle": announced,
                "kept_messages": 2,
                "earlier_heads": [older],
            }
        )
    )
    save_session_record(SessionRecord(session_id="s1", head_handle=new, summarized_handle=new))
    record = load_session_record("s1")
    assert record is not None
    assert record.earlier_heads == [older, announced]
    assert record.earlier_dropped == [older, dropped]


def _session_facts(path: Path) -> tuple[list[str], list[str], list[str]]:
    from compactor.claude_code.transcript import read_transcript
    from compactor.engine.survival import head_facts

    facts = head_facts(read_transcript(path).messages)
    return facts["paths"], facts["commands"], facts["user_messages"]


def test_after_a_compaction_the_session_start_text_carries_the_whole_sessions_ledger(
    before_second_compaction: Path, compactor_home: Path
) -> None:
    pre_compact(before_second_compaction)
    done = hook(
        "session-start",
        {
            "session_id": "s1",
            "hook_event_name": "SessionStart",
            "source": "compact",
            "transcript_path": str(before_second_compaction),
        },
    )
    assert done.returncode == 0 and done.stderr == ""
    text = context_of(done.stdout)
    assert len(text) <= SESSION_START_MAX_CHARS
    # What helps carry on leads; the note on recovering the stored conversation follows it.
    assert text.startswith("Where the work stands (compactor's ledger of the whole session):")
    assert text.index("Where the work stands") < text.index("This conversation was just compacted")
    paths, commands, messages = _session_facts(before_second_compaction)
    # The transcript holds an earlier compaction: facts from before it are named too.
    assert all(p in text for p in paths), [p for p in paths if p not in text]
    assert all(c[:60] in text for c in commands), [c for c in commands if c[:60] not in text]
    assert all(m.strip()[:80] in text for m in messages)
    record = load_session_record("s1")
    assert record is not None and record.ledger_handle is not None
    assert f"<<ccr:{record.ledger_handle}>>" in text or "more facts are left out" not in text


def test_facts_claude_codes_own_summary_holds_are_left_out_when_post_compact_ran_first(
    before_second_compaction: Path, compactor_home: Path
) -> None:
    pre_compact(before_second_compaction)
    paths, commands, _ = _session_facts(before_second_compaction)
    start = HookInput(session_id="s1", source="compact")
    record = load_session_record("s1")
    assert record is not None
    before = context_of(session_start_output(start, record))
    known = record.model_copy(update={"compact_summary": f"Claude Code's summary names {commands[0]} and {paths[0]}."})
    after = context_of(session_start_output(start, known))
    listed = f"`{commands[0]}`"  # among the commands run (one line, each in backticks)
    assert listed in before.split("commands the session ran")[1]
    assert listed not in after.split("commands the session ran")[-1]
    assert len(after) < len(before)


def test_a_ledger_too_large_for_the_limit_is_cut_by_facts_and_names_the_stored_listing(
    before_second_compaction: Path, compactor_home: Path
) -> None:
    from compactor.claude_code.hooks import session_ledger

    pre_compact(before_second_compaction)
    record = load_session_record("s1")
    assert record is not None
    start = HookInput(session_id="s1", source="compact")
    whole = session_ledger(start, record, budget=9_000)
    text = session_ledger(start, record, budget=1_500)
    assert whole is not None and text is not None and len(text) <= 1_500 < len(whole)
    assert record.ledger_handle is not None and f"<<ccr:{record.ledger_handle}>>" in str(text)
    assert str(whole).startswith(text.lead.rsplit("\n\nEvery fact", 1)[0]), "the lead is cut last"
    assert session_ledger(start, record.model_copy(update={"head_handle": None}), budget=9_000) is None
