"""A folder given where an input file is expected: exit 65 (it exists, but is not a file) in every command.

66 stays for a path where nothing exists. Settings files (``--config``,
``tune --space``) are different: any problem with them is a config error,
exit 2, as a bad setting is.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SMALL = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "small.jsonl"

COMMANDS = {
    "tokens": ["compactor", "tokens", "{dir}"],
    "replay": ["compactor", "replay", "{dir}"],
    "inspect": ["compactor", "inspect", "{dir}"],
    "show": ["compactor", "show", "{dir}"],
    "restore --list": ["compactor", "restore", "{dir}", "--list"],
    "restore --before": ["compactor", "restore", "{dir}", "--before", "1", "--output", "{tmp}/out.jsonl"],
    "replay --memory-db": ["compactor", "replay", str(SMALL), "--memory-db", "{dir}"],
    "ccr put": ["ccr", "put", "{dir}"],
    "ccr import": ["ccr", "import", "{dir}"],
}


def run(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    folder = tmp_path / "a-folder"
    folder.mkdir(exist_ok=True)
    args = [a.format(dir=folder, tmp=tmp_path) for a in argv]
    return subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "COMPACTOR_HOME": str(tmp_path / "home")},
    )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_folder_where_a_file_is_expected_exits_65_naming_it(name: str, tmp_path: Path) -> None:
    argv = COMMANDS[name]
    done = run(argv, tmp_path)
    assert done.returncode == 65, (done.returncode, done.stderr)
    assert done.stderr.startswith(f"{argv[0]}: "), done.stderr
    assert "a-folder" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("name", ["tokens", "replay", "show", "restore --list", "ccr put"])
def test_a_path_where_nothing_exists_still_exits_66(name: str, tmp_path: Path) -> None:
    argv = [a.replace("{dir}", "{tmp}/nothing-here.jsonl") for a in COMMANDS[name]]
    done = run(argv, tmp_path)
    assert done.returncode == 66, (done.returncode, done.stderr)
