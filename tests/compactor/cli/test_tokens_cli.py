"""``compactor tokens``: counts a file or stdin in a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from compactor.core.tokens import TiktokenCounter


def run(*args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("COMPACTOR_") or k == "COMPACTOR_HOME"}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "compactor", "tokens", *args],
        input=stdin,
        capture_output=True,
        env=environ,
        check=False,
    )


def test_counts_a_file_with_tiktoken_by_default(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    text = "hello world\n" * 50
    path.write_text(text, encoding="utf-8")
    done = run(str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip() == str(TiktokenCounter().count_text(text))
    assert done.stderr == b""


def test_counts_stdin_with_the_rough_counter() -> None:
    done = run("-", "--counter", "rough", stdin=b"x" * 400)
    assert (done.returncode, done.stdout.decode().strip()) == (0, "100")
    assert run("--counter", "rough", stdin=b"x" * 8).stdout.decode().strip() == "2"


def test_the_counter_can_come_from_the_environment() -> None:
    done = run("--json", stdin="\U0001f600".encode() * 4, env={"COMPACTOR_COUNTER": "rough"})
    assert json.loads(done.stdout) == {"tokens": 2, "counter": "rough", "characters": 8}


def test_a_missing_file_exits_66_with_an_error_id(tmp_path: Path) -> None:
    done = run(str(tmp_path / "nope.txt"))
    assert done.returncode == 66 and done.stdout == b""
    assert done.stderr.decode().startswith("compactor: input_not_found: ")


def test_invalid_utf8_exits_65() -> None:
    done = run(stdin=b"ok \xff\xfe")
    assert done.returncode == 65
    assert done.stderr.decode().startswith("compactor: input_invalid: ")


def test_a_bad_counter_setting_exits_2() -> None:
    done = run(stdin=b"x", env={"COMPACTOR_COUNTER": "words"})
    assert done.returncode == 2
    assert done.stderr.decode().startswith("compactor: config_invalid: ")
    assert "COMPACTOR_COUNTER" in done.stderr.decode()


def test_an_unknown_flag_is_a_usage_error() -> None:
    assert run("--counter", "words").returncode == 2


def test_the_command_has_help() -> None:
    done = run("--help")
    assert done.returncode == 0 and b"--counter" in done.stdout


def test_a_closed_stdin_exits_66_without_a_traceback() -> None:
    done = subprocess.run(
        ["sh", "-c", 'exec "$0" -m compactor tokens <&-', sys.executable],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 66, done.stderr
    assert done.stderr.decode().startswith("compactor: input_not_found: stdin")
    assert b"Traceback" not in done.stderr and done.stdout == b""


def test_a_file_larger_than_one_block_counts_exactly_as_a_whole(tmp_path: Path) -> None:
    import random

    rng = random.Random(7)
    words = ["def", "x", "  ", "\n", "\n\n", "}", "é", "{", "return", "42", "\t", "word", "日本", "::", "'s"]
    text = "".join(rng.choice(words) + rng.choice(["", " ", "\n"]) for _ in range(700_000))
    path = tmp_path / "big.txt"
    path.write_text(text, encoding="utf-8")
    assert path.stat().st_size > 2 * (1 << 20)
    done = run(str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tokens"] == TiktokenCounter().count_text(text)


def test_bad_utf8_past_the_first_block_names_its_byte(tmp_path: Path) -> None:
    data = b"abc\n" * 400_000 + b"\xff" + b"tail\n"
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    done = run(str(path))
    assert done.returncode == 65
    assert f"not UTF-8 text (byte {4 * 400_000})" in done.stderr.decode()
    assert done.stdout == b""


def test_a_50_mb_line_with_nowhere_to_cut_is_refused_with_exit_65_not_held_whole(tmp_path: Path) -> None:
    path = tmp_path / "one-line.txt"
    path.write_bytes(b"x" * 50_000_000)
    done = run(str(path))
    assert done.returncode == 65
    assert done.stderr.startswith(b"compactor: input_invalid: ") and b"1,048,576 characters" in done.stderr
    assert done.stdout == b""


def test_a_long_line_of_words_is_cut_between_words_and_counted_exactly(tmp_path: Path) -> None:
    text = "the quick brown fox, 42 jumps: over (the) lazy dog's back! " * 60_000  # 3.5 MB on one line
    path = tmp_path / "words.txt"
    path.write_text(text, encoding="utf-8")
    done = run(str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip() == str(TiktokenCounter().count_text(text))


def test_a_device_named_as_the_file_is_refused_instead_of_read_forever() -> None:
    done = run("/dev/zero")
    assert done.returncode == 65 and b"not a regular file" in done.stderr
