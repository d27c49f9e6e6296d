"""One hierarchy of errors: every error a package raises on purpose is a ``compactor.CompactorError``.

The root and the concepts several packages share are defined once, in
``ccr.root_errors``; a package that raises a shared concept (ccr's
``InputNotFound``, the memory store's ``StoreError``) re-exports that very
class, so catching the concept catches every package's, and the concept has
one ``error_id``. Classes of a package's own concepts (ccr's ``DiskFull``,
memory's ``MemoryNotFound``) derive from the concept they are a case of.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import compactor
from ccr import root_errors

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ccr", "skills", "attachments", "compactor")
ERROR_MODULES = (
    "ccr.root_errors",
    "ccr.errors",
    "skills.errors",
    "attachments.errors",
    "compactor.core.errors",
    "compactor.memory.errors",
)


def _classes() -> list[type[BaseException]]:
    found: dict[int, type[BaseException]] = {}
    for name in ERROR_MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, BaseException):
                found[id(value)] = value
    return list(found.values())


def test_every_error_of_every_package_is_the_one_compactor_error() -> None:
    assert compactor.CompactorError is root_errors.CompactorError
    for cls in _classes():
        assert issubclass(cls, compactor.CompactorError), cls


def _every_module() -> list[str]:
    """Every module of the four packages that imports here (``__main__`` would run a command line)."""
    names: list[str] = []
    for package in PACKAGES:
        for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
            if info.name.rsplit(".", 1)[-1] == "__main__":
                continue
            try:
                importlib.import_module(info.name)
            except ModuleNotFoundError as exc:  # an optional integration whose library is not installed
                if (exc.name or "").split(".")[0] in PACKAGES:
                    raise
                continue
            names.append(info.name)
    return names


def test_no_two_error_classes_of_the_packages_share_a_name() -> None:
    by_name: dict[str, dict[int, type[BaseException]]] = {}
    for name in _every_module():
        for value in vars(importlib.import_module(name)).values():
            ours = inspect.isclass(value) and value.__module__.split(".")[0] in PACKAGES
            if ours and issubclass(value, BaseException):
                by_name.setdefault(value.__name__, {})[id(value)] = value
    shared = {name: classes for name, classes in by_name.items() if len(classes) > 1}
    assert not shared, {name: sorted(c.__module__ for c in classes.values()) for name, classes in shared.items()}


def test_each_shared_concept_is_defined_once_and_re_exported_as_itself() -> None:
    definitions: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    definitions.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    for name in root_errors.__all__:
        assert definitions.get(name) == ["ccr/root_errors.py"], (name, definitions.get(name))
    from ccr import errors as ccr_errors
    from compactor.memory import errors as memory_errors

    for module in (ccr_errors, memory_errors):
        for name in set(module.__all__) & set(root_errors.__all__):
            assert getattr(module, name) is getattr(root_errors, name), (module.__name__, name)
    assert ccr_errors.OutputWriteFailed is root_errors.OutputWriteError


def test_a_package_class_of_its_own_concept_derives_from_the_shared_one() -> None:
    from ccr import errors as ccr_errors
    from compactor.memory import errors as memory_errors

    assert issubclass(ccr_errors.DiskFull, root_errors.StoreError) and issubclass(
        ccr_errors.DiskFull, ccr_errors.CCRError
    )
    assert issubclass(ccr_errors.CorruptRecord, root_errors.StoreError)
    assert issubclass(ccr_errors.UnknownObjectType, root_errors.InvalidRequest)
    assert issubclass(ccr_errors.ArchiveInvalid, root_errors.InputError)
    assert issubclass(memory_errors.TextTooLarge, memory_errors.MemoriesError)


def test_compactor_re_exports_the_shared_classes_not_copies() -> None:
    from compactor.core import errors

    for name in root_errors.__all__:
        assert getattr(errors, name) is getattr(root_errors, name), name


def test_two_classes_share_an_error_id_only_when_one_derives_from_the_other() -> None:
    by_id: dict[str, list[type[BaseException]]] = {}
    for cls in _classes():
        by_id.setdefault(cls.error_id, []).append(cls)  # type: ignore[attr-defined]
    for error_id, classes in by_id.items():
        for a in classes:
            for b in classes:
                assert issubclass(a, b) or issubclass(b, a), (error_id, a, b)


def test_a_file_that_is_no_store_is_caught_as_the_shared_concept_from_either_store(tmp_path: Path) -> None:
    from ccr import open_store
    from compactor.memory import open_memory

    path = tmp_path / "notes.txt"
    path.write_text("not a database\n" * 100)
    with pytest.raises(compactor.StoreError) as ccr_refused:
        open_store(path)
    with pytest.raises(compactor.StoreError) as memory_refused:
        open_memory(path)
    assert type(ccr_refused.value) is type(memory_refused.value) is root_errors.NotAStore
    assert ccr_refused.value.error_id == memory_refused.value.error_id == "not_a_store"
    assert "ccr store" in str(ccr_refused.value) and "memory" in str(memory_refused.value)
    assert path.read_text() == "not a database\n" * 100
