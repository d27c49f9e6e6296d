"""Claude Code hooks: ``compactor hook pre-compact`` and ``session-start``, run as real subprocesses."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ccr import handle_for, open_store
from compactor.claude_code.hooks import (
    HookInput,
    SessionRecord,
    conversation_since_last_compaction,
    describe_call,
    load_session_record,
    parse_hook_input,
    pre_compact,
    pre_compact_instructions,
    session_record_path,
    session_start_output,
    settle_kept_messages,
    store_conversation,
)
from compactor.claude_code.transcript import read_transcript
from compactor.core.errors import InputInvalid, NothingToCompact
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.core.tokens import RoughCounter
from compactor.engine.spans import messages_jsonl

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "sessions"
MARKER = re.compile(r"<<ccr:(ccr_[0-9a-f]{32})>>")
TIMEOUT_S = 120
SMALL = FIXTURES / "small.jsonl"


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """A copy of the long fixture session (two recorded compactions)."""
    copy = tmp_path / "project" / "session.jsonl"
    copy.parent.mkdir()
    shutil.copyfile(FIXTURES / "long.jsonl", copy)
    return copy


def hook(event: str, payload: Any, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sys.executable, "-m", "compactor", "hook", event, *args],
        input=data,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={**os.environ, **(env or {})},
    )


def pre_compact_input(session: Path, session_id: str = "0c081f08-c5e9-43d8-a49c-e2fcd96bf7a8") -> dict[str, Any]:
    return {
        "session_id": session_id,
        "transcript_path": str(session),
        "cwd": str(session.parent),
        "hook_event_name": "PreCompact",
        "trigger": "auto",
        "custom_instructions": None,
        "permission_mode": "default",
    }


def ccr_get(store: Path, handle: str) -> bytes:
    done = subprocess.run(
        [sys.executable, "-m", "ccr", "--store", str(store), "get", handle],
        capture_output=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


# -- pre-compact ------------------------------------------------------------------


def test_pre_compact_stores_the_conversation_since_the_last_boundary_byte_exact(
    session: Path, compactor_home: Path
) -> None:
    done = hook("pre-compact", pre_compact_input(session))
    assert done.returncode == 0 and done.stderr == ""
    transcript = read_transcript(session)
    assert transcript.compactions, "the fixture must hold a recorded compaction for this test to mean anything"
    since = transcript.messages[transcript.compactions[-1].message_index :]
    assert 0 < len(since) < len(transcript.messages)
    head = MARKER.search(done.stdout)
    assert head is not None
    assert ccr_get(compactor_home / "ccr.db", head.group(1)) == messages_jsonl(since)


def test_pre_compact_names_the_largest_stored_results_with_what_they_were(session: Path, compactor_home: Path) -> None:
    done = hook("pre-compact", pre_compact_input(session))
    listed = [line for line in done.stdout.splitlines() if line.startswith("- <<ccr:")]
    assert listed, done.stdout
    assert "Read /home/USER/projects/inventory/data/seed_items.json" in listed[0]
    assert any("Bash: python -m pytest" in line for line in listed)
    sizes = [int(re.sub(r"\D", "", line.rsplit("(", 1)[1])) for line in listed]
    assert sizes == sorted(sizes, reverse=True)
    with open_store(compactor_home / "ccr.db") as store:
        assert all(store.contains(h) for h in MARKER.findall(done.stdout))
    assert "ccr_retrieve" in done.stdout


def test_pre_compact_caps_the_list_of_results(tmp_path: Path, compactor_home: Path) -> None:
    whole = tmp_path / "whole.jsonl"
    lines = (FIXTURES / "long.jsonl").read_text().splitlines(keepends=True)
    whole.write_text("".join(line for line in lines if '"compact_boundary"' not in line))
    done = hook("pre-compact", pre_compact_input(whole), "--limit", "3")
    listed = [line for line in done.stdout.splitlines() if line.startswith("- <<ccr:")]
    assert len(listed) == 3
    assert "smaller stored result(s) not listed" in done.stdout


def test_pre_compact_uses_the_store_flag_over_compactor_home(
    session: Path, tmp_path: Path, compactor_home: Path
) -> None:
    elsewhere = tmp_path / "elsewhere" / "ccr.db"
    done = hook("pre-compact", pre_compact_input(session), "--store", str(elsewhere))
    head = MARKER.search(done.stdout)
    assert head is not None
    first = json.loads(ccr_get(elsewhere, head.group(1)).splitlines()[0])
    assert set(first) == {"role", "content"}  # the head: one API-shaped message per line
    assert not (compactor_home / "ccr.db").exists()


def test_pre_compact_keeps_a_private_session_record(session: Path, compactor_home: Path) -> None:
    hook("pre-compact", pre_compact_input(session, "sess-1"))
    path = compactor_home / "sessions" / "sess-1.json"
    record = SessionRecord.model_validate_json(path.read_text())
    assert record.head_handle is not None and record.trigger == "auto"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_pre_compact_stores_the_transcript_lines_and_the_conversation_in_one_transaction(
    session: Path, compactor_home: Path, counting_store: Callable[..., Any]
) -> None:
    store = counting_store("ccr.db")
    pre_compact(HookInput.model_validate(pre_compact_input(session, "one")), store, counter=RoughCounter())
    assert store.commits == 1
    record = load_session_record("one")
    assert record is not None and record.head_handle is not None and record.segments
    assert store.contains(record.head_handle) and store.contains(record.segments[-1].handle)


@pytest.mark.parametrize(
    ("payload", "error_id"),
    [
        ("this is not json", "input_invalid"),
        ("[1, 2]", "input_invalid"),
        ({"transcript_path": "x.jsonl"}, "input_invalid"),
        ({"session_id": "../../escape", "transcript_path": "x.jsonl"}, "input_invalid"),
        ({"session_id": "s"}, "input_invalid"),
        ({"session_id": "s", "transcript_path": "/nonexistent/session.jsonl"}, "input_not_found"),
        ("[" * 100_000 + "]" * 100_000, "input_invalid"),
    ],
    ids=[
        "not-json",
        "not-an-object",
        "no-session-id",
        "session-id-escapes",
        "no-transcript",
        "missing-transcript",
        "nested-too-deeply",
    ],
)
def test_pre_compact_never_blocks_on_bad_input_and_says_why(payload: Any, error_id: str, compactor_home: Path) -> None:
    done = hook("pre-compact", payload)
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr.startswith(f"compactor: {error_id}: ")
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (compactor_home / "sessions").exists()
    assert not (compactor_home.parent / "escape.json").exists()


def test_pre_compact_never_blocks_when_the_store_refuses(session: Path, compactor_home: Path) -> None:
    done = hook("pre-compact", pre_compact_input(session), env={"COMPACTOR_CCR_MAX_BYTES": "1000"})
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr.startswith("compactor: ccr_budget_exceeded: ")
    with open_store(compactor_home / "ccr.db") as store:
        assert store.stats().entries == 0


def test_a_failed_pre_compact_leaves_no_reminder_pointing_at_an_older_conversation(
    session: Path, tmp_path: Path
) -> None:
    lines = (FIXTURES / "long.jsonl").read_text().splitlines(keepends=True)
    last_boundary = max(i for i, line in enumerate(lines) if '"compact_boundary"' in line)
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text("".join(lines[:last_boundary]))
    hook("pre-compact", pre_compact_input(earlier, "s2"))
    first = load_session_record("s2")
    assert first is not None and first.head_handle is not None
    failed = hook("pre-compact", pre_compact_input(session, "s2"), env={"COMPACTOR_CCR_MAX_BYTES": "1"})
    assert failed.stdout == "" and "ccr_budget_exceeded" in failed.stderr
    after = hook("session-start", {"session_id": "s2", "source": "compact"})
    assert after.returncode == 0 and after.stdout == ""
    record = load_session_record("s2")
    assert record is not None and record.head_handle is None
    assert record.earlier_heads == [first.head_handle]


def test_an_empty_transcript_stores_nothing_and_says_so(tmp_path: Path, compactor_home: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    done = hook("pre-compact", pre_compact_input(empty))
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.startswith("compactor: not_a_transcript: ") and "empty" in done.stderr
    assert not (compactor_home / "ccr.db").exists()


# -- session-start ------------------------------------------------------------------


def test_session_start_after_compaction_adds_a_reminder_naming_the_stored_conversation(
    session: Path, compactor_home: Path
) -> None:
    stored = hook("pre-compact", pre_compact_input(session, "s3"))
    head = MARKER.search(stored.stdout)
    assert head is not None
    done = hook(
        "session-start",
        {"session_id": "s3", "transcript_path": str(session), "hook_event_name": "SessionStart", "source": "compact"},
    )
    assert done.returncode == 0 and done.stderr == ""
    output = json.loads(done.stdout)
    assert set(output) == {"hookSpecificOutput"}
    assert set(output["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = output["hookSpecificOutput"]["additionalContext"]
    assert head.group(0) in context
    assert "ccr_retrieve" in context


def two_compactions(session: Path, tmp_path: Path, session_id: str) -> tuple[re.Match[str], re.Match[str]]:
    """Run the pre-compact hook at the session's last boundary, then at its end: the markers it printed."""
    lines = (FIXTURES / "long.jsonl").read_text().splitlines(keepends=True)
    last_boundary = max(i for i, line in enumerate(lines) if '"compact_boundary"' in line)
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text("".join(lines[:last_boundary]))
    first = MARKER.search(hook("pre-compact", pre_compact_input(earlier, session_id)).stdout)
    second = MARKER.search(hook("pre-compact", pre_compact_input(session, session_id)).stdout)
    assert first is not None and second is not None and first.group(1) != second.group(1)
    return first, second


