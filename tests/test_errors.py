"""One hierarchy of errors: every error a package raises on purpose is a ``compactor.CompactorError``.

The root and the concepts several packages share are defined once
(``ccr.root_errors``); a package's own class for a shared concept (ccr's
``InputNotFound``, the memory store's ``StoreError``) derives from it, so
catching the concept catches every package's.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

import compactor
from ccr import root_errors

ERROR_MODULES = (
    "ccr.root_errors", "ccr.errors", "skills.errors", "attachments.errors", "compactor.core.errors",
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


def test_a_package_class_for_a_shared_concept_derives_from_the_concept() -> None:
    shared = {name: getattr(root_errors, name) for name in root_errors.__all__}
    specialised = [cls for cls in _classes() if cls.__name__ in shared and cls is not shared[cls.__name__]]
    assert {cls.__module__ for cls in specialised} == {"ccr.errors", "compactor.memory.errors"}
    for cls in specialised:
        assert issubclass(cls, shared[cls.__name__]), cls


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
    assert ccr_refused.value.error_id == "ccr_not_a_store"
    assert memory_refused.value.error_id == "memory_not_a_store"
    assert isinstance(ccr_refused.value, root_errors.NotAStore) and isinstance(memory_refused.value, root_errors.NotAStore)
    assert path.read_text() == "not a database\n" * 100
