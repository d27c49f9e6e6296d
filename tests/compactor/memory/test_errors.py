"""Memory errors carry stable ids and exit codes, and hang under the project's root; the shared concepts are the root's."""

from __future__ import annotations

import pytest

from compactor.core import errors as shared
from compactor.core.errors import CompactorError, CompactorRuntimeError, UsageError
from compactor.memory import errors


@pytest.mark.parametrize(
    ("cls", "error_id", "exit_code"),
    [
        (errors.InvalidRequest, "usage_error", 2),
        (errors.MemoryConfigError, "memory_config_invalid", 2),
        (errors.InvalidText, "memory_invalid_text", 65),
        (errors.TextTooLarge, "memory_too_large", 65),
        (errors.InputError, "input_unreadable", 65),
        (errors.InputNotFound, "input_not_found", 66),
        (errors.MemoryNotFound, "memory_not_found", 66),
        (errors.SupersededText, "memory_superseded", 65),
        (errors.NotCurrent, "memory_not_current", 65),
        (errors.AlreadyStored, "memory_exists", 65),
        (errors.BrokenChain, "memory_broken_chain", 65),
        (errors.StoreError, "store_error", 73),
        (errors.UnsafeStorePath, "unsafe_store_path", 73),
        (errors.NotAStore, "not_a_store", 73),
    ],
)
def test_each_error_has_its_stable_id_and_exit_code(cls: type[CompactorError], error_id: str, exit_code: int) -> None:
    assert (cls.error_id, cls.exit_code) == (error_id, exit_code)


def test_every_memory_error_is_its_own_or_the_shared_concept_and_either_usage_or_runtime() -> None:
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, CompactorError)
        assert issubclass(cls, errors.MemoriesError) != (cls is getattr(shared, name, None)), name
        if cls is not errors.MemoriesError:
            assert issubclass(cls, UsageError) != issubclass(cls, CompactorRuntimeError), name


def test_ids_are_unique() -> None:
    ids = [getattr(errors, name).error_id for name in errors.__all__]
    assert len(ids) == len(set(ids))
