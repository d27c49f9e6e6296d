"""The Claude Code plugin folder: its JSON files parse, carry the documented keys, and name real commands."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugin"
TIMEOUT_S = 60


def load(relative: str) -> Any:
    return json.loads((PLUGIN / relative).read_text(encoding="utf-8"))


def hook_commands() -> list[str]:
    return [
        hook["command"]
        for groups in load("hooks/hooks.json")["hooks"].values()
        for group in groups
        for hook in group["hooks"]
    ]


def mcp_commands() -> list[list[str]]:
    return [[server["command"], *server.get("args", [])] for server in load(".mcp.json")["mcpServers"].values()]


def executable(name: str) -> str:
    """The console script installed next to this interpreter (what ``pip install`` puts on PATH)."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[mcp]'")
    return found


def test_manifest_names_the_plugin_with_the_package_version() -> None:
    manifest = load(".claude-plugin/plugin.json")
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert manifest["name"] == "compactor"
    assert manifest["version"] == version
    assert manifest["description"].strip()
    assert manifest["author"]["name"].strip()


def test_hooks_run_pre_compact_and_session_start_after_compaction() -> None:
    hooks = load("hooks/hooks.json")["hooks"]
    assert set(hooks) == {"PreCompact", "SessionStart"}
    (pre,) = hooks["PreCompact"]
    (start,) = hooks["SessionStart"]
    assert start["matcher"] == "compact"
    assert [h["command"] for h in pre["hooks"]] == ["compactor hook pre-compact"]
    assert [h["command"] for h in start["hooks"]] == ["compactor hook session-start"]
    for hook in pre["hooks"] + start["hooks"]:
        assert hook["type"] == "command"
        assert isinstance(hook.get("timeout", 60), int)


def test_mcp_config_starts_the_ccr_server() -> None:
    servers = load(".mcp.json")["mcpServers"]
    assert servers == {"ccr": {"command": "ccr", "args": ["mcp"]}}


@pytest.mark.parametrize("words", [shlex.split(c) for c in hook_commands()] + mcp_commands(), ids=" ".join)
def test_every_command_the_plugin_names_is_a_real_subcommand(words: list[str]) -> None:
    done = subprocess.run(
        [executable(words[0]), *words[1:], "--help"], capture_output=True, text=True, timeout=TIMEOUT_S
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {' '.join(words)}")


def test_readme_says_how_to_install() -> None:
    text = (PLUGIN / "README.md").read_text(encoding="utf-8")
    assert "pip install '/path/to/compactor[mcp]'" in text
    assert "--plugin-dir" in text
