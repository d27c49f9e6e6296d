"""The distribution as it would be published: a wheel built from a copy of the checkout, read back.

The wheel must install the card's four packages and nothing else at the top
level (no ``tests``, no ``memory``), the plugin's files under
``share/compactor``, and exactly the ``compactor`` and ``ccr`` scripts. It
is built offline with the test environment's setuptools (``pip wheel
--no-build-isolation --no-index``), in tmp_path, so the checkout gets no
``build/`` folder.
"""

from __future__ import annotations

import configparser
import email.message
import email.parser
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from ccr.distribution import DISTRIBUTION

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"compactor", "attachments", "ccr", "skills"}
BUILD_TIMEOUT_S = 600
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _source_copy(into: Path) -> Path:
    """What the build reads (pyproject, README, LICENSE, the packages, the plugin), without caches."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        into.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, into / name)
    for folder in (*sorted(PACKAGES), "plugin", ".claude-plugin"):
        shutil.copytree(ROOT / folder, into / folder, ignore=ignore)
    return into


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    base = tmp_path_factory.mktemp("wheel")
    source = _source_copy(base / "source")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            str(base / "out"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (built,) = (base / "out").glob("*.whl")
    return zipfile.ZipFile(built)


def _dist_info(wheel: zipfile.ZipFile) -> str:
    return f"{DISTRIBUTION.replace('-', '_')}-{PROJECT['version']}.dist-info"


def _metadata(wheel: zipfile.ZipFile) -> email.message.Message:
    return email.parser.Parser().parsestr(wheel.read(f"{_dist_info(wheel)}/METADATA").decode("utf-8"))


def test_the_wheel_is_named_for_the_distribution_and_holds_only_the_four_packages(wheel: zipfile.ZipFile) -> None:
    data = f"{DISTRIBUTION.replace('-', '_')}-{PROJECT['version']}.data"
    top = {name.split("/")[0] for name in wheel.namelist()}
    assert top == PACKAGES | {_dist_info(wheel), data}
    assert {name.split("/")[2] for name in wheel.namelist() if name.startswith(data + "/")} == {"share"}
    assert all(name.startswith(f"{data}/data/share/compactor/") for name in wheel.namelist() if name.startswith(data))
    for package in PACKAGES:
        assert f"{package}/__init__.py" in wheel.namelist() and f"{package}/py.typed" in wheel.namelist()
    assert "compactor/memory/cli.py" in wheel.namelist()
    assert not [name for name in wheel.namelist() if "__pycache__" in name or name.startswith("tests/")]


def test_the_wheel_installs_the_plugin_and_the_marketplace_under_share_compactor(wheel: zipfile.ZipFile) -> None:
    share = f"{DISTRIBUTION.replace('-', '_')}-{PROJECT['version']}.data/data/share/compactor/"
    shipped = {name.removeprefix(share) for name in wheel.namelist() if name.startswith(share)}
    wanted = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "plugin").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert shipped == wanted | {".claude-plugin/marketplace.json"}
    launch = wheel.getinfo(share + "plugin/scripts/launch")
    assert (launch.external_attr >> 16) & 0o111, "the launcher must stay executable"


def test_the_wheel_has_exactly_the_compactor_and_ccr_scripts(wheel: zipfile.ZipFile) -> None:
    entry_points = configparser.ConfigParser()
    entry_points.read_string(wheel.read(f"{_dist_info(wheel)}/entry_points.txt").decode("utf-8"))
    assert dict(entry_points["console_scripts"]) == {"compactor": "compactor.cli:main", "ccr": "ccr.cli:main"}
    assert entry_points.sections() == ["console_scripts"]


def test_the_metadata_names_the_distribution_its_urls_and_classifiers(wheel: zipfile.ZipFile) -> None:
    metadata = _metadata(wheel)
    assert metadata["Name"] == DISTRIBUTION == PROJECT["name"]
    assert metadata["License-Expression"] == "MIT"
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL", []))
    assert set(urls) == {"Homepage", "Repository", "Issues", "Changelog"}
    assert all(url.startswith("https://") for url in urls.values())
    classifiers = metadata.get_all("Classifier", [])
    assert "Typing :: Typed" in classifiers and "Intended Audience :: Developers" in classifiers
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in (11, 12, 13)} <= set(classifiers)
    assert [c for c in classifiers if c.startswith("Development Status :: ")]
    assert not [c for c in classifiers if c.startswith("License :: ")]  # the expression says it
