"""The examples run offline and do what they say."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_agent_loop_example_compacts_and_recovers() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "agent_loop.py")], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("compacted") >= 2
    assert "asked ccr_" in done.stdout and "make test TURN=" in done.stdout


def _run_example(name: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_pydantic_ai_example_compacts_and_recovers() -> None:
    pytest.importorskip("pydantic_ai")
    out = _run_example("pydantic_ai_agent.py")
    assert out.count("compacted") >= 1 and "last compaction report: {" in out
    assert "recovered: make test TURN=3 build-id b0003x" in out


def test_langgraph_example_compacts_and_recovers() -> None:
    pytest.importorskip("langgraph")
    out = _run_example("langgraph_agent.py")
    assert out.count("compacted") >= 1 and "last compaction report: {" in out
    assert "recovered: make test TURN=3 build-id b0003x" in out


def test_langchain_agent_example_compacts_and_recovers() -> None:
    pytest.importorskip("langchain.agents")
    out = _run_example("langchain_agent.py")
    assert out.count("compacted") >= 1 and "last compaction report: {" in out
    assert "recovered: make test TURN=3 build-id b0003x" in out


def test_openai_agents_example_compacts_and_recovers() -> None:
    pytest.importorskip("agents")
    out = _run_example("openai_agents_session.py")
    assert out.count("compacted") >= 1 and "last compaction report: {" in out
    assert "recovered: make test TURN=3 build-id b0003x" in out and "second run:" in out
    reports = [line for line in out.splitlines() if line.startswith("compacted ")]
    assert len(reports) == len(set(reports))  # one report per compaction, not one per history


def test_claude_agent_sdk_example_compacts_stores_and_recovers() -> None:
    pytest.importorskip("claude_agent_sdk")
    override = os.environ.get("COMPACTOR_E2E_CLAUDE")
    modules = Path(__file__).resolve().parent / "e2e" / "node_modules" / "@anthropic-ai"
    client = [Path(override)] if override else list(modules.glob("claude-code-linux-*/claude"))
    if not any(path.exists() for path in client):
        pytest.skip("the Claude Code client is not installed: run `npm ci --prefix tests/e2e`")
    out = _run_example("claude_agent_sdk_agent.py")
    assert "compacted (auto" in out and "last compaction record: {" in out
    assert "stored 5 messages" in out and "<<ccr:ccr_" in out
    assert "recovered: 0016 the deploy key rotates on day 17" in out


@pytest.mark.parametrize("missing", ["claude_agent_sdk", "anyio"])
def test_the_claude_agent_sdk_example_without_its_extra_says_so_in_one_line(missing: str, tmp_path: Path) -> None:
    """Whether or not the SDK is installed here, a package that raises as an absent one does stands in for it."""
    package = tmp_path / missing
    package.mkdir()
    (package / "__init__.py").write_text(
        f"raise ModuleNotFoundError({'No module named ' + missing!r}, name={missing!r})\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "claude_agent_sdk_agent.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert done.stderr.startswith("claude_agent_sdk_agent.py: usage_error: ")
    assert f"{missing} is not installed" in done.stderr and "context-compactor[claude-agent-sdk]" in done.stderr
    assert done.stdout == ""
