"""The examples run offline and do what they say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_agent_loop_example_compacts_and_recovers() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "agent_loop.py")], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("compacted") >= 2
    assert "asked ccr_" in done.stdout and "make test TURN=" in done.stdout
