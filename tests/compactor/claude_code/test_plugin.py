"""Finding the Claude Code plugin folder of an installation: a checkout's, or the one a wheel installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compactor.claude_code.plugin import SHARE_DIR, find_marketplace, find_plugin, is_plugin
from compactor.core.errors import InputNotFound

ROOT = Path(__file__).resolve().parents[3]


def installed(prefix: Path) -> Path:
    """A data folder laid out as a wheel installs it: share/compactor/{plugin, .claude-plugin/marketplace.json}."""
    share = prefix / SHARE_DIR
    shutil.copytree(ROOT / "plugin", share / "plugin")
    (share / ".claude-plugin").mkdir(parents=True)
    shutil.copyfile(ROOT / ".claude-plugin" / "marketplace.json", share / ".claude-plugin" / "marketplace.json")
    return share


def test_a_checkout_finds_its_own_plugin_folder_and_the_marketplace_at_its_root() -> None:
    assert find_plugin(ROOT, []) == ROOT / "plugin"
    assert find_marketplace(ROOT, []) == ROOT


def test_an_installed_wheel_finds_the_plugin_under_its_data_folder(tmp_path: Path) -> None:
    share = installed(tmp_path / "venv")
    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    assert find_plugin(site, [tmp_path / "user", tmp_path / "venv"]) == share / "plugin"
    assert find_marketplace(site, [tmp_path / "venv"]) == share


def test_the_checkout_comes_before_an_installed_copy(tmp_path: Path) -> None:
    installed(tmp_path / "venv")
    assert find_plugin(ROOT, [tmp_path / "venv"]) == ROOT / "plugin"


def test_a_folder_that_is_another_plugin_is_not_taken_for_ours(tmp_path: Path) -> None:
    other = tmp_path / "site" / "plugin" / ".claude-plugin"
    other.mkdir(parents=True)
    (other / "plugin.json").write_text(json.dumps({"name": "someone-else"}))
    assert not is_plugin(other.parent)
    with pytest.raises(InputNotFound, match="not installed"):
        find_plugin(tmp_path / "site", [tmp_path / "empty"])


def test_a_plugin_without_a_marketplace_beside_it_is_reported(tmp_path: Path) -> None:
    share = installed(tmp_path / "venv")
    (share / ".claude-plugin" / "marketplace.json").unlink()
    with pytest.raises(InputNotFound, match="no usable marketplace"):
        find_marketplace(tmp_path / "site", [tmp_path / "venv"])


def test_a_marketplace_that_does_not_list_the_folder_is_reported(tmp_path: Path) -> None:
    share = installed(tmp_path / "venv")
    (share / ".claude-plugin" / "marketplace.json").write_text(json.dumps({"name": "x", "plugins": []}))
    with pytest.raises(InputNotFound, match="does not list"):
        find_marketplace(tmp_path / "site", [tmp_path / "venv"])


@pytest.mark.parametrize(("args", "expected"), [((), ROOT / "plugin"), (("--marketplace",), ROOT)])
def test_plugin_path_prints_the_folder_of_this_installation(args: tuple[str, ...], expected: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "compactor", "plugin", "path", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{expected}\n"
    assert is_plugin(Path(done.stdout.strip()) / ("plugin" if args else ""))
