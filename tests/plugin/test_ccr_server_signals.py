"""``ccr mcp`` as Claude Code runs it: Ctrl-C or SIGTERM ends it even while its client keeps stdin open."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HANG_GUARD_S = 60


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_ccr_mcp_exits_at_ctrl_c_or_sigterm_with_stdin_still_open(signum: int, tmp_path: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "ccr", "--store", str(tmp_path / "ccr.db"), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert server.stdin is not None and server.stdout is not None
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
        server.stdin.write((json.dumps(hello) + "\n").encode())
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode() + b"\n")
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        assert json.loads(server.stdout.readline()) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        server.send_signal(signum)
        returncode = server.wait(timeout=HANG_GUARD_S)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for stream in (server.stdin, server.stdout, server.stderr):
            if stream is not None:
                stream.close()
    assert returncode == 128 + signum
