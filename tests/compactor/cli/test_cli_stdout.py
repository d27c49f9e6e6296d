"""What the three command lines do when stdout or stderr cannot be written, as real subprocesses.

An unwritable stdout (a full disk) or a closed one is ``prog: output_write_failed: ...``
on stderr and exit 73, never a traceback and never exit 0 (``ccr put``'s handle is its
only result). A reader that went away (``| head``) stays a quiet exit 0. A closed stderr
loses the message but keeps the exit code, and never puts the message on stdout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SMALL = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "small.jsonl"
FULL = Path("/dev/full")
pytestmark = pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A text file, a report, a ccr store holding the text file and a memory database holding one memory."""
    path = tmp_path_factory.mktemp("stdout")
    (path / "a.txt").write_text("hello world\n", encoding="utf-8")
    report = subprocess.run(
        [sys.executable, "-m", "compactor", "replay", str(SMALL), "--json", "--store", str(path / "r.db")],
        capture_output=True,
        text=True,
        check=True,
    )
    (path / "report.json").write_text(report.stdout, encoding="utf-8")
    put = subprocess.run(
        [sys.executable, "-m", "ccr", "--store", str(path / "ccr.db"), "put", str(path / "a.txt")],
        capture_output=True,
        text=True,
        check=True,
    )
    (path / "handle").write_text(put.stdout.strip(), encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "compactor.memory", "--db", str(path / "m.db"), "remember", "the build uses make"],
        capture_output=True,
        text=True,
        check=True,
    )
    return path


def commands(folder: Path) -> dict[str, list[str]]:
    handle = (folder / "handle").read_text(encoding="utf-8")
    store, db = ["--store", str(folder / "ccr.db")], ["--db", str(folder / "m.db")]
    return {
        "tokens": ["compactor", "tokens", str(folder / "a.txt")],
        "replay": ["compactor", "replay", str(SMALL), "--store", str(folder / "r2.db")],
        "inspect": ["compactor", "inspect", str(SMALL)],
        "show": ["compactor", "show", str(folder / "report.json")],
        "restore": ["compactor", "restore", str(SMALL), "--list"],
        "ccr put": ["ccr", *store, "put", str(folder / "a.txt")],
        "ccr get": ["ccr", *store, "get", handle],
        "ccr list": ["ccr", *store, "list"],
        "ccr stats": ["ccr", *store, "stats"],
        "memory recall": ["compactor", "memory", *db, "recall", "build"],
        "help": ["compactor", "--help"],
    }


NAMES = [
    "tokens",
    "replay",
    "inspect",
    "show",
    "restore",
    "ccr put",
    "ccr get",
    "ccr list",
    "ccr stats",
    "memory recall",
    "help",
]


def run(argv: list[str], *, shell_redirect: str = "", **kwargs: object) -> subprocess.CompletedProcess[str]:
    """``python -m argv...``, optionally through ``sh`` to apply a redirection such as ``>&-``."""
    command = [sys.executable, "-m", *argv]
    if shell_redirect:
        command = ["sh", "-c", f'exec "$@" {shell_redirect}', "sh", *command]
    return subprocess.run(command, text=True, check=False, **kwargs)  # type: ignore[call-overload]


def assert_write_failed(done: subprocess.CompletedProcess[str], prog: str) -> None:
    assert done.returncode == 73, done.stderr
    assert done.stderr.startswith(f"{prog}: output_write_failed: "), done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize("name", NAMES)
def test_a_full_disk_on_stdout_is_output_write_failed_exit_73(name: str, folder: Path) -> None:
    argv = commands(folder)[name]
    with FULL.open("w") as full:
        done = run(argv, stdout=full, stderr=subprocess.PIPE)
    assert_write_failed(done, argv[0].rsplit(".", 1)[-1])


@pytest.mark.parametrize("name", NAMES)
def test_a_closed_stdout_is_output_write_failed_exit_73(name: str, folder: Path) -> None:
    argv = commands(folder)[name]
    done = run(argv, shell_redirect=">&-", stderr=subprocess.PIPE)
    assert_write_failed(done, argv[0].rsplit(".", 1)[-1])


def test_ccr_put_with_stdout_closed_does_not_lose_its_handle_silently(folder: Path) -> None:
    done = run(
        ["ccr", "--store", str(folder / "put.db"), "put", str(folder / "a.txt")],
        shell_redirect=">&-",
        stderr=subprocess.PIPE,
    )
    assert_write_failed(done, "ccr")
    assert "stdout" in done.stderr


@pytest.mark.parametrize("name", ["tokens", "ccr list", "memory recall"])
def test_a_reader_that_went_away_is_still_a_quiet_exit_0(name: str, folder: Path) -> None:
    read, write = os.pipe()
    os.close(read)
    try:
        done = run(commands(folder)[name], stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_a_closed_stderr_keeps_the_exit_code_and_prints_no_error_on_stdout(folder: Path) -> None:
    done = run(["compactor", "tokens", str(folder / "missing.txt")], shell_redirect="2>&-", stdout=subprocess.PIPE)
    assert done.returncode == 66
    assert done.stdout == ""


@pytest.mark.parametrize("name", ["tokens", "ccr list", "memory recall"])
def test_closed_stdout_and_stderr_together_exit_73_without_crashing(name: str, folder: Path) -> None:
    done = run(commands(folder)[name], shell_redirect=">&- 2>&-")
    assert done.returncode == 73
