"""The hooks on hostile input: lone surrogates, unreadable numbers, a hook out of time, a huge message.

Each runs ``compactor hook ...`` as a real subprocess with the test's own
``COMPACTOR_HOME``; a hook always exits 0, so each test says what it stored
and what the next hook says.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compactor.claude_code.session_record import SESSION_RECORD_MAX_BYTES, load_session_record

ROOT = Path(__file__).resolve().parents[3]
LONG = ROOT / "fixtures" / "sessions" / "long.jsonl"
MARKER = re.compile(r"<<ccr:(ccr_[0-9a-f]{32})>>")
TIMEOUT_S = 300


def hook(event: str, payload: Any, home: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sys.executable, "-m", "compactor", "hook", event],
        input=data,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={**os.environ, "COMPACTOR_HOME": str(home), **(env or {})},
        check=False,
    )


def cli(*argv: str | Path, home: Path, program: str = "compactor") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", program, *map(str, argv)],
        capture_output=True,
        timeout=TIMEOUT_S,
        env={**os.environ, "COMPACTOR_HOME": str(home)},
        check=False,
    )


def pre(session_id: str, transcript: Path, **extra: Any) -> dict[str, Any]:
    return {"session_id": session_id, "transcript_path": str(transcript), "trigger": "auto", **extra}


def start(session_id: str, transcript: Path) -> dict[str, Any]:
    return {"session_id": session_id, "transcript_path": str(transcript), "source": "compact"}


def spoil_last_user_message(source: Path, target: Path, prefix: str) -> None:
    """``source`` with ``prefix`` (a JSON string body, escapes kept) in front of its last typed user message
    (after the last recorded compaction, so that the hook stores it)."""
    lines = source.read_bytes().splitlines(keepends=True)
    typed = [
        i
        for i, line in enumerate(lines)
        if (data := json.loads(line)).get("type") == "user" and isinstance(data["message"].get("content"), str)
    ]
    data = json.loads(lines[typed[-1]])
    data["message"]["content"] = json.loads(f'"{prefix}"') + data["message"]["content"]
    lines[typed[-1]] = (json.dumps(data) + "\n").encode()
    target.write_bytes(b"".join(lines))


@pytest.mark.parametrize("prefix", ["\\ud800 ", "\\udfff\\ud800 ", "x\\udc00"])
def test_pre_compact_stores_a_conversation_holding_lone_surrogates(prefix: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    transcript = tmp_path / "s.jsonl"
    spoil_last_user_message(LONG, transcript, prefix)
    done = hook("pre-compact", pre("s1", transcript), home)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "surrogate" in done.stderr
    (head,) = MARKER.findall(done.stdout)[:1]
    stored = cli("get", head, home=home, program="ccr")
    assert stored.returncode == 0 and ("\ufffd".encode() in stored.stdout or b"\\ufffd" in stored.stdout)
    segment = load_session_record("s1", home)
    assert segment is not None and segment.segments
    lines = cli("get", segment.segments[0].handle, home=home, program="ccr").stdout
    assert lines == transcript.read_bytes()  # the file's own bytes, the escape as it held it
    reminder = hook("session-start", start("s1", transcript), home)
    assert head in reminder.stdout


def test_a_lone_surrogate_in_the_hook_input_is_read_as_text(tmp_path: Path) -> None:
    home = tmp_path / "home"
    transcript = tmp_path / "s.jsonl"
    shutil.copyfile(LONG, transcript)
    raw = json.dumps(pre("s2", transcript, custom_instructions="\ud800 keep the plan", cwd="/repo/\udc80"))
    assert "\\ud800" in raw
    done = hook("pre-compact", raw, home)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert MARKER.search(done.stdout) and "2 lone surrogate escape(s)" in done.stderr
    bad_id = hook("pre-compact", json.dumps(pre("s\ud800", transcript)), home)
    assert bad_id.returncode == 0 and bad_id.stdout == ""
    assert bad_id.stderr.splitlines()[-1].startswith("compactor: input_invalid: hook input: session_id")
    for event in ("session-start", "post-compact"):
        other = hook(event, json.dumps({**start("s2", transcript), "compact_summary": "\udfff"}), home)
        assert other.returncode == 0 and "Traceback" not in other.stderr, other.stderr


@pytest.mark.parametrize("field", ["transcript_path", "cwd"])
def test_a_nul_in_a_path_of_the_hook_input_is_refused_by_name(field: str, tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    shutil.copyfile(LONG, transcript)
    payload = pre("s3", transcript)
    payload[field] = str(transcript) + "\x00tail"
    done = hook("pre-compact", payload, tmp_path / "home")
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.startswith(f"compactor: input_invalid: hook input: {field}: ") and "NUL" in done.stderr
    assert "unexpected" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("digits", [4_301, 20_000])
def test_pre_compact_stores_the_rest_of_a_transcript_with_an_unreadable_integer(digits: int, tmp_path: Path) -> None:
    home = tmp_path / "home"
    transcript = tmp_path / "s.jsonl"
    line = b'{"type":"assistant","uuid":"big","usage":{"input_tokens":' + b"7" * digits + b"}}\n"
    transcript.write_bytes(LONG.read_bytes() + line)
    done = hook("pre-compact", pre("s4", transcript), home)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert MARKER.search(done.stdout), done.stderr
    record = load_session_record("s4", home)
    assert record is not None and record.head_handle is not None
    assert record.segments[-1].last_line == len(transcript.read_bytes().splitlines())


def test_after_a_pre_compact_that_ran_out_of_time_session_start_names_no_older_copy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    lines = LONG.read_bytes().splitlines(keepends=True)
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(b"".join(lines[:150]))
    first = hook("pre-compact", pre("s5", transcript), home)
    (old,) = MARKER.findall(first.stdout)[:1]
    assert old in hook("session-start", start("s5", transcript), home).stdout
    transcript.write_bytes(b"".join(lines))
    late = hook("pre-compact", pre("s5", transcript), home, env={"COMPACTOR_HOOK_TIME_LIMIT": "0.05"})
    assert late.returncode == 0 and "hook_timed_out" in late.stderr and late.stdout == ""
    after = hook("session-start", start("s5", transcript), home)
    assert after.returncode == 0 and old not in after.stdout and "just compacted" not in after.stdout
    summary = {**start("s5", transcript), "compact_summary": "the summary of the compaction not stored"}
    assert hook("post-compact", summary, home).returncode == 0
    kept = load_session_record("s5", home)
    assert kept is not None and kept.compact_summary is None  # not the older compaction's summary
    # The earlier compaction is still known, and the next hook that finishes is announced again.
    record = load_session_record("s5", home)
    assert record is not None and record.head_handle == old
    again = hook("pre-compact", pre("s5", transcript), home)
    (new,) = MARKER.findall(again.stdout)[:1]
    told = hook("session-start", start("s5", transcript), home).stdout
    assert new != old and new in told
    record = load_session_record("s5", home)
    assert record is not None and old in record.earlier_heads


def test_after_a_pre_compact_that_failed_session_start_names_no_older_copy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    transcript = tmp_path / "s.jsonl"
    shutil.copyfile(LONG, transcript)
    (old,) = MARKER.findall(hook("pre-compact", pre("s6", transcript), home).stdout)[:1]
    transcript.write_bytes(b"\x00\x01 not a transcript any more\n")
    failed = hook("pre-compact", pre("s6", transcript), home)
    assert failed.returncode == 0 and "not_a_transcript" in failed.stderr
    assert old not in hook("session-start", start("s6", transcript), home).stdout
    record = load_session_record("s6", home)
    assert record is not None and record.head_handle is None and old in record.earlier_heads
    assert not (home / "sessions" / "s6.pending").exists()


def test_one_huge_user_message_keeps_the_session_record_readable_and_its_history(tmp_path: Path) -> None:
    home = tmp_path / "home"
    transcript = tmp_path / "s.jsonl"
    words = "please look at this " * 450_000  # 9 MB of one user message
    first = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s7", "message": {"role": "user"}}
    first["message"]["content"] = words
    transcript.write_text(json.dumps(first) + "\n")
    done = hook("pre-compact", pre("s7", transcript), home)
    assert done.returncode == 0 and MARKER.search(done.stdout), done.stderr
    path = home / "sessions" / "s7.json"
    assert path.stat().st_size <= SESSION_RECORD_MAX_BYTES
    record = load_session_record("s7", home)
    assert record is not None and record.ledger is not None and record.head_handle is not None
    listed = cli("restore", "s7", "--list", "--json", home=home)
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 1, listed.stderr
    assert record.head_handle in hook("session-start", start("s7", transcript), home).stdout
    # A second compaction keeps the first one's head among the earlier ones.
    reply = {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s7"}
    reply["message"] = {"role": "assistant", "content": [{"type": "text", "text": "looked"}]}
    boundary = {"type": "system", "subtype": "compact_boundary", "uuid": "b1", "parentUuid": None}
    boundary |= {"logicalParentUuid": "a1", "sessionId": "s7", "compactMetadata": {"trigger": "auto"}}
    more = {"type": "user", "uuid": "u2", "parentUuid": "b1", "sessionId": "s7", "message": {"role": "user"}}
    more["message"]["content"] = "and now the next thing " + words[:1_000_000]
    with transcript.open("a") as handle:
        for data in (reply, boundary, more):
            handle.write(json.dumps(data) + "\n")
    second = hook("pre-compact", pre("s7", transcript), home)
    assert second.returncode == 0 and MARKER.search(second.stdout), second.stderr
    assert path.stat().st_size <= SESSION_RECORD_MAX_BYTES
    later = load_session_record("s7", home)
    assert later is not None and record.head_handle in later.earlier_heads and len(later.segments) == 2


def test_a_number_too_long_to_read_in_the_hook_input_is_bad_input_not_a_bug(tmp_path: Path) -> None:
    done = hook("pre-compact", '{"session_id": "s8", "n": ' + "1" * 5000 + "}", tmp_path / "home")
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.startswith("compactor: input_invalid: hook input holds a number too long to read")
