"""The error table: ``CompactorError`` and every subclass, with its ``error_id`` and ``exit_code``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator

from generator._common import HEADER, PACKAGES
from generator._common import cell as _cell


def _import_everything() -> None:
    """Import every module of the project's packages, so that every error class is defined.

    A module that needs an optional dependency which is not installed is left out;
    error classes live in the packages' ``errors`` modules, which need none.
    """
    for package in PACKAGES:
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, package + "."):
            if info.name.endswith(("__main__", "._moved")):
                continue
            try:
                importlib.import_module(info.name)
            except ImportError as exc:
                missing = getattr(exc, "name", "") or ""
                if missing.split(".")[0] in PACKAGES:
                    raise


def _error_tree(cls: type, depth: int = 0) -> Iterator[tuple[int, type]]:
    yield depth, cls
    children: set[type] = set(cls.__subclasses__())
    for child in sorted(children, key=lambda c: (c.__module__, c.__name__)):
        yield from _error_tree(child, depth + 1)


def error_classes() -> list[tuple[int, type]]:
    """(depth, class) for ``CompactorError`` and every subclass, depth first."""
    from ccr.root_errors import CompactorError

    _import_everything()
    seen: set[type] = set()
    found = []
    for depth, cls in _error_tree(CompactorError):
        if cls not in seen:
            seen.add(cls)
            found.append((depth, cls))
    return found


def _public_name(cls: type) -> str:
    """``module.Class`` as imported from its package's public surface where it is exported there."""
    module = cls.__module__
    package = module.split(".")[0]
    for candidate in (module.rsplit(".", 1)[0] if "." in module else module, package, "compactor"):
        exported = importlib.import_module(candidate)
        if getattr(exported, cls.__name__, None) is cls:
            return f"{candidate}.{cls.__name__}"
    return f"{module}.{cls.__name__}"


def errors_reference() -> str:
    """Every error class: its id, its exit code, where it is defined and what it means."""
    lines = [
        HEADER.format(source="the CompactorError subclasses"),
        "| error id | exit | class | meaning |",
        "|---|---|---|---|",
    ]
    for depth, cls in error_classes():
        doc = (inspect.getdoc(cls) or "").split("\n\n")[0]
        indent = "&nbsp;&nbsp;" * depth
        lines.append(
            f"| {indent}`{cls.error_id}` | {cls.exit_code} | `{_public_name(cls)}` | {_cell(doc)} |"  # type: ignore[attr-defined]
        )
    return "\n".join(lines) + "\n"
