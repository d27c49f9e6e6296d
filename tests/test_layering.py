"""The packages' imports point one way: the layering rules, checked by parsing every module.

The order is ``ccr`` < ``skills`` < ``attachments`` < ``compactor``: a
package imports only itself and the packages before it. ``ccr`` is lowest
because it is the plumbing every other package builds on and needs none of
them: the root of the errors, lazy exports, the jinja2 environments, the
command-line kit, progress bars, token counting of text and head-keeping
truncation live there, besides the recovery store every package writes cut
content to. ``skills`` needs only that (its errors hang under ccr's root, it
exports lazily, and it re-exports ccr's truncation). ``attachments``
restores files, plans, tasks and skills, so it reads ``skills`` (the invoked
skills, the watch loop) and writes cut tails to the ``ccr`` store; it holds
the messages, since an attachment is one. ``compactor`` composes them all
(its ``SessionState`` holds the values ``attachments`` and ``skills``
define), so it comes last.

The rules, each named in a failure:

1. ``ccr``, ``skills`` and ``attachments`` import nothing from ``compactor``.
2. A package imports only packages before it in the order.
3. No package imports another package's private module (a module or package
   whose name starts with ``_``); compactor's subpackages
   (``compactor.core``, ``compactor.engine``, ...) count as packages.
4. No module imports a path ``compactor._moved`` keeps only for users.

Every import counts: module level, inside functions, under ``TYPE_CHECKING``,
relative ones, and module names written as strings (lazy-export tables, CLI
command tables, ``importlib.import_module`` arguments) when they name a module
of the tree or an old path.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from compactor._moved import MOVED

ROOT = Path(__file__).resolve().parent.parent

ORDER = ("ccr", "skills", "attachments", "compactor")
"""The packages, lowest first: each may import only itself and those before it."""

SUBPACKAGES = ("core", "engine", "claude_code", "cli", "memory", "summarizers", "view", "tune", "adapters")
"""compactor's subpackages, each a package of its own for rule 3."""

LOWER = ("ccr", "skills", "attachments")
"""The packages that must not import compactor (rule 1)."""

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


@dataclass(frozen=True)
class Violation:
    """One import that breaks a rule, where it is."""

    path: str
    line: int
    rule: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: rule {self.rule}: {self.message}"


@dataclass(frozen=True)
class Layout:
    """The packages checked, their order, the subpackages counted as packages, and the old paths."""

    order: Sequence[str]
    lower: Sequence[str]
    subpackages: Mapping[str, Sequence[str]]
    moved: Mapping[str, str]


def module_name(root: Path, path: Path) -> str:
    """The dotted module name of the file ``path`` under ``root`` (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(module: str, layout: Layout) -> str:
    """The package ``module`` belongs to for rule 3: a top package, or a subpackage counted as one."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in layout.subpackages.get(parts[0], ()):
        return ".".join(parts[:2])
    return parts[0]


