"""No module of the four packages is over 600 lines, and no function or method over 100."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("compactor", "attachments", "ccr", "skills")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 100

# Known exceptions: being split in parallel on other branches; remove each when its split is merged.


def _modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _too_long(source: str, name: str) -> list[str]:
    """Each way the module ``name`` breaks the limits: ``name: ...``, or ``name:line function: ...``."""
    problems = []
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        problems.append(f"{name}: {lines} lines (the most is {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(source, filename=name)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{name}:{node.lineno} {node.name}: {length} lines (the most is {MAX_FUNCTION_LINES})")
    return problems


def test_the_packages_have_modules_to_check() -> None:
    modules = {p.relative_to(ROOT).parts[0] for p in _modules()}
    assert modules == set(PACKAGES)


def test_no_module_over_600_lines_and_no_function_over_100() -> None:
    problems = [problem for path in _modules() for problem in _too_long(path.read_text(encoding="utf-8"), _name(path))]
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("x = 1\n" * 601, ["m.py: 601 lines (the most is 600)"]),
        ("x = 1\n" * 600, []),
        ("def f():\n" + "    x = 1\n" * 100, ["m.py:1 f: 101 lines (the most is 100)"]),
        ("def f():\n" + "    x = 1\n" * 99, []),
        (
            "class C:\n    async def g(self):\n" + "        x = 1\n" * 100,
            ["m.py:2 g: 101 lines (the most is 100)"],
        ),
        (
            "def outer():\n    def inner():\n" + "        x = 1\n" * 100,
            ["m.py:1 outer: 102 lines (the most is 100)", "m.py:2 inner: 101 lines (the most is 100)"],
        ),
    ],
)
def test_the_check_names_the_file_and_the_function_with_its_line(source: str, expected: list[str]) -> None:
    assert _too_long(source, "m.py") == expected
