"""``compactor watch``: one frame with ``--once``, one line per change in a pipe, clean exits."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from compactor.claude_code.live_state import live_state_path, load_live_state
from tests.conftest import FIXTURES


def _watch(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run(
        [sys.executable, "-m", "compactor", "watch", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**environment, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def test_once_prints_one_frame_and_saves_the_status_lines_state(tmp_path: Path) -> None:
    transcript = tmp_path / "5f0c1a52-watch.jsonl"
    shutil.copy(FIXTURES / "sessions" / "small.jsonl", transcript)
    done = _watch(str(transcript), "--once", env={"COLUMNS": "120"})
    assert done.returncode == 0, done.stderr
    for part in ("context", "of auto-compact", "the summary it would write now", "files it would restore", "store"):
        assert part in done.stdout
    assert "\033" not in done.stdout and max(len(line) for line in done.stdout.splitlines()) <= 120
    state = load_live_state(live_state_path("5f0c1a52-watch"))
    assert state is not None and state.offset == transcript.stat().st_size


def test_a_session_id_is_found_under_the_claude_projects(tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "-work-app"
    project.mkdir(parents=True)
    shutil.copy(FIXTURES / "sessions" / "small.jsonl", project / "abc-123.jsonl")
    done = _watch("abc-123", "--once", env={"HOME": str(tmp_path), "COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    assert "abc-123.jsonl" in done.stdout


def test_an_unknown_transcript_is_not_found(tmp_path: Path) -> None:
    done = _watch(str(tmp_path / "nope"), "--once", env={"HOME": str(tmp_path)})
    assert done.returncode == 66 and "input_not_found" in done.stderr and done.stdout == ""


def test_in_a_pipe_each_change_is_one_line_and_an_interrupt_exits_cleanly(tmp_path: Path) -> None:
    transcript = tmp_path / "piped.jsonl"
    lines = (FIXTURES / "sessions" / "small.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text("".join(lines[:10]), encoding="utf-8")
    with subprocess.Popen(
        [sys.executable, "-m", "compactor", "watch", str(transcript)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None and process.stderr is not None
            first = process.stdout.readline()
            assert first.startswith("line 10: ") and "of auto-compact" in first
            with transcript.open("a", encoding="utf-8") as handle:
                handle.write("".join(lines[10:]))
            second = process.stdout.readline()
            assert second.startswith(f"line {len(lines)}: ") and second != first
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=60) == 0
            assert "Traceback" not in process.stderr.read()
        finally:
            if process.poll() is None:
                process.kill()


def test_help_names_the_target_and_once() -> None:
    done = _watch("--help")
    assert done.returncode == 0 and "SESSION|TRANSCRIPT" in done.stdout and "--once" in done.stdout