def _private_owner(module: str) -> str | None:
    """The module whose private child ``module`` is (``a.b`` for ``a.b._c.d``), or None when nothing is private."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if index and part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            return ".".join(parts[:index])
    return None


def _is_moved(module: str, moved: Mapping[str, str]) -> bool:
    return any(module == old or module.startswith(old + ".") for old in moved)


def imported_modules(
    tree: ast.Module, module: str, is_package: bool, known: set[str], moved: Mapping[str, str]
) -> Iterator[tuple[int, str]]:
    """Every module ``tree`` imports, with its line: statements anywhere, and module names written as strings.

    ``from a import b`` yields ``a``, and ``a.b`` too when that is a module
    (of ``known``) or an old path. A string counts when it names a module of
    ``known`` or an old path.
    """
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - node.level + 1]
                target = ".".join(anchor + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:
                child = f"{target}.{alias.name}"
                if child in known or _is_moved(child, moved):
                    yield node.lineno, child
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _DOTTED.match(node.value)
            and (node.value in known or _is_moved(node.value, moved))
        ):
            yield node.lineno, node.value


def _rules(importer: str, target: str, layout: Layout) -> Iterator[tuple[int, str]]:
    """The rules ``importer`` importing ``target`` breaks, each with what is wrong."""
    mine, theirs = importer.split(".")[0], target.split(".")[0]
    if mine in layout.order and theirs in layout.order:
        top = layout.order[-1]
        if mine in layout.lower and theirs == top:
            yield 1, f"{mine} imports {target}: {', '.join(layout.lower)} import nothing from {top}"
        elif layout.order.index(theirs) > layout.order.index(mine):
            yield 2, f"{mine} imports {target}: {theirs} comes after {mine} in {' < '.join(layout.order)}"
    owner = _private_owner(target)
    if owner is not None and theirs in layout.order and package_of(owner, layout) != package_of(importer, layout):
        yield (
            3,
            (
                f"{importer} imports {target}, a private module of {package_of(owner, layout)}: "
                "make the name public (a module without the underscore, or an export of the package)"
            ),
        )
    if _is_moved(target, layout.moved):
        yield 4, f"{importer} imports {target}, an old path kept only for users: import where it lives now"


def find_violations(root: Path, layout: Layout) -> list[Violation]:
    """Every import under ``root`` that breaks a rule, in file and line order."""
    files = sorted(p for name in layout.order for p in (root / name).rglob("*.py"))
    known = {module_name(root, p) for p in files}
    found: list[Violation] = []
    for path in files:
        module = module_name(root, path)
        moved = {} if module == "compactor._moved" else layout.moved  # it lists the old paths
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, target in imported_modules(tree, module, path.name == "__init__.py", known, moved):
            for rule, message in _rules(module, target, Layout(layout.order, layout.lower, layout.subpackages, moved)):
                found.append(Violation(str(path.relative_to(root)), line, rule, message))
    return sorted(set(found), key=lambda v: (v.path, v.line, v.rule, v.message))


PROJECT = Layout(order=ORDER, lower=LOWER, subpackages={"compactor": SUBPACKAGES}, moved=MOVED)


def test_the_project_keeps_every_layering_rule() -> None:
    violations = find_violations(ROOT, PROJECT)
    assert not violations, "\n".join(map(str, violations))


def test_every_subpackage_named_exists() -> None:
    for name in SUBPACKAGES:
        assert (ROOT / "compactor" / name / "__init__.py").is_file(), name


# The checker itself, on a small tree.

SYNTHETIC = Layout(
    order=("low", "high"), lower=("low",), subpackages={"high": ("core", "view")}, moved={"high.old": "high.core.new"}
)


def _tree(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in {
        "low/__init__.py": "",
        "low/_private.py": "",
        "low/public.py": "",
        "high/__init__.py": "",
        "high/core/__init__.py": "",
        "high/core/_inner.py": "",
        "high/core/new.py": "",
        "high/view/__init__.py": "",
        **files,
    }.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _found(tmp_path: Path, files: Mapping[str, str]) -> list[tuple[str, int, int]]:
    return [(v.path, v.line, v.rule) for v in find_violations(_tree(tmp_path, files), SYNTHETIC)]


def test_a_clean_tree_has_no_violation(tmp_path: Path) -> None:
    assert (
        _found(
            tmp_path,
            {
                "high/view/page.py": "from high.core import new\nfrom low.public import x\nimport low\n",
                "high/core/use.py": "from high.core._inner import y\nfrom . import _inner\n",
                "low/user.py": "from low._private import z\nNAME = 'high.json'\n",
            },
        )
        == []
    )


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        ("from high.core import new\n", 1),
        ("import high.view\n", 1),
        ("def later():\n    from high import core\n", 1),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from high.core.new import Thing\n", 1),
        ("_EXPORTS = {'Thing': 'high.core.new'}\n", 1),
        ("COMMANDS = {'run': ('high.view', 'help')}\n", 1),
    ],
)
def test_a_lower_package_importing_the_top_one_breaks_rule_1(tmp_path: Path, source: str, rule: int) -> None:
    found = _found(tmp_path, {"low/bad.py": source})
    assert found and all(path == "low/bad.py" and r == rule for path, _, r in found)
    assert found[0][1] == source.count("\n", 0, source.index("high")) + 1


def test_an_import_against_the_order_breaks_rule_2(tmp_path: Path) -> None:
    layout = Layout(order=("a", "b", "c"), lower=("a",), subpackages={}, moved={})
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / "b" / "m.py").write_text("import a\nimport c.x\n")
    (tmp_path / "c" / "x.py").write_text("from b import m\n")
    assert [(v.path, v.line, v.rule) for v in find_violations(tmp_path, layout)] == [("b/m.py", 2, 2)]


@pytest.mark.parametrize(
    "source",
    [
        "from low._private import z\n",
        "import low._private\n",
        "from low import _private\n",
        "from high.core._inner import y\n",
        "from ..core import _inner\n",
        "import importlib\nimportlib.import_module('high.core._inner')\n",
    ],
)
def test_a_private_module_of_another_package_breaks_rule_3(tmp_path: Path, source: str) -> None:
    found = _found(tmp_path, {"high/view/page.py": source})
    assert found and {rule for _, _, rule in found} == {3}


def test_an_old_path_breaks_rule_4_and_the_message_names_file_line_and_rule(tmp_path: Path) -> None:
    root = _tree(
        tmp_path, {"high/view/page.py": "\nfrom high import old\n", "high/core/use.py": "import high.old.sub\n"}
    )
    violations = find_violations(root, SYNTHETIC)
    assert [(v.path, v.line, v.rule) for v in violations] == [("high/core/use.py", 1, 4), ("high/view/page.py", 2, 4)]
    assert str(violations[1]).startswith("high/view/page.py:2: rule 4: high.view.page imports high.old,")
