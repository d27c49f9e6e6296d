"""ccr.cli_kit's end of a program: a command that skips the interpreter's teardown ends at once."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from ccr import cli_kit
from compactor.cli import main

PROGRAM = """
import atexit, sys
from ccr.cli_kit import end_program, skip_teardown
atexit.register(lambda: print("teardown ran", file=sys.stderr))
sys.stdout.write("the answer, still buffered")
if sys.argv[1] == "skip":
    skip_teardown()
print("returned", end_program(3), file=sys.stderr)
"""


def run(choice: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, choice], capture_output=True, text=True, timeout=60, check=False
    )


def test_after_skip_teardown_the_program_ends_with_its_code_and_its_output_flushed() -> None:
    done = run("skip")
    assert (done.returncode, done.stdout) == (3, "the answer, still buffered")
    assert "returned" not in done.stderr
    assert "teardown ran" not in done.stderr  # no atexit handler: the interpreter did not tear down


def test_without_skip_teardown_end_program_returns_the_code_and_the_interpreter_ends_as_usual() -> None:
    done = run("keep")
    assert (done.returncode, done.stdout) == (0, "the answer, still buffered")
    assert done.stderr.splitlines() == ["returned 3", "teardown ran"]


def test_a_hook_run_in_the_callers_process_returns_instead_of_ending_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_kit, "_teardown_skipped", False)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"not json")))
    assert main(["hook", "post-compact"]) == 0  # a bad input is reported, and the hook exits 0
    assert cli_kit._teardown_skipped  # the hook asked; only the program's own entry point acts on it
