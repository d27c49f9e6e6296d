"""Progress bars: drawn on a terminal's stderr, never on a pipe, never on stdout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from compactor.tokens import TiktokenCounter


def _on_terminal(args: list[str]) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """Run ``args`` with stderr on a pseudo-terminal: the result, and what was drawn there."""
    controller, terminal = os.openpty()
    try:
        done = subprocess.run(args, stdout=subprocess.PIPE, stderr=terminal, timeout=300, check=False)
        os.close(terminal)
        drawn = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed: everything has been read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(controller)
    return done, drawn


def _count(path: Path, stderr: int) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "compactor", "tokens", str(path)],
        stdout=subprocess.PIPE, stderr=stderr, timeout=120, check=False,
    )


def test_a_terminal_gets_a_progress_bar_on_stderr_and_stdout_stays_the_result(tmp_path: Path) -> None:
    text = "hello world\n" * 300_000
    path = tmp_path / "big.txt"
    path.write_text(text, encoding="utf-8")
    done, drawn = _on_terminal([sys.executable, "-m", "compactor", "tokens", str(path)])
    assert done.returncode == 0
    assert done.stdout.decode().strip() == str(TiktokenCounter().count_text(text))
    assert b"counting" in drawn


def test_a_pipe_gets_no_progress_bar(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_text("hello world\n" * 300_000, encoding="utf-8")
    done = _count(path, subprocess.PIPE)
    assert done.returncode == 0 and done.stderr == b""


def test_replay_draws_its_progress_on_a_terminal_and_prints_the_same_report(tmp_path: Path) -> None:
    session = Path(__file__).resolve().parents[2] / "fixtures" / "sessions" / "small.jsonl"
    args = [sys.executable, "-m", "compactor", "replay", str(session), "--json", "--store", str(tmp_path / "a.db")]
    on_terminal, drawn = _on_terminal(args)
    piped = subprocess.run(args, capture_output=True, timeout=300, check=False)
    assert on_terminal.returncode == piped.returncode == 0
    assert b"replaying small.jsonl" in drawn and piped.stderr == b""
    assert on_terminal.stdout == piped.stdout


def test_inspect_draws_its_progress_on_a_terminal_only() -> None:
    session = Path(__file__).resolve().parents[2] / "fixtures" / "sessions" / "long.jsonl"
    args = [sys.executable, "-m", "compactor", "inspect", str(session), "--json"]
    on_terminal, drawn = _on_terminal(args)
    piped = subprocess.run(args, capture_output=True, timeout=300, check=False)
    assert on_terminal.returncode == piped.returncode == 0
    assert b"reading long.jsonl" in drawn and piped.stderr == b""
    assert on_terminal.stdout == piped.stdout
