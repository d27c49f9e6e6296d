"""Errors of the recovery store (CCR), all under the project's root ``ccr.root_errors.CompactorError``.

::

    CCRError                         root of ccr's own errors
    ├── InvalidHandle (UsageError)   a reference has a shape no handle has (exit 2)
    │   └── InvalidSelector          a ccr:// field path selects nothing (exit 2)
    ├── UnknownObjectType (InvalidRequest)  a typed object's type is not in the closed set (exit 2)
    ├── OutputRefused (UsageError)   an output path would destroy a database, an input or a device (exit 2)
    ├── StoreConfigError (ConfigError)  bad budget value, e.g. COMPACTOR_CCR_MAX_BYTES (exit 2)
    ├── ArchiveInvalid (InputError)  an archive to import is not a ccr archive or is cut short (exit 65)
    ├── HandleNotFound (runtime)     a well-formed handle the store does not hold (exit 66)
    ├── BudgetExceeded (runtime)     the store is full and refuses the record (exit 73)
    ├── DiskFull (StoreError)        the disk holding the store has no space left (not the budget)
    ├── DamagedFile (StoreError)     SQLite finds the store file itself damaged (exit 65)
    └── CorruptRecord (StoreError)   stored bytes no longer hash to their handle (exit 65)
        ├── DamagedMetadata          a record's stored metadata no longer reads (exit 65)
        ├── WritesLost               the file holds fewer records than it acknowledged (exit 65)
        └── RecordsLost              ``ccr repair`` could not salvage some records (exit 65)

The shared concepts ccr raises are ``ccr.root_errors``' classes, re-exported
here as themselves (not subclasses): ``InvalidRequest`` (bad range, query or
state, exit 2), ``InputError`` (the command line's input cannot be read,
exit 65), ``InputNotFound`` (exit 66), ``OutputWriteFailed`` (the name ccr
gives ``OutputWriteError``, exit 73), ``StoreError`` (the store could not be
opened, read or written, exit 73), ``UnsafeStorePath`` and ``NotAStore``.
``except StoreError`` (or ``InputNotFound``, ...) catches ccr's and the other
packages' alike, and ``except CompactorError`` catches everything ccr raises;
``CCRError`` catches only ccr's own concepts. Each class has a stable
``error_id`` and ``exit_code`` for the command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ccr.root_errors import (
    CompactorError,
    CompactorRuntimeError,
    ConfigError,
    InputError,
    InputNotFound,
    InvalidRequest,
    NotAStore,
    StoreError,
    UnsafeStorePath,
    UsageError,
)
from ccr.root_errors import OutputWriteError as OutputWriteFailed

if TYPE_CHECKING:
    from ccr.records import Record

__all__ = [
    "ArchiveInvalid",
    "BudgetExceeded",
    "CCRError",
    "CorruptRecord",
    "DamagedFile",
    "DamagedMetadata",
    "DiskFull",
    "HandleNotFound",
    "InputError",
    "InputNotFound",
    "InvalidHandle",
    "InvalidRequest",
    "InvalidSelector",
    "NotAStore",
    "OutputRefused",
    "OutputWriteFailed",
    "RecordsLost",
    "StoreConfigError",
    "StoreError",
    "UnknownObjectType",
    "UnsafeStorePath",
    "WritesLost",
]


class CCRError(CompactorError):
    """Root of the recovery store's own errors (the shared concepts it raises are not ``CCRError``)."""

    error_id = "ccr_error"
    exit_code = 1


class InvalidHandle(CCRError, UsageError):
    """A reference is not a handle, marker, or ``ccr://`` pointer; storage was not touched."""

    error_id = "ccr_invalid_handle"
    exit_code = 2


class InvalidSelector(InvalidHandle):
    """A ``ccr://`` field path does not select anything in the stored value."""

    error_id = "ccr_invalid_selector"


class UnknownObjectType(CCRError, InvalidRequest):
    """A typed object names a type outside the closed set."""

    error_id = "ccr_unknown_object_type"
    exit_code = 2


class OutputRefused(CCRError, UsageError):
    """An output path names a database, an input of the command, or something not a regular file.

    Nothing was written (the rule is ``ccr.files``'s, shared by every command that writes a file).
    """

    error_id = "output_refused"
    exit_code = 2


class StoreConfigError(CCRError, ConfigError):
    """The store's budget setting is not a positive integer."""

    error_id = "ccr_config_invalid"
    exit_code = 2


class ArchiveInvalid(CCRError, InputError):
    """An archive given to ``ccr import`` is not a ccr archive, or is damaged or cut short."""

    error_id = "ccr_archive_invalid"
    exit_code = 65


class HandleNotFound(CCRError, CompactorRuntimeError):
    """The handle is well formed but nothing is stored under it."""

    error_id = "ccr_not_found"
    exit_code = 66


class BudgetExceeded(CCRError, CompactorRuntimeError):
    """Storing the record would exceed the store's byte budget; nothing was written."""

    error_id = "ccr_budget_exceeded"
    exit_code = 73


class DiskFull(CCRError, StoreError):
    """The file system holding the store has no space left; the store's byte budget is not the cause."""

    error_id = "ccr_disk_full"
    exit_code = 73


class DamagedFile(CCRError, StoreError):
    """SQLite reports the store file itself damaged ("malformed"): bad data, as a corrupt record is."""

    error_id = "ccr_damaged_file"
    exit_code = 65


class CorruptRecord(CCRError, StoreError):
    """A stored record's bytes no longer hash to its handle."""

    error_id = "ccr_corrupt_record"
    exit_code = 65


class DamagedMetadata(CorruptRecord):
    """A record's stored metadata (its kind, session, times, ...) no longer reads; its bytes may be intact.

    ``handles`` names the damaged records, ``readable`` holds every other
    record that was asked for, so that a listing can still show them.
    """

    error_id = "ccr_damaged_metadata"

    def __init__(self, message: str, handles: Sequence[str] = (), readable: Sequence[Record] = ()) -> None:
        super().__init__(message)
        self.handles = list(handles)
        self.readable = list(readable)


class WritesLost(CorruptRecord):
    """The store file holds fewer records ever stored than it acknowledged: committed writes are gone
    (its write-ahead log deleted before a checkpoint, or the file put back from an older copy)."""

    error_id = "ccr_writes_lost"


class RecordsLost(CorruptRecord):
    """A repair salvaged what it could, but some records were damaged beyond recovery."""

    error_id = "ccr_records_lost"