def test_session_start_names_the_conversations_of_earlier_compactions(session: Path, tmp_path: Path) -> None:
    first, second = two_compactions(session, tmp_path, "s4")
    context = json.loads(hook("session-start", {"session_id": "s4", "source": "compact"}).stdout)
    text = context["hookSpecificOutput"]["additionalContext"]
    assert text.index(second.group(0)) < text.index(first.group(0))


def ccr(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ccr", *args], capture_output=True, text=True, timeout=TIMEOUT_S)


def test_session_start_never_names_a_conversation_the_store_no_longer_holds(session: Path, tmp_path: Path) -> None:
    first, second = two_compactions(session, tmp_path, "s7")
    assert ccr("rm", first.group(1)).returncode == 0  # an earlier compaction's conversation, removed by hand
    context = json.loads(hook("session-start", {"session_id": "s7", "source": "compact"}).stdout)
    text = context["hookSpecificOutput"]["additionalContext"]
    assert second.group(0) in text and first.group(1) not in text
    assert ccr("gc", "--session", "s7").returncode == 0  # everything the session stored
    done = hook("session-start", {"session_id": "s7", "source": "compact"})
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""


def test_session_start_reads_the_store_the_pre_compact_hook_wrote_to(session: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "ccr.db"
    stored = MARKER.search(hook("pre-compact", pre_compact_input(session, "s8"), "--store", str(elsewhere)).stdout)
    assert stored is not None
    context = json.loads(hook("session-start", {"session_id": "s8", "source": "compact"}).stdout)
    assert stored.group(0) in context["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("source", ["startup", "resume", "clear"])
def test_session_start_for_other_sources_prints_nothing(source: str, session: Path) -> None:
    hook("pre-compact", pre_compact_input(session, "s5"))
    done = hook("session-start", {"session_id": "s5", "source": source})
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""


def test_session_start_without_a_stored_conversation_prints_nothing() -> None:
    done = hook("session-start", {"session_id": "never-stored", "source": "compact"})
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""


@pytest.mark.parametrize("payload", ["{", "[" * 100_000 + "]" * 100_000], ids=["cut-short", "nested-too-deeply"])
def test_session_start_with_bad_input_says_why_and_exits_zero(payload: str) -> None:
    done = hook("session-start", payload)
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.startswith("compactor: input_invalid: ")


def test_hook_without_an_event_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "compactor", "hook"], capture_output=True, text=True, timeout=TIMEOUT_S
    )
    assert done.returncode == 2
    assert "usage_error" in done.stderr


# -- the pieces -------------------------------------------------------------------------


def test_hook_input_keeps_fields_it_does_not_know() -> None:
    parsed = parse_hook_input(b'{"session_id": "a", "source": "compact", "model": "x"}')
    assert parsed.source == "compact"
    assert parsed.model_extra == {"model": "x"}


def test_hook_input_refuses_oversized_input() -> None:
    with pytest.raises(InputInvalid, match="more than"):
        parse_hook_input(b'{"session_id": "a", "pad": "' + b"x" * 2_000_000 + b'"}')


def test_session_ids_that_could_leave_the_sessions_folder_are_refused(tmp_path: Path) -> None:
    for bad in ("..", ".hidden", "a/b", "a\\b", "", "x" * 200):
        with pytest.raises(InputInvalid):
            session_record_path(bad, tmp_path)
    assert session_record_path("0c081f08-c5e9", tmp_path) == tmp_path / "sessions" / "0c081f08-c5e9.json"


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (ToolUseBlock(id="1", name="Read", input={"file_path": "/p/a.py"}), "Read /p/a.py"),
        (
            ToolUseBlock(id="2", name="Bash", input={"command": "pytest -q\n  -x", "description": "run"}),
            "Bash: pytest -q -x",
        ),
        (ToolUseBlock(id="3", name="Grep", input={"pattern": "def main", "path": "src"}), "Grep 'def main' in src"),
        (ToolUseBlock(id="4", name="mcp__srv__thing", input={}), "mcp__srv__thing"),
        (None, "a tool result"),
    ],
)
def test_describe_call_names_the_tool_and_what_it_touched(call: ToolUseBlock | None, expected: str) -> None:
    assert describe_call(call) == expected


