"""docs/ARCHITECTURE.md's promises: its first screen names every package, and each package's section names its modules."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
TOP_LEVEL = ("compactor", "ccr", "attachments", "skills")
FIRST_SCREEN_LINES = 45
"""How many lines a newcomer sees first: the list of packages must fit in them."""

NOT_PYTHON = ("plugin/", ".claude-plugin/", "clients/js/", "benchmarks/", "fixtures/", "tests/")


def _packages() -> list[str]:
    """Every Python package of the project by dotted name, but the ``commands`` folders (their parent names them)."""
    found = []
    for top in TOP_LEVEL:
        for init in sorted((ROOT / top).rglob("__init__.py")):
            parts = init.parent.relative_to(ROOT).parts
            if "commands" not in parts:
                found.append(".".join(parts))
    return found


def _modules(package: str) -> list[str]:
    """The modules a package's section must name: its own ``.py`` files but ``__init__`` and ``__main__``."""
    folder = ROOT.joinpath(*package.split("."))
    return sorted(p.name for p in folder.glob("*.py") if p.stem not in ("__init__", "__main__"))


def _sections(text: str) -> dict[str, str]:
    """Each ``### `package`...`` section's text, by package name."""
    parts = re.split(r"^### `([\w.]+)`.*$", text, flags=re.M)
    return {parts[i]: parts[i + 1].split("\n## ", 1)[0] for i in range(1, len(parts) - 1, 2)}


def unlisted(text: str) -> list[str]:
    """The packages and folders that no list item of the first screen opens with (``- `name` — ...``)."""
    first_screen = text.splitlines()[:FIRST_SCREEN_LINES]
    listed = {m.group(1) for line in first_screen if (m := re.match(r"- `([^`]+)`", line))}
    return [name for name in [*_packages(), *NOT_PYTHON] if name not in listed]


def unnamed(text: str) -> dict[str, list[str]]:
    """Package -> the modules its section does not name (``["(no section)"]`` when it has none)."""
    sections = _sections(text)
    gaps: dict[str, list[str]] = {}
    for package in _packages():
        if package == "compactor":
            continue  # the top package's few modules are named on the first screen
        section = sections.get(package)
        missing = ["(no section)"] if section is None else [m for m in _modules(package) if f"`{m}`" not in section]
        if missing:
            gaps[package] = missing
    return gaps


def stale(text: str) -> dict[str, list[str]]:
    """Package -> the modules its section names (in a list item, as ```name.py```) that it does not have."""
    found: dict[str, list[str]] = {}
    for package, section in _sections(text).items():
        folder = ROOT.joinpath(*package.split("."))
        if not folder.is_dir():
            continue
        named = {f for line in re.findall(r"^- (.*)$", section, flags=re.M) for f in re.findall(r"`(\w+\.py)`", line)}
        gone = sorted(f for f in named if not (folder / f).is_file())
        if gone:
            found[package] = gone
    return found


def test_the_first_screen_names_every_package_and_folder_with_one_line_each() -> None:
    missing = unlisted(ARCHITECTURE.read_text(encoding="utf-8"))
    assert not missing, f"add one line each to the first {FIRST_SCREEN_LINES} lines of docs/ARCHITECTURE.md: {missing}"


def test_every_package_has_a_section_that_names_each_of_its_modules() -> None:
    gaps = unnamed(ARCHITECTURE.read_text(encoding="utf-8"))
    assert not gaps, f"docs/ARCHITECTURE.md: name these modules in their package's section: {gaps}"


def test_every_module_a_section_names_exists() -> None:
    gone = stale(ARCHITECTURE.read_text(encoding="utf-8"))
    assert not gone, f"docs/ARCHITECTURE.md names modules that are not there: {gone}"


def test_the_flat_layout_map_fails_every_check() -> None:
    """The map as it was before the subpackages (one table row per package)."""
    old = (
        "# How compactor is put together\n\n| package | concept → module |\n|---|---|\n"
        "| `compactor` | messages (`messages.py`), the pipeline (`pipeline.py`) |\n"
    )
    assert set(unlisted(old)) == {*_packages(), *NOT_PYTHON}
    assert all(gap == ["(no section)"] for gap in unnamed(old).values()) and "compactor.engine" in unnamed(old)


def test_a_module_left_out_or_gone_is_caught() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert "`masking.py`" in text
    assert unnamed(text.replace("`masking.py`", "`masking`"))["compactor.engine"] == ["masking.py"]
    assert stale(text.replace("`masking.py`", "`masks.py`"))["compactor.engine"] == ["masks.py"]
    assert "compactor.view" in unlisted(text.replace("- `compactor.view` —", "- compactor.view —"))
