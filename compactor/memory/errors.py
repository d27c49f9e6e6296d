"""Errors of the memory store, all under the project's root ``compactor.core.errors.CompactorError``.

::

    MemoriesError                        root of every memory error
    ├── InvalidRequest (shared)          a bad id, query, limit, budget or threshold (exit 2)
    ├── MemoryConfigError (ConfigError)  COMPACTOR_MEMORY_DB names no usable path (exit 2)
    ├── InvalidText (runtime)            empty, whitespace-only or not UTF-8 text (exit 65)
    │   └── TextTooLarge                 text over 256 KiB (``memory_too_large``, exit 65)
    ├── InputError (runtime)             the command line's input cannot be read (exit 65)
    │   └── InputNotFound (shared)       stdin is closed (exit 66)
    ├── MemoryNotFound (runtime)         no memory has this id (exit 66)
    ├── MemoryConflict (runtime)         the request contradicts what is stored (exit 65)
    │   ├── SupersededText               the text exists only as a superseded version
    │   ├── NotCurrent                   the memory to supersede is no longer current
    │   └── AlreadyStored                the new version's text is already stored
    ├── BrokenChain (runtime)            a version chain is broken or has a cycle (exit 65)
    └── StoreError (shared)              the database could not be opened, read or written (exit 73)
        ├── UnsafeStorePath (shared)     the path is a symlink or not a regular file
        └── NotAStore (shared)           the file is not a memory store; left as it was

Usage mistakes are also ``UsageError``; everything that failed while
running is also a ``CompactorRuntimeError``. "(shared)" marks a class that
also derives from the concept of that name in ``ccr.root_errors``
(re-exported by ``compactor.core.errors``): ``except StoreError`` catches
the memory store's errors and ccr's alike. Each class has a stable
``error_id`` and ``exit_code`` for the command line and the MCP tools.
"""

from __future__ import annotations

from compactor.core import errors as shared
from compactor.core.errors import CompactorError, CompactorRuntimeError, ConfigError

__all__ = [
    "AlreadyStored",
    "BrokenChain",
    "InputError",
    "InputNotFound",
    "InvalidRequest",
    "InvalidText",
    "MemoriesError",
    "MemoryConfigError",
    "MemoryConflict",
    "MemoryNotFound",
    "NotAStore",
    "NotCurrent",
    "StoreError",
    "SupersededText",
    "TextTooLarge",
    "UnsafeStorePath",
]


class MemoriesError(CompactorError):
    """Root of every error raised by the memory store."""

    error_id = "memory_error"
    exit_code = 1


class InvalidRequest(MemoriesError, shared.InvalidRequest):
    """A malformed request: an id that is not ``mem_`` + 16 hex, an empty query, a negative budget."""

    error_id = "memory_invalid_request"
    exit_code = 2


class MemoryConfigError(MemoriesError, ConfigError):
    """The configured memory database path is unusable (for example empty)."""

    error_id = "memory_config_invalid"
    exit_code = 2


class InvalidText(MemoriesError, CompactorRuntimeError):
    """The text to remember is empty, whitespace only, or not UTF-8."""

    error_id = "memory_invalid_text"
    exit_code = 65


class TextTooLarge(InvalidText):
    """The text to remember is over 256 KiB of UTF-8."""

    error_id = "memory_too_large"


class InputError(MemoriesError, CompactorRuntimeError):
    """The input given to the command line cannot be read."""

    error_id = "memory_input_unreadable"
    exit_code = 65


class InputNotFound(InputError, shared.InputNotFound):
    """The command line was told to read stdin, and stdin is closed."""

    error_id = "memory_input_not_found"
    exit_code = 66


class MemoryNotFound(MemoriesError, CompactorRuntimeError):
    """No memory has this id."""

    error_id = "memory_not_found"
    exit_code = 66


class MemoryConflict(MemoriesError, CompactorRuntimeError):
    """The request contradicts what is stored; nothing was changed."""

    error_id = "memory_conflict"
    exit_code = 65


class SupersededText(MemoryConflict):
    """The text is stored only as a superseded version, which recall never returns."""

    error_id = "memory_superseded"


class NotCurrent(MemoryConflict):
    """The memory to supersede has already been superseded."""

    error_id = "memory_not_current"


class AlreadyStored(MemoryConflict):
    """The new version's text is the old one's, or is already stored as another memory."""

    error_id = "memory_exists"


class BrokenChain(MemoriesError, CompactorRuntimeError):
    """A version chain points at a missing memory, disagrees with itself, or loops."""

    error_id = "memory_broken_chain"
    exit_code = 65


class StoreError(MemoriesError, shared.StoreError):
    """The memory database could not be opened, read or written."""

    error_id = "memory_store_error"
    exit_code = 73


class UnsafeStorePath(StoreError, shared.UnsafeStorePath):
    """The database path (or a sidecar) is a symlink or not a regular file."""

    error_id = "memory_unsafe_path"


class NotAStore(StoreError, shared.NotAStore):
    """The file is not a memory database (another file or another program's database)."""

    error_id = "memory_not_a_store"