def test_describe_call_keeps_one_short_line() -> None:
    text = describe_call(ToolUseBlock(id="1", name="Bash", input={"command": "echo " + "word " * 100}))
    assert "\n" not in text and len(text) <= 120 and text.endswith("...")


def _conversation_with_a_recovery_call(handle: str) -> list[Message]:
    recovered = "recovered text " * 300
    return [
        Message(role="user", content="what did the log say?"),
        Message(
            role="assistant",
            content=[ToolUseBlock(id="t1", name="mcp__plugin_compactor_ccr__ccr_retrieve", input={"handle": handle})],
        ),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content=recovered)]),
        Message(role="assistant", content=[TextBlock(text="it said the disk was full")]),
    ]


def test_stored_conversation_does_not_nest_recovered_content() -> None:
    store = open_store(":memory:")
    messages = _conversation_with_a_recovery_call("ccr_" + "a" * 32)
    record = store_conversation(messages, store, counter=RoughCounter(), session_id="s")
    assert record.head_handle is not None
    head = store.get(record.head_handle)
    assert b"recovered text" not in head
    assert b"ccr_retrieve" in head
    assert record.results == []
    assert not store.contains(handle_for(("recovered text " * 300).encode()))


def test_store_conversation_refuses_an_empty_conversation() -> None:
    with pytest.raises(NothingToCompact):
        store_conversation([], open_store(":memory:"), counter=RoughCounter(), session_id="s")


