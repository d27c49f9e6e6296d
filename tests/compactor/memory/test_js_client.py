"""The Node client's own tests (``node --test clients/js``) against this checkout's ``compactor memory``.

Skipped when node is not installed; CI also runs them directly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

NODE_TIMEOUT_S = 600


def test_the_node_client_passes_its_tests_against_the_real_cli(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    cli = Path(sys.executable).with_name("compactor")
    if not cli.exists():
        pytest.skip("the compactor script is not installed beside this Python (pip install -e .)")
    done = subprocess.run(
        [node, "--test", "clients/js"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=NODE_TIMEOUT_S,
        env={**os.environ, "COMPACTOR_BIN": str(cli), "COMPACTOR_HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout
