"""Progress bars: drawn on a terminal's stderr, never on a pipe, never on stdout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from compactor.core.tokens import TiktokenCounter


def _on_terminal(args: list[str], columns: int = 80) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """Run ``args`` with stderr on a pseudo-terminal ``columns`` wide: the result, and what was drawn there."""
    controller, terminal = os.openpty()
    try:
        done = subprocess.run(
            args,
            stdout=subprocess.PIPE,
            stderr=terminal,
            timeout=300,
            check=False,
            env={**os.environ, "COLUMNS": str(columns)},
        )
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
        stdout=subprocess.PIPE,
        stderr=stderr,
        timeout=120,
        check=False,
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


def test_counts_are_printed_for_people_bytes_in_kb_mb_gb_others_with_separators() -> None:
    from ccr.progress import count_text, human_count

    assert human_count(10_337_898, "bytes") == "10.3 MB"
    assert human_count(999, "bytes") == "999 B"
    assert human_count(2_500, "bytes") == "2.5 kB"
    assert human_count(3_200_000_000, "bytes") == "3.2 GB"
    assert count_text(4_200_000, 10_337_898, "bytes") == "4.2 MB/10.3 MB"
    assert count_text(171, 581, "entries") == "171/581 entries"
    assert count_text(12_345, None, "entries") == "12,345 entries"


def test_the_tokens_bar_shows_human_sizes_not_raw_byte_counts(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_text("hello world\n" * 300_000, encoding="utf-8")
    done, drawn = _on_terminal([sys.executable, "-m", "compactor", "tokens", str(path)], columns=250)
    assert done.returncode == 0
    assert b"3.6 MB" in drawn
    assert str(path.stat().st_size).encode() not in drawn


def test_a_jsonl_file_is_counted_piece_by_piece_so_the_bar_moves_as_it_counts() -> None:
    import io
    import json

    from compactor.cli.commands.tokens import _texts

    lines = [json.dumps({"type": "user", "n": n, "text": "x " * 200}) for n in range(12_000)]
    data = ("\n".join(lines) + "\n").encode()
    pieces = list(_texts(io.BytesIO(data), "t.jsonl"))
    assert len(pieces) >= 4  # more than one block (1 MiB) of lines that start with "{", cut between lines
    assert sum(read for _, read in pieces) == len(data)
    assert "".join(text for text, _ in pieces) == data.decode()
    counter = TiktokenCounter()
    assert sum(counter.count_text(text) for text, _ in pieces) == counter.count_text(data.decode())


def test_the_replay_bar_names_its_unit(tmp_path: Path) -> None:
    session = Path(__file__).resolve().parents[2] / "fixtures" / "sessions" / "small.jsonl"
    args = [sys.executable, "-m", "compactor", "replay", str(session), "--store", str(tmp_path / "a.db")]
    _, drawn = _on_terminal(args, columns=250)
    assert b" entries" in drawn


def test_the_tune_bar_runs_from_the_start_and_counts_replays(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    args = [
        sys.executable,
        "-m",
        "compactor",
        "tune",
        str(root / "fixtures" / "sessions" / "small.jsonl"),
        "--space",
        str(root / "examples" / "tune.toml"),
        "--jobs",
        "1",
        "--out",
        str(tmp_path / "out"),
    ]
    done, drawn = _on_terminal(args, columns=250)
    assert done.returncode == 0
    assert b"tuning" in drawn and b"elapsed" in drawn  # before the first replay is back: the time spent runs
    assert b"replays" in drawn and b"/8 replays" in drawn  # the example space holds 8 trials