def test_conversation_since_last_compaction_is_everything_without_one() -> None:
    transcript = read_transcript(FIXTURES / "small.jsonl")
    assert not transcript.compactions
    assert conversation_since_last_compaction(transcript) == transcript.messages


def test_instructions_render_only_markers_of_stored_results() -> None:
    store = open_store(":memory:")
    transcript = read_transcript(FIXTURES / "long.jsonl")
    record = store_conversation(
        transcript.messages[:156], store, counter=RoughCounter(), session_id="s", trigger="auto"
    )
    text = pre_compact_instructions(record, limit=5)
    handles = MARKER.findall(text)
    assert handles[0] == record.head_handle
    assert len(set(handles)) == 6
    assert all(store.contains(h) for h in handles)


def test_session_start_output_needs_source_compact_and_a_stored_head() -> None:
    record = SessionRecord(session_id="s", head_handle="ccr_" + "b" * 32)
    assert session_start_output(HookInput(session_id="s", source="startup"), record) is None
    assert session_start_output(HookInput(session_id="s", source="compact"), None) is None
    unstored = record.model_copy(update={"head_handle": None})
    assert session_start_output(HookInput(session_id="s", source="compact"), unstored) is None
    output = session_start_output(HookInput(session_id="s", source="compact"), record)
    assert output is not None and "<<ccr:ccr_" + "b" * 32 + ">>" in output


