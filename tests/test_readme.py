"""The README's promises: two commands first, CI runs the test one, and the sizes it states."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```", 2)[1]
    return [line for line in block.splitlines() if line.strip()]


def test_readme_opens_with_exactly_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    assert text.index("```") < text.index("\n## ")
    main_job, tests = _commands()
    assert "compactor replay fixtures/sessions/" in main_job
    assert "pytest" in tests


def test_ci_runs_the_readme_test_command() -> None:
    assert _commands()[1] in (ROOT / ".ci" / "run").read_text().splitlines()


def test_the_main_job_session_exists() -> None:
    session = _commands()[0].split("compactor replay ", 1)[1].split()[0]
    assert (ROOT / session).is_file()


def test_the_claude_agent_sdk_binary_size_the_readme_states_is_what_its_wheel_installs() -> None:
    text = (ROOT / "README.md").read_text()
    stated = {int(n) for n in re.findall(r"installs a (\d+) MB(?: Claude Code)? binary", text)}
    assert stated, "the README no longer says how large the SDK's binary is"
    spec = importlib.util.find_spec("claude_agent_sdk")
    bundled = Path(spec.origin).parent / "_bundled" / "claude" if spec and spec.origin else None
    if bundled is None or not bundled.is_file():
        pytest.skip("claude-agent-sdk is not installed from its wheel here (no bundled binary to measure)")
    size_mb = bundled.stat().st_size / 1e6
    assert all(abs(n - size_mb) <= 0.1 * size_mb for n in stated), (stated, size_mb)
