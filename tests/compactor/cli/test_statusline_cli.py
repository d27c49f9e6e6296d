"""``compactor statusline``: one line from Claude Code's status JSON, and ``--install`` into settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compactor.cli.commands.statusline import status_for
from tests.compactor.claude_code.test_live_state import replay_reference
from tests.compactor.cli.test_cli import imports_of


def _status(stdin: str | bytes, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "compactor", "statusline", *args],
        input=stdin if isinstance(stdin, str) else stdin.decode("utf-8", "replace"),
        capture_output=True,
        text=True,
        check=False,
        env=environment,
    )


def _session(tmp_path: Path) -> Path:
    transcript = tmp_path / "session.jsonl"
    records: list[dict[str, Any]] = [
        {"type": "user", "uuid": "u1", "version": "2.1.39", "message": {"role": "user", "content": "fix the tests"}},
        {
            "type": "assistant",
            "uuid": "a1",
            "message": {
                "role": "assistant",
                "id": "m1",
                "model": "claude-opus-4-6",
                "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/p/app.py"}}],
                "usage": {"input_tokens": 150_000, "output_tokens": 300},
            },
        },
        {
            "type": "user",
            "uuid": "u2",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x" * 4000}],
            },
        },
    ]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return transcript


def _input(transcript: Path, **extra: Any) -> str:
    """Claude Code's documented status input, with fields of newer clients and one no client sends."""
    value = {
        "hook_event_name": "Status",
        "session_id": "5f0c1a52-session",
        "transcript_path": str(transcript),
        "cwd": str(transcript.parent),
        "model": {"id": "claude-opus-4-6", "display_name": "Opus"},
        "workspace": {"current_dir": str(transcript.parent), "project_dir": str(transcript.parent)},
        "version": "2.1.39",
        "cost": {"total_cost_usd": 0.5},
        "context_window": {"context_window_size": 200_000, "current_usage": {"input_tokens": 150_000}},
        "a_field_from_the_future": [1, 2],
        **extra,
    }
    return json.dumps(value)


def test_the_line_shows_the_context_against_the_threshold_and_what_compaction_keeps(
    tmp_path: Path, compactor_home: Path
) -> None:
    done = _status(_input(_session(tmp_path)), env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    line = done.stdout.rstrip("\n")
    assert "\n" not in line and "\033" not in line
    # 150,300 of usage + 1,000 for the newer tool result, against 200,000 - 20,000 - 13,000.
    assert "151k/167k 90% of auto-compact" in line
    assert "keeps 1 path, 0 commands, 1 message" in line and "restores 1 file" in line and "0 stored" in line
    saved = json.loads((compactor_home / "statusline" / "5f0c1a52-session.json").read_text(encoding="utf-8"))
    assert saved["offset"] == (tmp_path / "session.jsonl").stat().st_size


def test_colour_unless_no_color_and_the_width_is_kept(tmp_path: Path) -> None:
    stdin = _input(_session(tmp_path))
    coloured = _status(stdin, env={"COLUMNS": "200"})
    assert "\033[31m" in coloured.stdout  # 90% used: red
    narrow = _status(stdin, env={"NO_COLOR": "1", "COLUMNS": "40"})
    assert 0 < len(narrow.stdout.rstrip("\n")) <= 40 and "90%" in narrow.stdout


def test_a_newer_transcript_line_moves_the_figures_on_the_next_run(tmp_path: Path) -> None:
    transcript = _session(tmp_path)
    stdin = _input(transcript)
    first = _status(stdin, env={"NO_COLOR": "1"}).stdout
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "user", "uuid": "u3", "message": {"role": "user", "content": "y" * 40_000}}))
        handle.write("\n")
    second = _status(stdin, env={"NO_COLOR": "1"}).stdout
    assert "151k/167k" in first and "161k/167k 96%" in second and "keeps 1 path, 0 commands, 2 messages" in second


@pytest.mark.parametrize(
    ("stdin", "says", "error_id"),
    [
        ("not json", "compactor: status input is not JSON", "input_invalid"),
        ("[]", "compactor: status input is not a JSON object", "input_invalid"),
        ('{"session_id": "s"}', "compactor: no transcript yet", "no_transcript"),
        (
            '{"transcript_path": "/nowhere/x.jsonl"}',
            "compactor: no transcript yet (x.jsonl)",
            "transcript_not_found",
        ),
    ],
)
def test_a_missing_piece_is_a_short_line_never_a_blank_or_a_traceback(stdin: str, says: str, error_id: str) -> None:
    done = _status(stdin, env={"NO_COLOR": "1"})
    assert (done.returncode, done.stdout) == (0, says + "\n")
    assert done.stderr.startswith(f"compactor statusline: {error_id}: ") and "Traceback" not in done.stderr


def test_a_folder_as_transcript_is_a_short_line(tmp_path: Path) -> None:
    done = _status(json.dumps({"transcript_path": str(tmp_path)}), env={"NO_COLOR": "1"})
    assert done.returncode == 0 and done.stdout.startswith("compactor: ") and "Traceback" not in done.stderr


def test_a_fifo_as_transcript_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    done = _status(json.dumps({"transcript_path": str(fifo)}), env={"NO_COLOR": "1"})
    assert (done.returncode, done.stdout) == (0, "compactor: cannot read the transcript (not a regular file)\n")
    assert done.stderr.startswith("compactor statusline: transcript_unreadable: ")