# -- what the real client needs (found by running it: tests/e2e) ------------------------------

RECORDED = Path(__file__).resolve().parents[3] / "fixtures" / "recorded"
CLIENT_TOOL = "mcp__plugin_compactor_ccr__ccr_retrieve"


def recorded_session(tmp_path: Path) -> tuple[Path, Path]:
    """A recorded current-format session (one manual compaction) and a copy cut just before its boundary."""
    (source,) = sorted(RECORDED.glob("scripted-*.jsonl"))
    whole = tmp_path / "recorded" / "session.jsonl"
    whole.parent.mkdir()
    shutil.copyfile(source, whole)
    lines = whole.read_text().splitlines(keepends=True)
    boundary = next(i for i, line in enumerate(lines) if '"compact_boundary"' in line)
    before = tmp_path / "recorded" / "before.jsonl"
    before.write_text("".join(lines[:boundary]))
    return whole, before


def preserved(path: Path) -> list[str]:
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("subtype") == "compact_boundary":
            return list(record["compactMetadata"]["preservedMessages"]["uuids"])
    raise AssertionError("no boundary")


def test_pre_compact_names_the_tool_as_the_client_does_and_how_to_load_it(session: Path) -> None:
    done = hook("pre-compact", pre_compact_input(session))
    assert f"`{CLIENT_TOOL}`" in done.stdout
    assert f'ToolSearch with the query "select:{CLIENT_TOOL}"' in done.stdout
    assert "`ccr_retrieve`" not in done.stdout


def test_pre_compact_text_reads_right_to_the_main_model_too(session: Path) -> None:
    done = hook("pre-compact", pre_compact_input(session))
    assert "When you write the summary" not in done.stdout
    assert "For whoever writes the summary of this conversation:" in done.stdout


def test_session_start_names_the_tool_as_the_client_does_and_how_to_load_it(session: Path) -> None:
    hook("pre-compact", pre_compact_input(session, "s6"))
    context = json.loads(hook("session-start", {"session_id": "s6", "source": "compact"}).stdout)
    text = context["hookSpecificOutput"]["additionalContext"]
    assert f"`{CLIENT_TOOL}`" in text and f'"select:{CLIENT_TOOL}"' in text


@pytest.mark.parametrize(
    ("event", "flags"),
    [
        ("pre-compact", ["--limit", "-1"]),
        ("pre-compact", ["--limit=x"]),
        ("pre-compact", ["--no-such-flag"]),
        ("session-start", ["--no-such-flag"]),
        ("session-start", ["extra"]),
    ],
    ids=["negative-limit", "limit-not-a-number", "unknown-flag", "session-start-unknown-flag", "stray-argument"],
)
def test_a_bad_flag_never_blocks_the_compaction(
    event: str, flags: list[str], session: Path, compactor_home: Path
) -> None:
    done = hook(event, pre_compact_input(session), *flags)
    assert done.returncode == 0
    assert done.stdout == ""
    assert done.stderr.startswith("compactor: usage_error: ")
    assert not (compactor_home / "sessions").exists()


def test_record_python_records_the_running_interpreter(compactor_home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "compactor", "hook", "record-python"], capture_output=True, text=True, timeout=TIMEOUT_S
    )
    assert done.returncode == 0, done.stderr
    assert (compactor_home / "python").read_text() == sys.executable + "\n"


def test_the_next_compaction_summarizes_the_messages_the_last_one_kept(tmp_path: Path) -> None:
    whole, before = recorded_session(tmp_path)
    kept = preserved(whole)
    assert kept, "the recorded client keeps messages verbatim; without that this test means nothing"
    transcript = read_transcript(whole)
    since = conversation_since_last_compaction(transcript)
    assert since[0].is_compact_summary
    assert [m.uuid for m in since[1 : 1 + len(kept)]] == kept
    assert since[1 + len(kept) :] == transcript.messages[transcript.compactions[-1].message_index + 1 :]
    assert (
        conversation_since_last_compaction(read_transcript(before))
        == transcript.messages[: transcript.compactions[-1].message_index]
    )


