"""The skills package exports exactly its public names."""

from __future__ import annotations

import importlib
import pkgutil

import skills


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert skills.__all__ == sorted(skills.__all__)
    for name in skills.__all__:
        assert getattr(skills, name) is not None


def test_all_is_exactly_the_union_of_the_public_modules_exports() -> None:
    exported: set[str] = set()
    for module in pkgutil.iter_modules(skills.__path__):
        if not module.name.startswith("_"):
            exported.update(importlib.import_module(f"skills.{module.name}").__all__)
    assert set(skills.__all__) == exported
