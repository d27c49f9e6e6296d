"""The examples run offline and do what they say."""

from __future__ import annotations

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


def test_openai_agents_example_compacts_and_recovers() -> None:
    pytest.importorskip("agents")
    out = _run_example("openai_agents_session.py")
    assert out.count("compacted") >= 1 and "last compaction report: {" in out
    assert "recovered: make test TURN=3 build-id b0003x" in out and "second run:" in out
