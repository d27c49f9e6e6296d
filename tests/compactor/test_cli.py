"""The compactor command line: every command has help; errors become exit codes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from compactor.cli import COMMANDS


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "compactor", *args], capture_output=True, text=True, check=False)


def test_top_level_help_names_every_command() -> None:
    done = cli("--help")
    assert done.returncode == 0
    for name in COMMANDS:
        assert name in done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command: str) -> None:
    done = cli(command, "--help")
    assert done.returncode == 0
    assert "usage: compactor " + command in done.stdout
    assert len(done.stdout.splitlines()) > 3


def test_an_unknown_command_is_a_usage_error() -> None:
    done = cli("frobnicate")
    assert done.returncode == 2 and "invalid choice" in done.stderr


def test_a_bad_setting_is_a_config_error_with_its_id(tmp_path: object) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "compactor", "tokens", "-"],
        input="hello", capture_output=True, text=True, check=False,
        env={**__import__("os").environ, "COMPACTOR_CONTEXT_WINDOW": "lots"},
    )
    assert done.returncode == 2
    assert "config_invalid" in done.stderr and "COMPACTOR_CONTEXT_WINDOW" in done.stderr
