"""Errors carry stable ids and exit codes, and hang under the project's root; the shared concepts are the root's."""

from __future__ import annotations

import pytest

from ccr import errors, root_errors
from compactor.core.errors import CompactorError, CompactorRuntimeError, ConfigError, UsageError


@pytest.mark.parametrize(
    ("cls", "error_id", "exit_code"),
    [
        (errors.BudgetExceeded, "ccr_budget_exceeded", 73),
        (errors.HandleNotFound, "ccr_not_found", 66),
        (errors.InvalidHandle, "ccr_invalid_handle", 2),
        (errors.InvalidSelector, "ccr_invalid_selector", 2),
        (errors.StoreConfigError, "ccr_config_invalid", 2),
        (errors.StoreError, "store_error", 73),
        (errors.DiskFull, "ccr_disk_full", 73),
        (errors.DamagedFile, "ccr_damaged_file", 65),
        (errors.CorruptRecord, "ccr_corrupt_record", 65),
        (errors.RecordsLost, "ccr_records_lost", 65),
        (errors.ArchiveInvalid, "ccr_archive_invalid", 65),
        (errors.UnknownObjectType, "ccr_unknown_object_type", 2),
        (errors.InvalidRequest, "usage_error", 2),
        (errors.InputError, "input_unreadable", 65),
        (errors.InputNotFound, "input_not_found", 66),
        (errors.NotAStore, "not_a_store", 73),
        (errors.UnsafeStorePath, "unsafe_store_path", 73),
        (errors.OutputWriteFailed, "output_write_failed", 73),
    ],
)
def test_each_error_has_its_stable_id_and_exit_code(
    cls: type[root_errors.CompactorError], error_id: str, exit_code: int
) -> None:
    assert cls.error_id == error_id
    assert cls.exit_code == exit_code


def test_every_ccr_error_is_ccr_own_or_the_shared_concept_itself() -> None:
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, CompactorError)
        assert issubclass(cls, errors.CCRError) != (cls in vars(root_errors).values()), name


def test_usage_mistakes_and_runtime_failures_are_different_classes() -> None:
    usage: list[type[CompactorError]] = [
        errors.InvalidHandle,
        errors.InvalidSelector,
        errors.InvalidRequest,
        errors.UnknownObjectType,
    ]
    runtime: list[type[CompactorError]] = [
        errors.HandleNotFound,
        errors.BudgetExceeded,
        errors.StoreError,
        errors.DiskFull,
        errors.InputNotFound,
    ]
    for cls in usage:
        assert issubclass(cls, UsageError)
        assert not issubclass(cls, CompactorRuntimeError)
    for cls in runtime:
        assert issubclass(cls, CompactorRuntimeError)
        assert not issubclass(cls, UsageError)
    assert issubclass(errors.StoreConfigError, ConfigError)