def test_pre_compact_stores_what_is_summarized_then_the_next_one_settles_it_to_what_was_dropped(
    tmp_path: Path, compactor_home: Path
) -> None:
    whole, before = recorded_session(tmp_path)
    first = hook("pre-compact", pre_compact_input(before, "rec"))
    assert first.returncode == 0 and first.stderr == ""
    summarized = read_transcript(before).messages
    record = load_session_record("rec")
    assert record is not None and record.head_handle == record.summarized_handle and record.kept_messages == 0
    assert ccr_get(compactor_home / "ccr.db", record.head_handle) == messages_jsonl(summarized)
    announced = record.head_handle

    second = hook("pre-compact", pre_compact_input(whole, "rec"))
    assert second.returncode == 0 and second.stderr == ""
    record = load_session_record("rec")
    assert record is not None
    assert record.earlier_heads == [announced], "the earlier head is the one the summarizer saw and was announced"
    (settled,) = record.earlier_dropped
    assert settled != announced
    kept = preserved(whole)
    dropped = [m for m in summarized if m.uuid not in kept]
    assert len(dropped) == len(summarized) - len(kept)
    assert ccr_get(compactor_home / "ccr.db", settled) == messages_jsonl(dropped)
    now = ccr_get(compactor_home / "ccr.db", record.head_handle).decode()
    assert all(m.api_json() in now for m in summarized if m.uuid in kept)


def test_settling_names_the_kept_part_once_the_boundary_is_written(tmp_path: Path) -> None:
    whole, before = recorded_session(tmp_path)
    store = open_store(":memory:")
    summarized = read_transcript(before).messages
    record = store_conversation(summarized, store, counter=RoughCounter(), session_id="s", trigger="manual")
    settled = settle_kept_messages(record, read_transcript(whole), store, counter=RoughCounter())
    kept = preserved(whole)
    assert settled.kept_messages == len(kept)
    assert settled.head_handle == settled.summarized_handle == record.head_handle, "the announced head never changes"
    assert settled.dropped_handle is not None and settled.dropped_handle != record.head_handle
    assert store.get(settled.dropped_handle) == messages_jsonl([m for m in summarized if m.uuid not in kept])
    assert settle_kept_messages(settled, read_transcript(whole), store, counter=RoughCounter()) is settled
    output = session_start_output(HookInput(session_id="s", source="compact"), settled)
    assert output is not None
    text = json.loads(output)["hookSpecificOutput"]["additionalContext"]
    assert f"under <<ccr:{record.head_handle}>> (it also holds the last {len(kept)} message(s)" in text
    assert settled.dropped_handle not in text


def test_settling_leaves_a_record_of_another_conversation_alone(tmp_path: Path) -> None:
    whole, _ = recorded_session(tmp_path)
    store = open_store(":memory:")
    other = store_conversation(
        [Message(role="user", content="something else")], store, counter=RoughCounter(), session_id="s"
    )
    assert settle_kept_messages(other, read_transcript(whole), store, counter=RoughCounter()) is other


# -- inputs that never block, bounds that always hold ------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/dev/urandom"])
def test_pre_compact_on_a_transcript_that_is_not_a_regular_file_warns_and_exits_0_at_once(
    tmp_path: Path, kind: str
) -> None:
    if kind == "fifo":
        path = tmp_path / "transcript.jsonl"
        os.mkfifo(path)
    else:
        path = Path(kind)
        if not path.exists():
            pytest.skip(f"{kind} is not on this system")
    done = hook("pre-compact", pre_compact_input(path))  # a hang would hit the subprocess timeout
    assert done.returncode == 0 and done.stdout == ""
    assert "not a regular file" in done.stderr and "the compaction goes on" in done.stderr


def test_pre_compact_with_stdout_on_a_full_disk_still_exits_0(session: Path) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("/dev/full is not on this system")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "compactor", "hook", "pre-compact"],
            input=json.dumps(pre_compact_input(session)),
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=TIMEOUT_S,
            env=dict(os.environ),
        )
    assert done.returncode == 0
    assert "compactor: output_write_failed: " in done.stderr and "Traceback" not in done.stderr


