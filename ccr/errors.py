"""Errors of the recovery store (CCR), all under the project's root ``ccr.root_errors.CompactorError``.

::

    CCRError                         root of every ccr error
    ├── InvalidHandle (UsageError)   a reference has a shape no handle has (exit 2)
    │   └── InvalidSelector          a ccr:// field path selects nothing (exit 2)
    ├── InvalidRequest (shared)      bad range, query, object type or state (exit 2)
    │   └── UnknownObjectType        a typed object's type is not in the closed set
    ├── OutputRefused (UsageError)   an output path would destroy a database, an input or a device (exit 2)
    ├── StoreConfigError (ConfigError)  bad budget value, e.g. COMPACTOR_CCR_MAX_BYTES (exit 2)
    ├── InputError                   the command line's input cannot be read (exit 65)
    │   ├── InputNotFound (shared)   the input file does not exist (exit 66)
    │   └── ArchiveInvalid           an archive to import is not a ccr archive or is cut short
    ├── HandleNotFound (runtime)     a well-formed handle the store does not hold (exit 66)
    ├── BudgetExceeded (runtime)     the store is full and refuses the record (exit 73)
    ├── OutputWriteFailed (shared)   an output file (an archive) could not be written (exit 73)
    └── StoreError (shared)          the store could not be opened, read or written (exit 73)
        ├── DiskFull                 the disk holding the store has no space left (not the budget)
        ├── UnsafeStorePath (shared) the path is a symlink, not a regular file, or was swapped
        ├── NotAStore (shared)       the file is not a ccr store (another file or database)
        ├── DamagedFile              SQLite finds the store file itself damaged (exit 65)
        └── CorruptRecord            stored bytes no longer hash to their handle (exit 65)
            └── RecordsLost          ``ccr repair`` could not salvage some records (exit 65)

Usage mistakes (the caller asked for something invalid) are also
``UsageError``; everything that failed while running is also a
``CompactorRuntimeError``. "(shared)" marks a class that also derives from
the concept of that name in ``ccr.root_errors`` (``OutputWriteFailed`` from
``OutputWriteError``), so that ``except InputNotFound`` (or ``StoreError``,
...) catches ccr's errors of that kind and the other packages' alike. Each class has a stable ``error_id`` and
``exit_code`` for the command line.
"""

from __future__ import annotations

from ccr import root_errors
from ccr.root_errors import CompactorError, CompactorRuntimeError, ConfigError, UsageError

__all__ = [
    "ArchiveInvalid",
    "BudgetExceeded",
    "CCRError",
    "CorruptRecord",
    "DamagedFile",
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
]


class CCRError(CompactorError):
    """Root of every error raised by the recovery store."""

    error_id = "ccr_error"
    exit_code = 1


class InvalidHandle(CCRError, UsageError):
    """A reference is not a handle, marker, or ``ccr://`` pointer; storage was not touched."""

    error_id = "ccr_invalid_handle"
    exit_code = 2


class InvalidSelector(InvalidHandle):
    """A ``ccr://`` field path does not select anything in the stored value."""

    error_id = "ccr_invalid_selector"


class InvalidRequest(CCRError, root_errors.InvalidRequest):
    """A request is malformed: a bad range, an empty query, an unknown state."""

    error_id = "ccr_invalid_request"
    exit_code = 2


class UnknownObjectType(InvalidRequest):
    """A typed object names a type outside the closed set."""

    error_id = "ccr_unknown_object_type"


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


class InputError(CCRError, CompactorRuntimeError):
    """The input given to the command line cannot be read."""

    error_id = "ccr_input_unreadable"
    exit_code = 65


class InputNotFound(InputError, root_errors.InputNotFound):
    """The input file given to the command line does not exist."""

    error_id = "ccr_input_not_found"
    exit_code = 66


class ArchiveInvalid(InputError):
    """An archive given to ``ccr import`` is not a ccr archive, or is damaged or cut short."""

    error_id = "ccr_archive_invalid"


class HandleNotFound(CCRError, CompactorRuntimeError):
    """The handle is well formed but nothing is stored under it."""

    error_id = "ccr_not_found"
    exit_code = 66


class BudgetExceeded(CCRError, CompactorRuntimeError):
    """Storing the record would exceed the store's byte budget; nothing was written."""

    error_id = "ccr_budget_exceeded"
    exit_code = 73


class OutputWriteFailed(CCRError, root_errors.OutputWriteError):
    """An output file could not be written (a read-only folder, a full disk); nothing took its name."""

    error_id = "output_write_failed"
    exit_code = 73


class StoreError(CCRError, root_errors.StoreError):
    """The store could not be opened, read or written."""

    error_id = "ccr_store_error"
    exit_code = 73


class DiskFull(StoreError):
    """The file system holding the store has no space left; the store's byte budget is not the cause."""

    error_id = "ccr_disk_full"


class UnsafeStorePath(StoreError, root_errors.UnsafeStorePath):
    """The store path is a symlink or not a regular file, or changed while opening."""

    error_id = "ccr_unsafe_path"


class NotAStore(StoreError, root_errors.NotAStore):
    """The store path names a file that is not a ccr store; it was left as it was."""

    error_id = "ccr_not_a_store"


class DamagedFile(StoreError):
    """SQLite reports the store file itself damaged ("malformed"): bad data, as a corrupt record is."""

    error_id = "ccr_damaged_file"
    exit_code = 65


class CorruptRecord(StoreError):
    """A stored record's bytes no longer hash to its handle."""

    error_id = "ccr_corrupt_record"
    exit_code = 65


class RecordsLost(CorruptRecord):
    """A repair salvaged what it could, but some records were damaged beyond recovery."""

    error_id = "ccr_records_lost"
