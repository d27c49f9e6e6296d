"""The Claude Code plugin folder: its JSON files parse, carry the documented keys, and run real commands.

The plugin runs every command through ``scripts/launch``, which finds the
Python compactor is installed in without the shell's PATH.
"""

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
LAUNCH = PLUGIN / "scripts" / "launch"
LAUNCH_PREFIX = '"${CLAUDE_PLUGIN_ROOT}/scripts/launch" '
TIMEOUT_S = 60
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


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


def launch(
    *args: str, env: dict[str, str], plugin: Path = PLUGIN, cwd: Path | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run the plugin's launcher as Claude Code does: a bare environment, no virtual environment on PATH."""
    return subprocess.run(
        [str(plugin / "scripts" / "launch"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={"PATH": SYSTEM_PATH, **env},
        cwd=cwd,
    )


@pytest.fixture
def plugin_copy(tmp_path: Path) -> Path:
    """The plugin folder copied out of the checkout, so the checkout's .venv is not beside it."""
    copy = tmp_path / "elsewhere" / "plugin"
    shutil.copytree(PLUGIN, copy)
    return copy


def test_manifest_names_the_plugin_with_the_package_version() -> None:
    manifest = load(".claude-plugin/plugin.json")
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert manifest["name"] == "compactor"
    assert manifest["version"] == version
    assert manifest["description"].strip()
    assert manifest["author"]["name"].strip()


def test_hooks_run_pre_compact_session_start_and_post_compact_around_a_compaction() -> None:
    hooks = load("hooks/hooks.json")["hooks"]
    assert set(hooks) == {"PreCompact", "SessionStart", "PostCompact"}
    (pre,) = hooks["PreCompact"]
    (start,) = hooks["SessionStart"]
    (post,) = hooks["PostCompact"]
    assert start["matcher"] == "compact" and pre["matcher"] == post["matcher"] == "manual|auto"
    assert [h["command"] for h in pre["hooks"]] == [LAUNCH_PREFIX + "compactor hook pre-compact"]
    assert [h["command"] for h in start["hooks"]] == [LAUNCH_PREFIX + "compactor hook session-start"]
    assert [h["command"] for h in post["hooks"]] == [LAUNCH_PREFIX + "compactor hook post-compact"]
    for hook in pre["hooks"] + start["hooks"] + post["hooks"]:
        assert hook["type"] == "command"
        assert isinstance(hook.get("timeout", 60), int)


def test_mcp_config_starts_the_ccr_and_memory_servers() -> None:
    servers = load(".mcp.json")["mcpServers"]
    assert servers == {
        "ccr": {"command": "${CLAUDE_PLUGIN_ROOT}/scripts/launch", "args": ["ccr", "mcp"]},
        "memory": {"command": "${CLAUDE_PLUGIN_ROOT}/scripts/launch", "args": ["compactor", "memory", "mcp"]},
    }


@pytest.mark.parametrize(
    "words",
    [shlex.split(c.removeprefix(LAUNCH_PREFIX)) for c in hook_commands()] + [m[1:] for m in mcp_commands()],
    ids=" ".join,
)
def test_every_command_the_plugin_names_is_a_real_subcommand(words: list[str]) -> None:
    done = launch(*words, "--help", env={"COMPACTOR_PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {' '.join(words)}")


def test_launch_uses_compactor_python_without_anything_on_path(plugin_copy: Path, tmp_path: Path) -> None:
    done = launch(
        "compactor",
        "hook",
        "--help",
        plugin=plugin_copy,
        env={"HOME": str(tmp_path), "COMPACTOR_PYTHON": sys.executable},
    )
    assert done.returncode == 0 and done.stdout.startswith("usage: compactor hook"), done.stderr


def test_launch_uses_the_python_recorded_by_record_python(plugin_copy: Path, tmp_path: Path) -> None:
    home = tmp_path / "compactor-home"
    recorded = subprocess.run(
        [sys.executable, "-m", "compactor", "hook", "record-python"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={"PATH": SYSTEM_PATH, "COMPACTOR_HOME": str(home)},
    )
    assert recorded.returncode == 0, recorded.stderr
    assert (home / "python").read_text().strip() == sys.executable
    done = launch("ccr", "--help", plugin=plugin_copy, env={"HOME": str(tmp_path), "COMPACTOR_HOME": str(home)})
    assert done.returncode == 0 and done.stdout.startswith("usage: ccr"), done.stderr


def test_launch_finds_the_virtual_environment_of_the_checkout_it_is_in(tmp_path: Path) -> None:
    if not (ROOT / ".venv" / "bin" / "python").exists():
        pytest.skip("this checkout has no .venv")
    done = launch("compactor", "hook", "--help", env={"HOME": str(tmp_path)})
    assert done.returncode == 0 and done.stdout.startswith("usage: compactor hook"), done.stderr


def test_launch_without_compactor_says_how_to_install_and_never_blocks_a_hook(
    plugin_copy: Path, tmp_path: Path
) -> None:
    env = {"HOME": str(tmp_path), "COMPACTOR_PYTHON": "/nonexistent/python3"}
    hook = launch("compactor", "hook", "pre-compact", plugin=plugin_copy, env=env, stdin="{}")
    assert hook.returncode == 0 and hook.stdout == ""
    assert "compactor is not installed" in hook.stderr and "pip install" in hook.stderr
    server = launch("ccr", "mcp", plugin=plugin_copy, env=env)
    assert server.returncode == 1 and "pip install" in server.stderr


def test_launch_never_imports_a_compactor_folder_of_the_project_it_runs_in(plugin_copy: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "compactor").mkdir(parents=True)
    (project / "compactor" / "__init__.py").write_text("raise SystemExit('imported the project folder')\n")
    (project / "compactor" / "__main__.py").write_text("raise SystemExit('imported the project folder')\n")
    done = launch(
        "compactor",
        "hook",
        "--help",
        plugin=plugin_copy,
        cwd=project,
        env={"HOME": str(tmp_path), "COMPACTOR_PYTHON": sys.executable},
    )
    assert done.returncode == 0 and done.stdout.startswith("usage: compactor hook"), done.stderr


def test_plugin_declares_an_icon_and_its_network_hosts() -> None:
    manifest = load(".claude-plugin/plugin.json")
    icon = PLUGIN / manifest["icon"]
    data = icon.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width == height and 512 <= width <= 2048
    assert manifest["network"] == {"hosts": []}


def test_readme_says_how_to_install() -> None:
    text = (PLUGIN / "README.md").read_text(encoding="utf-8")
    assert "pip install /path/to/compactor" in text
    assert "--plugin-dir" in text


@pytest.mark.parametrize(
    "where",
    [
        ".local/pipx/venvs/context-compactor/bin/python",
        ".local/share/pipx/venvs/context-compactor/bin/python",
        ".local/pipx/venvs/compactor/bin/python",
    ],
)
def test_launch_finds_a_pipx_installation(where: str, plugin_copy: Path, tmp_path: Path) -> None:
    python = tmp_path / "home" / where
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # stands in for the venv's python
    python.chmod(0o755)
    done = launch("compactor", "hook", "--help", plugin=plugin_copy, env={"HOME": str(tmp_path / "home")})
    assert done.returncode == 0 and done.stdout.startswith("usage: compactor hook"), done.stderr


def test_launch_finds_a_user_installation_by_its_console_script(plugin_copy: Path, tmp_path: Path) -> None:
    script = tmp_path / "home" / ".local" / "bin" / "compactor"
    script.parent.mkdir(parents=True)
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom compactor.cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    done = launch("ccr", "--help", plugin=plugin_copy, env={"HOME": str(tmp_path / "home")})
    assert done.returncode == 0 and done.stdout.startswith("usage: ccr"), done.stderr


def test_launch_turns_any_failure_of_a_hook_into_exit_zero(plugin_copy: Path, tmp_path: Path) -> None:
    crashing = tmp_path / "python"
    crashing.write_text(  # passes the launcher's check, then fails as a broken interpreter would
        f'#!/bin/sh\ncase "$2" in -c) exec "{sys.executable}" "$@" ;; esac\necho "Fatal Python error" >&2\nexit 2\n'
    )
    crashing.chmod(0o755)
    env = {"HOME": str(tmp_path), "COMPACTOR_PYTHON": str(crashing)}
    hook = launch("compactor", "hook", "pre-compact", plugin=plugin_copy, env=env, stdin="{}")
    assert hook.returncode == 0 and hook.stdout == ""
    assert "Fatal Python error" in hook.stderr and "failed (exit 2)" in hook.stderr
    server = launch("ccr", "mcp", plugin=plugin_copy, env=env)
    assert server.returncode == 2


def test_launch_finds_the_environment_a_wheel_installed_it_into(tmp_path: Path) -> None:
    prefix = tmp_path / "venv"
    plugin = prefix / "share" / "compactor" / "plugin"
    shutil.copytree(PLUGIN, plugin)
    python = prefix / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # stands in for the venv's python
    python.chmod(0o755)
    done = launch("compactor", "hook", "--help", plugin=plugin, env={"HOME": str(tmp_path / "home")})
    assert done.returncode == 0 and done.stdout.startswith("usage: compactor hook"), done.stderr


def test_the_wheel_carries_every_file_of_the_plugin_and_the_marketplace_in_the_same_layout() -> None:
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    shipped = {
        f"{target}/{path.name}": path
        for target, patterns in data_files.items()
        for pattern in patterns
        for path in ROOT.glob(pattern)
        if path.is_file()
    }
    wanted = [p for p in PLUGIN.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    wanted.append(ROOT / ".claude-plugin" / "marketplace.json")
    assert sorted(shipped.values()) == sorted(wanted)
    for target, path in shipped.items():
        assert target == f"share/compactor/{path.relative_to(ROOT).as_posix()}"
    assert LAUNCH.stat().st_mode & 0o111, "the launcher must stay executable: the wheel keeps its mode"


def test_the_repository_is_a_marketplace_that_lists_the_plugin_folder() -> None:
    marketplace = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    manifest = load(".claude-plugin/plugin.json")
    assert marketplace["name"] == "compactor" and marketplace["owner"]["name"].strip()
    assert marketplace["metadata"]["description"].strip()
    (entry,) = marketplace["plugins"]
    assert entry == {"name": manifest["name"], "source": "./plugin", "description": manifest["description"]}