def test_the_line_loads_neither_pydantic_nor_the_tokenizer_nor_dataclasses(tmp_path: Path) -> None:
    code, modules = imports_of("compactor", "statusline", stdin=_input(_session(tmp_path)))
    assert code == 0
    heavy = ("pydantic", "tiktoken", "jinja2", "sqlite3", "rich", "watchfiles", "attachments")
    assert [m for m in modules if m.split(".")[0] in heavy] == []
    # Nor the standard library's costlier modules a run does without (each a few percent of a run).
    assert [m for m in ("dataclasses", "inspect", "tempfile", "hashlib") if m in modules] == []


SETTINGS = '{\n    "model": "opus",\n    "permissions": {"allow": ["Bash(ls:*)"]}\n}\n'


def test_install_adds_the_entry_after_a_backup_and_changes_nothing_else(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(SETTINGS, encoding="utf-8")
    done = _status("", "--install", "--settings", str(settings))
    assert done.returncode == 0, done.stderr
    text = settings.read_text(encoding="utf-8")
    assert text.startswith(SETTINGS.rstrip()[:-1].rstrip()) and text.endswith("}\n")
    data = json.loads(text)
    assert data["model"] == "opus" and data["permissions"] == {"allow": ["Bash(ls:*)"]}
    assert data["statusLine"]["type"] == "command" and data["statusLine"]["command"].endswith(" statusline")
    assert (tmp_path / "settings.json.compactor-backup").read_text(encoding="utf-8") == SETTINGS
    again = _status("", "--install", "--settings", str(settings))
    assert again.returncode == 0 and "nothing changed" in again.stderr
    assert settings.read_text(encoding="utf-8") == text


def test_install_into_a_missing_file_and_refusing_another_status_line(tmp_path: Path) -> None:
    settings = tmp_path / "claude" / "settings.json"
    assert _status("", "--install", "--settings", str(settings)).returncode == 0
    assert set(json.loads(settings.read_text(encoding="utf-8"))) == {"statusLine"}
    other = tmp_path / "other.json"
    other.write_text('{"statusLine": {"type": "command", "command": "mine"}}', encoding="utf-8")
    refused = _status("", "--install", "--settings", str(other))
    assert refused.returncode == 2 and "usage_error" in refused.stderr and "--force" in refused.stderr
    assert json.loads(other.read_text(encoding="utf-8"))["statusLine"]["command"] == "mine"
    forced = _status("", "--install", "--force", "--settings", str(other))
    assert forced.returncode == 0 and "replaced" in forced.stderr
    assert json.loads(other.read_text(encoding="utf-8"))["statusLine"]["command"].endswith(" statusline")


def test_install_refuses_a_settings_file_that_is_not_json(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text("{ not json", encoding="utf-8")
    done = _status("", "--install", "--settings", str(settings))
    assert done.returncode == 65 and "input_invalid" in done.stderr
    assert settings.read_text(encoding="utf-8") == "{ not json"


def test_print_shows_the_json_and_writes_nothing(tmp_path: Path) -> None:
    done = _status("", "--print", env={"HOME": str(tmp_path)})
    assert done.returncode == 0
    assert json.loads(done.stdout)["statusLine"]["padding"] == 0
    assert not (tmp_path / ".claude").exists()


def test_concurrent_runs_all_answer_and_leave_one_whole_state(tmp_path: Path, compactor_home: Path) -> None:
    stdin = _input(_session(tmp_path))
    environment = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "compactor", "statusline"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        for _ in range(4)
    ]
    answers = []
    for run in runs:
        with run:
            out, err = run.communicate(stdin, timeout=60)
            answers.append((run.returncode, out, err))
    assert all(code == 0 and "151k/167k" in out and err == "" for code, out, err in answers)
    folder = compactor_home / "statusline"
    assert [p.name for p in folder.iterdir()] == ["5f0c1a52-session.json"]
    assert json.loads((folder / "5f0c1a52-session.json").read_text(encoding="utf-8"))["lines"] == 3


def test_the_line_just_before_each_recorded_compaction_agrees_with_the_replay(
    shared_transcript: Path, tmp_path: Path, compactor_home: Path
) -> None:
    lines = shared_transcript.read_bytes().splitlines(keepends=True)
    recorded = {n: json.loads(raw) for n, raw in enumerate(lines, 1) if b'"compact_boundary"' in raw}
    if not recorded:
        pytest.skip("no recorded compaction")
    copy = tmp_path / "session.jsonl"
    stdin = json.dumps({"session_id": "shared", "transcript_path": str(copy), "model": {"id": "claude"}}).encode()
    environ = {"COMPACTOR_HOME": str(compactor_home)}
    shown: dict[int, str] = {}
    with copy.open("wb") as handle:
        for number, raw in enumerate(lines, 1):
            if number in recorded:
                shown[number] = status_for(stdin, environ, width=400)
            handle.write(raw)
            handle.flush()
            if number % 25 == 0:
                status_for(stdin, environ)  # runs between, each reading what was added since the last
    for line, paths, commands, messages, _ in replay_reference(shared_transcript, tmp_path):
        text = shown[line]
        assert f"keeps {paths} path" in text and f" {commands} command" in text and f" {messages} message" in text
        used = int(text.split("% of auto-compact")[0].rsplit(" ", 1)[1])
        if recorded[line]["compactMetadata"]["trigger"] == "auto":
            assert used >= 95, text


def test_run_by_hand_in_a_terminal_it_says_what_it_reads_instead_of_waiting() -> None:
    import pty

    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "compactor", "statusline", "--no-color"],
            stdin=follower,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert (done.returncode, done.stdout) == (
        0,
        "compactor: no status input (Claude Code pipes it in; see --install)\n",
    )
    assert done.stderr.startswith("compactor statusline: no_input: ")