def test_a_hook_that_waits_past_its_time_limit_says_so_and_exits_0() -> None:
    # stdin stays open and empty (this test holds the pipe's other end), so the hook waits on it
    # until its time limit ends it.
    read_end, write_end = os.pipe()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "compactor", "hook", "pre-compact"],
            stdin=read_end,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            env={**os.environ, "COMPACTOR_HOOK_TIME_LIMIT": "1"},
        )
    finally:
        os.close(read_end)
        os.close(write_end)
    assert done.returncode == 0 and done.stdout == ""
    assert "compactor: hook_timed_out: pre-compact ran past its 1-second limit" in done.stderr


INJECTED_BUG = """
import sys
import {module} as hook
def bug(*args, **kwargs):
    raise RuntimeError("injected bug")
hook.{function} = bug
from compactor.cli import main
sys.argv = ["compactor", "hook", "{event}"]
sys.exit(main())
"""


@pytest.mark.parametrize(
    ("event", "module", "function"),
    [
        ("pre-compact", "compactor.claude_code.pre_compact_hook", "pre_compact"),
        ("post-compact", "compactor.claude_code.post_compact_hook", "record_compact_summary"),
        ("session-start", "compactor.claude_code.quick_hooks", "nothing_to_say"),
    ],
)
def test_a_bug_inside_a_hook_is_named_in_one_line_and_the_hook_still_exits_0(
    session: Path, event: str, module: str, function: str
) -> None:
    payload = {**pre_compact_input(session), "hook_event_name": event.title().replace("-", "")}
    done = subprocess.run(
        [sys.executable, "-c", INJECTED_BUG.format(module=module, function=function, event=event)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=dict(os.environ),
    )
    assert (done.returncode, done.stdout) == (0, "")
    assert done.stderr.startswith("compactor: hook_failed: the hook stopped on an error it does not know how to handle")
    assert "(RuntimeError: injected bug)" in done.stderr and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_a_bad_time_limit_is_named_and_the_default_used(tmp_path: Path) -> None:
    done = hook("session-start", {"session_id": "s1", "source": "startup"}, env={"COMPACTOR_HOOK_TIME_LIMIT": "1e999"})
    assert done.returncode == 0
    assert "COMPACTOR_HOOK_TIME_LIMIT='1e999'" in done.stderr and "using 20" in done.stderr


def test_hook_input_over_the_bound_is_refused_without_reading_it_all() -> None:
    done = hook("pre-compact", '{"session_id": "' + "x" * (2 * 1024 * 1024) + '"}')
    assert done.returncode == 0 and done.stdout == ""
    assert "more than 1,048,576 bytes" in done.stderr


def test_a_symlinked_sessions_folder_is_refused_and_nothing_is_written_where_it_points(
    session: Path, tmp_path: Path, compactor_home: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (compactor_home / "sessions").symlink_to(elsewhere)
    done = hook("pre-compact", pre_compact_input(session))
    assert done.returncode == 0
    assert "symlinked sessions folder" in done.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_30_mb_message_is_stored_and_counted_in_bounded_time(tmp_path: Path, compactor_home: Path) -> None:
    lines = SMALL.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    last = next(r for r in reversed(records) if r.get("uuid"))
    user = next(r for r in records if r.get("type") == "user" and isinstance(r["message"].get("content"), str))
    huge = {
        **user,
        "uuid": "11111111-2222-3333-4444-555555555555",
        "parentUuid": last["uuid"],
        "message": {**user["message"], "content": "x" * 30_000_000},
    }
    path = tmp_path / "huge.jsonl"
    path.write_text("\n".join([*lines, json.dumps(huge)]) + "\n", encoding="utf-8")
    done = hook("pre-compact", pre_compact_input(path, records[0]["sessionId"]))
    assert done.returncode == 0, done.stderr
    assert "ccr_" in done.stdout  # stored: the instructions name the stored conversation
    record = json.loads((compactor_home / "sessions" / f"{records[0]['sessionId']}.json").read_text())
    assert record["bytes"] > 30_000_000


def test_a_transcript_over_the_hooks_size_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:
        handle.truncate((1 << 30) + 1)  # sparse: nothing is written
    done = hook("pre-compact", pre_compact_input(path))
    assert done.returncode == 0 and done.stdout == ""
    assert "over the hook's 1,073,741,824-byte limit" in done.stderr
