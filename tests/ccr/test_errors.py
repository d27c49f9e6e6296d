"""Errors carry stable ids and exit codes, and hang under the project's root."""

from __future__ import annotations

import pytest

from ccr import errors
from compactor.core.errors import CompactorError, CompactorRuntimeError, ConfigError, UsageError


@pytest.mark.parametrize(
    ("cls", "error_id", "exit_code"),
    [
        (errors.BudgetExceeded, "ccr_budget_exceeded", 73),
        (errors.HandleNotFound, "ccr_not_found", 66),
        (errors.InvalidHandle, "ccr_invalid_handle", 2),
        (errors.InvalidSelector, "ccr_invalid_selector", 2),
        (errors.StoreConfigError, "ccr_config_invalid", 2),
        (errors.StoreError, "ccr_store_error", 73),
        (errors.CorruptRecord, "ccr_corrupt_record", 65),
        (errors.InputNotFound, "ccr_input_not_found", 66),
        (errors.NotAStore, "ccr_not_a_store", 73),
    ],
)
def test_each_error_has_its_stable_id_and_exit_code(
    cls: type[errors.CCRError], error_id: str, exit_code: int
) -> None:
    assert cls.error_id == error_id
    assert cls.exit_code == exit_code


def test_every_ccr_error_is_a_compactor_error() -> None:
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, errors.CCRError)
        assert issubclass(cls, CompactorError)


def test_usage_mistakes_and_runtime_failures_are_different_classes() -> None:
    usage: list[type[errors.CCRError]] = [
        errors.InvalidHandle, errors.InvalidSelector, errors.InvalidRequest, errors.UnknownObjectType
    ]
    runtime: list[type[errors.CCRError]] = [
        errors.HandleNotFound, errors.BudgetExceeded, errors.StoreError
    ]
    for cls in usage:
        assert issubclass(cls, UsageError)
        assert not issubclass(cls, CompactorRuntimeError)
    for cls in runtime:
        assert issubclass(cls, CompactorRuntimeError)
        assert not issubclass(cls, UsageError)
    assert issubclass(errors.StoreConfigError, ConfigError)
