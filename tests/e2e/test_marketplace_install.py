"""Installing the plugin the usual way, in the real client: a marketplace, then ``plugin install``.

Each world has a fresh ``HOME`` and no ``--plugin-dir``: only what
``claude plugin marketplace add`` and ``claude plugin install`` put in
``~/.claude`` loads the plugin.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_api import Call, Say, request_text
from git_server import GitServer
from harness import REPO_ROOT, RETRIEVE_TOOL, STATS_TOOL, Session

World = Callable[..., Session]
RECALL_TOOL = "mcp__plugin_compactor_memory__memory_recall"
NOTES = "".join(f"{i:04d} the deploy key rotates on day {i % 28 + 1}\n" for i in range(400))


def install(session: Session, marketplace: Path | str) -> None:
    added = session.client("plugin", "marketplace", "add", str(marketplace))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = session.client("plugin", "install", "compactor@compactor")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = session.client("plugin", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert any(p.get("id") == "compactor@compactor" and p.get("enabled") for p in json.loads(listed.stdout)), (
        listed.stdout
    )


def work_compact_and_use_the_tools(session: Session) -> None:
    """A Read, ``/compact``, then a turn that loads and calls a tool of each server."""
    notes = session.project / "notes.txt"
    notes.write_text(NOTES)
    session.run("read the notes", script=[Call("Read", {"file_path": str(notes)}), Say("Read them.")])
    session.run("/compact")
    session.run(
        "check the store and the memories",
        script=[
            Call("ToolSearch", {"query": f"select:{STATS_TOOL},{RECALL_TOOL}"}),
            Call(STATS_TOOL, {}),
            Call(RECALL_TOOL, {"query": "deploy key"}),
            Say("Checked."),
        ],
    )


def assert_hooks_and_servers_ran(session: Session) -> None:
    assert len(session.boundaries()) == 1
    record = session.session_record()
    assert record["head_handle"] and record["trigger"] == "manual"
    compaction = request_text(session.api.of_kind("compaction")[0].body)
    assert f"<<ccr:{record['head_handle']}>>" in compaction, "the pre-compact hook's instructions did not arrive"
    after = request_text(session.api.of_kind("main")[-1].body)
    assert "This conversation was just compacted" in after and RETRIEVE_TOOL in after
    ((_, stats, error),) = session.api.tool_results(STATS_TOOL)
    assert not error and json.loads(stats)["entries"] >= 1, stats
    ((_, recalled, error),) = session.api.tool_results(RECALL_TOOL)
    assert not error and "hits" in json.loads(recalled), recalled


def test_the_repository_validates_as_a_marketplace_without_warnings_or_advice(world: World) -> None:
    done = world(plugin=None).client("plugin", "validate", str(REPO_ROOT))
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "marketplace.json" in out
    assert "warning" not in out.lower() and "advice" not in out.lower(), out


def test_the_checkout_installs_from_its_marketplace_and_its_hooks_and_both_servers_run(world: World) -> None:
    session = world(plugin=None)
    install(session, REPO_ROOT)
    work_compact_and_use_the_tools(session)
    assert_hooks_and_servers_ran(session)


def test_a_pip_installed_copy_is_a_marketplace_and_finds_the_python_it_was_installed_with(
    world: World, tmp_path: Path
) -> None:
    prefix = tmp_path / "venv"
    share = prefix / "share" / "compactor"  # as the wheel lays it out (tests/plugin/test_plugin_files.py)
    shutil.copytree(REPO_ROOT / "plugin", share / "plugin")
    (share / ".claude-plugin").mkdir()
    shutil.copyfile(REPO_ROOT / ".claude-plugin" / "marketplace.json", share / ".claude-plugin" / "marketplace.json")
    python = prefix / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # stands in for the environment's python
    python.chmod(0o755)
    session = world(plugin=None, python=None)
    validated = session.client("plugin", "validate", str(share))
    assert validated.returncode == 0 and "warning" not in validated.stdout.lower(), validated.stdout
    install(session, share)
    work_compact_and_use_the_tools(session)
    assert_hooks_and_servers_ran(session)


def git(*args: str, cwd: Path) -> None:
    done = subprocess.run(
        [
            "git",
            "-c",
            "user.name=compactor",
            "-c",
            "user.email=compactor@example.invalid",
            "-c",
            "init.defaultBranch=main",
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_git_url_of_the_repository_installs_and_finds_the_python_record_python_wrote(
    world: World, tmp_path: Path
) -> None:
    """The client clones the marketplace and copies the plugin out of it: ``record-python`` tells it the Python."""
    work = tmp_path / "repository"
    for part in ("plugin", ".claude-plugin"):
        shutil.copytree(REPO_ROOT / part, work / part)
    git("init", "-q", cwd=work)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "the plugin and its marketplace", cwd=work)
    served = tmp_path / "served"
    served.mkdir()
    git("clone", "-q", "--bare", str(work), str(served / "compactor.git"), cwd=tmp_path)
    session = world(plugin=None, python=None)
    recorded = session.compactor("hook", "record-python")
    assert recorded.returncode == 0, recorded.stderr
    with GitServer(served) as server:
        install(session, server.url_of("compactor.git"))
        assert any("git-upload-pack" in r for r in server.requests)
    work_compact_and_use_the_tools(session)
    assert_hooks_and_servers_ran(session)
